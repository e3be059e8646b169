"""Start `magnotia-mcp --demo` the way an MCP host does and show a short exchange.

Run it with `nox -s demo`. It speaks raw JSON-RPC lines over the server's
stdin/stdout, so what you see is exactly what a host sees.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

EXCHANGE = [
    (
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo", "version": "1"}},
    ),
    ("tools/list", {}),
    ("tools/call", {"name": "list_transcripts", "arguments": {"limit": 3}}),
    ("tools/call", {"name": "search_transcripts", "arguments": {"query": "privacy review"}}),
    # A question, as a person asks it: the meeting that answers it comes first.
    (
        "tools/call",
        {"name": "search_transcripts", "arguments": {"query": "what did we decide about the mobile launch"}},
    ),
    ("tools/call", {"name": "list_tasks", "arguments": {"status": "open", "limit": 2}}),
    ("tools/call", {"name": "get_transcript", "arguments": {"id": "no-such-id"}}),
]


def show(direction: str, message: object) -> None:
    text = json.dumps(message, ensure_ascii=False)
    print(f"{direction} " + (text if len(text) <= 300 else text[:297] + "..."))


def main() -> int:
    proc = subprocess.Popen(
        [sys.executable, "-m", "magnotia_mcp", "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    for request_id, (method, params) in enumerate(EXCHANGE, start=1):
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        show("->", request)
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        response = json.loads(proc.stdout.readline())
        show("<-", response)
        result = response.get("result", {})
        if method == "tools/call" and "content" in result:
            print(textwrap.indent(result["content"][0]["text"][:600], "   | "))
        if method == "initialize":
            proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        print()
    proc.stdin.close()
    return proc.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
