"""A2A agents served by the official Python SDK (a2a-sdk 1.x), for our Rust client to talk to.

Usage: python py_server.py [PORT]     (default 0: any free port)

Prints one line `LISTENING <port>` on stdout once the socket is bound, then serves until killed.
Three agents share the port, each under its own path with its own agent card:

- /echo   (JSON-RPC at /echo/jsonrpc, HTTP+JSON at /echo/rest; protocol 1.0): creates a task,
          reports WORKING, streams the artifact `echo: <text>` in two chunks (`echo: ` then
          `<text>`, the second with append=true, lastChunk=true) ~50 ms apart, then COMPLETED.
          A text starting with `msg:` is answered with a single Message `you said: <rest>`
          (no task).
- /ask    (same bindings): the first message of a task ends in INPUT_REQUIRED with the
          question `Which city?`; the next message in that task completes it with the
          artifact `weather in <answer>: sunny`.
- /legacy (JSON-RPC only, card advertises protocol 0.3 only, SDK's v0.3 compat layer on):
          the echo agent, for v0.3 clients.
"""

import asyncio
import socket
import sys

import uvicorn

from starlette.applications import Starlette
from starlette.routing import Mount

from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role


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


def agent_routes(base: str, path: str, name: str, executor: AgentExecutor, legacy: bool = False):
    if legacy:
        interfaces = [AgentInterface(url=f'{base}{path}/jsonrpc', protocol_binding='JSONRPC', protocol_version='0.3')]
    else:
        interfaces = [
            AgentInterface(url=f'{base}{path}/jsonrpc', protocol_binding='JSONRPC', protocol_version='1.0'),
            AgentInterface(url=f'{base}{path}/rest', protocol_binding='HTTP+JSON', protocol_version='1.0'),
        ]
    agent_card = card(name, path.strip('/'), interfaces)
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=agent_card)
    routes = create_agent_card_routes(agent_card)
    routes += create_jsonrpc_routes(handler, rpc_url='/jsonrpc', enable_v0_3_compat=legacy)
    if not legacy:
        routes += create_rest_routes(handler, path_prefix='/rest')
    # One mount per agent: the REST routes end with a catch-all `/{tenant}` mount.
    return Mount(path, routes=routes)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', port))
    sock.listen(128)  # connections queue up until uvicorn accepts them
    port = sock.getsockname()[1]
    base = f'http://127.0.0.1:{port}'
    routes = [
        agent_routes(base, '/echo', 'python-echo', EchoExecutor()),
        agent_routes(base, '/ask', 'python-ask', AskExecutor()),
        agent_routes(base, '/legacy', 'python-legacy-echo', EchoExecutor(), legacy=True),
    ]
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning'))
    print(f'LISTENING {port}', flush=True)
    server.run(sockets=[sock])


if __name__ == '__main__':
    main()
