"""What PyPI gets: the wheel's and the sdist's files and metadata, and the package installed from them."""

from __future__ import annotations

import email.message
import email.parser
import importlib.metadata
import importlib.resources
import re
import sys
import tarfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import parse_sdist_filename, parse_wheel_filename

import magnotia_mcp
from tests.distribution.conftest import ROOT

DIST = "magnotia-mcp"
REQUIRED_CLASSIFIERS = {
    "Environment :: Console",
    "Intended Audience :: End Users/Desktop",
    "License :: OSI Approved :: MIT License",
    "Operating System :: POSIX :: Linux",
    "Operating System :: MacOS",
    "Operating System :: Microsoft :: Windows",
    *(f"Programming Language :: Python :: 3.{minor}" for minor in range(10, 14)),
    "Typing :: Typed",
}
URL_LABELS = {"Homepage", "Source", "Issues", "Documentation", "Changelog"}
# Never in an sdist: environments, caches, databases, installed Node packages (anywhere), build outputs (at the top).
FORBIDDEN_DIRS = {
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".nox",
    ".git",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
}
FORBIDDEN_TOP = {"build", "dist", "benchmarks", ".github", ".ci"}
FORBIDDEN_SUFFIXES = (".pyc", ".pyo", ".db", ".db-wal", ".db-shm", ".whl", ".tar.gz")


def source_version() -> str:
    """The one place the version is written: src/magnotia_mcp/__init__.py (hatch reads it from there)."""
    text = (ROOT / "src" / "magnotia_mcp" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'(?m)^__version__ = "([^"]+)"$', text)
    assert match, "no __version__ line in src/magnotia_mcp/__init__.py"
    return match.group(1)


def package_files() -> list[str]:
    """Every file of src/magnotia_mcp (but caches), as a wheel names it: magnotia_mcp/..."""
    src = ROOT / "src"
    found = [p for p in (src / "magnotia_mcp").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert len(found) > 50, found  # the package's modules, schema and markers
    return [p.relative_to(src).as_posix() for p in found]


def parse_metadata(text: str) -> email.message.Message:
    return email.parser.Parser().parsestr(text)


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return parse_metadata(archive.read(name).decode("utf-8"))


def sdist_members(sdist: Path) -> dict[str, tarfile.TarInfo]:
    """Members by their path inside the sdist's top folder."""
    with tarfile.open(sdist) as archive:
        members = archive.getmembers()
    top = {m.name.split("/", 1)[0] for m in members}
    assert len(top) == 1, f"an sdist has one top folder, not {top}"
    return {m.name.split("/", 1)[1]: m for m in members if "/" in m.name}


def check_metadata(meta: email.message.Message) -> None:
    assert meta["Name"] == DIST
    assert meta["Version"] == source_version()
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    missing = REQUIRED_CLASSIFIERS - set(meta.get_all("Classifier") or [])
    assert not missing, f"classifiers missing: {missing}"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert set(urls) >= URL_LABELS, urls
    assert all(u.startswith("https://") for u in urls.values()), urls
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "# magnotia-mcp" in meta.get_payload(), "the README is the long description"
    # Runtime dependencies stay few: the three the server imports, and tzdata on Windows; the opt-in
    # HTTP transport's only as the "http" extra, search by meaning's only as the "semantic" extra.
    every = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    requires = sorted(r.name for r in every if r.marker is None or "extra" not in str(r.marker))
    assert requires == ["aiosqlite", "platformdirs", "snowballstemmer", "tzdata"], requires
    by_extra = {
        extra: sorted(r.name for r in every if r.marker is not None and f'extra == "{extra}"' in str(r.marker))
        for extra in ("http", "semantic")
    }
    assert by_extra == {"http": ["h11", "uvicorn"], "semantic": ["marisa-trie", "numpy", "simsimd", "tokenizers"]}, (
        by_extra
    )
    assert meta.get_all("Provides-Extra") == ["http", "semantic"]


def test_the_artifact_is_named_for_the_source_version(artifact: Path) -> None:
    if artifact.suffix == ".whl":
        name, version, _, tags = parse_wheel_filename(artifact.name)
        assert {str(t) for t in tags} == {"py3-none-any"}, "pure Python: one wheel for every platform"
    else:
        name, version = parse_sdist_filename(artifact.name)
    assert name == DIST
    assert str(version) == source_version()


def test_what_runs_here_is_the_installed_artifact_not_the_source_tree(artifact: Path) -> None:
    """The e2e run beside this one drives the installed copy: the checkout's src/ is nowhere on the path."""
    package_dir = Path(magnotia_mcp.__file__).resolve().parent
    assert not package_dir.is_relative_to(ROOT / "src"), package_dir
    assert package_dir.is_relative_to(Path(sys.prefix).resolve()), (package_dir, sys.prefix)
    assert importlib.metadata.version(DIST) == magnotia_mcp.__version__ == source_version()
    installer = importlib.metadata.distribution(DIST).read_text("direct_url.json") or ""
    assert artifact.name in installer, f"installed from {installer!r}, not {artifact.name}"


def test_the_installed_package_is_typed_and_carries_its_schema(artifact: Path) -> None:
    files = importlib.resources.files("magnotia_mcp")
    assert files.joinpath("py.typed").is_file()
    assert "CREATE TABLE" in files.joinpath("schema_v1.sql").read_text(encoding="utf-8")
    scripts = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == DIST]
    assert [e.value for e in scripts] == ["magnotia_mcp.cli:main"]


def test_wheel_files_and_metadata(wheel: Path) -> None:
    check_metadata(wheel_metadata(wheel))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        version = source_version()
        info = f"magnotia_mcp-{version}.dist-info"
        assert {
            "magnotia_mcp/__init__.py",
            "magnotia_mcp/py.typed",
            "magnotia_mcp/schema_v1.sql",
            f"{info}/METADATA",
            f"{info}/entry_points.txt",
            f"{info}/licenses/LICENSE",
        } <= names
        assert "MIT License" in archive.read(f"{info}/licenses/LICENSE").decode()
        assert f'__version__ = "{version}"' in archive.read("magnotia_mcp/__init__.py").decode()
    # Every file of the package's source, so the e2e run on the wheel can be a smoke run (nox -s dist): a module
    # left out of the wheel (or of the sdist it is built from) fails here, not only when a test happens to import it.
    missing = set(package_files()) - names
    assert not missing, f"missing from the wheel: {sorted(missing)}"
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"magnotia_mcp", info}, f"only the package and its metadata: {tops}"
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".db"))]


def test_sdist_files_and_metadata(sdist: Path) -> None:
    members = sdist_members(sdist)
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/", 1)[0]
        pkg_info = archive.extractfile(f"{top}/PKG-INFO")
        assert pkg_info is not None
        check_metadata(parse_metadata(pkg_info.read().decode("utf-8")))
    expected = {
        "PKG-INFO",
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "src/magnotia_mcp/__init__.py",
        "src/magnotia_mcp/py.typed",
        "src/magnotia_mcp/schema_v1.sql",
        "tests/conftest.py",
        "tests/e2e/test_tools.py",
        "tests/support/server.py",
        "devkit/storefactory.py",  # the tests build their stores with it
        "docs/tools.md",
        "docs/store-schema-v1.sql",
        "devtools/unicode61.py",  # tests/unit checks the generated separator table against it
    }
    expected |= {f"src/{name}" for name in package_files()}
    assert expected <= set(members), f"missing from the sdist: {expected - set(members)}"
    bad = [
        path
        for path in members
        if FORBIDDEN_DIRS & set(path.split("/"))
        or path.split("/")[0] in FORBIDDEN_TOP
        or path.endswith(FORBIDDEN_SUFFIXES)
    ]
    assert not bad, f"the sdist holds what it should not: {bad[:20]}"
    assert all(not m.issym() and not m.islnk() for m in members.values()), "no links in an sdist"
