"""The wheel run the way the README tells users to run it without installing: `uvx` and `pipx run`.

Each runner makes its own environment from the wheel and its declared dependencies (from the
package registry), so these also prove that the wheel's dependency list is complete: the test
group installed beside the server in the e2e run cannot hide a missing one here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import magnotia_mcp
from devkit.storefactory import StoreBuilder
from tests.support.server import ServerProcess, check_clean_exit

INSTALL_TIMEOUT = 600  # a cold cache fetches the dependencies from the registry


def runner_command(name: str, wheel: Path) -> list[str]:
    """The command line that runs the wheel's console script with runner name."""
    here = Path(sys.executable).parent
    program = next((str(p) for p in (here / name, here / f"{name}.exe") if p.exists()), None) or shutil.which(name)
    if program is None:
        pytest.skip(f"{name} is not installed (nox -s dist installs it in the test venv)")
    if name == "uvx":
        return [program, "--from", str(wheel), "magnotia-mcp"]
    return [program, "run", "--spec", str(wheel), "magnotia-mcp"]


# Runners find their interpreter here and must never fetch one: only the package registries are reachable.
RUNNER_ENV = {"UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable, "PIPX_DEFAULT_PYTHON": sys.executable}


@pytest.mark.parametrize("runner", ["uvx", "pipx"])
def test_runner_starts_the_server_from_the_wheel(
    runner: str, wheel: Path, new_store: Callable[..., StoreBuilder], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in RUNNER_ENV.items():
        monkeypatch.setenv(key, value)
    argv = runner_command(runner, wheel)
    # First the runner builds its environment (the slow part, bounded on its own), and --version tells what it runs.
    shown = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
    assert shown.returncode == 0, shown.stderr
    assert magnotia_mcp.__version__ in shown.stdout, shown.stdout

    store = new_store()
    store.transcript(title="Roadmap sync", raw_text="We moved the mobile launch to June.")
    db = store.close()
    proc = ServerProcess([*argv, "--db", str(db)])
    info = proc.initialize()["result"]["serverInfo"]
    assert (info["name"], info["version"]) == ("magnotia-mcp", magnotia_mcp.__version__)
    tools = {t["name"] for t in proc.request("tools/list")["result"]["tools"]}
    assert {"list_transcripts", "get_transcript", "search_transcripts", "list_tasks"} <= tools
    hits = proc.result("search_transcripts", {"query": "mobile launch"})["hits"]
    assert [h["title"] for h in hits] == ["Roadmap sync"]
    check_clean_exit(proc)
