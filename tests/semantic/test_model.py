"""The model loader: the vectors of a Model2Vec folder, checked against the encoder shipped with the test model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from model2vec import StaticModel as Reference

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
