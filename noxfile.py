"""Developer and CI tasks: `nox -s test` and `nox -s lint` by default; demo, freeze, docker and bench on demand."""

from __future__ import annotations

import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["test", "lint"]

ROOT = Path(__file__).parent
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def install_project(session: nox.Session, *groups: str) -> None:
    """Install the project (not editable: the installed wheel is what users run) and report versions."""
    session.install(".", *[arg for g in groups for arg in ("--group", g)])
    session.run(
        "python",
        "-c",
        "import sys, sqlite3; print(f'Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}')",
        silent=False,
    )


@nox.session(python=PYTHON)
def test(session: nox.Session) -> None:
    """Unit and end-to-end tests against the installed package."""
    install_project(session, "test")
    session.run("pytest", "--strict-config", "--strict-markers", *(session.posargs or ("tests/",)))


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and mypy --strict."""
    install_project(session, "lint")
    session.run("ruff", "check", "src", "tests", "noxfile.py")
    session.run("ruff", "format", "--check", "src", "tests", "noxfile.py")
    session.run("mypy", "--strict", "src")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Serve the sample store and show a short client exchange, the way a host talks to it."""
    install_project(session)
    session.run("python", "scripts/demo_exchange.py", *session.posargs)
