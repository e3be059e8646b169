"""The model loader: the vectors of a Model2Vec folder, checked against the encoder shipped with the test model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from model2vec import StaticModel as Reference

from devkit.wide_model import write as write_wide
from magnotia_mcp.search.semantic import model
from magnotia_mcp.search.semantic.model import ModelError, StaticModel, fingerprint

TEXTS = [
    "We'll put less money into campaigns next quarter.",
    "Vamos colocar menos dinheiro nas campanhas no próximo trimestre.",
    "Jonas übernimmt im Januar die Leitung der Entwicklung.",
    "Le salon de Lyon commence jeudi; réservez l'hôtel.",
    "¿Quién se encarga del presupuesto de marketing?",
    " ".join(["budget"] * 700),  # longer than the 512 tokens a model reads
]


def test_vectors_match_model2vec(model_dir: Path) -> None:
    """Same tokens, table, weights and pooling: our numpy path gives the vectors of Model2Vec, the format's library."""
    ours = StaticModel.load(model_dir).embed(TEXTS)
    reference = np.asarray(Reference.from_pretrained(str(model_dir)).encode(TEXTS), dtype=np.float32)
    assert ours.shape == (len(TEXTS), 64)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_text_without_tokens_is_a_zero_vector(model_dir: Path) -> None:
    vectors = StaticModel.load(model_dir).embed(["", "   "])
    assert not vectors.any()


def copy_model(model_dir: Path, to: Path) -> Path:
    shutil.copytree(model_dir, to)
    return to


def test_a_folder_missing_a_file_says_which(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match=r"tokenizer\.json missing"):
        StaticModel.load(folder)


def test_a_truncated_download_is_refused(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="does not fit the file"):
        StaticModel.load(folder)


def test_a_file_that_is_not_safetensors_is_refused(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    (folder / "model.safetensors").write_bytes(b"\xff" * 64)
    with pytest.raises(ModelError, match="not a safetensors file"):
        StaticModel.load(folder)


def test_a_table_too_short_for_the_tokenizer_is_refused(model_dir: Path, tmp_path: Path) -> None:
    """A mapping pointing past the table (a mismatched tokenizer) would read other rows: refused instead."""
    folder = copy_model(model_dir, tmp_path / "m")
    path = folder / "model.safetensors"
    data = bytearray(path.read_bytes())
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    header["embeddings"]["shape"] = [5000, 64]  # half the rows: the mapping reaches past them
    start, _ = header["embeddings"]["data_offsets"]
    header["embeddings"]["data_offsets"] = [start, start + 5000 * 64]
    raw = json.dumps(header, separators=(",", ":")).encode().ljust(size)
    assert len(raw) == size
    data[8 : 8 + size] = raw
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="mapping does not fit"):
        StaticModel.load(folder)


def test_the_fingerprint_follows_the_files(model_dir: Path, tmp_path: Path) -> None:
    folder = copy_model(model_dir, tmp_path / "m")
    before = fingerprint(folder)
    assert before == fingerprint(model_dir)
    (folder / "config.json").write_text('{"normalize": true}')
    assert fingerprint(folder) != before


def _mapped_kib(array: np.ndarray) -> int:
    """The resident KiB of the memory mapping that holds array, from /proc/self/smaps."""
    address = array.__array_interface__["data"][0]
    inside = False
    with open("/proc/self/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "Rss:":
                return int(line.split()[1])
    raise AssertionError("no mapping holds the array")


@pytest.mark.skipif(
    not Path("/proc/self/smaps").is_file(), reason="reads the mapping's resident size from Linux's /proc"
)
def test_the_servers_model_hands_its_pages_back_past_its_bound(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lean model keeps at most RESIDENT of its file mapped between texts; the vectors do not change."""
    monkeypatch.setattr(model, "RESIDENT", 2 * model.GRANULE)
    # Words from all over the vocabulary, one a text: each touches a few granules, all of them most of the file.
    vocab = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    texts = [piece.strip("\u2581") for piece, _ in vocab[1000::97] if piece.strip("\u2581").isalpha()]
    assert len(texts) > 1000
    lean = StaticModel.load(model_dir, lean=True)
    full = StaticModel.load(model_dir)
    for text in texts:
        assert np.allclose(lean.embed([text]), full.embed([text]), atol=1e-6), text
    one_text = 3 * model.GRANULE * max(len(lean.tokenizer.encode(t)) for t in texts) // 1024
    bound = 2 * model.GRANULE // 1024 + one_text
    assert _mapped_kib(lean.table) <= bound
    assert _mapped_kib(full.table) > bound  # without the hand-back, the same texts keep more of it mapped


@pytest.mark.skipif(
    not Path("/proc/self/smaps").is_file(), reason="reads the mapping's resident size from Linux's /proc"
)
def test_the_bound_holds_however_much_a_fault_maps(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound is what the kernel says is mapped, not the granules counted: a fault may map far more than one.

    A float32 table of 1 KiB rows (the real model's width), read once from start to end as a hash is, so the
    page cache holds it in large folios: on Linux 6.18 a row's fault mapped 100-500 KiB, and counting 64 KiB
    a row let the mapping grow well past the bound before it was handed back.
    """
    folder = write_wide(tmp_path / "wide", dims=256)
    fingerprint(folder)  # read whole, as the server does before it loads a model
    bound = 4 << 20
    monkeypatch.setattr(model, "RESIDENT", bound)
    lean = StaticModel.load(folder, lean=True)
    vocab = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    words = [piece.strip("\u2581") for piece, _ in vocab[1000::53] if piece.strip("\u2581").isalpha()]
    texts = [" ".join(words[i : i + 8]) for i in range(0, len(words), 8)]
    assert len(texts) > 500
    over, handed_back, before = [], 0, _mapped_kib(lean.table)
    for text in texts:
        lean.embed([text])
        after = _mapped_kib(lean.table)
        handed_back += after < before
        # Past the bound only by what this one text faulted in (its rows are read before they are counted).
        if after * 1024 > bound + max(0, after - before) * 1024:
            over.append((text, before, after))
        before = after
    assert handed_back >= 3  # the texts read far more than the bound: it was reached, again and again
    assert not over, over[:3]
