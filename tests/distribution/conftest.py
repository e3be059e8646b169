"""Tests of the built distributions: ``nox -s dist`` runs them once per artifact with ``--dist-artifact PATH``.

They run in a fresh venv that holds the artifact and the test group (never the source
tree). Without ``--dist-artifact`` (``nox -s test``, a plain ``pytest tests/``) every test
here skips: there is nothing built to check.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def artifact(request: pytest.FixtureRequest) -> Path:
    """The wheel or sdist under test."""
    given = request.config.getoption("--dist-artifact")
    if not given:
        pytest.skip("no --dist-artifact given: nox -s dist builds the wheel and sdist and runs these tests on each")
    path = Path(given).resolve()
    assert path.is_file(), f"--dist-artifact {path} does not exist"
    return path


@pytest.fixture(scope="session")
def wheel(artifact: Path) -> Path:
    if artifact.suffix != ".whl":
        pytest.skip(f"{artifact.name} is not a wheel")
    return artifact


@pytest.fixture(scope="session")
def sdist(artifact: Path) -> Path:
    if not artifact.name.endswith(".tar.gz"):
        pytest.skip(f"{artifact.name} is not an sdist")
    return artifact
