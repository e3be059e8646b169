"""A Unigram tokenizer's segmentation in Python, for a server that embeds a query at a time: 4 MB, not 300.

``tokenizers`` builds a byte trie of the whole vocabulary when it loads a Unigram ``tokenizer.json``: for
the 276k pieces of a multilingual SentencePiece vocabulary that is ~310 MiB resident, most of a server's
memory with search by meaning. A server only embeds a query per search (and the few transcripts the app
adds), so it segments here instead: the pieces in a MARISA trie (``marisa-trie``: 0.8 MiB for those 276k
pieces, where a dict of them took 54 MiB), their ids and scores in two arrays (3 MiB), and the Viterbi search that
``tokenizers`` does (``models/unigram/model.rs``: the best sum of piece scores; a character no piece
covers is unknown at the lowest score minus 10; ties keep the earliest split). The text is normalized by
``tokenizers`` itself, from the same file with the vocabulary left out; SentencePiece's usual pre-tokenizer
(whitespace, then the U+2581 mark) is cut here, as a call into tokenizers' binding per text costs more than
the rest, and any other goes through ``tokenizers``. ``magnotia-mcp index`` embeds hundreds of thousands
of windows and keeps ``tokenizers``' own encoder; tests/semantic/test_unigram.py checks that both give the
same ids.

Only what this server's models use is read here: a Unigram model without byte fallback, whose ``model``
comes last in the file (as ``tokenizers`` writes it), with no repeated piece and no NUL in one (MARISA's
lookups stop at a NUL). Anything else is ``None`` from ``load``, and the caller uses ``tokenizers``' encoder.
"""

from __future__ import annotations

import ctypes
import json
import re
import sys
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import marisa_trie
from tokenizers import Tokenizer

UNKNOWN_PENALTY = 10.0  # tokenizers' K_UNK_PENALTY
CACHED = 20_000  # words whose pieces are kept (speech repeats its words: most lookups are a hit); then it starts over
_MODEL = re.compile(rb'"model"\s*:\s*\{\s*"type"\s*:\s*"Unigram"\s*,\s*"unk_id"\s*:\s*(\d+)\s*,\s*"vocab"\s*:\s*\[')
# One [piece, score] pair of the vocabulary: a JSON string (escapes allowed) and a number.
_PAIR = re.compile(rb'\s*\[\s*"((?:[^"\\]|\\.)*)"\s*,\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*\]\s*(,|\])')
_TAIL = re.compile(rb'\s*,\s*"byte_fallback"\s*:\s*false\s*\}\s*\}\s*$')


# The pre-tokenizer of SentencePiece vocabularies converted by tokenizers, cut here without a call into it
# (its binding costs ~0.1 ms a text, most of a query's embedding); any other pre-tokenizer goes through it.
_SENTENCEPIECE = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    ],
}
# Rust's char::is_whitespace (Unicode White_Space), where WhitespaceSplit cuts; Python's str.split() also
# cuts at U+001C..U+001F, which it does not.
_WHITESPACE = re.compile("[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_BEFORE_MARK = re.compile("(?=\u2581)")


def _sentencepiece_words(normalized: str) -> list[str]:
    """WhitespaceSplit, then Metaspace (always prefixed, cut before each U+2581 mark), as tokenizers does them."""
    out: list[str] = []
    for word in _WHITESPACE.split(normalized):
        if not word:
            continue
        if "\u2581" not in word:  # almost every word: no mark of its own to cut at
            out.append("\u2581" + word)
            continue
        marked = word if word.startswith("\u2581") else "\u2581" + word
        out.extend(piece for piece in _BEFORE_MARK.split(marked) if piece)
    return out


def _vocabulary(raw: bytes, at: int) -> tuple[Any, array[int], array[float]] | None:
    """The vocabulary's pieces in a trie, and the token id and score of each of its keys; None if not ours to read.

    Two passes over where the pieces are in raw: one builds the trie, one files each piece's id and score under
    the trie's key id. No object per piece outlives either.
    """
    spans = array("q")  # where each piece's JSON text starts and ends
    scores = array("d")
    while True:
        pair = _PAIR.match(raw, at)
        if pair is None:
            return None
        spans.extend(pair.span(1))
        scores.append(float(pair.group(2)))
        at = pair.end()
        if pair.group(3) == b"]":
            break
    if _TAIL.match(raw, at) is None:
        return None

    def pieces() -> Iterator[str]:
        for k in range(0, len(spans), 2):
            text = raw[spans[k] : spans[k + 1]]
            yield json.loads(b'"' + text + b'"') if b"\\" in text else text.decode("utf-8")

    trie = marisa_trie.Trie(pieces())
    if len(trie) != len(scores):
        return None  # a repeated piece (tokenizers keeps its last id; no vocabulary here has one)
    ids = array("i", [0]) * len(scores)
    by_key = array("d", [0.0]) * len(scores)
    for token, piece in enumerate(pieces()):
        if "\x00" in piece:
            return None  # MARISA looks a key up only as far as its first NUL
        key = trie.key_id(piece)
        ids[key], by_key[key] = token, scores[token]
    return trie, ids, by_key


def _trim_heap() -> None:
    """Hand the C heap's free memory back to the system (glibc's malloc_trim; elsewhere nothing).

    Building the trie leaves its work space free but held by malloc: 13 MiB for 276k pieces, 27 MiB for the
    500k of potion-multilingual-128M's vocabulary, kept in the server's RSS for its life.
    """
    if not sys.platform.startswith("linux"):  # CDLL(None) is the process itself only on POSIX; trim is glibc's
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):  # not glibc (musl)
        return
    trim(0)


class Unigram:
    """Token ids of texts, as ``Tokenizer.encode_batch_fast`` gives them for this file, truncated to limit."""

    def __init__(self, front: Any, trie: Any, ids: array[int], scores: array[float], unknown: int, limit: int) -> None:
        self.front = front  # tokenizers' normalizer and pre-tokenizer, from the file
        self.trie = trie  # the pieces; the trie's own key ids index the two arrays
        self.ids = ids  # the token id of each of the trie's keys
        self.scores = scores  # the score of each of the trie's keys
        self.size = len(ids)
        self.unknown = unknown
        self.unknown_score = min(scores) - UNKNOWN_PENALTY
        self.limit = limit
        self.cache: dict[str, list[int]] = {}
        self.words: Callable[[str], list[str]] = self._pre_tokenized

    def _pre_tokenized(self, normalized: str) -> list[str]:
        """The words tokenizers' own pre-tokenizer cuts (through its binding: ~0.1 ms a text)."""
        if self.front.pre_tokenizer is None:
            return [normalized]
        return [word for word, _ in self.front.pre_tokenizer.pre_tokenize_str(normalized)]

    @classmethod
    def load(cls, raw: bytes, limit: int) -> Unigram | None:
        """The Unigram of a tokenizer.json's bytes (read capped and checked by model._read_small), or None when
        it is not one this reads (tokenizers')."""
        head = _MODEL.search(raw)
        if head is None:
            return None
        vocabulary = _vocabulary(raw, head.end())
        _trim_heap()
        if vocabulary is None or not 0 <= int(head.group(1)) < len(vocabulary[1]):
            return None
        # The same file without its vocabulary: tokenizers' own normalizer and pre-tokenizer, a few kilobytes.
        rest = (
            raw[: head.start()].decode("utf-8")
            + '"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}}'
        )
        del raw
        front = Tokenizer.from_str(rest)
        unigram = cls(front, *vocabulary, int(head.group(1)), limit)
        if json.loads(rest).get("pre_tokenizer") == _SENTENCEPIECE:
            unigram.words = _sentencepiece_words
        return unigram

    def encode(self, text: str) -> list[int]:
        """The ids of text's pieces, the first limit of them."""
        normalized = self.front.normalizer.normalize_str(text) if self.front.normalizer else text
        out: list[int] = []
        cache = self.cache
        for word in self.words(normalized):
            pieces = cache.get(word)
            if pieces is None:
                if len(cache) >= CACHED:
                    cache.clear()
                pieces = cache[word] = self._segment(word)
            out.extend(pieces)
            if len(out) >= self.limit:
                return out[: self.limit]
        return out

    def _piece(self, text: str) -> int:
        """The token id of a piece's text, or the unknown id (MARISA would look a NUL's text up as far as the NUL)."""
        key = None if "\x00" in text else self.trie.get(text)
        return self.unknown if key is None else self.ids[key]

    def _segment(self, word: str) -> list[int]:
        """Viterbi over the pieces: the split of word whose pieces' scores sum highest."""
        n = len(word)
        best = [0.0] * (n + 1)
        start: list[int] = [-1] * (n + 1)
        piece_key = [-1] * (n + 1)  # the trie key of the piece that ends there; -1: unknown
        prefixes, scores = self.trie.iter_prefixes_with_ids, self.scores
        for i in range(n):
            here = best[i]
            single = False
            for piece, key in prefixes(word[i:]):  # shortest first, as tokenizers walks its trie
                j = i + len(piece)
                score = here + scores[key]
                if start[j] < 0 or score > best[j]:
                    best[j], start[j], piece_key[j] = score, i, key
                if j == i + 1:
                    single = True
            if not single:
                score = here + self.unknown_score
                if start[i + 1] < 0 or score > best[i + 1]:
                    best[i + 1], start[i + 1], piece_key[i + 1] = score, i, -1
        # Back from the end. As tokenizers does (fuse_unk), consecutive nodes with the unknown id are one token:
        # their text, looked up again, else unknown (in some vocabularies the unknown id is also a real piece's).
        pieces: list[int] = []
        fused: list[str] = []
        end = n
        while end > 0:
            begin = start[end]
            token = self.unknown if piece_key[end] < 0 else self.ids[piece_key[end]]
            if token == self.unknown:
                fused.append(word[begin:end])
            else:
                if fused:
                    pieces.append(self._piece("".join(reversed(fused))))
                    fused = []
                pieces.append(token)
            end = begin
        if fused:
            pieces.append(self._piece("".join(reversed(fused))))
        pieces.reverse()
        return pieces
