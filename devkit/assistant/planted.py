"""The transcripts and tasks that hold the assistant set's answers, the same in every store size.

Each planted transcript has a key the questions cite. Its key lines are said among a few everyday lines of its
language (``store`` adds them), so a planted meeting reads like the filler around it. A long meeting (``hours``)
is filled to its length with everyday talk and its key lines are said at their minute.

The store's "now" is fixed (``NOW``): relative questions ("yesterday") are about it, ``clock`` runs magnotia-mcp
with time words read against it, and the model is told the date. The filler keeps clear of what the questions
need to be unambiguous (``RESERVED``, ``UNIQUE_WORDS``): tests/unit/test_assistant_set.py checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

NOW = datetime(2026, 5, 29, 17, 0, tzinfo=timezone.utc)  # a Friday; the user's zone is UTC
NOW_TEXT = "2026-05-29T17:00:00Z"
FIRST_DAY = datetime(2024, 6, 3, tzinfo=timezone.utc)  # the oldest filler transcript's day
QUIET_DAYS = ("2026-05-27", "2026-05-28", "2026-05-29")  # no filler: "yesterday" holds only what is planted


@dataclass(frozen=True)
class Line:
    speaker: str | None
    text: str
    at_min: float | None = None  # in a long meeting: the minute it is said


@dataclass(frozen=True)
class Task:
    title: str
    notes: str | None = None
    status: str = "open"
    due: str | None = None  # "2026-06-15T09:00"


@dataclass(frozen=True)
class Planted:
    key: str
    title: str
    when: str  # "2026-03-10T14:00", UTC
    lines: tuple[Line, ...]
    source: str = "meeting"
    language: str = "en"
    tasks: tuple[Task, ...] = ()
    trashed: bool = False
    hours: float = 0.0  # a long meeting's length; 0: as long as its lines
    formatted: bool = True


def _m(key: str, title: str, when: str, *lines: tuple[str, str], **kw: object) -> Planted:
    return Planted(key, title, when, tuple(Line(s, t) for s, t in lines), **kw)  # type: ignore[arg-type]


def _d(key: str, title: str, when: str, text: str, **kw: object) -> Planted:
    return Planted(key, title, when, (Line(None, text),), source="dictation", **kw)  # type: ignore[arg-type]


PLANTED: tuple[Planted, ...] = (
    # -- promises and their deadlines
    _m(
        "helix-sync",
        "Q1 partner sync",
        "2026-03-10T14:00",
        ("Marta", "Helix Labs still has not returned the paperwork for the data exchange."),
        ("Kofi", "I'll get the signed data processing agreement back from Helix Labs by March 20th, that's a promise."),
        ("Elena", "Good, legal will not let us start the pilot without it."),
    ),
    _m(
        "relaunch-standup",
        "Website relaunch standup",
        "2026-04-14T09:30",
        ("Lucia", "The hero images are the last design item; I'll redo the hero images this week."),
        ("Sven", "I will have the new pricing page copy ready by Thursday the 23rd of April."),
        ("Tariq", "After last night's outage, I'll own the incident postmortem and share it with everyone."),
        ("Lucia", "Before we go live I'll also run the accessibility audit on every page of the relaunch."),
    ),
    _m(
        "ventas-mx",
        "Reunión de ventas México",
        "2026-01-28T16:00",
        ("Gabriel", "Me comprometo a enviar el presupuesto revisado a Ferrovial Digital antes del 5 de febrero."),
        ("Lucia", "Perfecto. Y acordamos bajar el precio del plan Pro a 39 euros al mes para México."),
        ("Gabriel", "Sí, 39 euros, con efecto desde marzo."),
        language="es",
    ),
    # -- a topic from its first mention to its end: the office move
    _m(
        "riverside-1",
        "Weekly sync",
        "2025-07-02T10:00",
        ("Uma", "Facilities told me we might move to the Riverside building next year, there is more space there."),
        ("Viktor", "Interesting, let's keep an eye on it."),
    ),
    _m(
        "riverside-2",
        "Office planning",
        "2025-11-18T15:00",
        ("Uma", "The Riverside lease negotiations are stuck, the rent they ask is far too high."),
        ("Viktor", "Then we should price a renovation of our own floor too."),
    ),
    _m(
        "riverside-3",
        "Office planning",
        "2026-02-09T15:00",
        (
            "Uma",
            "Final decision: the move to Riverside is cancelled."
            " We stay at Harbor Street and renovate the third floor.",
        ),
        ("Viktor", "Agreed, the renovation starts in April."),
    ),
    # -- the four-day week pilot
    _m(
        "fourday-1",
        "People team sync",
        "2025-09-15T11:00",
        ("Fatima", "Several engineers asked whether we could try a four-day week pilot."),
        ("Nikhil", "Let's draft a proposal for a three month trial."),
    ),
    _m(
        "fourday-2",
        "People team sync",
        "2026-04-01T11:00",
        ("Fatima", "The four-day week pilot worked: we adopt it permanently, for the engineering team only."),
        ("Nikhil", "Sales and support keep five days because of customer hours."),
    ),
    # -- decisions changed twice: the summit venue, the analytics database
    _m(
        "summit-1",
        "Customer summit planning",
        "2025-12-03T14:00",
        ("Elena", "We decided: the customer summit will be in Lisbon, in June."),
        ("Bruno", "Great, Lisbon is easy to reach for most customers."),
    ),
    _m(
        "summit-2",
        "Customer summit planning",
        "2026-01-20T14:00",
        ("Elena", "Change of plan: the summit moves from Lisbon to Berlin, the flights are much cheaper."),
        ("Bruno", "Fine, Berlin it is."),
    ),
    _m(
        "summit-3",
        "Customer summit planning",
        "2026-03-05T14:00",
        ("Elena", "We changed it again: after the budget cut the customer summit will be online only, no venue."),
        ("Bruno", "Online only, understood. I'll tell the agency."),
    ),
    _m(
        "analytics-1",
        "Analytics architecture",
        "2025-08-12T13:00",
        ("Chen", "For the analytics project we go with ClickHouse, it is the fastest in our tests."),
        ("Wen", "OK, ClickHouse."),
    ),
    _m(
        "analytics-2",
        "Analytics architecture",
        "2025-10-14T13:00",
        ("Chen", "We are switching the analytics project to BigQuery, nobody wants to run ClickHouse ourselves."),
        ("Wen", "BigQuery then."),
    ),
    _m(
        "analytics-3",
        "Analytics sync",
        "2026-03-24T13:00",
        ("Chen", "Final call on analytics: back to Postgres with the Timescale extension, BigQuery costs too much."),
        ("Jonas", "Postgres and Timescale, agreed, I'll update the design doc."),
        ("Wen", "Good, one database less to operate."),
    ),
    # -- customers asking for the same thing; calls with clients
    _m(
        "northwind-call",
        "Call with Northwind Traders",
        "2025-09-09T16:00",
        ("Yusuf", "Their IT lead asked again for single sign-on, they use Okta for everything."),
        ("Priya", "Noted, that's the second time they bring it up."),
    ),
    _m(
        "brightwater-1",
        "Call with Brightwater Foods",
        "2025-06-12T15:00",
        ("Yusuf", "Brightwater is happy with the pilot, they want to add two more warehouses."),
        ("Ines", "I'll send them the new price sheet."),
    ),
    _m(
        "brightwater-2",
        "Call with Brightwater Foods",
        "2025-10-03T15:00",
        ("Yusuf", "Brightwater asked about the delivery reports, they look fine to them now."),
        ("Ines", "Good call overall."),
    ),
    _m(
        "brightwater-3",
        "Call with Brightwater Foods",
        "2026-01-15T15:00",
        (
            "Yusuf",
            "Brightwater wants their staff to log in with their company accounts through SAML, no more passwords.",
        ),
        ("Ines", "So that's single sign-on again."),
    ),
    _m(
        "brightwater-4",
        "Call with Brightwater Foods",
        "2026-04-22T15:00",
        ("Yusuf", "Brightwater renewed for two years at the same price."),
        ("Ines", "Great news, I'll tell finance."),
    ),
    _m(
        "brightwater-internal",
        "Sales pipeline review",
        "2026-02-19T10:00",
        ("Yusuf", "Brightwater Foods is our biggest account in food retail, we should ask them for a case study."),
        ("Ines", "Let's bring it up on the next call."),
    ),
    _m(
        "brightwater-trashed",
        "Call with Brightwater Foods",
        "2026-05-02T15:00",
        ("Yusuf", "Test recording, please ignore."),
        trashed=True,
    ),
    _m(
        "kestrel-1",
        "Kestrel Airlines kickoff call",
        "2026-03-11T17:00",
        ("Yusuf", "Kestrel needs single sign-on before the pilot, their crews log in with Azure AD."),
        ("Jonas", "They also asked for a CSV export of the flight logs."),
        ("Priya", "Both are on our list already."),
        tasks=(
            Task("Send Kestrel the SSO requirements questionnaire", due="2026-03-20T17:00"),
            Task("Set up a shared Slack channel with Kestrel", status="done"),
            Task("Draft the Kestrel pilot contract", "Two months, 40 crew accounts", due="2026-04-10T17:00"),
        ),
    ),
    _m(
        "kestrel-2",
        "Call with Kestrel Airlines",
        "2026-05-06T17:00",
        ("Yusuf", "Kestrel signed the pilot, forty crew accounts from June."),
        ("Priya", "Great, onboarding starts the first week of June."),
    ),
    _m(
        "acme-call",
        "Call with Acme",
        "2025-11-20T14:00",
        ("Ines", "Acme wants to export everything to CSV so their analysts can use Excel."),
        ("Yusuf", "We can do a CSV export in the next release."),
    ),
    _m(
        "pinecrest-1",
        "Call with Pinecrest Bank",
        "2026-02-12T10:00",
        ("Yusuf", "Pinecrest asked for a spreadsheet export, CSV or Excel, for their auditors."),
        ("Ines", "We quoted Pinecrest 48,000 per year for the enterprise plan."),
    ),
    _m(
        "pinecrest-2",
        "Call with Pinecrest Bank",
        "2026-03-19T10:00",
        ("Ines", "We revised the Pinecrest quote to 44,500 per year after they committed to three years."),
        ("Yusuf", "They accepted 44,500 in principle."),
    ),
    # -- a meeting's open tasks
    _m(
        "sprint-0303",
        "Sprint planning",
        "2026-03-03T10:00",
        ("Nikhil", "This sprint: the billing webhooks, the onboarding checklist and that flaky login test."),
        ("Jonas", "The staging certificates are rotated already, I did it this morning."),
        ("Chen", "I'll take the webhooks."),
        tasks=(
            Task("Migrate the billing webhooks", due="2026-03-17T17:00"),
            Task("Write the onboarding checklist", due="2026-03-13T17:00"),
            Task("Fix the flaky login test"),
            Task("Rotate the staging certificates", status="done"),
        ),
    ),
    # -- personal tasks and their due dates
    _d(
        "passport-note",
        "Reminder",
        "2026-05-12T07:45",
        "Note to self: my passport expires in July, renew it before the June trip. The appointment is online.",
        tasks=(Task("Renew passport", "Book the online appointment first", due="2026-06-15T09:00"),),
    ),
    _d(
        "insurance-note",
        "Car",
        "2026-05-04T19:20",
        "The car insurance renewal came in the mail, the annual premium is 612 euros, pay it by early June.",
        tasks=(Task("Pay car insurance", "Allianz, annual premium 612 euros", due="2026-06-03T12:00"),),
    ),
    _d(
        "dentist-note",
        "Dentist",
        "2026-05-18T08:05",
        "Called Dr. Moreau's office, the appointment is on the 9th of June at half past nine.",
        tasks=(Task("Dentist appointment with Dr. Moreau", due="2026-06-09T09:30"),),
    ),
    # -- long meetings: a 3-hour offsite and a 10-hour workshop
    Planted(
        "offsite",
        "Leadership offsite",
        "2026-02-26T09:00",
        (
            Line(
                "Dana",
                "On hiring: we freeze hiring for the support team until Q3, but we still hire two data engineers.",
                125,
            ),
            Line("Marta", "Sounds right to me.", 126),
            Line("Kofi", "Agreed, and the freeze ends in Q3, not before.", 127),
        ),
        hours=3.0,
    ),
    Planted(
        "workshop",
        "All-day planning workshop",
        "2025-12-10T08:00",
        (
            Line("Hiro", "For next year the infrastructure budget is capped at 1.4 million, whatever happens.", 75),
            Line("Rosa", "About the mobile app rewrite: it slips to September, we ship the web version first.", 460),
            Line("Sven", "So web first, then mobile in September.", 461),
        ),
        hours=10.0,
    ),
    # -- decisions taken in other languages
    _m(
        "reuniao-produto",
        "Reunião de produto",
        "2026-04-08T13:00",
        (
            "Ana",
            "Então está decidido: vamos adiar o lançamento no Brasil para agosto, por causa da certificação da Anatel.",
        ),
        ("Bruno", "Combinado, agosto. Eu aviso o time de marketing."),
        language="pt-BR",
    ),
    _m(
        "teamrunde",
        "Teamrunde Berlin",
        "2025-12-16T09:00",
        ("Sven", "Wir haben beschlossen, das Büro in Hamburg zum 31. März zu schließen."),
        ("Jonas", "Die Kollegen aus Hamburg arbeiten dann remote oder in Berlin."),
        language="de",
    ),
    _m(
        "point-paris",
        "Point hebdo Paris",
        "2026-02-17T10:00",
        ("Quentin", "On a décidé de recruter une alternante pour le marketing à partir de septembre."),
        ("Ines", "Très bien, je publie l'annonce la semaine prochaine."),
        language="fr",
    ),
    # -- yesterday and the day before (relative to NOW)
    _d(
        "yesterday-garden",
        "Garden",
        "2026-05-28T08:12",
        "Garden: order the tomato seedlings and fix the irrigation timer, it waters at three in the morning.",
    ),
    _d(
        "yesterday-plumber",
        "",
        "2026-05-28T18:40",
        "Call the plumber about the kitchen sink on Monday, it is leaking again.",
    ),
    _d(
        "newsletter-idea",
        "Idea",
        "2026-05-27T21:05",
        "Idea for the newsletter: a monthly customer story, and the first one could be Pinecrest Bank.",
    ),
    # -- only in the trash
    _m(
        "mallorca",
        "Team trip ideas",
        "2026-04-30T16:00",
        ("Rosa", "For the team trip I found a sailing trip around Mallorca, a catamaran with Captain Rui."),
        ("Bruno", "How much is the catamaran?"),
        ("Rosa", "About 2,400 euros for the whole day."),
        trashed=True,
    ),
    _d(
        "zephyr",
        "Acquisition",
        "2026-03-30T22:10",
        "Thoughts on the Zephyr acquisition: they would sell for 18 million, too expensive for now.",
        trashed=True,
    ),
    _m(
        "oslo",
        "Conference planning",
        "2026-04-02T11:00",
        ("Elena", "Your talk for the Oslo conference has to be submitted by June 20th."),
        ("Nikhil", "Noted."),
        trashed=True,
        tasks=(Task("Submit the Oslo conference talk", due="2026-06-20T12:00"),),
    ),
    # -- numbers revised
    _m(
        "headcount-1",
        "Budget review 2026",
        "2025-11-05T14:00",
        ("Viktor", "For 2026 we plan 12 new engineers in the headcount plan."),
        ("Fatima", "Twelve is ambitious but doable."),
    ),
    _m(
        "headcount-2",
        "Budget review 2026",
        "2026-01-14T14:00",
        ("Viktor", "The headcount plan is revised down: 8 new engineers in 2026, not 12."),
        ("Fatima", "Eight, understood, I'll update the hiring plan."),
    ),
    _m(
        "churn-1",
        "Metrics review",
        "2026-02-03T16:00",
        ("Wen", "Monthly churn is 4.1 percent, a bit up from last quarter."),
        ("Chen", "Let's look at which segments."),
    ),
    _m(
        "churn-2",
        "Metrics review",
        "2026-04-29T16:00",
        ("Wen", "Correction on churn: after removing the test accounts it was 3.6 percent, not 4.1."),
        ("Chen", "3.6 is much better."),
    ),
    # -- attendance: design reviews in November 2025
    _m(
        "dr-checkout",
        "Design review – checkout flow",
        "2025-11-04T15:00",
        ("Priya", "The checkout flow has one step too many."),
        ("Lucia", "I'll merge the address and payment steps."),
    ),
    _m(
        "dr-onboarding",
        "Design review – mobile onboarding",
        "2025-11-13T15:00",
        ("Lucia", "Here is the new mobile onboarding."),
        ("Priya", "The permission screen comes too early."),
    ),
    _m(
        "dr-admin",
        "Design review – admin console",
        "2025-11-25T15:00",
        ("Chen", "The admin console tables are too dense."),
        ("Priya", "Let's test a compact and a comfortable mode."),
    ),
    _m(
        "dr-no-priya",
        "Design review – reports",
        "2025-11-19T15:00",
        ("Lucia", "The reports page needs filters."),
        ("Chen", "And an export button."),
    ),
    # -- both spoke: Ana and Jonas in October 2025; Marta and Kofi in February 2026
    _m(
        "oct-budget",
        "Budget review Q4",
        "2025-10-08T10:00",
        ("Ana", "Marketing is ten percent under budget this quarter."),
        ("Jonas", "Engineering is on budget."),
    ),
    _m(
        "oct-hiring",
        "Hiring committee",
        "2025-10-21T14:00",
        ("Jonas", "Two candidates for the backend role passed the final round."),
        ("Ana", "Let's make both offers this week."),
    ),
    _m(
        "feb-pipeline",
        "Partner pipeline review",
        "2026-02-04T11:00",
        ("Marta", "Three partners are in the final stage."),
        ("Kofi", "Helix Labs is the closest to signing."),
    ),
    # -- a person's last words on a topic
    _m(
        "vendor-1",
        "Infrastructure sync",
        "2025-12-02T10:00",
        ("Dana", "We start the vendor migration off Vendorly in January."),
        ("Hiro", "OK."),
    ),
    _m(
        "vendor-2",
        "Infrastructure sync",
        "2026-01-22T10:00",
        ("Dana", "The vendor migration is half done, the billing part moved already."),
        ("Hiro", "Nice."),
    ),
    _m(
        "vendor-3",
        "Infrastructure sync",
        "2026-04-16T10:00",
        (
            "Dana",
            "My final word on the vendor migration: we are done with Vendorly by May 31,"
            " and there will be no extensions.",
        ),
        ("Hiro", "Clear."),
    ),
    _m(
        "espresso-1",
        "Office chat",
        "2026-01-09T12:30",
        ("Bruno", "The espresso machine is broken again, third time this month."),
        ("Uma", "Oh no."),
    ),
    _m(
        "espresso-2",
        "Office chat",
        "2026-05-20T12:30",
        ("Bruno", "Final answer on the espresso machine: we replace it with a bean-to-cup one from Jura next week."),
        ("Uma", "Finally."),
    ),
    # -- commitments across meetings: Tariq in April 2026
    _m(
        "tariq-1",
        "Security sync",
        "2026-04-03T14:00",
        ("Tariq", "I'll send the security questionnaire back to Kestrel by Friday."),
        ("Hiro", "Thanks."),
    ),
    _m(
        "tariq-3",
        "Team social planning",
        "2026-04-27T17:30",
        ("Tariq", "I'll book the venue for the team dinner in May."),
        ("Rosa", "Great, somewhere near the office."),
    ),
)

# Months and names the filler keeps clear of, so that who spoke when has one right answer.
RESERVED_PAIRS = {"2025-10": ("Ana", "Jonas"), "2026-02": ("Marta", "Kofi")}  # never both in filler that month
RESERVED_SPEAKERS = {"2026-03": "Jonas", "2026-04": "Tariq"}  # never a filler speaker that month
RESERVED_TITLE = ("2025-11", "Design review", "Priya")  # no filler design review with Priya that month

# Words only planted transcripts hold: the filler never says them (a question on them has one right answer).
UNIQUE_WORDS = (
    "helix",
    "riverside",
    "harbor street",
    "four-day",
    "lisbon",
    "clickhouse",
    "bigquery",
    "timescale",
    "northwind",
    "brightwater",
    "kestrel",
    "pinecrest",
    "single sign-on",
    "saml",
    "csv",
    "ferrovial",
    "webhooks",
    "onboarding checklist",
    "flaky",
    "passport",
    "insurance",
    "moreau",
    "anatel",
    "hamburg",
    "alternante",
    "tomato",
    "irrigation",
    "plumber",
    "newsletter",
    "mallorca",
    "catamaran",
    "zephyr",
    "oslo",
    "headcount",
    "churn",
    "vendorly",
    "vendor migration",
    "espresso",
    "jura",
    "questionnaire",
    "postmortem",
    "team dinner",
    "relaunch",
    "hero images",
    "accessibility",
    "data engineers",
    "1.4 million",
    "mobile app rewrite",
)


def by_key() -> dict[str, Planted]:
    return {p.key: p for p in PLANTED}
