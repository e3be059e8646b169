"""A stand-in for potion-multilingual-128M's cost, not its meaning: a Model2Vec folder 256 dimensions wide.

The model `index --download-model` fetches cannot be downloaded on these machines, and the test model is 64
dimensions wide: a 256-dimension index is four times the bytes to score and to hold. This writes a folder of the
real model's width and table type (float32, no vocabulary quantization) and its vocabulary's size (500,353
pieces: the test model's 276k, and drawn ones), with seeded random rows, so `nox -s bench` can measure index time
and size, the hybrid search and the server's memory at that width::

    python -m devkit.wide_model /tmp/wide256
    python benchmarks/run.py --sizes 10k --model /tmp/wide256 --no-phases --http-size none

Its search results mean nothing (the rows are random); the judged-set figures of such a run are to be ignored.
The drawn pieces score far below any split into real ones, so they never win a segmentation: they only cost what
the real vocabulary's do (the table's 512 MB, memory-mapped; the server's vocabulary trie). `--pieces 0` keeps
the test tokenizer as it is (276k pieces; stops 31-32 measured with that). Run by hand, never by the tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import static_model  # the tokenlearn-static-model package: the test model, whose tokenizer this one takes

DIMS = 256
PIECES = 500_353  # potion-multilingual-128M's vocabulary
SEED = 21
_LETTERS = "abcdefghijklmnopqrstuvwxyzäöüßéèçãõñабвгдежзийклмнопрстуфхαβγδεζηθ"


def _tokenizer(source: Path, target: Path, pieces: int) -> int:
    """The test tokenizer, its vocabulary drawn up to pieces (none drawn for 0); the vocabulary's size."""
    data = json.loads(source.read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    have = {piece for piece, _ in vocab}
    # Below any split into real pieces: a drawn piece of n letters scores under n of the lowest real ones.
    floor = 100.0 * min(score for _, score in vocab)
    rng = np.random.default_rng(SEED)
    while len(vocab) < pieces:
        letters = rng.choice(list(_LETTERS), size=int(rng.integers(2, 13)))
        piece = ("\u2581" if rng.random() < 0.5 else "") + "".join(letters)
        if piece not in have:
            have.add(piece)
            vocab.append([piece, floor])
    target.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return len(vocab)


def write(folder: Path, dims: int = DIMS, pieces: int = PIECES) -> Path:
    """The wide model in folder: the test model's tokenizer (drawn up to pieces), a float32 table of dims columns,
    one row per token."""
    source = Path(static_model.__file__).parent / "model"
    folder.mkdir(parents=True, exist_ok=True)
    if pieces:
        vocab = _tokenizer(source / "tokenizer.json", folder / "tokenizer.json", pieces)
    else:
        shutil.copyfile(source / "tokenizer.json", folder / "tokenizer.json")
        vocab = len(json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"])
    rng = np.random.default_rng(SEED)
    # Rows of unequal length, as a trained table's are (frequent tokens shorter): the mean pooling weighs them so.
    table = rng.standard_normal((vocab, dims), dtype=np.float32) * rng.gamma(4.0, 0.25, (vocab, 1)).astype(np.float32)
    header = json.dumps({"embeddings": {"dtype": "F32", "shape": [vocab, dims], "data_offsets": [0, table.nbytes]}})
    pad = (8 - len(header) % 8) % 8  # the data starts aligned, as safetensors writes it
    with open(folder / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(header) + pad) + header.encode() + b" " * pad)
        f.write(table.tobytes())
    (folder / "config.json").write_text(json.dumps({"normalize": True}), encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to write the model folder")
    parser.add_argument("--dims", type=int, default=DIMS, help="its width (default: %(default)s, the real model's)")
    parser.add_argument(
        "--pieces", type=int, default=PIECES, help="its vocabulary's size (default: %(default)s, the real model's)"
    )
    args = parser.parse_args()
    print(write(args.folder, args.dims, args.pieces))


if __name__ == "__main__":
    main()
