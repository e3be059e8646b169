"""Our Unigram segmentation (the server's, for queries) gives tokenizers' ids, so queries meet the index's vectors.

`magnotia-mcp index` embeds with tokenizers' own encoder; a server embeds queries (and the transcripts the app
adds) with search/semantic/unigram.py, a tenth of the memory. Both must give the same ids for every text: the
judged sets' texts in five languages, texts made to reach the corners (unknown characters, the unknown id that
is also a real piece in this vocabulary, truncation at 512, compatibility characters the normalizer folds), and
drawn text in many scripts. The one exception, written down in unigram.py: a text holding a special token's
literal text (`<pad>`, `<unk>`), which tokenizers matches before segmenting.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from devkit import relevance
from magnotia_mcp.search.semantic.model import MAX_TOKENS, StaticModel
from magnotia_mcp.search.semantic.unigram import Unigram

LONG = " ".join(["budget"] * 700)  # more than the 512 tokens a model reads
EDGES = [
    "",
    "   ",
    "Hello... world!!! x.y . .. ...",  # the test model's unknown id is "." 's: fused runs are looked up again
    "日本語のテキスト、です。",
    "Съешь ещё этих мягких французских булок",
    "emoji 😀😀 test 🤷‍♀️",
    "ﬁ ① Ⅻ ｆｕｌｌｗｉｄｔｈ ǅ",  # folded by the precompiled normalizer
    "\u00a0nbsp\u2003em\tTab\nnewline",
    "\u2581mark \u2581\u2581twice\u2581 end\u2581 \x1cfile\x1fsep",  # the pre-tokenizer's own cuts
    "a" * 300,  # longer than any piece
    LONG,
    "\U0010fffd\ue000 private use",
    "मैं हिंदी बोलता हूँ",
    "עברית ועוד",
    "a\x00b . \x00. budget\x00",  # MARISA looks a text up only as far as a NUL: fused runs hold one here
]


@pytest.fixture(scope="module")
def pair(model_dir: Path) -> tuple[Unigram, Tokenizer]:
    ours = Unigram.load((model_dir / "tokenizer.json").read_bytes(), MAX_TOKENS)
    assert ours is not None
    assert ours.words != ours._pre_tokenized  # SentencePiece's pre-tokenizer, cut here: its ids are checked too
    theirs = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    theirs.no_padding()
    theirs.enable_truncation(MAX_TOKENS)
    return ours, theirs


def ids(tokenizer: Tokenizer, text: str) -> list[int]:
    return list(tokenizer.encode_batch_fast([text], add_special_tokens=False)[0].ids)


def judged_texts() -> list[str]:
    texts = [q.text for q in (*relevance.QUERIES, *relevance.MEANING_QUERIES)]
    for doc in relevance.DOCUMENTS:
        texts += [doc.title, *(text for _, text in doc.segments)]
    return [t for t in texts if t]


def test_the_judged_texts_and_the_corners_get_tokenizers_ids(pair: tuple[Unigram, Tokenizer]) -> None:
    ours, theirs = pair
    texts = [*judged_texts(), *EDGES]
    assert len(texts) > 300
    differ = [t[:60] for t in texts if ours.encode(t) != ids(theirs, t)]
    assert differ == []
    assert len(ours.encode(LONG)) == MAX_TOKENS


# Where the pre-tokenizer cuts, and where it does not: Unicode's whitespace, the separators Python alone calls
# space (U+001C..U+001F), and SentencePiece's own mark U+2581, drawn often.
CUTS = st.sampled_from([" ", "\t", "\n", "\u3000", "\u00a0", "\x85", "\x1c", "\x1f", "\u2581"])


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Z", "Cc"]),
            CUTS,
        ),
        max_size=80,
    )
)
def test_drawn_text_gets_tokenizers_ids(pair: tuple[Unigram, Tokenizer], text: str) -> None:
    ours, theirs = pair
    if "<pad>" in text or "<unk>" in text:
        return  # special tokens' literal text: the documented exception
    assert ours.encode(text) == ids(theirs, text)


def test_lean_and_full_models_give_the_same_vectors(model_dir: Path) -> None:
    texts = [*judged_texts()[:200], *EDGES]
    lean = StaticModel.load(model_dir, lean=True)
    full = StaticModel.load(model_dir)
    assert isinstance(lean.tokenizer, Unigram)
    assert not isinstance(full.tokenizer, Unigram)
    assert lean.unknown == full.unknown
    np.testing.assert_array_equal(lean.embed(texts), full.embed(texts))


def test_a_tokenizer_it_does_not_read_falls_back_to_tokenizers(model_dir: Path, tmp_path: Path) -> None:
    """Byte fallback (or a WordPiece, BPE model) is not ours to segment: tokenizers' encoder does it."""
    data = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["byte_fallback"] = True
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    assert Unigram.load((tmp_path / "tokenizer.json").read_bytes(), MAX_TOKENS) is None
    wordpiece = {
        "version": "1.0",
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "budget": 1}},
    }
    (tmp_path / "tokenizer.json").write_text(json.dumps(wordpiece), encoding="utf-8")
    assert Unigram.load((tmp_path / "tokenizer.json").read_bytes(), MAX_TOKENS) is None
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((model_dir / name).read_bytes())
    data["model"]["byte_fallback"] = False
    for odd in ("a\x00b", data["model"]["vocab"][5][0]):  # a NUL (MARISA's lookups stop there), a repeated piece
        vocab = [*data["model"]["vocab"], [odd, -20.0]]
        (tmp_path / "tokenizer.json").write_text(json.dumps({**data, "model": {**data["model"], "vocab": vocab}}))
        assert Unigram.load((tmp_path / "tokenizer.json").read_bytes(), MAX_TOKENS) is None
    del data["model"]["vocab"][-1]  # still a vocabulary it reads; the mapping covers more rows than needed
    (folder / "tokenizer.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert isinstance(StaticModel.load(folder, lean=True).tokenizer, Unigram)


def test_the_vocabulary_costs_the_server_little_memory(model_dir: Path) -> None:
    """276k pieces in a MARISA trie and two arrays: the load adds ~9 MiB to a process, where a dict took 56."""
    probe = (
        "import gc, sys\n"
        "from pathlib import Path\n"
        "from magnotia_mcp.search.semantic.unigram import Unigram\n"
        "def rss():\n"
        "    with open('/proc/self/status') as f:\n"
        "        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:'))\n"
        "before = rss()\n"
        "ours = Unigram.load(Path(sys.argv[1]).read_bytes(), 512)\n"
        "gc.collect()\n"
        "print(ours.size, rss() - before)\n"
    )
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the process's resident size from /proc (Linux)")
    done = subprocess.run(
        [sys.executable, "-c", probe, str(model_dir / "tokenizer.json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    pieces, kib = map(int, done.stdout.split())
    assert pieces > 250_000
    assert kib < 24 * 1024, f"loading the vocabulary added {kib / 1024:.1f} MiB"


def test_the_load_needs_no_glibc(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """malloc_trim is glibc's: elsewhere the heap is left as it is, and the load goes on. On Windows ctypes cannot
    even name the process itself (CDLL(None) raises TypeError), so it is not asked."""

    def no_process(name: object) -> object:
        raise TypeError("LoadLibrary() argument 1 must be str, not None")

    monkeypatch.setattr(ctypes, "CDLL", no_process)
    monkeypatch.setattr(sys, "platform", "win32")
    assert Unigram.load((model_dir / "tokenizer.json").read_bytes(), MAX_TOKENS) is not None
    monkeypatch.setattr(sys, "platform", "darwin")
    assert Unigram.load((model_dir / "tokenizer.json").read_bytes(), MAX_TOKENS) is not None
