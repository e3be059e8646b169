"""Property of search by meaning: every store the schema allows is indexed, and searched with words and meaning.

Each example draws a whole store (tests/properties/shapes.py: NULLs, empty texts, text that is not UTF-8,
odd segments, the trash, sometimes a 10-hour workshop), builds its semantic index with `magnotia-mcp index`
(the small multilingual test model, tests/semantic/conftest.py), and starts one server on it over real
pipes. Then:

* the index holds exactly the live transcripts, and a second `index` embeds nothing;
* every search (each word of the corpus, a speaker label, a filter, a speaker, a page cut to a small budget
  followed through its cursors) answers with a result that fits the outputSchema, says the index took part, never
  names a transcript in the trash, names each transcript once, and cites moments that are segments of the
  transcript it names (a hit found by meaning alone shows what matched: a moment, else its passage or title, never an
  empty snippet); restricted to a speaker, every hit is a transcript they spoke in and every moment theirs; restricted
  in time, every hit's created_at passes as SQLite compares it (texts by their bytes, a BLOB after every text);
* nothing reaches stderr as a traceback, every request had exactly one answer, and no transcript was taken for
  one edited since the index embedded it (it would be embedded again at every search).

Then hostile files: an index file changed in any way (objects we never make, any value in any cell) is refused or
rebuilt, never trusted blindly; a model folder changed in any way (a file replaced by a FIFO, a folder or a link,
its mode or owner, its bytes or its JSON) is refused by `index` in one line, or used, and the server then searches
with it or says why. Never a crash or a hang.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import static_model
from hypothesis import event, example, given
from hypothesis import strategies as st

from magnotia_mcp.search.semantic import indexfile, loaded
from magnotia_mcp.search.speakers import speaker_matches
from magnotia_mcp.store import embedded
from tests.properties.conftest import budget
from tests.properties.shapes import WORDS, Shape, shapes, write
from tests.properties.test_store_shapes import Checked, odd_dates
from tests.semantic import stores
from tests.support.protocol import MODERN
from tests.support.server import Launcher, ServerProcess, check_clean_exit

MODEL = Path(static_model.__file__).parent / "model"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("semantic-shapes")
    return (root / f"store{k}" for k in count())


def build(db: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", "index", "--db", str(db), "--model", str(MODEL)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def index_file(db: Path, env: dict[str, str]) -> sqlite3.Connection:
    """The store's index file, in the cache folder env names."""
    old = os.environ.get(indexfile.CACHE_ENV)
    os.environ[indexfile.CACHE_ENV] = env[indexfile.CACHE_ENV]
    try:
        return sqlite3.connect(indexfile.location(db))
    finally:
        if old is None:
            del os.environ[indexfile.CACHE_ENV]
        else:
            os.environ[indexfile.CACHE_ENV] = old


def indexed_ids(db: Path, env: dict[str, str]) -> set[str]:
    conn = index_file(db, env)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM docs")}
    finally:
        conn.close()


def as_format_2(db: Path, env: dict[str, str]) -> dict[str, str]:
    """Rewrite the index as one of format 2 holds it, its stamps counting characters; the stamps in bytes, by id."""
    store = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    store.text_factory = lambda raw: raw.decode("utf-8", "replace")  # as the index's runs read the store
    try:
        live = "FROM transcripts t WHERE t.deleted_at IS NULL"
        old = dict(store.execute(f"SELECT t.id, {embedded.CHARACTERS} {live}").fetchall())
        new = dict(store.execute(f"SELECT t.id, {embedded.STAMP} {live}").fetchall())
    finally:
        store.close()
    conn = index_file(db, env)
    try:
        with conn:
            conn.executemany("UPDATE docs SET stamp = ? WHERE id = ?", [(stamp, doc) for doc, stamp in old.items()])
            conn.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
    finally:
        conn.close()
    return new


MAY = "2026-05-01T00:00:00.000Z"


def passes(created: str | bytes, source: str, window: dict[str, str]) -> bool:
    """Whether created_at passes since/until as SQLite compares them (texts by their bytes, a BLOB after all), and
    the source is the one asked for."""
    if window.get("source", source) != source:
        return False
    if isinstance(created, bytes):  # a Blob: created_at is never drawn as TEXT that is not UTF-8
        return "until" not in window
    return window.get("since", "") <= created and ("until" not in window or created < window["until"])


def odd(created: str | bytes) -> bool:
    return isinstance(created, bytes) or not (len(created) == 24 and created.endswith("Z"))


def every_hit(server: Checked, shape: Shape, args: dict[str, Any]) -> list[str]:
    """The ids of every hit of a search, its pages followed through their cursors (a page is cut to a budget of
    tokens: a store of long titles fills one with two hits), each page checked as check_hits checks it."""
    ask, seen = dict(args), []
    for _ in range(60):
        page = server.tool("search_transcripts", ask)
        assert page is not None
        seen += check_hits(shape, page)
        if page["next_cursor"] is None:
            return seen
        ask["cursor"] = page["next_cursor"]
    raise AssertionError("more pages than hits")


def check_hits(shape: Shape, result: dict[str, Any]) -> list[str]:
    if "semantic" in result:
        assert result["semantic"]["used"] is True, result["semantic"]
    else:  # a query of only words search ignores ("x", "🎉"): nothing is asked of either index
        assert result["hits"] == [], result
    trashed = {t.id for t in shape.trashed}
    # Each transcript's segments by seq: a moment must be one of its own (seqs repeat across transcripts, times
    # seldom do), however a page's cited segments were read.
    said = {t.id: {s.seq: (s.start_ms, s.end_ms) for s in t.segments} for t in shape.live}
    ids = [hit["transcript_id"] for hit in result["hits"]]
    assert len(ids) == len(set(ids)), ids
    assert not trashed & set(ids), ids
    for hit in result["hits"]:
        assert hit["transcript_id"] in said
        assert hit["matched_by"] in ("words", "meaning", "both")
        own = said[hit["transcript_id"]]
        assert len({m["seq"] for m in hit["moments"]}) == len(hit["moments"]), hit  # a segment is cited once
        for moment in hit["moments"]:
            assert moment["seq"] in own, (moment, hit["transcript_id"])
            assert (moment["start_ms"], moment["end_ms"]) == own[moment["seq"]], (moment, hit)
        if hit["matched_by"] != "words":
            event("a hit found by meaning")
        # Meaning speaks of the hits it found: a similarity for those, none for a hit by words alone.
        assert ("similarity" in hit) == (hit["matched_by"] != "words"), hit
        if hit["matched_by"] == "meaning":  # what matched is shown: its moments, else its passage or its title
            assert hit["moments"] or hit["snippet"].strip(), hit
            if not hit["moments"]:
                event("a hit found by meaning, shown by its passage or title")
    return ids


@pytest.mark.timeout(300)
@budget(6)
@given(shape=shapes())
@example(shape=odd_dates(fts=False)).via("created_at a BLOB, empty or words, searched in a time range")
def test_every_store_shape_is_indexed_and_searched_by_meaning(
    launcher: Launcher, folders: Iterator[Path], shape: Shape
) -> None:
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    folder = next(folders)
    db = write(shape, folder / "app" / "magnotia.db")  # the index goes beside the app's folder, never in it
    home = folder / "home"
    env = {"HOME": str(home), "XDG_DATA_HOME": str(home / "xdg"), indexfile.CACHE_ENV: str(folder / "cache")}
    env["MAGNOTIA_MCP_LOG_LEVEL"] = "debug"  # the server says when it scores a transcript again (none here)
    env[loaded.IN_MEMORY_ENV] = "0"  # the rows mapped from a file, as a large index's are (others' tests hold them)
    first = build(db, env)
    assert f"{len(shape.live)} transcripts ({len(shape.live)} embedded" in first, first
    assert indexed_ids(db, env) == {t.id for t in shape.live}
    # What the index holds of every transcript compares equal to the store's: a second run has nothing to do,
    # whatever created_at holds (else each run, and a server's every refresh, would write the index again).
    again = build(db, env)
    assert f"(0 embedded, {len(shape.live)} already up to date, 0 removed" in again, again
    assert "brought the date or source" not in again, again
    # An index of format 2 (stamps in characters, whatever the texts hold): moved to bytes, nothing embedded.
    stamps = as_format_2(db, env)
    moved = build(db, env)
    assert f"(0 embedded, {len(shape.live)} already up to date, 0 removed" in moved, moved
    conn = index_file(db, env)
    try:
        assert dict(conn.execute("SELECT id, stamp FROM docs").fetchall()) == stamps
    finally:
        conn.close()
    proc = ServerProcess(launcher.argv(db), env=env, cwd=Path(tempfile.gettempdir()))
    try:
        server = Checked(proc, shape)
        server.open(MODERN)
        labels = sorted({s.speaker for t in shape.transcripts for s in t.segments if isinstance(s.speaker, str)})
        for query in (*WORDS, "what did we decide about the budget", *labels[:2]):
            if not query.strip() or len(query) > 500:  # a label may be longer than a query may be (maxLength)
                continue
            result = server.tool("search_transcripts", {"query": query, "limit": 50})
            assert result is not None
            check_hits(shape, result)
            filtered = server.tool("search_transcripts", {"query": query, "source": "meeting"})
            assert filtered is not None
            for tid in check_hits(shape, filtered):
                assert next(t for t in shape.live if t.id == tid).source == "meeting"
        # Restricted to a speaker: each hit is a transcript they spoke in, and every moment cited is theirs.
        spoken = 0
        for label in (lab for lab in labels[:2] if lab.strip() and len(lab) <= 200):
            result = server.tool("search_transcripts", {"query": "budget launch plan", "speaker": label, "limit": 50})
            assert result is not None
            for tid in check_hits(shape, result):
                labelled = (s.speaker for t in shape.live if t.id == tid for s in t.segments)
                assert any(isinstance(them, str) and speaker_matches(label, them) for them in labelled)
            moments = [m for hit in result["hits"] for m in hit["moments"]]
            assert all(speaker_matches(label, m["speaker"]) for m in moments), (label, moments)
            spoken += len(moments)
        if spoken:
            event("a speaker's moments cited")
        # Restricted in time or by source: the hits are those of the search without it that pass, as the store's SQL
        # compares created_at (a BLOB is after every text); every page of each (a long title fills a page).
        ask = {"query": "budget launch plan", "limit": 50}
        everything = every_hit(server, shape, ask)
        created = {t.id: t.created_at for t in shape.live}
        sources = {t.id: t.source for t in shape.live}
        windows: list[dict[str, str]] = [
            {"since": MAY},
            {"until": MAY},
            {"since": "2026-04-15T00:00:00.000Z", "until": MAY},
        ]
        windows += [{"source": "meeting"}, {"source": "dictation", "since": "2026-04-15T00:00:00.000Z"}]
        for window in windows:
            found = every_hit(server, shape, {**ask, **window})
            assert set(found) == {tid for tid in everything if passes(created[tid], sources[tid], window)}
            for tid in found:
                restricted = "by source" if list(window) == ["source"] else "in time"
                event(f"a hit restricted {restricted}" + (", its created_at odd" if odd(created[tid]) else ""))
        # A page cut to the smallest budget, followed through its cursors: each hit once, none from the trash;
        # with a speaker too.
        for who in ({}, *({"speaker": lab} for lab in labels[:1] if lab.strip() and len(lab) <= 200)):
            seen: list[str] = []
            args: dict[str, Any] = {"query": "budget launch", "limit": 50, "max_tokens": 1000, **who}
            for _ in range(60):
                page = server.tool("search_transcripts", args)
                assert page is not None
                assert page["semantic"]["used"] is True
                seen += check_hits(shape, page)
                if page["next_cursor"] is None:
                    break
                args["cursor"] = page["next_cursor"]
            else:
                raise AssertionError("more pages than hits")
            assert len(seen) == len(set(seen))
        proc.sync()
        event(f"{len(shape.live)} live, {len(shape.trashed)} trashed, fts {shape.fts}")
        check_clean_exit(proc)  # exit 0, no traceback on stderr, nothing but JSON on stdout
        # The index was current: no transcript looked edited since it was embedded (the marks the index keeps and
        # the ones the store is read for agree, whatever the store holds).
        assert "edited since the semantic index" not in proc.stderr, proc.stderr
        again = build(db, env)
        assert f"(0 embedded, {len(shape.live)} already up to date" in again, again
    except BaseException:
        proc.kill()
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- hostile index files: refused or rebuilt, never trusted blindly, never a crash or a hang -------------------------

DOC_COLUMNS = indexfile.DOC_COLUMNS.split(", ")
FIRST = {"docs": "id", "meta": "key", "speakers": "speaker", "sources": "doc"}
COLUMNS = {"docs": indexfile.DOC_COLUMNS, "meta": "key, value", "speakers": "speaker, doc, windows"}
COLUMNS["sources"] = "doc, source"
VALUES = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.binary(max_size=200),
    st.text(max_size=40),
    st.floats(allow_nan=False),
    st.just("x" * 100_000),
)
NAMES = st.from_regex(r"x_[a-z0-9_]{1,10}", fullmatch=True)
TABLES = st.sampled_from(sorted(FIRST))


def endless(table: str) -> list[str]:
    """table replaced by a view of its columns that never ends."""
    columns = COLUMNS[table].split(", ")
    row = ", ".join(["1"] * len(columns))
    return [
        f"DROP TABLE {table}",
        f"CREATE VIEW {table} ({', '.join(columns)}) AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
        f" SELECT {row} FROM n",
    ]


DAMAGES = st.one_of(
    st.builds(lambda name, table: [f"CREATE VIEW {name} AS SELECT * FROM {table}"], NAMES, TABLES),
    st.builds(
        lambda name, table: [f"CREATE TRIGGER {name} AFTER INSERT ON {table} BEGIN SELECT 1; END"], NAMES, TABLES
    ),
    st.builds(lambda name, table: [f"CREATE INDEX {name} ON {table} ({FIRST[table]})"], NAMES, TABLES),
    st.builds(lambda name: [f"CREATE TABLE {name} (v)"], NAMES),
    st.builds(endless, TABLES),
    st.builds(lambda table: [f"ALTER TABLE {table} ADD COLUMN extra BLOB"], TABLES),
    st.builds(
        lambda column, at, value: [
            (
                f"UPDATE docs SET {column} = ? WHERE id = (SELECT id FROM docs ORDER BY id LIMIT 1 OFFSET ?)",
                value,
                at,
            )
        ],
        st.sampled_from(DOC_COLUMNS),
        st.integers(0, 4),
        VALUES,
    ),
    st.builds(
        lambda key, value: [("UPDATE meta SET value = ? WHERE key = ?", value, key)],
        st.sampled_from(["format", "store", "dims", "model_sha256", "model_path", "complete", "speakers"]),
        VALUES,
    ),
    st.builds(lambda value: [("UPDATE sources SET source = ?", value)], VALUES),
)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], bytes]:
    """One store and its index as `index` writes it (its bytes, to start each example from)."""
    folder = tmp_path_factory.mktemp("hostile-index")
    db = stores.write(folder / "app" / "magnotia.db")
    env = {"HOME": str(folder / "home"), indexfile.CACHE_ENV: str(folder / "cache")}
    build(db, env)
    conn = index_file(db, env)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        path = Path(conn.execute("PRAGMA database_list").fetchone()[2])
    finally:
        conn.close()
    return db, env, path.read_bytes()


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A command as a process; a hang fails the test on the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def searched(launcher: Launcher, db: Path, env: dict[str, str]) -> dict[str, Any]:
    """A search by meaning's semantic part, answered by a fresh server (checked: no internal error, no traceback)."""
    proc = ServerProcess(launcher.argv(db), env=env, cwd=Path(tempfile.gettempdir()))
    try:
        server = Checked(proc, Shape(True, [], []))
        server.open(MODERN)
        result = server.tool("search_transcripts", {"query": "new head of development", "limit": 3})
        assert result is not None
        proc.sync()
        check_clean_exit(proc)
    except BaseException:
        proc.kill()
        raise
    said: dict[str, Any] = result["semantic"]
    if said["used"]:
        said["ids"] = [hit["transcript_id"] for hit in result["hits"]]
    return said


@pytest.mark.timeout(600)
@budget(6)
@given(damages=st.lists(DAMAGES, min_size=1, max_size=3))
def test_a_hostile_index_file_is_refused_or_rebuilt(
    launcher: Launcher, pristine: tuple[Path, dict[str, str], bytes], damages: list[list[Any]]
) -> None:
    """Whatever is done to the index file (objects we never make, a table become an endless view, any value in any
    cell of its rows, meta or sources): a search answers (by meaning only if doctor trusts it too, else by words
    saying why), doctor answers, and `index` leaves an index searched by meaning, with at most one line on why it
    started afresh."""
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    db, env, original = pristine
    conn = index_file(db, env)
    path = Path(conn.execute("PRAGMA database_list").fetchone()[2])
    conn.close()
    for extra in ("-wal", "-shm", ".current"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    path.write_bytes(original)
    conn = index_file(db, env)
    try:
        for damage in damages:
            for statement in damage:
                sql, *args = statement if isinstance(statement, tuple) else (statement,)
                try:
                    conn.execute(sql, args)
                    conn.commit()
                except sqlite3.Error:  # a change the file's constraints refuse (a NULL, a duplicate id): not made
                    conn.rollback()
    finally:
        conn.close()
    said = searched(launcher, db, env)
    assert said["used"] or said["why"], said
    shown = cli(["doctor", "--db", str(db), "--json"], env)
    assert "Traceback" not in shown.stderr, shown.stderr
    state = json.loads(shown.stdout)["semantic_index"]
    event(f"doctor: {state['state']}, search by meaning: {said['used']}")
    if state["state"] == "unusable":
        assert not said["used"], (state, said)
    done = build(db, env)
    assert len([line for line in done.splitlines() if line.startswith("started afresh:")]) <= 1, done
    assert json.loads(cli(["doctor", "--db", str(db), "--json"], env).stdout)["semantic_index"]["state"] == "ready"
    again = searched(launcher, db, env)
    assert again["used"] is True, again
    assert again["ids"] == [stores.LEAD_DE], again


# -- hostile model folders: refused in one line, or used; never a crash or a hang ---------------------------------

NEIGHBOUR = 65534  # the other user a folder's file may belong to (root only: giving a file away needs root)
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
TOKENIZER_LIKE = st.builds(
    lambda kind, rest: {"model": {"type": kind, **rest}},
    st.sampled_from(["Unigram", "WordPiece", "BPE", "WordLevel"]),
    st.dictionaries(st.sampled_from(["vocab", "unk_id", "unk_token", "merges", "byte_fallback"]), JSON_VALUES),
)
FLOAT32 = struct.Struct("<f")
NOT_FINITE = (float("nan"), float("inf"), float("-inf"), 3e38)  # 3e38: finite, but a product of it overflows
# Each damage a tuple (what, where, how), applied by spoil() to a fresh copy of the test model.
MODEL_DAMAGES = st.one_of(
    st.tuples(
        st.just("replace"),
        st.sampled_from(MODEL_FILES),
        st.sampled_from(
            ["fifo", "folder", "link to /dev/zero", "dangling link", "missing", "empty", "link to a sibling"]
        ),
    ),
    st.tuples(
        st.just("mode"),
        st.sampled_from([*MODEL_FILES, "."]),
        st.sampled_from([0o666, 0o664, 0o646, 0o777, 0o775, 0o757, 0o444, 0o600]) | st.integers(0o400, 0o777),
    ),
    st.tuples(st.just("cut"), st.sampled_from(MODEL_FILES), st.floats(0, 1)),
    st.tuples(
        st.just("overwrite"),
        st.sampled_from(MODEL_FILES),
        st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=16)),
    ),
    st.tuples(
        st.just("fill"),
        st.just("model.safetensors"),
        st.tuples(st.floats(0, 1), st.floats(0, 1), st.sampled_from([*map(FLOAT32.pack, NOT_FINITE), b"\0" * 4])),
    ),
    st.tuples(st.just("json"), st.sampled_from(["config.json", "tokenizer.json"]), JSON_VALUES | TOKENIZER_LIKE),
    st.tuples(st.just("header size"), st.just("model.safetensors"), st.integers(0, 2**64 - 1)),
    *([st.tuples(st.just("owner"), st.sampled_from([*MODEL_FILES, "."]), st.just(NEIGHBOUR))] if AS_ROOT else []),
)


def spoil(folder: Path, damage: tuple[str, str, Any]) -> None:
    """Do damage to the model folder, as a planted or broken folder would have it."""
    what, where, how = damage
    path = folder / where
    if what == "replace":
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        if how == "fifo":
            os.mkfifo(path)
        elif how == "folder":
            path.mkdir()
        elif how == "link to /dev/zero":
            path.symlink_to("/dev/zero")
        elif how == "dangling link":
            path.symlink_to("nowhere")
        elif how == "empty":
            path.write_bytes(b"")
        elif how == "link to a sibling":
            path.symlink_to(MODEL_FILES[(MODEL_FILES.index(where) + 1) % len(MODEL_FILES)])
    elif what == "mode":
        if not path.is_symlink():  # chmod follows a link: one to /dev/zero would change the machine's
            path.chmod(how)
    elif what == "owner":
        os.chown(path, how, how, follow_symlinks=False)
    elif not path.is_file():  # an earlier damage made it something else: nothing to write into
        return
    elif what == "cut":
        os.truncate(path, int(path.stat().st_size * how))
    elif what == "overwrite":
        at, data = how
        with open(path, "r+b") as f:
            f.seek(int(path.stat().st_size * at))
            f.write(data)
    elif what == "fill":  # the span between two fractions of the file, float32 by float32 (4-byte aligned)
        ends = sorted(int(path.stat().st_size * at) // 4 * 4 for at in how[:2])
        with open(path, "r+b") as f:
            f.seek(ends[0])
            f.write(how[2] * ((ends[1] - ends[0]) // 4))
    elif what == "json":
        path.write_text(json.dumps(how), encoding="utf-8")
    elif what == "header size":
        with open(path, "r+b") as f:
            f.write(how.to_bytes(8, "little"))


@pytest.fixture(scope="module")
def hostile_models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Iterator[Path]]:
    """A store (indexed or not: each example's `index` decides), a throwaway HOME and cache, and fresh folders."""
    folder = tmp_path_factory.mktemp("hostile-model")
    db = stores.write(folder / "app" / "magnotia.db")
    env = {"HOME": str(folder / "home"), indexfile.CACHE_ENV: str(folder / "cache")}
    return db, env, (folder / f"model{k}" for k in count())


@pytest.mark.timeout(600)
@budget(8)
@given(damages=st.lists(MODEL_DAMAGES, min_size=1, max_size=3))
# Folders the rules let through, each searched with: modes no one else may write, a config of no settings, other
# numbers in a table's rows, NaN as nearly every token's weight (the test model's weights span 0.559-0.838 of its file).
@example(damages=[("mode", ".", 0o755), ("mode", "tokenizer.json", 0o600), ("json", "config.json", {})])
@example(damages=[("overwrite", "model.safetensors", (0.95, b"\x7f" * 16))])
@example(damages=[("fill", "model.safetensors", (0.559, 0.838, FLOAT32.pack(float("nan"))))])
def test_a_hostile_model_folder_is_refused_in_one_line_or_used(
    launcher: Launcher, hostile_models: tuple[Path, dict[str, str], Iterator[Path]], damages: list[tuple[str, str, Any]]
) -> None:
    """Whatever is done to a model folder (a file replaced by a FIFO, a folder, a link to /dev/zero or to a sibling,
    or missing; its mode or its owner changed, the folder's too; a file cut, overwritten in places, made another
    JSON; a span of the tensors NaN, infinite or huge; the safetensors header's length any 64-bit number):
    `index --model DIR` refuses it in one line (exit 1, no traceback), or indexes with it, without a warning, and then
    a server searches with it or says why it cannot. Never a signal, never a hang (a bounded wait on every process).
    """
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    db, env, folders = hostile_models
    folder = next(folders)
    shutil.copytree(MODEL, folder)
    for damage in damages:
        spoil(folder, damage)
    try:
        done = cli(["index", "--db", str(db), "--model", str(folder)], env)
        assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert "Warning" not in done.stderr, done.stderr[-2000:]  # numpy's on a NaN or an overflow: none reach here
        event(f"index: exit {done.returncode}")
        if done.returncode == 0:
            said = searched(launcher, db, env)
            assert said["used"] or said["why"], said
            event(f"search by meaning: {said['used']}")
        else:
            lines = done.stderr.strip().splitlines()
            assert done.returncode == 1, done.stderr[-2000:]
            assert len(lines) == 1, done.stderr[-2000:]
            assert lines[0].startswith("magnotia-mcp index: "), lines
    finally:
        folder.chmod(0o700)
        shutil.rmtree(folder, ignore_errors=True)
