"""Drives an A2A server with the official Python SDK client (a2a-sdk 1.x, protocol v1.0).

Usage: python py_client.py BASE_URL BINDING      (BINDING: JSONRPC, HTTP+JSON or GRPC)

The server must run the a2a-rust demo agent (echo, `countdown N`, `greet`). The client is
built from the server's agent card, restricted to BINDING. For GRPC the SDK's GrpcTransport
dials the card's GRPC interface (`host:port`) through the channel factory ClientConfig needs
for it: `grpc.aio.insecure_channel` (plain HTTP/2, as the server serves it on loopback). Each
scenario's outcome (states, artifact texts, ids, or the error it raised) goes into one JSON
report printed on stdout; the Rust test (tests/tests/interop_python.rs) asserts on it. A
scenario that raises is reported as {"error": "..."} and the others still run; the exit code is
0 unless the client could not be created at all.
"""

import asyncio
import json
import sys
import traceback
import uuid

from a2a.client import ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)

TERMINAL = {'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'}


def user_message(text, task_id=None, context_id=None):
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def state(s):
    return TaskState.Name(s.state)


def task_summary(task):
    return {
        'id': task.id,
        'contextId': task.context_id,
        'state': state(task.status),
        'statusText': get_message_text(task.status.message) if task.status.HasField('message') else None,
        'artifacts': [get_artifact_text(a, delimiter='') for a in task.artifacts],
        'historyLength': len(task.history),
    }


def event_summary(ev):
    kind = ev.WhichOneof('payload')
    if kind == 'task':
        return {'kind': 'task', **task_summary(ev.task)}
    if kind == 'status_update':
        su = ev.status_update
        return {
            'kind': 'statusUpdate',
            'taskId': su.task_id,
            'contextId': su.context_id,
            'state': state(su.status),
            'text': get_message_text(su.status.message) if su.status.HasField('message') else None,
        }
    if kind == 'artifact_update':
        au = ev.artifact_update
        return {
            'kind': 'artifactUpdate',
            'taskId': au.task_id,
            'artifactId': au.artifact.artifact_id,
            'text': get_artifact_text(au.artifact, delimiter=''),
            'append': au.append,
            'lastChunk': au.last_chunk,
        }
    if kind == 'message':
        return {'kind': 'message', 'text': get_message_text(ev.message)}
    return {'kind': str(kind)}


async def only_response(client, request):
    """send_message on a non-streaming client yields exactly one StreamResponse."""
    events = [ev async for ev in client.send_message(request)]
    if len(events) != 1:
        raise AssertionError(f'non-streaming send yielded {len(events)} events')
    return events[0]


async def run(base_url, binding):
    factory_args = dict(supported_protocol_bindings=[binding], use_client_preference=True)
    if binding == 'GRPC':
        import grpc.aio  # noqa: PLC0415 - the SDK's gRPC extra, needed for this binding only

        factory_args['grpc_channel_factory'] = grpc.aio.insecure_channel
    blocking = await ClientFactory(ClientConfig(streaming=False, **factory_args)).create_from_url(base_url)
    streaming = await ClientFactory(ClientConfig(streaming=True, **factory_args)).create_from_url(base_url)
    report = {'binding': binding, 'transport': type(blocking._transport).__name__}

    async def scenario(name, coro):
        try:
            report[name] = await coro
        except Exception as e:  # noqa: BLE001 - the report carries it to the Rust test
            report[name] = {'error': f'{type(e).__name__}: {e}', 'trace': traceback.format_exc(limit=4)}

    async def send_blocking():
        ev = await only_response(blocking, SendMessageRequest(message=user_message('hello from python')))
        return event_summary(ev)

    async def send_return_immediately():
        req = SendMessageRequest(message=user_message('countdown 2'))
        req.configuration.return_immediately = True
        ev = await only_response(blocking, req)
        first = event_summary(ev)
        # Poll with GetTask until it finishes (bounded: ~10 s).
        final = None
        for _ in range(100):
            t = await blocking.get_task(GetTaskRequest(id=ev.task.id))
            if TaskState.Name(t.status.state) in TERMINAL:
                final = task_summary(t)
                break
            await asyncio.sleep(0.1)
        return {'first': first, 'final': final}

    async def stream_countdown():
        req = SendMessageRequest(message=user_message('countdown 3'))
        return [event_summary(ev) async for ev in streaming.send_message(req)]

    async def get_and_list():
        ev = await only_response(blocking, SendMessageRequest(message=user_message('get me')))
        got = await blocking.get_task(GetTaskRequest(id=ev.task.id))
        listed = await blocking.list_tasks(ListTasksRequest(context_id=ev.task.context_id))
        return {
            'sent': task_summary(ev.task),
            'got': task_summary(got),
            'list': {
                'ids': [t.id for t in listed.tasks],
                'totalSize': listed.total_size,
                'pageSize': listed.page_size,
                'nextPageToken': listed.next_page_token,
            },
        }

    async def cancel_running():
        req = SendMessageRequest(message=user_message('countdown 20'))
        req.configuration.return_immediately = True
        ev = await only_response(blocking, req)
        canceled = await blocking.cancel_task(CancelTaskRequest(id=ev.task.id))
        after = await blocking.get_task(GetTaskRequest(id=ev.task.id))
        return {'started': task_summary(ev.task), 'cancel': task_summary(canceled), 'after': task_summary(after)}

    async def subscribe_running():
        req = SendMessageRequest(message=user_message('countdown 10'))
        req.configuration.return_immediately = True
        ev = await only_response(blocking, req)
        events = [event_summary(e) async for e in streaming.subscribe(SubscribeToTaskRequest(id=ev.task.id))]
        return {'taskId': ev.task.id, 'events': events}

    async def multi_turn():
        ev = await only_response(blocking, SendMessageRequest(message=user_message('greet')))
        asked = task_summary(ev.task)
        answer = user_message('Ada', task_id=ev.task.id, context_id=ev.task.context_id)
        ev2 = await only_response(blocking, SendMessageRequest(message=answer))
        return {'asked': asked, 'answered': task_summary(ev2.task)}

    async def multi_turn_streaming():
        events = [event_summary(e) async for e in streaming.send_message(SendMessageRequest(message=user_message('greet')))]
        task_id = events[0]['id']
        context_id = events[0]['contextId']
        answer = user_message('Grace', task_id=task_id, context_id=context_id)
        events2 = [event_summary(e) async for e in streaming.send_message(SendMessageRequest(message=answer))]
        return {'first': events, 'second': events2}

    async def errors():
        out = {}
        try:
            await blocking.get_task(GetTaskRequest(id='no-such-task'))
            out['get_unknown'] = 'no error'
        except Exception as e:  # noqa: BLE001
            out['get_unknown'] = type(e).__name__
        # An error message with non-ASCII text and '%' (the id is in it): over gRPC it travels
        # percent-encoded in grpc-message, and the SDK requires it to equal the message of the
        # google.rpc.Status in grpc-status-details-bin.
        try:
            await blocking.get_task(GetTaskRequest(id='nö-such-täsk ✓ 100%'))
            out['get_unknown_unicode'] = 'no error'
        except Exception as e:  # noqa: BLE001
            out['get_unknown_unicode'] = f'{type(e).__name__}: {e}'
        ev = await only_response(blocking, SendMessageRequest(message=user_message('done already')))
        done = ev.task

        async def error_of(name, coro):
            try:
                await coro
                out[name] = 'no error'
            except Exception as e:  # noqa: BLE001
                out[name] = type(e).__name__

        async def subscribe_done():
            return [e async for e in streaming.subscribe(SubscribeToTaskRequest(id=done.id))]

        await error_of('cancel_completed', blocking.cancel_task(CancelTaskRequest(id=done.id)))
        await error_of('subscribe_completed', subscribe_done())
        more = user_message('more', task_id=done.id, context_id=done.context_id)
        await error_of('send_to_completed', only_response(blocking, SendMessageRequest(message=more)))
        hook = TaskPushNotificationConfig(task_id=done.id, url='https://hooks.invalid/a2a')
        await error_of('push_config', blocking.create_task_push_notification_config(hook))
        return out

    await scenario('send_blocking', send_blocking())
    await scenario('send_return_immediately', send_return_immediately())
    await scenario('stream_countdown', stream_countdown())
    await scenario('get_and_list', get_and_list())
    await scenario('cancel_running', cancel_running())
    await scenario('subscribe_running', subscribe_running())
    await scenario('multi_turn', multi_turn())
    await scenario('multi_turn_streaming', multi_turn_streaming())
    await scenario('errors', errors())
    await blocking.close()
    await streaming.close()
    return report


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: py_client.py BASE_URL JSONRPC|HTTP+JSON|GRPC')
    report = asyncio.run(asyncio.wait_for(run(sys.argv[1], sys.argv[2]), timeout=90))
    print(json.dumps(report, indent=1))


if __name__ == '__main__':
    main()
