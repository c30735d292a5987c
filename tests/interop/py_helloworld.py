"""The official Python SDK's "Hello World" sample agent, served over JSON-RPC and gRPC, for
`a2a inspect`'s browser test (a2a-client/tests/inspect_browser.rs) to drive.

Where it comes from: the helloworld sample of the A2A project's samples repository
(github.com/a2aproject/a2a-samples, samples/python/agents/helloworld: agent_executor.py and
__main__.py), rewritten here in a few lines against the pinned a2a-sdk of requirements-v1.txt
(installed by setup.sh into .scratch/interop/py1). It behaves as the sample does: each message
starts a task, which reports WORKING with the message `Processing request...`, adds the artifact
`Hello, World! I have received your request (<text>)`, then COMPLETED with the message
`Request is completed!`; cancel is not supported. The card is the sample's (`Hello World Agent`,
skill `echo_bot`, streaming), with the gRPC interface the sample's comment offers as an
alternative listed after its JSON-RPC one.

Usage: python py_helloworld.py [PORT]    (default 0: any free port)

Prints `LISTENING <port>` once both sockets are bound (gRPC on a port of its own), then serves
until killed.
"""

import asyncio
import socket
import sys

import grpc.aio
import uvicorn
from starlette.applications import Starlette

from a2a.helpers import get_message_text, new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server


class HelloWorldExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue=event_queue, task_id=task.id, context_id=task.context_id)
        await updater.update_status(
            state=TaskState.TASK_STATE_WORKING, message=new_text_message('Processing request...')
        )
        query = get_message_text(context.message)
        answer = f'Hello, World! I have received your request ({query})' if query else 'No text input is provided!'
        await updater.add_artifact(parts=[new_text_part(text=answer, media_type='text/plain')])
        await updater.update_status(
            state=TaskState.TASK_STATE_COMPLETED, message=new_text_message('Request is completed!')
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError('Cancel is not supported.')


async def serve(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', port))
    sock.listen(128)
    port = sock.getsockname()[1]
    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port('127.0.0.1:0')
    if grpc_port == 0:
        sys.exit('py_helloworld.py: cannot bind a gRPC port on 127.0.0.1')
    card = AgentCard(
        name='Hello World Agent',
        description='Just a hello world agent',
        version='0.0.1',
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[
            AgentInterface(protocol_binding='JSONRPC', protocol_version='1.0', url=f'http://127.0.0.1:{port}'),
            AgentInterface(protocol_binding='GRPC', protocol_version='1.0', url=f'127.0.0.1:{grpc_port}'),
        ],
        skills=[
            AgentSkill(
                id='echo_bot',
                name='Echo Bot',
                description='An example agent that acknowledges client request and responds with a "Hello World" message.',
                input_modes=['text/plain'],
                output_modes=['text/plain'],
                tags=['a2a', 'echo-example'],
                examples=['hi', 'how are you'],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=HelloWorldExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    await grpc_server.start()
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, '/')
    http = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level='warning'))
    print(f'LISTENING {port}', flush=True)
    await http.serve(sockets=[sock])


if __name__ == '__main__':
    asyncio.run(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
