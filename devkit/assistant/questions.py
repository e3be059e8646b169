"""The assistant set's questions: what a user asks, of what kind, and the facts a right answer holds.

A fact is a list of acceptable patterns (regular expressions, matched case- and accent-insensitively on the
answer: ``grade.normalize``); a right answer matches every fact and no ``forbidden`` pattern. A question whose
right answer is "nothing found" has the ``NOTHING`` fact and forbids what only the trash holds. ``evidence``
names the planted transcripts that hold the facts (tests/unit/test_assistant_set.py finds each fact there).

Half the questions tune, half are held out of any tuning (``split``), balanced by kind. Every question applies
to both store sizes: the planted transcripts are the same in each.
"""

from __future__ import annotations

from dataclasses import dataclass

from devkit.assistant.planted import NOW

PREAMBLE = (
    f"Today is {NOW:%A %d %B %Y}, {NOW:%H:%M} UTC; the user's time zone is UTC. "
    "Answer the user's question from their Magnotia transcripts and tasks."
)
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
NOTHING = (
    r"\b(no|not|nothing|none|never|couldn.?t|could not|can.?t|cannot|didn.?t|did not|unable|zero)\b.{0,80}"
    r"\b(found|find|mention\w*|record\w*|transcripts?|results?|match\w*|information|trace|notes?|discuss\w*)",
    r"\bnothing (about|on|regarding|related)",
)


def on(month: int, day: int, year: int = 2026) -> tuple[str, ...]:
    """A day as an answer may write it: "March 20(th)", "20(th) (of) March", "20. März", 2026-03-20."""
    name = MONTHS[month - 1]
    return (
        rf"\b{name}\w*\.?\s+{day}(st|nd|rd|th)?\b",
        rf"\b{day}(st|nd|rd|th)?\.?\s+(of\s+|de\s+)?{name}",
        rf"{year}-{month:02d}-{day:02d}",
    )


def in_month(month: int, year: int) -> tuple[str, ...]:
    name = MONTHS[month - 1]
    return (rf"\b{name}\w*\.?\s+(\d{{1,2}}(st|nd|rd|th)?,?\s+)?{year}", rf"{year}-{month:02d}")


def count(n: int, word: str) -> tuple[str, ...]:
    """A number standing alone (not part of a date, a time or a longer number), or its word."""
    return (rf"(?<![\w.,:/-]){n}(?!\w|[.,:/-]\d)", rf"\b{word}\b")


@dataclass(frozen=True)
class Question:
    id: str
    kind: str
    split: str  # "tune" or "heldout"
    text: str
    facts: tuple[tuple[str, ...], ...]
    evidence: tuple[str, ...]  # planted keys that hold the facts
    forbidden: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ("1k", "10k")


def _q(id: str, kind: str, split: str, text: str, evidence: str, *facts: tuple[str, ...], **kw: object) -> Question:
    return Question(id, kind, split, text, facts, tuple(evidence.split()), **kw)  # type: ignore[arg-type]


T, H = "tune", "heldout"

QUESTIONS: tuple[Question, ...] = (
    _q(
        "promise-kofi",
        "promise",
        T,
        "Kofi promised to get a signed document back from one of our partners. Which document, from whom, and by when?",
        "helix-sync",
        (r"data processing agreement", r"\bdpa\b"),
        (r"helix",),
        on(3, 20),
    ),
    _q(
        "promise-sven",
        "promise",
        H,
        "When did Sven say the new pricing page copy would be ready?",
        "relaunch-standup",
        on(4, 23),
    ),
    _q(
        "promise-gabriel",
        "promise",
        T,
        "Gabriel promised to send something to Ferrovial Digital. What, and by when?",
        "ventas-mx",
        (r"presupuesto", r"budget|quote|estimate|proposal|pricing|offer"),
        on(2, 5),
    ),
    _q(
        "timeline-riverside",
        "topic_timeline",
        T,
        "When did moving to the Riverside building first come up, and how did it end?",
        "riverside-1 riverside-3",
        in_month(7, 2025),
        (r"cancel|not (going to )?mov|stay|dropp|abandon|called off",),
        (r"harbou?r street|third floor|3rd floor|renovat",),
    ),
    _q(
        "timeline-fourday",
        "topic_timeline",
        H,
        "When was a four-day week first raised, and what was finally decided?",
        "fourday-1 fourday-2",
        in_month(9, 2025),
        (r"permanent",),
        (r"engineer",),
    ),
    _q(
        "decision-summit",
        "decision_changed",
        T,
        "Where will the customer summit be held? I remember it changed a few times.",
        "summit-1 summit-2 summit-3",
        (r"online|virtual|remote",),
        (r"lisbo",),
        (r"berlin",),
    ),
    _q(
        "decision-analytics",
        "decision_changed",
        H,
        "Which database did we settle on for the analytics project, and what had we picked before?",
        "analytics-1 analytics-2 analytics-3",
        (r"postgres|timescale",),
        (r"clickhouse",),
        (r"bigquery|big query",),
    ),
    _q(
        "request-sso",
        "same_request",
        T,
        "Which customers asked us for single sign-on?",
        "northwind-call brightwater-3 kestrel-1",
        (r"northwind",),
        (r"brightwater",),
        (r"kestrel",),
    ),
    _q(
        "request-export",
        "same_request",
        H,
        "Which customers wanted to export their data to spreadsheets?",
        "acme-call pinecrest-1 kestrel-1",
        (r"acme",),
        (r"pinecrest",),
        (r"kestrel",),
    ),
    _q(
        "count-brightwater",
        "count_calls",
        T,
        "How many calls have we had with Brightwater Foods, and when was the last one?",
        "brightwater-1 brightwater-2 brightwater-3 brightwater-4",
        count(4, "four"),
        on(4, 22),
    ),
    _q(
        "count-kestrel",
        "count_calls",
        H,
        "How many times have we talked with Kestrel Airlines?",
        "kestrel-1 kestrel-2",
        (*count(2, "two"), r"\btwice\b"),
    ),
    _q(
        "count-pinecrest",
        "count_calls",
        H,
        "How many calls did we have with Pinecrest Bank?",
        "pinecrest-1 pinecrest-2",
        (*count(2, "two"), r"\btwice\b"),
    ),
    _q(
        "tasks-sprint",
        "meeting_tasks",
        T,
        "What is still open from the sprint planning on March 3?",
        "sprint-0303",
        (r"webhook",),
        (r"onboarding checklist",),
        (r"flaky|login test",),
    ),
    _q(
        "tasks-kestrel",
        "meeting_tasks",
        H,
        "Which tasks from the Kestrel Airlines kickoff call are not done yet?",
        "kestrel-1",
        (r"questionnaire",),
        (r"pilot contract|contract",),
    ),
    _q("due-passport", "personal_due", T, "By when do I need to renew my passport?", "passport-note", on(6, 15)),
    _q(
        "due-insurance",
        "personal_due",
        H,
        "By when do I have to pay the car insurance, and how much is it?",
        "insurance-note",
        on(6, 3),
        (r"\b612\b",),
    ),
    _q(
        "due-dentist",
        "personal_due",
        T,
        "When is my dentist appointment?",
        "dentist-note",
        on(6, 9),
        (r"\b0?9[:.h]30|half past nine|9\s*h\s*30",),
    ),
    _q(
        "moment-offsite",
        "long_moment",
        T,
        "At the leadership offsite, about two hours in, what was decided about hiring?",
        "offsite",
        (r"freez|froze|pause|halt|stop",),
        (r"support",),
        (r"data engineer",),
    ),
    _q(
        "moment-mobile",
        "long_moment",
        H,
        "In the all-day planning workshop, what did Rosa say about the mobile app rewrite?",
        "workshop",
        (r"september",),
        (r"\bweb\b",),
    ),
    _q(
        "moment-budget",
        "long_moment",
        H,
        "Early in the all-day planning workshop Hiro put a cap on next year's infrastructure budget. How much?",
        "workshop",
        (r"1[.,]4\s*(million|m\b|mio)|1[.,]400[.,]000",),
    ),
    _q(
        "xl-brazil",
        "crosslingual",
        T,
        "What did the product team decide about the launch in Brazil?",
        "reuniao-produto",
        (r"august|agosto",),
        (r"anatel|certif",),
    ),
    _q(
        "xl-mexico",
        "crosslingual",
        H,
        "What price did sales agree for the Pro plan in Mexico?",
        "ventas-mx",
        (r"\b39\b",),
    ),
    _q(
        "xl-hamburg",
        "crosslingual",
        T,
        "What did the Berlin team decide about the Hamburg office?",
        "teamrunde",
        (r"clos|schlie|shut",),
        on(3, 31),
    ),
    _q(
        "xl-paris",
        "crosslingual",
        H,
        "What hiring decision did the Paris team take?",
        "point-paris",
        (r"apprentic|alternan|work.?study|intern|trainee",),
        (r"marketing",),
        (r"septemb",),
    ),
    _q(
        "relative-yesterday",
        "relative_time",
        T,
        "What did I dictate yesterday?",
        "yesterday-garden yesterday-plumber",
        (r"tomato",),
        (r"irrigation|water|sprinkler",),
        (r"plumber",),
    ),
    _q(
        "relative-daybefore",
        "relative_time",
        H,
        "I had an idea the day before yesterday. What was it?",
        "newsletter-idea",
        (r"newsletter",),
        (r"pinecrest",),
    ),
    _q(
        "trash-mallorca",
        "trash_only",
        T,
        "What did we plan for the sailing trip to Mallorca?",
        "mallorca",
        NOTHING,
        forbidden=(r"catamaran", r"\brui\b", r"2[.,]?400"),
    ),
    _q(
        "trash-zephyr",
        "trash_only",
        H,
        "What did I note about the Zephyr acquisition?",
        "zephyr",
        NOTHING,
        forbidden=(r"\b18\s*(million|m\b|mio)",),
    ),
    _q(
        "trash-oslo",
        "trash_only",
        H,
        "When is my talk for the Oslo conference due?",
        "oslo",
        NOTHING,
        forbidden=on(6, 20),
    ),
    _q(
        "number-headcount",
        "number_revised",
        T,
        "How many new engineers are we planning to hire in 2026?",
        "headcount-2",
        count(8, "eight"),
    ),
    _q("number-churn", "number_revised", H, "What is our latest churn figure?", "churn-2", (r"3[.,]6",)),
    _q(
        "number-pinecrest",
        "number_revised",
        T,
        "What is the final price we quoted Pinecrest Bank?",
        "pinecrest-2",
        (r"44[,. ]?500|44[.,]5\s*k",),
    ),
    _q(
        "attend-priya",
        "attendance",
        T,
        "Which design reviews did Priya join in November 2025?",
        "dr-checkout dr-onboarding dr-admin",
        (r"checkout",),
        (r"onboarding",),
        (r"admin",),
    ),
    _q(
        "attend-jonas",
        "attendance",
        H,
        "Which meetings did Jonas take part in in March 2026?",
        "sprint-0303 kestrel-1 analytics-3",
        (r"sprint planning",),
        (r"kestrel",),
        (r"analytics",),
    ),
    _q(
        "both-ana-jonas",
        "both_spoke",
        T,
        "In which October 2025 meetings did both Ana and Jonas speak?",
        "oct-budget oct-hiring",
        (r"budget review",),
        (r"hiring committee",),
    ),
    _q(
        "both-marta-kofi",
        "both_spoke",
        H,
        "Which meetings in February 2026 had both Marta and Kofi speaking?",
        "feb-pipeline offsite",
        (r"partner pipeline",),
        (r"offsite",),
    ),
    _q(
        "last-dana",
        "last_words",
        T,
        "What was the last thing Dana said about the vendor migration?",
        "vendor-3",
        on(5, 31),
        (r"no extension|not be extended|no more extension|without (any )?extension",),
    ),
    _q(
        "last-bruno",
        "last_words",
        H,
        "What did Bruno say most recently about the espresso machine?",
        "espresso-2",
        (r"jura|bean.to.cup",),
        (r"replac|new one|new machine|buy",),
    ),
    _q(
        "commit-tariq",
        "commitments",
        T,
        "What did Tariq commit to in April 2026?",
        "tariq-1 relaunch-standup tariq-3",
        (r"questionnaire",),
        (r"post.?mortem",),
        (r"dinner",),
    ),
    _q(
        "commit-lucia",
        "commitments",
        H,
        "What has Lucia taken on for the website relaunch?",
        "relaunch-standup",
        (r"hero image",),
        (r"accessibility",),
    ),
)


def by_id() -> dict[str, Question]:
    return {q.id: q for q in QUESTIONS}


def main(argv: list[str] | None = None) -> int:
    """Print what the model may see of each question (id and text, never kind, facts or evidence), one JSON a line."""
    import argparse  # noqa: PLC0415  (only this command needs it)
    import json  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="all")
    parser.add_argument("--size", choices=("1k", "10k"), default="1k")
    args = parser.parse_args(argv)
    print(json.dumps({"preamble": PREAMBLE}, ensure_ascii=False))
    for q in QUESTIONS:
        if args.split in ("all", q.split) and args.size in q.sizes:
            print(json.dumps({"id": q.id, "question": q.text}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
