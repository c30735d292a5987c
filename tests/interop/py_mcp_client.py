"""Drives `a2a mcp` with the official MCP Python SDK's client (mcp 2.x), as an MCP host would.

Usage: python py_mcp_client.py MODE stdio A2A_BINARY AGENT_URL   (starts `A2A_BINARY mcp AGENT_URL`)
       python py_mcp_client.py MODE http MCP_URL                 (a running `a2a mcp --http` endpoint)

MODE is the SDK's client API:
  session  `mcp.ClientSession`, the initialize handshake (the SDK's newest handshake version,
           2025-11-25); the bridge elicits with an `elicitation/create` request to the client.
  auto     `mcp.Client(..., mode="auto")`, the high-level client: it probes `server/discover`
           first and, when the server answers, runs stateless at 2026-07-28, where the bridge
           elicits with an `input_required` result (MRTR) that `Client.call_tool` answers through
           the same elicitation callback and retries by itself. (It falls back to the handshake
           when the probe fails; the reported protocolVersion shows which happened.)

The agent must be the a2a-rust demo agent (echo, `countdown N`, `greet`). The client has an
elicitation callback that accepts with {"answer": "Ada"} and records each question, and a
progress callback on `countdown` that records each progress message. It lists the tools, calls
`countdown` with "countdown 3", `greet` with "greet", and a tool that does not exist, then prints
one line of JSON on stdout:

  {"protocolVersion": "<the version really negotiated>", "tools": [names],
   "countdown": {"text": [...], "isError": bool, "progress": [messages]},
   "greet": {"text": [...], "isError": bool, "elicited": [messages]},
   "unknown_tool": "<the error>"}

The Rust test (a2a-client/tests/mcp_python.rs) asserts on it. Gives up after 60 s (exit 1,
saying so on stderr).
"""

import json
import sys

import anyio
import mcp.types as types
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

DEADLINE_SECONDS = 60


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


async def exercise(client, protocol_version, elicited):
    """The calls and the report; `client` is a `ClientSession` or a `Client` (same call API)."""
    report = {'protocolVersion': protocol_version}

    tools = await client.list_tools()
    report['tools'] = [t.name for t in tools.tools]

    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    result = await client.call_tool('countdown', {'text': 'countdown 3'}, progress_callback=on_progress)
    report['countdown'] = {'text': texts(result), 'isError': bool(result.is_error), 'progress': progress}

    result = await client.call_tool('greet', {'text': 'greet'})
    report['greet'] = {'text': texts(result), 'isError': bool(result.is_error), 'elicited': elicited}

    try:
        result = await client.call_tool('no_such_tool', {'text': 'x'})
        # Not a protocol error: report the result, which the test then rejects.
        report['unknown_tool'] = None
        report['unknown_tool_result'] = {'text': texts(result), 'isError': bool(result.is_error)}
    except MCPError as e:
        report['unknown_tool'] = str(e)
    return report


def elicitation_callback(elicited):
    async def elicit(context, params):
        elicited.append(params.message)
        return types.ElicitResult(action='accept', content={'answer': 'Ada'})

    return elicit


async def drive_session(transport):
    elicited = []
    async with transport as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitation_callback(elicited)) as session:
            initialized = await session.initialize()
            return await exercise(session, initialized.protocol_version, elicited)


async def drive_auto(server):
    elicited = []
    async with Client(server, mode='auto', elicitation_callback=elicitation_callback(elicited)) as client:
        return await exercise(client, client.protocol_version, elicited)


async def main(argv):
    args = argv[1:]
    mode = args.pop(0) if args else None
    if len(args) == 3 and args[0] == 'stdio':
        server = StdioServerParameters(command=args[1], args=['mcp', args[2]])
    elif len(args) == 2 and args[0] == 'http':
        server = args[1]
    else:
        mode = None
    if mode == 'session':
        transport = stdio_client(server) if isinstance(server, StdioServerParameters) else streamable_http_client(server)
        drive = drive_session(transport)
    elif mode == 'auto':
        # A URL string is streamable HTTP, StdioServerParameters starts the binary.
        drive = drive_auto(server)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    report = None
    with anyio.move_on_after(DEADLINE_SECONDS) as deadline:
        report = await drive
    if deadline.cancelled_caught:
        print(f'py_mcp_client: gave up after {DEADLINE_SECONDS} s', file=sys.stderr)
        return 1
    print(json.dumps(report), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(anyio.run(main, sys.argv))
