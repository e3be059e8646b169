"""The judged set's queries by meaning (issue 21, "Measured"): paraphrases and other languages.

Two more kinds of query beside devkit/relevance.py's keyword and question sets:

* ``paraphrase``: an English question that shares no content word with the transcript that answers it
  ("how do we cut the ad spend" -> "we'll put less money into campaigns"), while newer everyday transcripts
  do share the question's words, in another sense ("cut the grass", "an ad for a cargo bike");
* ``crosslang``: an English question whose answer is a meeting held in Portuguese, Spanish, German or
  French ("are we moving to a four-day week?" -> "a semana de quatro dias"), again with no word shared.

Lexical search cannot find these: the figures are reported, not held to a target, until search by meaning
exists (issue 21's targets: paraphrase recall@5 >= 0.8 and MRR >= 0.6; cross-language recall@5 >= 0.7).
Half of each kind is ``held_out``: kept out of any tuning, and reported on its own.

Only data lives here; devkit/relevance.py builds the documents and queries from it, so the store and the
metrics stay one.
"""

from __future__ import annotations

MEANING_KINDS = ("paraphrase", "crosslang")

Segment = tuple[str | None, str]

# key, topic, title, source, language, created_at, segments. Older than the passing transcripts below
# (and than most of the store), like the about transcripts of the keyword set.
ABOUT: list[tuple[str, str, str, str, str, str, list[Segment]]] = [
    (
        "meaning/marketing-sync",
        "adspend",
        "Marketing sync",
        "meeting",
        "en",
        "2026-01-19T15:04:40.000Z",
        [
            ("Maya", "From April we'll put less money into campaigns. Finance wants every group to trim."),
            ("Owen", "Search campaigns bring most sign-ups. The banners on news sites bring almost none."),
            ("Maya", "Then the banners stop at the end of March, and search drops from thirty to twenty thousand."),
            ("Owen", "What about the podcast sponsorships?"),
            ("Maya", "Keep one show and drop the other two. We pay far too much per listener."),
            ("Owen", "So in total we're down about forty percent on paid channels."),
            ("Maya", "Right. I'll tell the agency on Monday and move the savings into the referral scheme."),
        ],
    ),
    (
        "meaning/engineering-all-hands",
        "promotion",
        "All-hands",
        "meeting",
        "en",
        "2025-12-18T16:00:12.000Z",
        [
            ("Sofia", "One announcement before we start: Jonas takes over as engineering lead in January."),
            ("Sofia", "He has run the platform squad for two years and led the storage rewrite."),
            ("Jonas", "Thanks. My first step is a one-to-one with each of you over the holidays."),
            ("Sofia", "I move over to product and stay your contact for the roadmap."),
            ("Ravi", "Who takes the platform squad after him?"),
            ("Sofia", "Elena steps up to lead it; the announcement email goes out tomorrow."),
        ],
    ),
    (
        "meaning/incident-review",
        "outage",
        "Incident review",
        "meeting",
        "en",
        "2026-01-27T11:30:05.000Z",
        [
            ("Nina", "At two in the morning the servers went down and customers couldn't log in for forty minutes."),
            ("Leo", "The database ran out of disk. The export job wrote its files to the wrong volume."),
            ("Nina", "Who noticed first?"),
            ("Leo", "The on-call alert fired, but the pager app was muted on my phone."),
            ("Nina", "Action items: an alert at eighty percent disk, and the export job gets its own volume."),
            ("Leo", "I'll write the incident report for customers by Wednesday."),
        ],
    ),
    (
        "meaning/call-with-marta",
        "away",
        "Call with Marta",
        "meeting",
        "en",
        "2026-01-09T09:12:48.000Z",
        [
            ("Tom", "Marta, you're away from the third to the twenty-fourth of March, right?"),
            ("Marta", "Yes, three weeks in Portugal. Ivan covers my customers while I'm gone."),
            ("Tom", "And my parental leave starts in the middle of March, for eight weeks."),
            ("Marta", "Then we're both out for part of March. Who signs the invoices?"),
            ("Tom", "Ivan can approve anything under five thousand; bigger ones wait for me."),
        ],
    ),
    (
        "meaning/reuniao-de-equipe",
        "semana",
        "Reunião de equipe",
        "meeting",
        "pt-BR",
        "2026-01-14T13:40:19.000Z",
        [
            ("Fernanda", "A partir de março vamos testar a semana de quatro dias, com sexta-feira livre para todos."),
            ("Gustavo", "E o salário continua igual?"),
            ("Fernanda", "Igual. O teste dura três meses e medimos as entregas e a satisfação de cada um."),
            ("Gustavo", "O suporte ao cliente não pode parar na sexta."),
            ("Fernanda", "O suporte faz rodízio: metade folga na sexta, metade na segunda."),
            ("Gustavo", "Combinado. Eu aviso os clientes sobre o horário novo."),
        ],
    ),
    (
        "meaning/besprechung-einkauf",
        "lieferant",
        "Besprechung Einkauf",
        "meeting",
        "de",
        "2026-01-26T08:45:33.000Z",
        [
            ("Lena", "Wir wechseln den Lieferanten für die Kartons. Der alte war im Herbst dreimal zu spät."),
            ("Markus", "Der neue sitzt in Polen, liefert in vier Tagen und ist acht Prozent günstiger."),
            ("Lena", "Der Vertrag mit dem alten läuft Ende Februar aus, wir verlängern nicht."),
            ("Markus", "Ich bestelle vorher noch einen Vorrat für sechs Wochen, falls der Start holpert."),
        ],
    ),
    (
        "meaning/reunion-design",
        "stagiaires",
        "Réunion design",
        "meeting",
        "fr",
        "2026-01-20T14:15:27.000Z",
        [
            ("Claire", "On accueille deux stagiaires cet été, de juin à août."),
            ("Thomas", "Ils travailleront sur la refonte du site ?"),
            ("Claire", "Oui, avec Julie comme tutrice. Les entretiens ont lieu en avril."),
            ("Thomas", "Il faut leur préparer des ordinateurs et des accès dès le premier jour."),
        ],
    ),
]

# key, title, source, language, created_at, segments: newer everyday transcripts that share a query's
# words in another sense (or are about the same words in English, for the cross-language questions).
PASSING: list[tuple[str, str, str, str, str, list[Segment]]] = [
    (
        "meaning/p/grass",
        "Saturday",
        "dictation",
        "en",
        "2026-03-07T08:10:00.000Z",
        [(None, "Cut the grass before the rain on Saturday, and fix the garden gate.")],
    ),
    (
        "meaning/p/bike-ad",
        "Cargo bike",
        "dictation",
        "en",
        "2026-03-15T19:22:00.000Z",
        [(None, "Saw an ad for a second-hand cargo bike, four hundred euros. Call the seller tonight.")],
    ),
    (
        "meaning/p/lake",
        "Long weekend",
        "dictation",
        "en",
        "2026-04-02T21:05:00.000Z",
        [(None, "We'll spend the long weekend at my parents' place by the lake. Pack the board games.")],
    ),
    (
        "meaning/p/agency-quiz",
        "Quiz night",
        "dictation",
        "en",
        "2026-04-20T18:40:00.000Z",
        [(None, "The advertising agency across the street runs a quiz night on Thursdays. Costs five euros.")],
    ),
    (
        "meaning/p/coffee-promotion",
        "Groceries",
        "dictation",
        "en",
        "2026-03-11T17:55:00.000Z",
        [(None, "The supermarket has a promotion on coffee this week, two for one. Get oat milk too.")],
    ),
    (
        "meaning/p/football",
        "Football",
        "dictation",
        "en",
        "2026-04-08T22:15:00.000Z",
        [(None, "My teammate from five-a-side broke his ankle. We need a sub for Sunday's game.")],
    ),
    (
        "meaning/p/boss",
        "Call with Dan",
        "meeting",
        "en",
        "2026-05-06T12:30:00.000Z",
        [
            ("Dan", "My sister's new boss banned meetings on Fridays."),
            ("Leo", "Sounds like a good boss to me."),
            ("Dan", "She got promoted twice in a year, so he must be doing something right."),
        ],
    ),
    (
        "meaning/p/glasses",
        "Optician",
        "dictation",
        "en",
        "2026-03-23T09:02:00.000Z",
        [(None, "I broke my glasses on the stairs. Need new ones before the drive on Monday.")],
    ),
    (
        "meaning/p/school-play",
        "School play",
        "dictation",
        "en",
        "2026-03-29T21:48:00.000Z",
        [(None, "The school production of Grease was last night; the kids were brilliant. Send photos to Gran.")],
    ),
    (
        "meaning/p/building-site",
        "Noise",
        "dictation",
        "en",
        "2026-04-14T07:20:00.000Z",
        [(None, "The building site next door starts drilling at seven. Why did nobody warn us? Email the council.")],
    ),
    (
        "meaning/p/oven",
        "Kitchen",
        "dictation",
        "en",
        "2026-05-12T19:10:00.000Z",
        [(None, "Turn off the oven timer, it keeps beeping. The next bus is at ten past, I'll be late for work.")],
    ),
    (
        "meaning/p/vacation-photos",
        "Photos",
        "dictation",
        "en",
        "2026-05-19T20:33:00.000Z",
        [(None, "Our vacation photos are finally printed. Anyone want copies? Rent goes up next month, soon.")],
    ),
    (
        "meaning/p/four-day",
        "Call with Ines",
        "meeting",
        "en",
        "2026-04-27T17:00:00.000Z",
        [
            ("Ines", "My sister's four-day week at the hospital is exhausting her."),
            ("Ravi", "Four long shifts and Fridays off? I'd take that."),
        ],
    ),
    (
        "meaning/p/supplier",
        "Kitchen supplier",
        "dictation",
        "en",
        "2026-05-03T10:45:00.000Z",
        [
            (
                None,
                "The restaurant supplier delivers the boxes of vegetables on Tuesdays now. Change the packaging order.",
            )
        ],
    ),
    (
        "meaning/p/interns",
        "Lunch with Sam",
        "meeting",
        "en",
        "2026-05-24T13:15:00.000Z",
        [
            ("Sam", "The summer interns at my friend's bank get free lunch."),
            ("Nina", "Trainees at ours get a desk by the printer."),
        ],
    ),
]

# topic -> kind -> (query, held out?). One of each pair is held out: kept out of any tuning.
QUERIES: dict[str, dict[str, tuple[tuple[str, bool], ...]]] = {
    "adspend": {"paraphrase": (("how do we cut the ad spend", False), ("plans to reduce advertising costs", True))},
    "promotion": {
        "paraphrase": (("which teammate got promoted", False), ("who is the new boss of the developers?", True))
    },
    "outage": {"paraphrase": (("what broke in production last night", False), ("why did the site crash?", True))},
    "away": {"paraphrase": (("who is off work next month", False), ("anyone on vacation soon?", True))},
    "semana": {"crosslang": (("are we moving to a four-day week?", False), ("do we get Fridays off?", True))},
    "lieferant": {
        "crosslang": (
            ("why are we changing the packaging supplier?", False),
            ("who delivers our boxes from March?", True),
        )
    },
    "stagiaires": {
        "crosslang": (("are we taking interns this summer?", False), ("who will look after the trainees?", True))
    },
    # Two topics of the keyword set, asked in English.
    "migracion": {
        "crosslang": (
            ("when are we switching databases?", False),
            ("what happens if the database switch goes wrong?", True),
        )
    },
    "preiserhoehung": {
        "crosslang": (
            ("how much more will customers pay for the subscription?", False),
            ("when does the price rise take effect?", True),
        )
    },
}
