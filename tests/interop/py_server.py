"""A2A agents served by the official Python SDK (a2a-sdk 1.x), for our Rust client to talk to.

Usage: python py_server.py [PORT]     (default 0: any free port)

Prints one line `LISTENING <port>` on stdout once every socket is bound, then serves until
killed. Three agents share the HTTP port, each under its own path with its own agent card; the
two v1.0 agents are also served over gRPC (the SDK's GrpcHandler on a grpc.aio server, plain
HTTP/2 on 127.0.0.1, a port of its own per agent since gRPC has no path), listed in their cards
as a GRPC interface at `127.0.0.1:<grpc port>`:

- /echo   (JSON-RPC at /echo/jsonrpc, HTTP+JSON at /echo/rest, GRPC; protocol 1.0): creates a task,
          reports WORKING, streams the artifact `echo: <text>` in two chunks (`echo: ` then
          `<text>`, the second with append=true, lastChunk=true) ~50 ms apart, then COMPLETED.
          A text starting with `msg:` is answered with a single Message `you said: <rest>`
          (no task). `quiet <seconds>` reports WORKING, sends nothing for that long, then
          completes with the artifact `quiet for <seconds> s` (a stream with nothing to say).
- /ask    (same three bindings): the first message of a task ends in INPUT_REQUIRED with the
          question `Which city?`; the next message in that task completes it with the
          artifact `weather in <answer>: sunny`.
- /legacy (JSON-RPC only, card advertises protocol 0.3 only, SDK's v0.3 compat layer on):
          the echo agent, for v0.3 clients.
"""

import asyncio
import socket
import sys

import grpc.aio
import uvicorn

from starlette.applications import Starlette
from starlette.routing import Mount

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server


async def start_task(context: RequestContext, queue: EventQueue) -> TaskUpdater:
    """Publishes the Task (first event) if this message starts one; returns its updater."""
    task = context.current_task
    if task is None:
        task = new_task_from_user_message(context.message)
        await queue.enqueue_event(task)
    return TaskUpdater(queue, task.id, task.context_id)


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if text.startswith('msg:'):
            reply = new_text_message(
                f'you said: {text[4:].strip()}', context_id=context.context_id, role=Role.ROLE_AGENT
            )
            await event_queue.enqueue_event(reply)
            return
        updater = await start_task(context, event_queue)
        if text.startswith('quiet '):
            await updater.start_work()
            await asyncio.sleep(float(text[6:]))
            await updater.add_artifact([new_text_part(f'quiet for {text[6:]} s')], name='quiet')
            await updater.complete()
            return
        await updater.start_work(updater.new_agent_message([new_text_part('echoing')]))
        await asyncio.sleep(0.05)
        await updater.add_artifact([new_text_part('echo: ')], artifact_id='echo', name='echo')
        await asyncio.sleep(0.05)
        await updater.add_artifact(
            [new_text_part(text)], artifact_id='echo', name='echo', append=True, last_chunk=True
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


class AskExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        answering = context.current_task is not None
        updater = await start_task(context, event_queue)
        if not answering:
            await updater.requires_input(updater.new_agent_message([new_text_part('Which city?')]))
            return
        city = context.get_user_input().strip() or 'nowhere'
        await updater.start_work()
        await updater.add_artifact([new_text_part(f'weather in {city}: sunny')], name='forecast')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def card(name: str, skill: str, interfaces: list[AgentInterface]) -> AgentCard:
    return AgentCard(
        name=name,
        description=f'{name} (a2a-sdk interop fixture)',
        version='1.0.0',
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id=skill, name=skill, description=f'{skill} skill', tags=[skill])],
    )


def agent_routes(
    base: str,
    path: str,
    name: str,
    executor: AgentExecutor,
    legacy: bool = False,
    grpc_server: tuple[grpc.aio.Server, str] | None = None,
):
    """The agent's HTTP routes (card, JSON-RPC, HTTP+JSON). With `grpc_server` (a server bound
    but not started, and its `host:port`), its gRPC service too, sharing the agent's task store."""
    if legacy:
        interfaces = [AgentInterface(url=f'{base}{path}/jsonrpc', protocol_binding='JSONRPC', protocol_version='0.3')]
    else:
        interfaces = [
            AgentInterface(url=f'{base}{path}/jsonrpc', protocol_binding='JSONRPC', protocol_version='1.0'),
            AgentInterface(url=f'{base}{path}/rest', protocol_binding='HTTP+JSON', protocol_version='1.0'),
        ]
    if grpc_server is not None:
        interfaces.append(AgentInterface(url=grpc_server[1], protocol_binding='GRPC', protocol_version='1.0'))
    agent_card = card(name, path.strip('/'), interfaces)
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=agent_card)
    if grpc_server is not None:
        add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server[0])
    routes = create_agent_card_routes(agent_card)
    routes += create_jsonrpc_routes(handler, rpc_url='/jsonrpc', enable_v0_3_compat=legacy)
    if not legacy:
        routes += create_rest_routes(handler, path_prefix='/rest')
    # One mount per agent: the REST routes end with a catch-all `/{tenant}` mount.
    return Mount(path, routes=routes)


def grpc_server() -> tuple[grpc.aio.Server, str]:
    """A grpc.aio server bound to a free port of 127.0.0.1 (plain HTTP/2), and its `host:port`."""
    server = grpc.aio.server()
    port = server.add_insecure_port('127.0.0.1:0')
    if port == 0:
        sys.exit('py_server.py: cannot bind a gRPC port on 127.0.0.1')
    return server, f'127.0.0.1:{port}'


async def serve(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', port))
    sock.listen(128)  # connections queue up until uvicorn accepts them
    port = sock.getsockname()[1]
    base = f'http://127.0.0.1:{port}'
    echo_grpc, ask_grpc = grpc_server(), grpc_server()
    routes = [
        agent_routes(base, '/echo', 'python-echo', EchoExecutor(), grpc_server=echo_grpc),
        agent_routes(base, '/ask', 'python-ask', AskExecutor(), grpc_server=ask_grpc),
        agent_routes(base, '/legacy', 'python-legacy-echo', EchoExecutor(), legacy=True),
    ]
    for server, _ in (echo_grpc, ask_grpc):
        await server.start()
    app = Starlette(routes=routes)
    http = uvicorn.Server(uvicorn.Config(app, log_level='warning'))
    print(f'LISTENING {port}', flush=True)
    await http.serve(sockets=[sock])


def main() -> None:
    asyncio.run(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))


if __name__ == '__main__':
    main()
