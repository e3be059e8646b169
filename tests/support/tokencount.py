"""Real tokenizers (tests/tokencount: OpenAI's o200k_base and Anthropic's legacy Claude tokenizer), asked from Node.

The budget's estimate is checked against what they count. They come from npm packages pinned in
tests/tokencount/package-lock.json, installed by `nox -s test` (``npm ci --ignore-scripts``). One Node
process serves the whole test run: loading the two vocabularies takes about a second.
"""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "tokencount"
NAMES = ("o200k", "claude")


def missing() -> str | None:
    """Why the tokenizers cannot run here, or None when they can."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    for package in ("tiktoken", "@anthropic-ai/tokenizer"):
        if not (FOLDER / "node_modules" / package / "package.json").is_file():
            return f"{package} is not installed: npm ci --ignore-scripts --prefix {FOLDER}"
    return None


_process: list[subprocess.Popen[str]] = []


def _node() -> subprocess.Popen[str]:
    if not _process or _process[0].poll() is not None:
        node = shutil.which("node") or "node"
        proc = subprocess.Popen(
            [node, str(FOLDER / "count.mjs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        _process[:] = [proc]
        atexit.register(_stop, proc)
    return _process[0]


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    proc.wait(timeout=10)


def counts(texts: list[str]) -> list[tuple[int, int]]:
    """Each text's tokens by o200k_base and by the Claude tokenizer."""
    proc = _node()
    assert proc.stdin is not None
    assert proc.stdout is not None
    out = []
    for text in texts:  # one at a time: a pipe's buffer would fill with a long batch both ways
        proc.stdin.write(json.dumps(text, ensure_ascii=True) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        assert line, "the tokenizers' process ended"
        o200k, claude = json.loads(line)
        out.append((int(o200k), int(claude)))
    return out


def most(text: str) -> int:
    """text's tokens by whichever of the two tokenizers counts more."""
    return max(counts([text])[0])
