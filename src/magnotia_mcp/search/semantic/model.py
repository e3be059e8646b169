"""A static embedding model: a token table, pooled by mean; Model2Vec's folder layout, read by hand.

The folder holds ``tokenizer.json`` (Hugging Face tokenizers), ``model.safetensors`` (the
table ``embeddings``, and for vocabulary-quantized models ``mapping`` from token to row and
``weights`` per token) and ``config.json`` (``normalize``). A text's vector is the mean of its
tokens' rows, each times its token's weight, then scaled to length 1.

Why by hand and not with the ``model2vec`` package: its install brings huggingface-hub, hf-xet and an
HTTP client (about 20 MB, and a network stack this server promises never to use); inference is a
lookup and a mean. The safetensors file is memory-mapped rather than loaded (a multilingual table
is hundreds of megabytes, and only the rows of tokens actually seen are paged in), except in the server,
which reads the rows it needs with ``pread`` (``Rows``).
tests/unit/semantic checks the vectors against the reference encoder shipped with the test model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import mmap
import os
import re
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from tokenizers import Tokenizer

from magnotia_mcp import filemodes
from magnotia_mcp.search.semantic.unigram import Unigram

FILES = ("config.json", "model.safetensors", "tokenizer.json")
MAX_TOKENS = 512  # as Model2Vec truncates: a chunk is far shorter, a pasted query may not be
_DTYPES = {"F32": np.float32, "F16": np.float16, "I8": np.int8, "I32": np.int32, "I64": np.int64}
_HEADER_LIMIT = 100 * 1024 * 1024  # safetensors' own limit on the JSON header
# What a tokenizer.json may hold before tokenizers or our Unigram is given it (the largest Model2Vec
# vocabularies have 500k pieces of a few dozen characters, in about 30 MB).
MAX_TOKENIZER_BYTES = 256 * 1024 * 1024
MAX_PIECE = 1_000  # characters in any string but the normalizer's compiled table
MAX_STRINGS = 4_000_000
MAX_CONFIG_BYTES = 1024 * 1024
_MODEL_TYPES = ("Unigram", "WordPiece", "BPE", "WordLevel")
_MODEL_TYPE = re.compile(rb'"model"\s*:\s*\{\s*"type"\s*:\s*"(\w+)"')
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # one JSON string, escapes and all
_CHARSMAP = re.compile(rb'"precompiled_charsmap"\s*:\s*$')
_ELSEWHERE = "copy the model into a folder of your own and pass that with --model"


class ModelError(Exception):
    """The folder is not a model this server can use: the message says what is wrong and what to do."""


class Rows:
    """A table's rows read from its file with ``pread``, as a text needs them: nothing of the file is mapped.

    For the server (lean models), where ``os.preadv`` exists. A mapping would count the file's pages in the
    server's RSS, and the kernel maps as much as it likes per fault: on Linux 6.18 a page cache that read the
    file whole (its sha256) holds it in 2 MiB folios, and one row's fault mapped all 2 MiB of its folio, so a
    text of 30 new tokens put 60 MiB in the RSS before anything could hand it back. A row of the real model
    is 1 KiB; a query reads tens of them (about 1.5 us each).
    """

    def __init__(self, path: Path, offset: int, shape: tuple[int, ...], dtype: Any) -> None:
        self.fd = _open_file(path)  # checked again: it is opened anew
        self.offset = offset
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.size = shape[1] * self.dtype.itemsize  # bytes a row

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, at: NDArray[np.int64]) -> NDArray[Any]:
        out = np.empty((len(at), self.shape[1]), dtype=self.dtype)
        view = out.data.cast("B")
        for k, row in enumerate(at.tolist()):
            got = os.preadv(self.fd, [view[k * self.size : (k + 1) * self.size]], self.offset + row * self.size)
            if got != self.size:
                raise ModelError("the model file was cut short since it was loaded; run `magnotia-mcp index`")
        return out

    def __del__(self) -> None:
        if hasattr(self, "fd"):  # not when the open itself failed
            os.close(self.fd)


class Mapped(NamedTuple):
    """A safetensors file's tensors, memory-mapped read-only; where each starts in the file; the map itself."""

    tensors: dict[str, NDArray[Any]]
    offsets: dict[str, int]
    mapping: mmap.mmap


def _open_file(path: Path, limit: int | None = None) -> int:
    """path opened for reading (links followed: a Hugging Face cache links to its blobs), once it is a regular file
    (a FIFO or device would hang or never end) of at most limit bytes that only this user and root may change."""
    try:
        return filemodes.open_trusted(path, limit, "a model's file", _ELSEWHERE)
    except filemodes.Refused as exc:
        raise ModelError(str(exc)) from None


def _read_small(path: Path, limit: int) -> bytes:
    """A model file's bytes, refused when over limit: read before any of it is handed to native code."""
    with os.fdopen(_open_file(path, limit), "rb") as f:
        raw = f.read(limit + 1)
    if len(raw) > limit:  # it grew since it was checked
        raise ModelError(f"{path} is over {limit // (1024 * 1024)} MiB, more than a model's file holds")
    return raw


def check_tokenizer(path: Path) -> bytes:
    """tokenizer.json's bytes, once they are what tokenizers and our Unigram are safe to be given; else ModelError.

    A JSON object of a known model type, every string in it (pieces first) at most MAX_PIECE characters but the
    normalizer's compiled table, and at most MAX_STRINGS of them: tokenizers crashed (SIGSEGV) encoding with a
    2-million-character piece.
    """
    raw = _read_small(path, MAX_TOKENIZER_BYTES)
    if not raw.lstrip().startswith(b"{"):
        raise ModelError(f"{path} is not a tokenizer: not a JSON object")
    kind = _MODEL_TYPE.search(raw)
    if kind is None or kind.group(1).decode() not in _MODEL_TYPES:
        raise ModelError(f"{path} is not a tokenizer of a known model type ({', '.join(_MODEL_TYPES)})")
    for count, found in enumerate(_STRING.finditer(raw), 1):
        if found.end() - found.start() - 2 > MAX_PIECE and not _CHARSMAP.search(raw, found.start() - 40, found.start()):
            text = raw[found.start() : found.end()]
            try:
                chars = len(json.loads(text)) if b"\\" in text else len(text.decode("utf-8")) - 2
            except ValueError:
                raise ModelError(f"{path} is not a tokenizer: a string in it is not valid JSON") from None
            if chars > MAX_PIECE:
                raise ModelError(f"{path} holds a string of {chars} characters (at most {MAX_PIECE} are read)")
        if count > MAX_STRINGS:
            raise ModelError(f"{path} holds more than {MAX_STRINGS} strings, more than a tokenizer's vocabulary")
    return raw


def _tensor(path: Path, name: str, spec: Any, data: int) -> tuple[Any, tuple[int, ...], int]:
    """A header entry's dtype, shape and start in the data, once all three are of a tensor that fits data bytes."""
    where = f"{path}: tensor {str(name)[:100]!r}"
    if not isinstance(spec, dict):
        raise ModelError(f"{where} is not described by a JSON object")
    kind = spec.get("dtype")
    dtype = _DTYPES.get(kind) if isinstance(kind, str) else None
    if dtype is None:
        raise ModelError(f"{where} has dtype {str(kind)[:40]}, which is not supported")
    shape, offsets = spec.get("shape"), spec.get("data_offsets")
    if not isinstance(shape, list) or len(shape) > 8 or not all(_natural(n) for n in shape):
        raise ModelError(f"{where} has a shape that is not a list of non-negative integers")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_natural(n) for n in offsets):
        raise ModelError(f"{where} has data_offsets that are not two non-negative integers")
    size = math.prod(shape) * np.dtype(dtype).itemsize  # Python integers: no overflow
    start, end = offsets
    if end > data or end - start != size:
        raise ModelError(f"{where} does not fit the file; the download may be incomplete")
    return dtype, tuple(shape), start


def _natural(n: Any) -> bool:
    return type(n) is int and n >= 0


def _tensors(path: Path) -> Mapped:
    """The tensors of a safetensors file, memory-mapped read-only (format: u64 header size, JSON header, data).

    Every number of the header is checked before numpy is given any: a JSON object of tensors of known dtypes,
    shapes of non-negative integers, data_offsets two non-negative integers within the file, matching the shape.
    """
    fd = _open_file(path)
    try:
        total = os.fstat(fd).st_size
        first = os.pread(fd, 8, 0)
        (size,) = struct.unpack("<Q", first) if len(first) == 8 else (total,)
        if size > min(_HEADER_LIMIT, total - 8):
            raise ModelError(f"{path} is not a safetensors file (its header claims {size} bytes)")
        try:
            header = json.loads(os.pread(fd, size, 8))
        except ValueError:
            raise ModelError(f"{path} is not a safetensors file (its header is not JSON)") from None
        if not isinstance(header, dict):
            raise ModelError(f"{path} is not a safetensors file (its header is not a JSON object)")
        base = 8 + size
        data = total - base
        specs = {name: _tensor(path, name, spec, data) for name, spec in header.items() if name != "__metadata__"}
        try:
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read {path}: {exc}") from None
    finally:
        os.close(fd)
    out: dict[str, NDArray[Any]] = {}
    offsets: dict[str, int] = {}
    for name, (dtype, shape, start) in specs.items():
        out[name] = np.ndarray(shape, dtype=dtype, buffer=mapped, offset=base + start)
        offsets[name] = base + start
    return Mapped(out, offsets, mapped)


def _unknown_id(tokenizer: Any, raw: bytes) -> int | None:
    """The unknown token's id: dropped before pooling, as Model2Vec does (it means nothing).

    WordPiece, BPE and word-level models name it; a Unigram model's id is read from the file with a
    regular expression, not by parsing it: the JSON of a 250k-token vocabulary costs ~90 MB as objects.
    """
    token = getattr(tokenizer.model, "unk_token", None)
    if isinstance(token, str):
        found = tokenizer.token_to_id(token)
        return int(found) if found is not None else None
    match = re.search(rb'"unk_id"\s*:\s*(\d+)', raw)
    return int(match.group(1)) if match else None


def fingerprint(folder: Path) -> str:
    """sha256 over the model's files: an index built with one model is never searched with another."""
    digest = hashlib.sha256()
    for name in FILES:
        with os.fdopen(_open_file(folder / name), "rb") as f:  # a regular file: a FIFO there would hang
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


class StaticModel:
    """A loaded model: ``embed`` turns texts into unit vectors of ``dims`` floats."""

    def __init__(
        self,
        folder: Path,
        tokenizer: Any,
        table: NDArray[Any] | Rows,
        mapping: NDArray[Any] | None,
        weights: NDArray[Any] | None,
        unknown: int | None,
    ) -> None:
        self.folder = folder
        self.tokenizer = tokenizer
        self.table = table
        self.mapping = mapping
        self.weights = weights
        self.unknown = unknown
        self.dims = int(table.shape[1])

    @classmethod
    def load(cls, folder: Path, *, lean: bool = False) -> StaticModel:
        """Read the model in folder, or raise ModelError saying what is missing.

        lean: segment with our Unigram (search/semantic/unigram.py) where the tokenizer is one it reads, and
        read the table's rows with pread (``Rows``) where it exists: for a server that embeds a query at a time,
        in a few MiB; else tokenizers' encoder and a mapped table, fast on the batches `index` embeds.
        """
        missing = [name for name in FILES if not os.path.lexists(folder / name)]  # anything else there: said below
        if missing:
            raise ModelError(
                f"{folder} is not a model folder: {', '.join(missing)} missing "
                "(a Model2Vec model has config.json, model.safetensors and tokenizer.json)"
            )
        raw = check_tokenizer(folder / "tokenizer.json")  # all of it checked before native code is given any
        config = _read_small(folder / "config.json", MAX_CONFIG_BYTES)
        try:
            tokenizer: Any = Unigram.load(raw, MAX_TOKENS) if lean else None
            if tokenizer is not None:
                unknown: int | None = tokenizer.unknown
                vocab = tokenizer.size
            else:
                tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
                unknown = _unknown_id(tokenizer, raw)
                tokenizer.no_padding()
                tokenizer.enable_truncation(MAX_TOKENS)
                vocab = tokenizer.get_vocab_size()
            # config.json's "normalize" is not read: every use here is cosine similarity, so rows are always scaled.
            if not isinstance(json.loads(config), dict):
                raise ValueError("config.json is not a JSON object")
        except Exception as exc:  # tokenizers raises plain Exception for a bad file
            raise ModelError(f"cannot read the tokenizer or config in {folder}: {str(exc)[:300]}") from None
        del raw
        mapped = _tensors(folder / "model.safetensors")
        tensors = mapped.tensors
        table = tensors.get("embeddings")
        where = f"{folder}/model.safetensors"
        if table is None or table.ndim != 2 or table.shape[1] == 0 or table.dtype.kind not in "fi":
            raise ModelError(f"{where} has no 2-D 'embeddings' table of numbers")
        mapping, weights = tensors.get("mapping"), tensors.get("weights")
        if mapping is None and table.shape[0] < vocab:
            raise ModelError(f"{where}: the table has {table.shape[0]} rows for {vocab} tokens and no mapping")
        if mapping is not None and (
            mapping.ndim != 1
            or mapping.dtype.kind != "i"
            or mapping.shape[0] < vocab
            or (mapping.size and not 0 <= int(np.min(mapping)) <= int(np.max(mapping)) < table.shape[0])
        ):
            raise ModelError(f"{where}: its token mapping does not fit the tokenizer and the table")
        if weights is not None and (weights.ndim != 1 or weights.shape[0] < vocab):
            raise ModelError(f"{where}: its token weights do not fit the {vocab} tokens of the tokenizer")
        if not lean or not hasattr(os, "preadv"):
            return cls(folder, tokenizer, table, mapping, weights, unknown)
        # The server's: the table's rows by pread, the small tensors copied (a few MB), and no mapping kept.
        rows = Rows(folder / "model.safetensors", mapped.offsets["embeddings"], table.shape, table.dtype)
        small = [None if t is None else np.array(t) for t in (mapping, weights)]
        del tensors, table, mapping, weights
        mapped.tensors.clear()
        with contextlib.suppress(BufferError):  # a view still held somewhere: the mapping stays, nothing reads it
            mapped.mapping.close()
        return cls(folder, tokenizer, rows, small[0], small[1], unknown)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit-length row per text; a text with no known token, or one the model's numbers make NaN or infinite
        (a hostile file's), gives a row of zeros (it matches nothing)."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        texts = [whole(text) for text in texts]
        if isinstance(self.tokenizer, Unigram):
            pieces = [self.tokenizer.encode(text) for text in texts]
        else:
            pieces = [e.ids for e in self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)]
        # A model's NaN, infinite or huge numbers (a hostile file's) overflow or make NaN here: no warning, and no
        # such row is used (below: it matches nothing).
        with np.errstate(over="ignore", invalid="ignore"):
            for i, found in enumerate(pieces):
                ids = np.asarray(found, dtype=np.int64)
                if self.unknown is not None:
                    ids = ids[ids != self.unknown]
                if ids.size == 0:
                    continue
                at = ids if self.mapping is None else self.mapping[ids]
                rows = self.table[np.asarray(at, dtype=np.int64)].astype(np.float32)
                if self.weights is not None:
                    rows *= self.weights[ids].astype(np.float32)[:, None]
                out[i] = rows.mean(axis=0)
            norms = np.linalg.norm(out, axis=1, keepdims=True)
        usable = np.isfinite(norms) & (norms > 0)
        np.divide(out, norms, out=out, where=usable)
        out[~usable[:, 0]] = 0
        return out


def whole(text: str) -> str:
    """text with each lone surrogate (a "\\ud800" escape in the JSON: not Unicode, no UTF-8 form) as U+FFFD, which
    a tokenizer can read (a replacement: it stands for nothing)."""
    return text if text.isascii() else text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
