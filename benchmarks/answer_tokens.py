"""What a model pays per answer: tokens and bytes of each answer on the workload, per tool and per field.

A host shows the model one copy of a tool result: the ``content`` text (Claude.ai, ChatGPT) or the
compact JSON of ``structuredContent`` (Claude Code, when both are present). Each answer is counted
with the project's own estimate (``magnotia_mcp.budget``) on both copies, and its cost is that of
the larger. That copy is then attributed by walking the answer's JSON: each leaf value (its JSON
encoding, quotes included: the same in both copies) goes to its field class, and what is left (keys,
brackets, commas, the text copy's spaces and newlines) to ``structure``. The attribution uses the
estimate's additive counts (letters count a third of a token each, not rounded up per text), so
the shares of an answer add up to exactly its whole.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from typing import Any

import generate
from client import TOOLS, Json

try:
    from magnotia_mcp.tokencost import UNIT, Parts, json_text, parts, tokens
except ImportError:  # a checkout without the package installed (as floor.py): use its src/
    sys.path.insert(0, str(generate.REPO_DIR / "src"))
    from magnotia_mcp.tokencost import UNIT, Parts, json_text, parts, tokens

# The field classes, in the report's column order; "structure" is keys and punctuation, "other" the
# values of no class below (counts, scores, modes, sources, offsets, matched_terms, flags).
CLASSES = (
    "ids",
    "titles",
    "times",
    "speakers",
    "previews",
    "snippets",
    "moments",
    "text",
    "hints",
    "notes/cursors",
    "other",
    "structure",
)
# A leaf's class is its nearest key's (the key of the object it is in, or of the list it is an element of).
_BY_KEY = {
    **dict.fromkeys(("id", "transcript_id", "segment_id", "task_id", "seq"), "ids"),
    "title": "titles",
    **dict.fromkeys(
        (
            "created_at",
            "updated_at",
            "completed_at",
            "due_at",
            "start_ms",
            "end_ms",
            "duration_ms",
            "since",
            "until",
            "first_at",
            "last_at",
        ),
        "times",
    ),
    **dict.fromkeys(("speaker", "speakers"), "speakers"),
    "preview": "previews",
    "snippet": "snippets",
    **dict.fromkeys(("text", "notes"), "text"),  # a window's text, a segment's, a task's notes
    **dict.fromkeys(("note", "next_cursor", "next_offset", "next_max_chars"), "notes/cursors"),
}
# Everything inside these goes to one class, whatever its own keys: a hit's moments (and its segment,
# which repeats the first moment's place), and the hint of a search that found little.
_CONTAINERS = {"moments": "moments", "segment": "moments", "hint": "hints"}


def fractional(counts: Parts) -> float:
    """The estimate's tokens of counts without rounding the letters up: these add up over pieces."""
    return counts[0] / UNIT


def leaf_costs(answer: Any) -> dict[str, float]:
    """Tokens of each class's leaf values in answer (structure not included)."""
    out: dict[str, float] = {}

    def walk(value: Any, key: str | None, fixed: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k, fixed or _CONTAINERS.get(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key, fixed)
        else:
            cls = fixed or _BY_KEY.get(key or "", "other")
            out[cls] = out.get(cls, 0.0) + fractional(parts(json.dumps(value, ensure_ascii=False)))

    walk(answer, None, None)
    return out


@dataclass
class Answer:
    """One answer's sizes (both copies) and the larger copy's tokens by class."""

    content_tokens: int
    structured_tokens: int
    content_bytes: int
    structured_bytes: int
    classes: dict[str, float]  # fractional tokens of the larger copy by class, structure included

    @property
    def larger_tokens(self) -> int:
        return max(self.content_tokens, self.structured_tokens)

    @property
    def larger_bytes(self) -> int:
        return self.content_bytes if self.content_tokens >= self.structured_tokens else self.structured_bytes


def measure(result: Json) -> Answer:
    """The sizes of one tool result (the ``result`` of a tools/call response) and its larger copy's classes."""
    content = "".join(c.get("text", "") for c in result.get("content") or () if isinstance(c, dict))
    structured = result.get("structuredContent")
    compact = json_text(structured) if isinstance(structured, dict) else ""
    c_parts, s_parts = parts(content), parts(compact)
    c_tokens, s_tokens = tokens(c_parts), tokens(s_parts)
    answer = structured if isinstance(structured, dict) else _parsed(content)
    classes = leaf_costs(answer)
    whole = fractional(c_parts if c_tokens >= s_tokens else s_parts)
    classes["structure"] = max(0.0, whole - sum(classes.values()))
    return Answer(c_tokens, s_tokens, len(content.encode()), len(compact.encode()), classes)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: all of it counts as one value


@dataclass
class Tally:
    """The answers of one server on one store, per tool."""

    answers: dict[str, list[Answer]] = field(default_factory=dict)

    def add(self, tool: str, result: Json) -> None:
        self.answers.setdefault(tool, []).append(measure(result))

    def figures(self) -> Json:
        """Per tool (and "all"): answers, mean and p90 tokens and bytes, both copies' means, shares by class."""
        order = [t for t in TOOLS if t in self.answers] + [t for t in self.answers if t not in TOOLS]
        out: Json = {tool: summarize(self.answers[tool]) for tool in order}
        everything = [a for answers in self.answers.values() for a in answers]
        if everything:
            out["all"] = summarize(everything)
        return out


def summarize(answers: list[Answer]) -> Json:
    """The figures of some answers; shares are of all their tokens together (what the model pays in all)."""
    n = len(answers)
    larger = sorted(a.larger_tokens for a in answers)
    total = sum(sum(a.classes.values()) for a in answers) or 1.0
    return {
        "answers": n,
        "mean_tokens": sum(larger) / n,
        "p90_tokens": larger[max(0, math.ceil(0.9 * n) - 1)],
        "mean_bytes": sum(a.larger_bytes for a in answers) / n,
        "content": {
            "mean_tokens": sum(a.content_tokens for a in answers) / n,
            "mean_bytes": sum(a.content_bytes for a in answers) / n,
        },
        "structured": {
            "mean_tokens": sum(a.structured_tokens for a in answers) / n,
            "mean_bytes": sum(a.structured_bytes for a in answers) / n,
        },
        "shares": {c: sum(a.classes.get(c, 0.0) for a in answers) / total for c in CLASSES},
    }
