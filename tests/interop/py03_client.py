"""Drives an A2A server with the official Python SDK client of the v0.3 generation (a2a-sdk 0.3.x).

Usage: python py03_client.py BASE_URL

The client is built from the server's agent card the 0.3 way (top-level `url` and
`preferredTransport`, JSON-RPC with `message/send`, `message/stream`, `tasks/get`,
`tasks/cancel`, `tasks/resubscribe`). The server must run the a2a-rust demo agent. One JSON
report goes to stdout ({"error": "..."} for a scenario that raised); the Rust test
(tests/tests/interop_python.rs) asserts on it.
"""

import asyncio
import json
import sys
import traceback
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    Message,
    MessageSendConfiguration,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
)

TERMINAL = {'completed', 'failed', 'canceled', 'rejected'}


def user_message(text, task_id=None, context_id=None):
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        task_id=task_id,
        context_id=context_id,
    )


def text_of(parts):
    return ''.join(p.root.text for p in parts if isinstance(p.root, TextPart))


def task_summary(t: Task):
    return {
        'kind': t.kind,
        'id': t.id,
        'contextId': t.context_id,
        'state': t.status.state.value,
        'statusText': text_of(t.status.message.parts) if t.status.message else None,
        'artifacts': [text_of(a.parts) for a in (t.artifacts or [])],
    }


def update_summary(u):
    if isinstance(u, TaskStatusUpdateEvent):
        return {
            'kind': u.kind,
            'taskId': u.task_id,
            'state': u.status.state.value,
            'text': text_of(u.status.message.parts) if u.status.message else None,
            'final': u.final,
        }
    if isinstance(u, TaskArtifactUpdateEvent):
        return {
            'kind': u.kind,
            'taskId': u.task_id,
            'artifactId': u.artifact.artifact_id,
            'text': text_of(u.artifact.parts),
            'append': u.append,
            'lastChunk': u.last_chunk,
        }
    return {'kind': type(u).__name__}


def event_summary(ev):
    """A streamed ClientEvent is (task so far, update or None for a Task event)."""
    if isinstance(ev, Message):
        return {'kind': 'message', 'text': text_of(ev.parts)}
    task, update = ev
    return task_summary(task) if update is None else update_summary(update)


async def run(base_url):
    http = httpx.AsyncClient(timeout=30)
    card = await A2ACardResolver(http, base_url).get_agent_card()
    blocking = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
    streaming = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
    report = {'cardProtocolVersion': card.protocol_version, 'cardUrl': card.url}

    async def only(client, message, configuration=None):
        events = [ev async for ev in client.send_message(message, configuration=configuration)]
        if len(events) != 1:
            raise AssertionError(f'non-streaming send yielded {len(events)} events')
        ev = events[0]
        return ev if isinstance(ev, Message) else ev[0]

    async def scenario(name, coro):
        try:
            report[name] = await coro
        except Exception as e:  # noqa: BLE001 - the report carries it to the Rust test
            report[name] = {'error': f'{type(e).__name__}: {e}', 'trace': traceback.format_exc(limit=4)}

    async def send_blocking():
        return task_summary(await only(blocking, user_message('hello from python 0.3')))

    async def send_non_blocking():
        first = await only(blocking, user_message('countdown 2'), MessageSendConfiguration(blocking=False))
        final = None
        for _ in range(100):
            t = await blocking.get_task(TaskQueryParams(id=first.id))
            if t.status.state.value in TERMINAL:
                final = task_summary(t)
                break
            await asyncio.sleep(0.1)
        return {'first': task_summary(first), 'final': final}

    async def stream_countdown():
        events, last = [], None
        async for ev in streaming.send_message(user_message('countdown 3')):
            events.append(event_summary(ev))
            last = ev
        # The SDK's ClientTaskManager folds the events into a task: what a v0.3 app sees.
        return {'events': events, 'assembled': task_summary(last[0])}

    async def get():
        sent = await only(blocking, user_message('get me'))
        got = await blocking.get_task(TaskQueryParams(id=sent.id))
        return {'sent': task_summary(sent), 'got': task_summary(got)}

    async def cancel_running():
        started = await only(blocking, user_message('countdown 20'), MessageSendConfiguration(blocking=False))
        canceled = await blocking.cancel_task(TaskIdParams(id=started.id))
        after = await blocking.get_task(TaskQueryParams(id=started.id))
        return {'started': task_summary(started), 'cancel': task_summary(canceled), 'after': task_summary(after)}

    async def subscribe_running():
        started = await only(blocking, user_message('countdown 10'), MessageSendConfiguration(blocking=False))
        events = [event_summary(ev) async for ev in streaming.resubscribe(TaskIdParams(id=started.id))]
        return {'taskId': started.id, 'events': events}

    async def multi_turn():
        asked = await only(blocking, user_message('greet'))
        answered = await only(blocking, user_message('Ada', task_id=asked.id, context_id=asked.context_id))
        return {'asked': task_summary(asked), 'answered': task_summary(answered)}

    async def errors():
        out = {}

        async def error_of(name, coro):
            try:
                await coro
                out[name] = 'no error'
            except Exception as e:  # noqa: BLE001
                code = getattr(getattr(e, 'error', None), 'code', None)
                out[name] = code if code is not None else f'{type(e).__name__}: {e}'

        async def resubscribe_done(task_id):
            return [ev async for ev in streaming.resubscribe(TaskIdParams(id=task_id))]

        await error_of('get_unknown', blocking.get_task(TaskQueryParams(id='no-such-task')))
        done = await only(blocking, user_message('done already'))
        await error_of('cancel_completed', blocking.cancel_task(TaskIdParams(id=done.id)))
        more = user_message('more', task_id=done.id, context_id=done.context_id)
        await error_of('send_to_completed', only(blocking, more))
        # Errors of the streaming methods: v0.3 carries them as a JSON-RPC error inside the
        # SSE stream, which is the only place this client reads them.
        await error_of('resubscribe_completed', resubscribe_done(done.id))
        await error_of('resubscribe_unknown', resubscribe_done('no-such-task'))

        async def stream_to_done():
            more = user_message('more', task_id=done.id, context_id=done.context_id)
            return [ev async for ev in streaming.send_message(more)]

        await error_of('stream_to_completed', stream_to_done())
        return out

    await scenario('send_blocking', send_blocking())
    await scenario('send_non_blocking', send_non_blocking())
    await scenario('stream_countdown', stream_countdown())
    await scenario('get', get())
    await scenario('cancel_running', cancel_running())
    await scenario('subscribe_running', subscribe_running())
    await scenario('multi_turn', multi_turn())
    await scenario('errors', errors())
    await http.aclose()
    return report


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: py03_client.py BASE_URL')
    report = asyncio.run(asyncio.wait_for(run(sys.argv[1]), timeout=90))
    print(json.dumps(report, indent=1))


if __name__ == '__main__':
    main()
