"""Drives `a2a mcp` with the official MCP Python SDK's client (mcp 2.x), as an MCP host would.

Usage: python py_mcp_client.py stdio A2A_BINARY AGENT_URL   (starts `A2A_BINARY mcp AGENT_URL`)
       python py_mcp_client.py http MCP_URL                 (a running `a2a mcp --http` endpoint)

The agent must be the a2a-rust demo agent (echo, `countdown N`, `greet`). The client is a
`mcp.ClientSession` (the initialize handshake) with an elicitation callback that accepts with
{"answer": "Ada"} and records each question, and a progress callback on `countdown` that records
each progress message. It lists the tools, calls `countdown` with "countdown 3", `greet` with
"greet", and a tool that does not exist, then prints one line of JSON on stdout:

  {"protocolVersion": "...", "tools": [names],
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
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

DEADLINE_SECONDS = 60


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


async def drive(read, write):
    elicited = []

    async def elicit(context, params):
        elicited.append(params.message)
        return types.ElicitResult(action='accept', content={'answer': 'Ada'})

    async with ClientSession(read, write, elicitation_callback=elicit) as session:
        initialized = await session.initialize()
        report = {'protocolVersion': initialized.protocol_version}

        tools = await session.list_tools()
        report['tools'] = [t.name for t in tools.tools]

        progress = []

        async def on_progress(value, total, message):
            progress.append(message)

        result = await session.call_tool(
            'countdown', {'text': 'countdown 3'}, progress_callback=on_progress
        )
        report['countdown'] = {'text': texts(result), 'isError': bool(result.is_error), 'progress': progress}

        result = await session.call_tool('greet', {'text': 'greet'})
        report['greet'] = {'text': texts(result), 'isError': bool(result.is_error), 'elicited': elicited}

        try:
            result = await session.call_tool('no_such_tool', {'text': 'x'})
            # Not a protocol error: report the result, which the test then rejects.
            report['unknown_tool'] = None
            report['unknown_tool_result'] = {'text': texts(result), 'isError': bool(result.is_error)}
        except MCPError as e:
            report['unknown_tool'] = str(e)
        return report


async def main(argv):
    if len(argv) == 4 and argv[1] == 'stdio':
        server = StdioServerParameters(command=argv[2], args=['mcp', argv[3]])
        transport = stdio_client(server)
    elif len(argv) == 3 and argv[1] == 'http':
        transport = streamable_http_client(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    with anyio.move_on_after(DEADLINE_SECONDS) as deadline:
        async with transport as (read, write):
            report = await drive(read, write)
    if deadline.cancelled_caught:
        print(f'py_mcp_client: gave up after {DEADLINE_SECONDS} s', file=sys.stderr)
        return 1
    print(json.dumps(report), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(anyio.run(main, sys.argv))
