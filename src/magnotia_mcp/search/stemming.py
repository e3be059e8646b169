"""Query-time stemming: "plans" also finds "plan", "reuniões" also finds "reunião".

The app's full-text index stores words as spoken (``unicode61``, no stemmer), so
inflections are matched from the query side: a word becomes the prefix its stem
shares with it ("plans" -> ``plan*``, "decisions" -> ``decis*``), which the index and
the scan both understand. Stems come from Snowball (``snowballstemmer``, pure
Python, imported on the first search), in the language the query's function
words point to, else the shortest stem any of the five languages gives.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any

from magnotia_mcp.search.stopwords import BY_LANGUAGE

LANGUAGES = tuple(BY_LANGUAGE)
# Shorter prefixes match too much ("pl*" for "plans"); words this short are left whole.
MIN_PREFIX = 4


def guess_language(folded_words: Iterable[str]) -> str | None:
    """The language whose function words the query uses most, or None on no clear winner."""
    votes = {lang: sum(w in words for w in folded_words) for lang, words in BY_LANGUAGE.items()}
    best = max(votes.values())
    winners = [lang for lang, n in votes.items() if n == best]
    return winners[0] if best and len(winners) == 1 else None


@lru_cache(maxsize=4096)
def stem_prefix(folded: str, language: str | None) -> str | None:
    """The prefix to search for a folded word (lower case, no diacritics), or None to search it whole (short words).

    Stemming the folded word keeps every stem a candidate prefix of what the index holds.
    """
    if len(folded) <= MIN_PREFIX:
        return None
    best: str | None = None
    for lang in (language,) if language else LANGUAGES:
        stem = _stemmer(lang).stemWord(folded)
        shared = _common_prefix(stem, folded)
        # A word that is its own stem ("passport", "budget") is searched as a prefix too, so that its
        # inflections ("passports", "budgets") match as they do for a word the stemmer shortens.
        if len(shared) >= MIN_PREFIX and (best is None or len(shared) < len(best)):
            best = shared
    return best


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


# snowballstemmer's language modules, loaded as submodules of this name (see _stemmer).
_PRIVATE = "magnotia_mcp.search._snowball"


@cache
def _stemmer(language: str) -> Any:
    """One language's Snowball stemmer, loading that language's module only.

    ``import snowballstemmer`` runs a package ``__init__`` that imports all of its 38 languages
    (about 30 ms and 3 MiB resident, compiled; a search uses at most five). A language module
    needs only its siblings ``basestemmer`` and ``among``, so it is loaded under a private
    package whose path is snowballstemmer's folder; the real package stays unimported for
    anyone else. Where modules live in no folder (a frozen build's archive), the package is
    imported as usual.
    """
    try:
        module = importlib.import_module(f"{_private_package()}.{language}_stemmer")
        return getattr(module, f"{language.capitalize()}Stemmer")()
    except (ImportError, AttributeError):
        import snowballstemmer  # type: ignore[import-untyped]  # no stubs; only the first search pays for it

        return snowballstemmer.stemmer(language)


def _private_package() -> str:
    """The private package over snowballstemmer's folder (found, not imported), made once."""
    if _PRIVATE not in sys.modules:
        spec = importlib.util.find_spec("snowballstemmer")
        folders = list(spec.submodule_search_locations or ()) if spec is not None else []
        if not folders or not all(os.path.isdir(folder) for folder in folders):
            raise ImportError("snowballstemmer's modules are not in a folder")
        package = types.ModuleType(_PRIVATE, "snowballstemmer's language modules, loaded one by one")
        package.__path__ = folders
        sys.modules[_PRIVATE] = package
    return _PRIVATE
