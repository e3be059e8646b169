"""Stems come from snowballstemmer's own language modules, loaded one language at a time."""

from __future__ import annotations

import subprocess
import sys

import pytest
import snowballstemmer  # type: ignore[import-untyped]  # no stubs

from magnotia_mcp.search import stemming

WORDS = {
    "english": ("decisions", "planning", "hires", "agreed", "quarterly", "budgets"),
    "portuguese": ("reuniões", "decisões", "orçamentos", "contratações", "planejamento"),
    "spanish": ("reuniones", "decisiones", "presupuestos", "contrataciones", "planificación"),
    "german": ("Entscheidungen", "Besprechungen", "Preiserhöhung", "Einstellungen", "geplant"),
    "french": ("réunions", "décisions", "budgets", "embauches", "planification"),
}


@pytest.mark.parametrize("language", stemming.LANGUAGES)
def test_each_language_stems_as_the_snowball_package_does(language: str) -> None:
    ours, theirs = stemming._stemmer(language), snowballstemmer.stemmer(language)
    assert type(ours).__module__ == f"magnotia_mcp.search._snowball.{language}_stemmer"  # the one-language route
    for word in WORDS[language]:
        assert ours.stemWord(word) == theirs.stemWord(word), word


def test_stemming_loads_only_the_languages_it_uses() -> None:
    """In a fresh interpreter: the five languages, and neither the package's __init__ nor its 33 others."""
    code = (
        "import sys\n"
        "from magnotia_mcp.search import stemming\n"
        "for lang in stemming.LANGUAGES: stemming._stemmer(lang).stemWord('meetings')\n"
        "print('\\n'.join(sorted(m for m in sys.modules if 'snowball' in m)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "snowballstemmer" not in loaded
    languages = {m.rsplit(".", 1)[1] for m in loaded if m.endswith("_stemmer")}
    assert languages == {f"{lang}_stemmer" for lang in stemming.LANGUAGES}, loaded
