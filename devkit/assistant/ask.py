"""The command-line client the model (acting as the user's assistant) calls: one tool call per run.

Starts the server (a fresh process per call: stateless, as simple as a host's first call), calls one tool,
prints exactly the text a host shows the model (the result's ``content`` text) and appends to the log what it
cost: the tool, its arguments, the bytes shown and their estimated tokens (the server's own ``budget.estimate``).

    python -m devkit.assistant.ask --server ours --db STORE --log LOG search_transcripts '{"query": "budget"}'
    python -m devkit.assistant.ask --server naive --db STORE --list-tools

``ours`` runs this checkout's magnotia-mcp (``--src`` another one's, e.g. the main branch for "before") with
time words read against the store's fixed now (``clock``) in UTC; ``naive`` the baseline server (``naive``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from magnotia_mcp.tokencost import estimate

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120.0


def server_params(server: str, db: Path, src: Path) -> StdioServerParameters:
    module = {"ours": "devkit.assistant.clock", "naive": "devkit.assistant.naive"}[server]
    path = os.pathsep.join([str(src), str(REPO)])
    env = {"PYTHONPATH": path, "MAGNOTIA_TZ": "UTC", "MAGNOTIA_MCP_LOG_LEVEL": "error"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", module, "--db", str(db.resolve())], env=env, cwd=str(REPO)
    )


async def list_tools(params: StdioServerParameters) -> str:
    async with Client(params, mode="legacy", read_timeout_seconds=TIMEOUT) as client:
        tools = (await client.list_tools()).tools
        shown = {
            "instructions": client.instructions,
            "tools": [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools],
        }
    return json.dumps(shown, ensure_ascii=False, indent=2)


async def call(params: StdioServerParameters, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """The content text a host shows the model, and whether it is an error."""
    async with Client(params, mode="legacy", read_timeout_seconds=TIMEOUT) as client:
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as error:  # a JSON-RPC error: a host shows the model its message
            return f"Error: {error.message}", True
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return text, bool(result.is_error)


def log_call(log: Path, server: str, tool: str, arguments: dict[str, Any], text: str, error: bool) -> None:
    record = {
        "server": server,
        "tool": tool,
        "args": arguments,
        "bytes": len(text.encode("utf-8")),
        "tokens": estimate(text),
        "error": error,
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", choices=("ours", "naive"), required=True)
    parser.add_argument("--db", type=Path, required=True, help="the store")
    parser.add_argument("--log", type=Path, help="append one JSON line per call (tool, args, bytes, tokens)")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the magnotia_mcp sources ours runs")
    parser.add_argument("--list-tools", action="store_true", help="print the instructions and tool definitions")
    parser.add_argument("tool", nargs="?")
    parser.add_argument("arguments", nargs="?", default="{}", help="the tool's arguments as a JSON object")
    args = parser.parse_args(argv)
    if not args.db.is_file():
        parser.error(f"no store at {args.db}")
    params = server_params(args.server, args.db, args.src)
    if args.list_tools:
        print(asyncio.run(list_tools(params)))
        return 0
    if not args.tool:
        parser.error("name a tool (or --list-tools)")
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as bad:
        parser.error(f"arguments are not JSON: {bad}")
    if not isinstance(arguments, dict):
        parser.error("arguments must be a JSON object")
    text, failed = asyncio.run(call(params, args.tool, arguments))
    if args.log:  # before printing: a reader that stops early (| head) must not lose the call's cost
        log_call(args.log, args.server, args.tool, arguments, text, failed)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
