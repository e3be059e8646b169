"""A judged relevance test set for search_transcripts (issue 9, "Search that answers the question").

The store is a small, realistic history of ~200 transcripts in five languages:

* **about** transcripts: a topic discussed at length (a meeting with speakers, or a long voice note),
  with the generic title people actually give meetings ("Weekly sync", "Call with Ana"), recorded
  *earlier* than most of the store;
* **passing** distractors, newer: everyday transcripts about something else that use a topic word
  once, in another sense ("my mobile died", "let's move on", "a tight budget this month") or mention
  the topic in one line without discussing it; a few carry a topic word in their title
  ("Team dinner budget", "Orçamento da reforma");
* **unrelated** transcripts (stand-ups, shopping lists, ideas, reading notes);
* **trashed** transcripts that are about a topic: they must never be found.

Each query is judged: its relevant transcripts are the live *about* transcripts of its topic.
Queries come in two kinds: ``keyword`` (what people type into a search box: "quarterly budget",
"hiring plans", a quoted phrase, OR, a prefix) and ``question`` (what people ask an assistant:
"what did we decide about the quarterly budget?"). Both use plurals, inflections and, for the
Portuguese, Spanish, German and French topics, accents or their absence as people type them,
so the query's words are not always the text's words.

Two more kinds, by meaning, live in devkit/relevance_meaning.py (issue 21): ``paraphrase`` (no word shared
with the answer, other transcripts sharing the query's words in another sense) and ``crosslang`` (an English
question, a meeting held in another language). Their transcripts are in this store; their queries are
``MEANING_QUERIES``, half of them ``held_out``, measured but not held to ``TARGET`` by lexical search.

Metrics (per kind): mean reciprocal rank of the first relevant hit within the first ``DEPTH`` hits
(0 when none), and recall@``RECALL_AT`` (the share of a query's relevant transcripts in its first
five hits), each averaged over the queries of that kind.

Everything is fixed: ids are UUIDs derived from readable keys, the generated part comes from a
seeded ``random.Random``; the same store is built byte for byte on every run. Nothing here was
fitted to any search implementation: the texts are written as meetings are held, and the judgments
say only which transcripts a person asking would want.

Used by tests/e2e/test_relevance.py (the server, FTS and scan mode) and benchmarks/relevance.py
(the figures in the benchmark report).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from devkit import relevance_meaning as meaning
from devkit.storefactory import StoreBuilder

KINDS = ("keyword", "question")  # the kinds lexical search is held to (TARGET)
MEANING_KINDS = meaning.MEANING_KINDS  # by meaning: reported until search by meaning exists (issue 21)
MODES = ("fts", "scan")  # with the store's full-text index, and without it (the server scans)
DEPTH = 10  # reciprocal rank counts the first relevant hit among this many
RECALL_AT = 5
SEARCH_LIMIT = DEPTH  # what a client asks search_transcripts for
TARGET = 0.9  # issue 9: MRR and recall@5 at least this, per kind, in both modes

_NAMESPACE = uuid.UUID("5f0d9c1e-9b1a-4c55-8a3e-0a9e2b7c6d19")
Segments = tuple[tuple[str | None, str], ...]


def tid(key: str) -> str:
    """The transcript id of a readable key (a UUID, as the app writes them)."""
    return str(uuid.uuid5(_NAMESPACE, key))


@dataclass(frozen=True)
class Doc:
    key: str
    title: str
    source: str  # dictation | meeting | file
    language: str
    created_at: str
    segments: Segments
    role: str  # about | passing | unrelated | trashed
    topic: str | None = None  # for about and trashed transcripts
    formatted: bool = True
    deleted_at: str | None = None

    @property
    def id(self) -> str:
        return tid(self.key)


@dataclass(frozen=True)
class Query:
    text: str
    kind: str  # keyword | question | paraphrase | crosslang
    topic: str
    relevant: frozenset[str] = field(default_factory=frozenset)
    held_out: bool = False  # kept out of any tuning: reported on its own (the meaning kinds)


# -- the about transcripts: one topic each, discussed at length ---------------------------------

_ABOUT: list[tuple[str, str, str, str, str, str, list[tuple[str | None, str]]]] = [
    # key, topic, title, source, language, created_at, segments
    (
        "budget/weekly-sync",
        "budget",
        "Weekly sync",
        "meeting",
        "en",
        "2026-01-13T10:02:11.000Z",
        [
            (
                "Ana",
                "Morning. First item is the quarterly budget for Q2; finance wants our numbers by the end of the"
                " month.",
            ),
            (
                "Ben",
                "I went through last quarter's spend. We were about eight percent over, mostly travel and contractor"
                " hours.",
            ),
            ("Ana", "So where do we cut? I'd rather not touch the research contractors."),
            (
                "Ben",
                "Travel is the easy one. If we cap conference trips at two per person we save roughly forty thousand.",
            ),
            (
                "Chloé",
                "Marketing asked for more in the quarterly budget, not less. The spring campaign needs paid ads.",
            ),
            ("Ana", "They can have part of it if travel comes down. Let's keep the total flat against Q1."),
            ("Ben", "Flat total, travel capped, contractors unchanged. I can redo the spreadsheet tonight."),
            ("Chloé", "And the software licences? We pay for three tools that do the same thing."),
            ("Ana", "Good point. Cancel two of them and move that money into the campaign."),
            ("Ben", "That's another twelve thousand a quarter."),
            (
                "Ana",
                "Then the decisions are: the total budget stays flat, travel is capped, two licences go,"
                " and the campaign gets the savings.",
            ),
            ("Chloé", "I'll tell marketing the budget for ads is confirmed at sixty thousand."),
            ("Ana", "Ben, send the revised quarterly budget to finance by Friday and copy me."),
        ],
    ),
    (
        "budget/call-with-ana",
        "budget",
        "Call with Ana",
        "meeting",
        "en",
        "2026-01-27T15:30:40.000Z",
        [
            ("Marta", "Hi Ana, I've got your revised budget open. Thanks for getting it in early."),
            (
                "Ana",
                "No problem. The main change is travel: we capped trips, which frees money for the spring campaign.",
            ),
            (
                "Marta",
                "The board looked at all the quarterly budgets yesterday. Yours is fine, but they want a ten percent"
                " reserve.",
            ),
            ("Ana", "Ten percent on top of a flat budget? That means cutting somewhere else."),
            (
                "Marta",
                "Or holding back part of the campaign spend until April. The reserve can be released after the Q2"
                " review.",
            ),
            ("Ana", "Okay, I can live with that. We'll hold back fifteen thousand of the ad spend."),
            ("Marta", "Great, then the budget is approved as submitted, with the reserve noted."),
            ("Ana", "So the final decision is approval with a reserve, and we revisit it in April."),
            ("Marta", "Exactly. I'll send the approved quarterly budget to everyone this afternoon."),
            ("Ana", "One more question: can unused budget roll over into the next quarter?"),
            ("Marta", "Not this year. Anything unspent by the end of June goes back to the central pool."),
        ],
    ),
    (
        "hiring/leadership-sync",
        "hiring",
        "Leadership sync",
        "meeting",
        "en",
        "2026-01-20T09:15:03.000Z",
        [
            ("Dev", "Next up is the hiring plan for this year. I shared a draft on Monday."),
            ("Ana", "I read it. Five roles feels like a lot before we know the Q2 numbers."),
            (
                "Dev",
                "The two backend engineers are urgent. On-call is three people right now and it's burning them out.",
            ),
            ("Sam", "Agreed on backend. The designer role could wait until the summer."),
            ("Ana", "What about the data analyst? Customer success keeps asking for one."),
            ("Dev", "I'd hire the analyst as a contractor first, six months, then decide."),
            ("Sam", "And the recruiter? Doing the interviews ourselves took forty hours last round."),
            ("Ana", "Let's use an agency for the engineers and skip the in-house recruiter for now."),
            (
                "Dev",
                "So the hiring plan becomes: two backend engineers now, the analyst as a contractor, the designer in"
                " July.",
            ),
            ("Ana", "Yes, that's the decision. Headcount goes from eighteen to twenty-one by September."),
            ("Sam", "I'll write the job descriptions this week so we can start hiring in February."),
            ("Dev", "I'll talk to the agency about fees and send the updated hiring plan round."),
        ],
    ),
    (
        "hiring/call-with-marco",
        "hiring",
        "Call with Marco",
        "meeting",
        "en",
        "2026-02-03T11:00:27.000Z",
        [
            ("Marco", "Thanks for choosing us. Tell me about the roles you're hiring for."),
            ("Dev", "Two backend engineers, senior or strong mid-level, Python and Postgres. Remote within Europe."),
            ("Marco", "What's the salary band? The market for backend people is tight right now."),
            ("Dev", "Seventy to ninety thousand, depending on experience. We can stretch for the right person."),
            ("Marco", "Good. How many interview rounds do you plan?"),
            ("Dev", "Three: a screening call, a take-home exercise, and a final with the team."),
            ("Marco", "I'd drop the take-home. Candidates with offers elsewhere won't do it; it slows hiring down."),
            ("Dev", "Fair. We'll replace it with a live pairing session."),
            ("Marco", "Then I can send the first candidates in two weeks. When do you want the new hires to start?"),
            ("Dev", "Ideally April. Our hiring plan has both engineers on board before the summer."),
            ("Marco", "Realistic if we move quickly. I'll send the contract and the fee schedule today."),
        ],
    ),
    (
        "mobile/team-meeting",
        "mobile",
        "Team meeting",
        "meeting",
        "en",
        "2026-01-15T14:00:52.000Z",
        [
            ("Ana", "Let's start with the mobile launch. Where are we with the app store review?"),
            (
                "Ben",
                "The iOS build was rejected once because of the login screen. We fixed it and resubmitted yesterday.",
            ),
            ("Leo", "Android is ready. The beta has four hundred testers and the crash rate is under one percent."),
            ("Ana", "So the blocker for the launch is Apple's review. How long does a resubmission usually take?"),
            ("Ben", "Two to three days. If it passes by Friday we can launch on the twenty-seventh as planned."),
            ("Leo", "Do we launch both platforms on the same day, or Android first?"),
            ("Ana", "Same day. Marketing built the whole launch campaign around one date."),
            (
                "Ben",
                "Then we decided: the mobile launch is on the twenty-seventh, both platforms, if iOS is approved by"
                " Friday.",
            ),
            ("Leo", "And if Apple rejects it again?"),
            (
                "Ana",
                "Then we move the launch by one week, no more. Leo, please prepare the launch checklist and the"
                " release notes.",
            ),
            ("Leo", "Will do. I'll also set up crash alerts for the first forty-eight hours after launch."),
            ("Ben", "I'll keep an eye on the review status and post in the channel every morning."),
        ],
    ),
    (
        "office/catch-up",
        "office",
        "Catch-up",
        "meeting",
        "en",
        "2026-01-22T16:45:09.000Z",
        [
            ("Nina", "Quick one about the office move. The lease on Harbour Street is signed."),
            ("Tom", "Finally. When do we get the keys?"),
            (
                "Nina",
                "March first. The movers are booked for the weekend of the fourteenth, so we move in on Monday the"
                " sixteenth.",
            ),
            ("Tom", "So everyone works from home on the Friday before the move?"),
            ("Nina", "Yes, Friday the thirteenth is a remote day. People pack their desks on Thursday afternoon."),
            ("Tom", "What about the server cabinet and the printers?"),
            (
                "Nina",
                "IT moves those separately on the Saturday. The internet line at the new office goes live on the"
                " tenth.",
            ),
            ("Tom", "And the old office? We have to hand it back clean."),
            ("Nina", "The cleaning company comes on the Sunday. The landlord's inspection is on the eighteenth."),
            ("Tom", "Should we send the whole team a checklist for the office move?"),
            ("Nina", "Please do: crates, labels, what to take home, and the new door codes."),
        ],
    ),
    (
        "office/voice-note",
        "office",
        "Voice note",
        "dictation",
        "en",
        "2026-02-05T08:12:33.000Z",
        [
            (
                None,
                "Reminder for the office move. Order forty moving crates and colour labels, one colour per floor."
                " Ask the movers whether they take the standing desks apart or we do. The new office needs a bike"
                " rack, check with the landlord. Send everyone the moving day schedule on the ninth. Cancel the"
                " water delivery at the old office after the fourteenth.",
            )
        ],
    ),
    (
        "churn/weekly-sync",
        "churn",
        "Weekly sync",
        "meeting",
        "en",
        "2026-02-02T10:01:18.000Z",
        [
            ("Priya", "Churn was up again in January: four point one percent of paying customers cancelled."),
            ("Ana", "That's the third month in a row. Do we know why?"),
            ("Priya", "The exit survey says two things: the price increase in December and the missing calendar sync."),
            ("Ben", "Calendar sync is on the roadmap for March. Could we pull it forward?"),
            ("Priya", "Most churned customers were on the small team plan, which is where the price went up most."),
            ("Ana", "Could we offer them the old price for six months if they stay?"),
            ("Priya", "We tried that with twenty accounts last week; fourteen accepted and didn't cancel."),
            (
                "Ana",
                "Then let's roll it out. That's the decision: a retention offer for every small team that tries to"
                " cancel.",
            ),
            ("Ben", "I'll build the offer into the cancellation flow. Two days of work."),
            ("Priya", "I'll track churn weekly instead of monthly until it drops below three percent."),
        ],
    ),
    (
        "churn/call-with-priya",
        "churn",
        "Call with Priya",
        "meeting",
        "en",
        "2026-01-29T13:20:44.000Z",
        [
            ("Ana", "You wanted to talk about cancellations?"),
            ("Priya", "Yes. I called ten customers who churned in December. Seven mentioned the new pricing."),
            ("Ana", "And the other three?"),
            ("Priya", "Two went to a competitor with calendar sync, and one closed their business."),
            ("Ana", "So pricing is the main reason customers leave."),
            ("Priya", "For small teams, yes. Bigger customers don't mind; their churn is almost zero."),
            ("Ana", "What would keep the small teams?"),
            ("Priya", "A discount for the first year after the increase, and a heads-up email before renewal."),
            ("Ana", "Let's test the discount on a few accounts before we decide anything."),
            ("Priya", "I'll pick twenty accounts that are up for renewal and report back next week."),
        ],
    ),
    (
        "pt/conversa-com-beatriz",
        "orcamento",
        "Conversa com Beatriz",
        "meeting",
        "pt-BR",
        "2026-01-16T17:05:02.000Z",
        [
            ("Beatriz", "Rafael, vamos fechar o orçamento de marketing do segundo trimestre hoje?"),
            ("Rafael", "Vamos. A agência mandou a proposta: cento e vinte mil para a campanha de abril."),
            ("Beatriz", "É muito. O orçamento total do trimestre é de cento e cinquenta mil."),
            ("Rafael", "Dá para cortar a parte de influenciadores e ficar com anúncios pagos e e-mail."),
            ("Beatriz", "Gosto disso. Os influenciadores deram pouco retorno no ano passado."),
            ("Rafael", "Então a campanha fica em oitenta mil e sobram setenta para eventos e conteúdo."),
            (
                "Beatriz",
                "Combinado. Decidimos assim: oitenta para a campanha, quarenta para eventos, trinta para conteúdo.",
            ),
            ("Rafael", "Preciso marcar uma reunião com a agência para apresentar o novo orçamento."),
            ("Beatriz", "Marca para quinta-feira. Eu participo da reunião e levo os números do último trimestre."),
            ("Rafael", "Perfeito. Depois da reunião eu mando a ata para o financeiro."),
        ],
    ),
    (
        "pt/nota-de-voz",
        "orcamento",
        "Nota de voz",
        "dictation",
        "pt-BR",
        "2026-02-09T19:40:15.000Z",
        [
            (
                None,
                "Resumo da reunião com a agência sobre o orçamento de marketing. Eles aceitaram a campanha de"
                " oitenta mil, sem influenciadores. Pediram para pagar metade do orçamento adiantado, precisamos"
                " confirmar com o financeiro. A próxima reunião de acompanhamento é dia vinte e oito. Lembrar de"
                " atualizar a planilha do orçamento com os valores finais.",
            )
        ],
    ),
    (
        "es/llamada-con-diego",
        "migracion",
        "Llamada con Diego",
        "meeting",
        "es",
        "2026-01-21T12:10:36.000Z",
        [
            ("Diego", "Lucía, ¿repasamos el plan para la migración de la base de datos?"),
            ("Lucía", "Sí. La idea es migrar de MySQL a PostgreSQL antes de finales de marzo."),
            ("Diego", "¿Cuánto tiempo de inactividad necesitamos?"),
            (
                "Lucía",
                "Con la replicación lógica, menos de una hora. Haremos la migración en una ventana de mantenimiento"
                " el domingo por la noche.",
            ),
            ("Diego", "¿Y las copias de seguridad?"),
            ("Lucía", "Una copia completa el sábado y otra justo antes de empezar. Si algo falla, volvemos a MySQL."),
            ("Diego", "Me preocupa el informe de facturación, usa funciones que PostgreSQL no tiene."),
            ("Lucía", "Ya lo reescribí. Lo probamos en el entorno de pruebas la semana pasada y funciona."),
            (
                "Diego",
                "Bien. Entonces decidimos: migración el domingo veintidós de marzo, con copia completa y plan de"
                " vuelta atrás.",
            ),
            ("Lucía", "Yo aviso a los clientes con una semana de antelación sobre el mantenimiento."),
            ("Diego", "Y yo preparo la lista de comprobación para la noche de la migración."),
        ],
    ),
    (
        "de/jour-fixe",
        "preiserhoehung",
        "Jour fixe",
        "meeting",
        "de",
        "2026-02-04T09:30:21.000Z",
        [
            (
                "Katrin",
                "Erster Punkt: die Preiserhöhung für das Pro-Abo. Wir sind seit drei Jahren beim gleichen Preis.",
            ),
            ("Jonas", "Wie viel wollen wir erhöhen? Der Vorschlag war von zwölf auf fünfzehn Euro im Monat."),
            ("Katrin", "Das sind fünfundzwanzig Prozent. Ich fürchte, dass uns dann kleine Kunden abspringen."),
            (
                "Jonas",
                "Dann machen wir vierzehn Euro und halten den Jahrespreis für Bestandskunden ein Jahr lang stabil.",
            ),
            ("Katrin", "Gut. Und wann tritt die Preiserhöhung in Kraft?"),
            ("Jonas", "Zum ersten April. Wir müssen die Kunden mindestens sechs Wochen vorher informieren."),
            (
                "Katrin",
                "Also beschlossen: vierzehn Euro ab dem ersten April, Bestandskunden mit Jahresabo behalten ihren"
                " Preis bis zur Verlängerung.",
            ),
            ("Jonas", "Ich schreibe die E-Mail an die Kunden und stimme sie mit dem Support ab."),
            ("Katrin", "Und die Preisseite auf der Website muss am selben Tag aktualisiert werden."),
            ("Jonas", "Notiert. Die neuen Preise gehen am ersten April live."),
        ],
    ),
    (
        "fr/point-hebdo",
        "salon",
        "Point hebdo",
        "meeting",
        "fr",
        "2026-01-28T10:25:57.000Z",
        [
            ("Camille", "On fait le point sur le salon professionnel de Lyon ? Il a lieu du douze au quatorze mars."),
            ("Hugo", "Le stand est réservé, neuf mètres carrés dans le hall B, près de l'entrée."),
            ("Camille", "Parfait. Qui vient de l'équipe ?"),
            ("Hugo", "Toi, moi et Julie. Il faut réserver l'hôtel rapidement, les prix montent pendant le salon."),
            ("Camille", "Je m'occupe des réservations d'hôtel cette semaine. Et les supports ?"),
            ("Hugo", "Il nous faut des flyers, une bannière et une démo sur tablette pour le stand."),
            ("Camille", "On a décidé de ne pas imprimer de catalogue cette année, trop cher et personne ne le lit."),
            ("Hugo", "D'accord. Les flyers suffisent, avec un QR code vers la page du salon."),
            ("Camille", "Donc, décision : stand dans le hall B, trois personnes, flyers et démo, pas de catalogue."),
            ("Hugo", "J'envoie la liste des rendez-vous prévus au salon avant la fin du mois."),
        ],
    ),
]

# About a topic, but in the trash: never to be found.
_TRASHED: list[tuple[str, str, str, str, str, str, str, list[tuple[str | None, str]]]] = [
    # key, topic, title, source, language, created_at, deleted_at, segments
    (
        "budget/trashed-notes",
        "budget",
        "Budget notes",
        "dictation",
        "en",
        "2026-01-14T07:55:00.000Z",
        "2026-01-20T08:00:00.000Z",
        [
            (
                None,
                "Notes to self on the quarterly budget. Travel cap, two licences cancelled, the campaign gets the"
                " savings. Keep the total budget flat against Q1. Check the budget numbers with Ben before Friday.",
            )
        ],
    ),
    (
        "churn/trashed-draft",
        "churn",
        "Churn analysis draft",
        "dictation",
        "en",
        "2026-01-30T18:10:00.000Z",
        "2026-02-01T09:00:00.000Z",
        [
            (
                None,
                "Draft analysis of customer churn: cancellations up for three months, mostly small teams after the"
                " price increase. Retention offer idea: the old price for six months for customers who churn.",
            )
        ],
    ),
]

# Newer transcripts about something else whose title carries a topic word.
_TITLED: list[tuple[str, str, str, str, str, list[tuple[str | None, str]]]] = [
    # key, title, source, language, created_at, segments
    (
        "titled/team-dinner-budget",
        "Team dinner budget",
        "dictation",
        "en",
        "2026-04-10T18:31:00.000Z",
        [
            (
                None,
                "Team dinner on the twelfth. The budget is forty per person including drinks. Book the Italian"
                " place near the station, they have a private room. Ask Leo about vegetarian options.",
            )
        ],
    ),
    (
        "titled/phone-plan",
        "Phone plan renewal",
        "dictation",
        "en",
        "2026-03-18T12:02:00.000Z",
        [
            (
                None,
                "My phone plan renews on the third. Compare offers with more data, the current one runs out every"
                " month. Ask about a family plan with two SIM cards.",
            )
        ],
    ),
    (
        "titled/moving-the-piano",
        "Moving the piano",
        "dictation",
        "en",
        "2026-04-22T20:15:00.000Z",
        [
            (
                None,
                "Call the piano movers about moving the piano to the new flat. They need the exact width of the"
                " stairs. Moving day is the twentieth, keep the morning free.",
            )
        ],
    ),
    (
        "titled/launch-party-playlist",
        "Launch party playlist",
        "dictation",
        "en",
        "2026-05-02T21:40:00.000Z",
        [
            (
                None,
                "Songs for the launch party: something upbeat to start, nothing too loud during the speeches, and"
                " the old disco classics after ten.",
            )
        ],
    ),
    (
        "titled/customer-interview",
        "Customer interview — Tomás",
        "file",
        "en",
        "2026-03-26T15:00:00.000Z",
        [
            ("Speaker 1", "Thanks for taking the time. How do you use the app day to day?"),
            ("Speaker 2", "I record every lecture and read the transcript on the bus home."),
            ("Speaker 1", "What would you miss most if it went away?"),
            ("Speaker 2", "Search, honestly. I find the exact minute a topic came up."),
            ("Speaker 1", "Anything that annoys you?"),
            ("Speaker 2", "Exporting to my notes app takes too many taps."),
        ],
    ),
    (
        "titled/orcamento-da-reforma",
        "Orçamento da reforma",
        "dictation",
        "pt-BR",
        "2026-04-05T10:20:00.000Z",
        [
            (
                None,
                "Orçamento da reforma do banheiro: a empresa pediu doze mil. Pedir mais dois orçamentos antes de"
                " fechar. O azulejo escolhido chega em três semanas.",
            )
        ],
    ),
]


# -- everyday transcripts: subjects, and topic words said in passing -----------------------------


@dataclass(frozen=True)
class Subject:
    titles: tuple[str, ...]
    source: str
    speakers: tuple[str, ...]  # () for a dictation: one segment, no speaker
    sentences: tuple[str, ...]


_SUBJECTS: dict[str, tuple[Subject, ...]] = {
    "en": (
        Subject(
            ("Standup", "Daily standup"),
            "meeting",
            ("Ben", "Leo", "Sam", "Nina"),
            (
                "Yesterday I finished the export feature and opened a pull request.",
                "Today I'm pairing with Leo on the flaky integration tests.",
                "No blockers on my side.",
                "The staging server was slow this morning, so I restarted it.",
                "I'm reviewing the search pull request after lunch.",
                "I'll be out on Thursday afternoon for a dentist appointment.",
                "The dark mode bug is fixed; it was a missing CSS variable.",
                "Can someone look at the failing nightly build?",
                "I updated the dependencies and all the tests pass.",
                "I'm still waiting on design for the settings page.",
            ),
        ),
        Subject(
            ("Design review", "Design crit"),
            "meeting",
            ("Chloé", "Ana", "Leo"),
            (
                "The new settings page uses the same spacing as the dashboard now.",
                "I'm not sure about the green; it looks washed out on dark backgrounds.",
                "Let's try the icons at twenty pixels instead of twenty-four.",
                "The empty state needs a friendlier illustration.",
                "Typography looks good, but the line height in tables is too tight.",
                "Can we make the search field wider on large screens?",
                "I'll update the component library and share the link.",
                "The onboarding flow has one step too many.",
            ),
        ),
        Subject(
            ("Shopping list", "Groceries", "To buy"),
            "dictation",
            (),
            (
                "Buy oat milk, eggs, coffee and a loaf of sourdough.",
                "Don't forget bin bags and washing-up liquid.",
                "Tomatoes, basil and mozzarella for Saturday.",
                "Pick up the dry cleaning on the way home.",
                "Get a birthday card for Mum.",
                "Batteries for the smoke alarm.",
            ),
        ),
        Subject(
            ("Idea", "Idea: podcast", "Random idea", "Thought for later"),
            "dictation",
            (),
            (
                "What if the weekly newsletter had a short audio version?",
                "A podcast where users talk about how they work could be fun.",
                "Maybe a keyboard shortcut to start recording from anywhere.",
                "Idea for the blog: a post about how we test on old laptops.",
                "Try recording the standup and summarising it automatically.",
                "A dark theme for the website would match the app.",
            ),
        ),
        Subject(
            ("Car service", "Home stuff", "Reminder"),
            "dictation",
            (),
            (
                "Book the car in for its service before the long weekend.",
                "The boiler makes a noise again, call the plumber.",
                "Renew the home insurance before the twentieth.",
                "Ask the neighbours about the fence repair.",
                "The washing machine warranty runs out in June.",
            ),
        ),
        Subject(
            ("1:1 Leo", "1:1 Nina", "One-on-one"),
            "meeting",
            ("Ana", "Leo"),
            (
                "How are you finding the new project so far?",
                "Good, though the codebase is bigger than I expected.",
                "Would you like to give a talk at the next team lunch?",
                "I'd like more time for code review; it gets squeezed.",
                "Let's block two mornings a week without meetings.",
                "Your feedback on the onboarding docs was really useful.",
                "I'm taking two weeks off in August.",
            ),
        ),
        Subject(
            ("Podcast interview", "Conference talk recording", "Webinar recording"),
            "file",
            ("Speaker 1", "Speaker 2"),
            (
                "Thanks for having me on the show.",
                "We started the company in a spare room with two laptops.",
                "The hardest part was learning to say no to features.",
                "Speech recognition got dramatically better in the last few years.",
                "Privacy matters to our users, so everything runs on the device.",
                "My advice is to talk to users every single week.",
                "We write everything down; it saves hours of meetings.",
            ),
        ),
        Subject(
            ("Reading notes", "Book notes"),
            "dictation",
            (),
            (
                "Chapter three argues that habits matter more than goals.",
                "Good quote about writing: clear thinking becomes clear writing.",
                "The author recommends reviewing notes once a week.",
                "Interesting point about deep work and notifications.",
                "The last chapter is weaker, mostly anecdotes.",
            ),
        ),
        Subject(
            ("Support sync", "Support triage"),
            "meeting",
            ("Priya", "Ben", "Sam"),
            (
                "The queue is down to thirty open tickets.",
                "Most tickets this week were about password resets.",
                "The export bug report came in three times; I linked them.",
                "Response time is under four hours on average.",
                "We should add a help article about keyboard shortcuts.",
                "Someone asked for a Linux version again.",
            ),
        ),
        Subject(
            ("Sprint retro", "Retro"),
            "meeting",
            ("Ana", "Ben", "Leo", "Sam"),
            (
                "What went well: we shipped the export feature on time.",
                "What didn't: too many meetings on Wednesdays.",
                "Code reviews were faster this sprint.",
                "We underestimated the settings page again.",
                "Action item: write smaller tickets.",
                "Pairing helped a lot with the tricky parts.",
            ),
        ),
        Subject(
            ("Trip notes", "Travel"),
            "dictation",
            (),
            (
                "The train to Porto leaves at eight forty from platform four.",
                "Hotel check-in is after three; keep the booking number handy.",
                "Pack the adapter and the charger.",
                "Dinner with Marta on Wednesday evening.",
            ),
        ),
        Subject(
            ("Running log", "Gym"),
            "dictation",
            (),
            (
                "Ran eight kilometres this morning, felt good.",
                "Knee a bit sore, take it easy tomorrow.",
                "The next race is the half marathon in May.",
                "Stretch more after long runs.",
            ),
        ),
    ),
    "pt-BR": (
        Subject(
            ("Lista de compras",),
            "dictation",
            (),
            (
                "Comprar pão, leite, café e frutas.",
                "Não esquecer o detergente.",
                "Levar as garrafas para reciclar.",
                "Comprar ração para o gato.",
            ),
        ),
        Subject(
            ("Ideia", "Ideias soltas"),
            "dictation",
            (),
            (
                "Fazer um vídeo curto mostrando o aplicativo no celular.",
                "Talvez um podcast em português sobre produtividade.",
                "Testar o aplicativo com a turma da faculdade.",
            ),
        ),
        Subject(
            ("Papo com o Rafael", "Alinhamento"),
            "meeting",
            ("Beatriz", "Rafael"),
            (
                "O site novo ficou ótimo no celular.",
                "Precisamos revisar as traduções da página inicial.",
                "O cliente de Recife pediu uma demonstração.",
                "Vou tirar férias na segunda quinzena de julho.",
                "Os vídeos do tutorial já estão no canal.",
            ),
        ),
    ),
    "es": (
        Subject(
            ("Nota de voz", "Ideas"),
            "dictation",
            (),
            (
                "Comprar billetes de tren para Sevilla.",
                "El nuevo diseño de la web está casi listo.",
                "Llamar al fontanero por la fuga de la cocina.",
            ),
        ),
        Subject(
            ("Llamada con Marta",),
            "meeting",
            ("Marta", "Diego"),
            (
                "Hay que revisar las traducciones al portugués.",
                "El viernes hay cena de equipo.",
                "El cliente de Valencia está muy contento con la demo.",
                "Me voy de vacaciones la segunda semana de agosto.",
            ),
        ),
    ),
    "de": (
        Subject(
            ("Notiz",),
            "dictation",
            (),
            (
                "Morgen Zahnarzt um zehn.",
                "Bitte die Rechnung für März prüfen.",
                "Geschenk für Oma besorgen.",
            ),
        ),
        Subject(
            ("Telefonat mit Jonas",),
            "meeting",
            ("Jonas", "Katrin"),
            (
                "Die neue Website sieht auf dem Handy gut aus.",
                "Am Freitag gibt es Kuchen im Büro.",
                "Der Kunde aus Hamburg möchte eine Schulung.",
                "Ich bin nächste Woche im Urlaub.",
            ),
        ),
    ),
    "fr": (
        Subject(
            ("Note vocale",),
            "dictation",
            (),
            (
                "Acheter du pain et des tomates.",
                "Rappeler le garage pour la voiture.",
                "Penser à l'anniversaire de Julie.",
            ),
        ),
        Subject(
            ("Appel avec Julie",),
            "meeting",
            ("Julie", "Hugo"),
            (
                "Le nouveau site est presque prêt.",
                "Il faut relire la traduction en anglais.",
                "Julie est en congé la semaine prochaine.",
                "Le client de Bordeaux veut une démo en mai.",
            ),
        ),
    ),
}

# One sentence each, said in passing in a transcript about something else. Some use a topic word in
# another sense, some mention the topic itself in one line without discussing it.
_PASSING: dict[str, tuple[str, ...]] = {
    "en": (
        # budget, quarterly
        "I'm on a tight budget this month, so the team lunch is on you.",
        "The film had a tiny budget and still looked great.",
        "Can we find a budget option for the laptop stands?",
        "Quick reminder: the quarterly budget spreadsheet is locked until Friday, so don't edit it.",
        "The quarterly newsletter goes out next Tuesday.",
        "Our quarterly all-hands has moved to the big room.",
        "The quarterly security training is due by the end of the month.",
        # hiring, plans
        "They're hiring at the bakery on the corner; tell your cousin.",
        "Could we hire a van for the weekend?",
        "The hiring manager for the support role is on holiday until Monday.",
        "By the way, the hiring plan slides from the all-hands are in the shared drive.",
        "Any plans for the long weekend?",
        "The plan for today is to finish the export tests.",
        "Plans changed: the dinner is on Thursday now.",
        # mobile, launch
        "My mobile died in the middle of the call, sorry.",
        "The website looks broken on mobile; the menu overlaps the logo.",
        "Call me on my mobile if the train is late.",
        "The mobile launch post is scheduled on the blog; nothing for us to do there.",
        "The café downstairs had a launch party for its new menu.",
        "The rocket launch was postponed again because of the wind.",
        "Launch the test suite before you leave so it runs overnight.",
        # office, move
        "I'm working from the office on Tuesday and Thursday.",
        "The office coffee machine is broken again.",
        "Can someone water the plants in the office this week?",
        "Let's move on to the next item.",
        "Can we move the standup to half past nine?",
        "Reminder that the office move survey closes today; fill it in if you haven't.",
        # customer, churn
        "A customer called about a duplicate invoice, so I refunded it.",
        "The customer portal login page has a typo.",
        "Great customer quote for the website: it just works.",
        "The code churn in the sync module is high; we should refactor it.",
        "Churn numbers are in the monthly report if anyone wants them.",
        # decide, decision
        "We decided to order pizza for the release night.",
        "I still can't decide between the blue and the green logo.",
        "The decision on the conference talk comes next week.",
        "I decided to take the train instead of flying.",
    ),
    "pt-BR": (
        "A reunião de ontem foi cancelada por causa da chuva.",
        "Depois da reunião vamos almoçar no restaurante da esquina.",
        "Pedi um orçamento para consertar o carro, ficou caro.",
        "Lembrar de marcar uma reunião com o contador.",
        "A campanha de marketing da concorrência está em todo lugar.",
        "O que decidimos sobre as férias? Ainda não sei.",
    ),
    "es": (
        "Vi un documental sobre la migración de las aves en otoño, impresionante.",
        "Mi hermana gestiona la base de datos de pacientes del hospital.",
        "Hay que actualizar la base de datos de contactos del boletín.",
        "Decidimos cenar en casa el sábado.",
    ),
    "de": (
        "Die Preise im Supermarkt sind schon wieder gestiegen.",
        "Der Stromanbieter kündigt eine Preiserhöhung zum Sommer an, ich sollte wechseln.",
        "Das Abo für die Zeitung kündige ich zum Monatsende.",
        "Wir haben beschlossen, im Sommer an die Ostsee zu fahren.",
    ),
    "fr": (
        "Le salon de coiffure en bas de chez moi ferme en août.",
        "Mes parents habitent près de Lyon, je passerai les voir.",
        "J'ai réservé une table au restaurant pour vendredi.",
        "Le salon de l'auto à Paris, ça t'intéresse ?",
    ),
}
_PASSING_USES = 2  # transcripts per passing sentence
_UNRELATED = {"en": 80, "pt-BR": 5, "es": 4, "de": 4, "fr": 4}
_SEED = 9  # issue 9


# -- the queries -------------------------------------------------------------------------------

_QUERIES: dict[str, dict[str, tuple[str, ...]]] = {
    "budget": {
        "keyword": ("quarterly budget", "budget review decision", "Q2 budget"),
        "question": (
            "what did we decide about the quarterly budget?",
            "how much are we cutting from the budget this quarter?",
            "was the quarterly budget approved?",
        ),
    },
    "hiring": {
        "keyword": ("hiring plans", "backend engineers hiring", "new hires"),
        "question": (
            "notes on hiring plans",
            "how many people are we hiring this year?",
            "what did we agree about hiring engineers?",
        ),
    },
    "mobile": {
        "keyword": ("mobile launch", "mobile app launch date", "launch checklist"),
        "question": (
            "what did we decide about the mobile launch",
            "when does the mobile app launch?",
            "is the mobile launch delayed?",
        ),
    },
    "office": {
        "keyword": ("office move", '"office move"', "office move date"),
        "question": (
            "when is the office move happening",
            "where are we moving the office to?",
            "what do I need to pack before we move offices?",
        ),
    },
    "churn": {
        "keyword": ("customer churn", "churn OR cancellations", "churned customers"),
        "question": (
            "why are customers churning?",
            "what did Priya say about churn?",
            "what are we doing to reduce customer churn",
        ),
    },
    "orcamento": {
        "keyword": ("orcamento marketing", "orçamento de marketing", "reuniao agencia"),
        "question": (
            "o que decidimos sobre o orçamento de marketing?",
            "quanto vamos gastar na campanha de marketing?",
            "notas da reuniao sobre o orcamento",
        ),
    },
    "migracion": {
        "keyword": ("migracion base de datos", "migra*", "migración PostgreSQL"),
        "question": (
            "¿qué decidimos sobre la migración de la base de datos?",
            "¿cuándo es la migración?",
            "¿hay plan de vuelta atrás si falla la migracion?",
        ),
    },
    "preiserhoehung": {
        "keyword": ("Preiserhöhung", "Preiserhöhung Pro-Abo", "neue Preise"),
        "question": (
            "was haben wir zur Preiserhöhung beschlossen?",
            "wann werden die Preise erhöht?",
            "wie viel kostet das Pro-Abo nach der Preiserhöhung?",
        ),
    },
    "salon": {
        "keyword": ("salon professionnel Lyon", "salon Lyon stand", "reservation hotel salon"),
        "question": (
            "qu'est-ce qu'on a décidé pour le salon de Lyon ?",
            "quand a lieu le salon professionnel ?",
            "qui vient au salon de Lyon ?",
        ),
    },
}


# -- building the documents ------------------------------------------------------------------------


def _stamp(rng: random.Random, first: tuple[int, int, int], last: tuple[int, int, int]) -> str:
    """A random moment between two dates (inclusive), as the app writes it."""
    a = dt.datetime(*first, tzinfo=dt.timezone.utc)
    b = dt.datetime(*last, 23, 59, tzinfo=dt.timezone.utc)
    t = a + dt.timedelta(seconds=rng.randrange(int((b - a).total_seconds())), milliseconds=rng.randrange(1000))
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _everyday(rng: random.Random, key: str, language: str, role: str, passing: str | None, created_at: str) -> Doc:
    subject = rng.choice(_SUBJECTS[language])
    k = rng.randint(min(3, len(subject.sentences)), min(7, len(subject.sentences)))
    sentences = rng.sample(subject.sentences, k)
    if passing is not None:
        sentences.insert(rng.randrange(len(sentences) + 1), passing)
    if subject.speakers:
        segments: Segments = tuple((rng.choice(subject.speakers), s) for s in sentences)
    else:
        segments = ((None, " ".join(sentences)),)
    return Doc(
        key=key,
        title=rng.choice(subject.titles),
        source=subject.source,
        language=language,
        created_at=created_at,
        segments=segments,
        role=role,
        formatted=rng.random() < 0.7,
    )


def _documents() -> tuple[Doc, ...]:
    """Every transcript of the judged store, oldest first (the order the app wrote them in)."""
    rng = random.Random(_SEED)
    docs = [
        Doc(key, title, source, lang, created, tuple(segs), "about", topic)
        for key, topic, title, source, lang, created, segs in _ABOUT
    ]
    docs += [
        Doc(key, title, source, lang, created, tuple(segs), "trashed", topic, deleted_at=deleted)
        for key, topic, title, source, lang, created, deleted, segs in _TRASHED
    ]
    docs += [
        Doc(key, title, source, lang, created, tuple(segs), "about", topic)
        for key, topic, title, source, lang, created, segs in meaning.ABOUT
    ]
    docs += [
        Doc(key, title, source, lang, created, tuple(segs), "passing")
        for key, title, source, lang, created, segs in [*_TITLED, *meaning.PASSING]
    ]
    for language, sentences in _PASSING.items():
        for i, sentence in enumerate(sentences):
            for use in range(_PASSING_USES):
                # Newer than every about transcript: the old "newest first" order puts these on top.
                created = _stamp(rng, (2026, 2, 12), (2026, 5, 29))
                docs.append(_everyday(rng, f"passing/{language}/{i}/{use}", language, "passing", sentence, created))
    for language, count in _UNRELATED.items():
        for i in range(count):
            created = _stamp(rng, (2025, 12, 1), (2026, 5, 29))
            docs.append(_everyday(rng, f"unrelated/{language}/{i}", language, "unrelated", None, created))
    return tuple(sorted(docs, key=lambda d: (d.created_at, d.key)))


DOCUMENTS = _documents()
BY_ID = {d.id: d for d in DOCUMENTS}
TRASHED_IDS = frozenset(d.id for d in DOCUMENTS if d.role == "trashed")
TOPICS = tuple(_QUERIES)
QUERIES = tuple(
    Query(text, kind, topic, frozenset(d.id for d in DOCUMENTS if d.role == "about" and d.topic == topic))
    for topic, kinds in _QUERIES.items()
    for kind in KINDS
    for text in kinds[kind]
)
MEANING_TOPICS = tuple(meaning.QUERIES)
MEANING_QUERIES = tuple(
    Query(text, kind, topic, frozenset(d.id for d in DOCUMENTS if d.role == "about" and d.topic == topic), held)
    for topic, kinds in meaning.QUERIES.items()
    for kind in MEANING_KINDS
    for text, held in kinds.get(kind, ())
)


def _raw(text: str) -> str:
    """Speech-to-text output as the app stores it before formatting: lower case, no punctuation."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s'-]", " ", text.lower())).strip()


def build_store(path: Path, *, fts: bool = True) -> Path:
    """Write the judged store at path (fts=False: without the full-text index, as older apps wrote it)."""
    b = StoreBuilder(path, fts=fts)
    for d in DOCUMENTS:
        texts = [text for _, text in d.segments]
        b.transcript(
            id=d.id,
            title=d.title,
            source=d.source,
            language=d.language,
            duration_ms=sum(1000 + 50 * len(t) for t in texts),
            raw_text=_raw(" ".join(texts)),
            formatted_text="\n\n".join(texts) if d.formatted else None,
            created_at=d.created_at,
            deleted_at=d.deleted_at,
            segments=list(d.segments),
        )
    return b.close()


# -- metrics --------------------------------------------------------------------------------------


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str], depth: int = DEPTH) -> float:
    """1/rank of the first relevant id among the first depth; 0 when there is none."""
    for rank, found in enumerate(ranked[:depth], start=1):
        if found in relevant:
            return 1.0 / rank
    return 0.0


def recall_at(ranked: Sequence[str], relevant: Collection[str], k: int = RECALL_AT) -> float:
    """The share of the relevant ids found among the first k."""
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


@dataclass(frozen=True)
class Outcome:
    """One query's hits, judged."""

    query: Query
    ranked: tuple[str, ...]

    @property
    def reciprocal_rank(self) -> float:
        return reciprocal_rank(self.ranked, self.query.relevant)

    @property
    def recall(self) -> float:
        return recall_at(self.ranked, self.query.relevant)

    @property
    def trashed(self) -> tuple[str, ...]:
        """Trashed transcripts the search returned (must be none)."""
        return tuple(t for t in self.ranked if t in TRASHED_IDS)

    def describe(self) -> str:
        """The query, how it scored and what it found first (for a failure message)."""
        first = next((i for i, t in enumerate(self.ranked, start=1) if t in self.query.relevant), None)
        top = ", ".join(
            ("*" if t in self.query.relevant else "") + repr(BY_ID[t].title if t in BY_ID else t)
            for t in self.ranked[:RECALL_AT]
        )
        return (
            f"[{self.query.kind}] {self.query.text!r}: first relevant at {first or '-'}, recall@{RECALL_AT}"
            f" {self.recall:.2f}, {len(self.ranked)} hits; top: {top or '(none)'}"
        )


@dataclass(frozen=True)
class Figures:
    kind: str
    queries: int
    mrr: float
    recall_at_5: float

    def as_json(self) -> dict[str, float | int]:
        return {"queries": self.queries, "mrr": self.mrr, "recall_at_5": self.recall_at_5}


@dataclass(frozen=True)
class Evaluation:
    """Every query's outcome against one server on one store."""

    outcomes: tuple[Outcome, ...]

    def figures(self, kinds: Sequence[str] = KINDS) -> dict[str, Figures]:
        """MRR and recall@5 per kind, in the order of kinds."""
        out = {}
        for kind in kinds:
            mine = [o for o in self.outcomes if o.query.kind == kind]
            n = len(mine)
            out[kind] = Figures(
                kind,
                n,
                sum(o.reciprocal_rank for o in mine) / n if n else 0.0,
                sum(o.recall for o in mine) / n if n else 0.0,
            )
        return out

    def misses(self, kind: str | None = None) -> list[Outcome]:
        """Queries whose first hit is not relevant or whose first five miss a relevant transcript."""
        return [
            o
            for o in self.outcomes
            if (kind is None or o.query.kind == kind) and (o.reciprocal_rank < 1.0 or o.recall < 1.0)
        ]

    def trashed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.trashed]

    def held_out(self) -> Evaluation:
        """Only the queries kept out of any tuning."""
        return Evaluation(tuple(o for o in self.outcomes if o.query.held_out))


def evaluate(search: Callable[[str], Iterable[str]], queries: Iterable[Query] = QUERIES) -> Evaluation:
    """Run every query through search (query text -> transcript ids, best first) and judge the answers."""
    return Evaluation(tuple(Outcome(q, tuple(search(q.text))) for q in queries))


def table(evaluations: Mapping[str, Evaluation], kinds: Sequence[str] = KINDS) -> str:
    """A plain-text table of the figures, one row per (label, kind)."""
    lines = [f"{'':<24} {'kind':<10} {'queries':>7} {'MRR':>6} {'recall@5':>9}"]
    for label, ev in evaluations.items():
        for kind, f in ev.figures(kinds).items():
            lines.append(f"{label:<24} {kind:<10} {f.queries:>7} {f.mrr:>6.3f} {f.recall_at_5:>9.3f}")
    return "\n".join(lines)
