"""Everyday talk around the planted facts: meetings, dictations and tasks in five languages.

Realistic enough that a keyword is not an answer: many meetings are titled "Design review" or "Weekly sync",
the same names speak everywhere, and "budget", "hiring" and "design review" come up all the time. Lines are
statements and questions, never a speaker's promise (a question about commitments has one right answer), and
never a word of ``planted.UNIQUE_WORDS``.
"""

from __future__ import annotations

import random

NAMES = (
    "Ana",
    "Bruno",
    "Chen",
    "Dana",
    "Elena",
    "Fatima",
    "Gabriel",
    "Hiro",
    "Ines",
    "Jonas",
    "Kofi",
    "Lucia",
    "Marta",
    "Nikhil",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Yusuf",
)
CUSTOMERS = ("Acme", "Globex", "Initech", "Umbrella Health", "Hooli", "Vandelay Industries", "Soylent", "Wonka")
FEATURES = ("checkout", "search page", "settings", "sign-up flow", "mobile navigation", "billing page", "inbox")
DAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "next week", "the end of the month"),
    "pt-BR": ("segunda", "terça", "quarta", "quinta", "sexta", "a semana que vem"),
    "es": ("el lunes", "el martes", "el miércoles", "el jueves", "el viernes", "la semana que viene"),
    "de": ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "nächste Woche"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "la semaine prochaine"),
}
TOPICS = {
    "en": (
        "the design review",
        "the budget",
        "hiring",
        "the roadmap",
        "the Q3 numbers",
        "onboarding",
        "the release",
        "the dashboard",
        "customer feedback",
        "the sprint",
        "the board deck",
        "the support queue",
        "the hiring plan",
        "the marketing budget",
        "the offsite",
        "the interview loop",
        "the design system",
    ),
    "pt-BR": ("a revisão de design", "o orçamento", "as contratações", "o roadmap", "a sprint", "o lançamento"),
    "es": ("la revisión de diseño", "el presupuesto", "las contrataciones", "el roadmap", "el sprint", "la entrega"),
    "de": ("das Design-Review", "das Budget", "die Einstellungen", "die Roadmap", "den Sprint", "das Release"),
    "fr": ("la revue de design", "le budget", "les recrutements", "la roadmap", "le sprint", "la mise en production"),
}
LINES = {
    "en": (
        "Quick update on {topic}: nothing blocking right now.",
        "I talked to {name} about {topic} yesterday and we mostly agree.",
        "Can we move {topic} to {day}? The afternoon is full.",
        "The numbers for {topic} look better than last month.",
        "{name} had a good point about {topic} in the last meeting.",
        "I think {topic} needs another pass, the last version was rushed.",
        "Did anyone hear back from {customer}?",
        "{customer} mentioned the {feature} again on their last call.",
        "We should keep the design review short this time, thirty minutes max.",
        "The budget is tight but we can manage until the end of the quarter.",
        "Hiring is slow, we only had {num} applications this week.",
        "Let's park {topic} and come back to it {day}.",
        "The {feature} redesign is almost ready for the design review.",
        "Yeah, that makes sense to me.",
        "Sorry, I was on mute. Could you repeat the last part?",
        "I'm not sure about {topic}, let's ask {name}.",
        "The release went out on {day} without problems.",
        "We have {num} open bugs on the {feature}, most of them small.",
        "Marketing wants the budget numbers before {day}.",
        "Who is taking notes today?",
        "The interview with the backend candidate went well, {name} liked her.",
        "Let's do a quick round: what is everyone working on?",
        "The dashboard is slow again when more than {num} people use it.",
        "Okay, I think that's everything for {topic}.",
        "Remember that {name} is out {day}.",
        "The board wants to see the budget and the hiring numbers together.",
        "I reviewed the {feature} mockups, the spacing is still off.",
        "Good meeting, thanks everyone.",
    ),
    "pt-BR": (
        "Atualização rápida sobre {topic}: nada travado por enquanto.",
        "Conversei com {name} sobre {topic} e concordamos em quase tudo.",
        "Podemos passar {topic} para {day}?",
        "Os números de {topic} estão melhores que no mês passado.",
        "O orçamento está apertado, mas dá para fechar o trimestre.",
        "A revisão de design ficou para {day}.",
        "Alguém teve notícias da {customer}?",
        "Beleza, faz sentido.",
    ),
    "es": (
        "Actualización rápida sobre {topic}: nada bloqueado ahora mismo.",
        "Hablé con {name} sobre {topic} y estamos de acuerdo.",
        "¿Podemos mover {topic} a {day}?",
        "Los números de {topic} son mejores que el mes pasado.",
        "El presupuesto está justo, pero llegamos al final del trimestre.",
        "La revisión de diseño queda para {day}.",
        "¿Alguien sabe algo de {customer}?",
        "Vale, tiene sentido.",
    ),
    "de": (
        "Kurzes Update zu {topic}: gerade blockiert nichts.",
        "Ich habe mit {name} über {topic} gesprochen, wir sind uns weitgehend einig.",
        "Können wir {topic} auf {day} verschieben?",
        "Die Zahlen für {topic} sehen besser aus als letzten Monat.",
        "Das Budget ist knapp, aber bis zum Quartalsende reicht es.",
        "Das Design-Review verschieben wir auf {day}.",
        "Hat jemand etwas von {customer} gehört?",
        "Okay, das ergibt Sinn.",
    ),
    "fr": (
        "Petit point sur {topic} : rien de bloquant pour l'instant.",
        "J'ai parlé avec {name} de {topic}, on est d'accord sur l'essentiel.",
        "On peut décaler {topic} à {day} ?",
        "Les chiffres de {topic} sont meilleurs que le mois dernier.",
        "Le budget est serré, mais on tient jusqu'à la fin du trimestre.",
        "La revue de design est reportée à {day}.",
        "Quelqu'un a des nouvelles de {customer} ?",
        "D'accord, ça me va.",
    ),
}
MEETING_TITLES = {
    "en": (
        "Weekly sync",
        "Design review",
        "Design review – {feature}",
        "Budget check-in",
        "Hiring sync",
        "1:1 {name} / {name2}",
        "Sprint planning",
        "Sprint retro",
        "Call with {customer}",
        "Product sync",
        "Marketing standup",
        "All hands",
        "Interview debrief",
        "Roadmap review",
        "Team meeting",
    ),
    "pt-BR": ("Reunião semanal", "Revisão de design", "Alinhamento de orçamento", "Contratações"),
    "es": ("Reunión semanal", "Revisión de diseño", "Presupuesto", "Contrataciones"),
    "de": ("Wöchentliches Meeting", "Design-Review", "Budgetrunde", "Recruiting-Runde"),
    "fr": ("Point hebdo", "Revue de design", "Point budget", "Point recrutement"),
}
DICTATION_TITLES = ("Note", "Idea", "Reminder", "Thoughts on {topic}", "", "To do", "Voice memo")
FILE_TITLES = ("Podcast episode {num}", "Webinar recording", "Lecture notes", "Conference talk {num}")
TASKS = (
    "Send the meeting notes",
    "Update the budget sheet",
    "Book a room for the design review",
    "Review the hiring pipeline",
    "Follow up with {customer}",
    "Prepare the demo",
    "Check the dashboard numbers",
    "Schedule the next sync",
    "Share the slides with {name}",
    "Review the {feature} mockups",
    "Write the release notes",
    "Reply to {name}",
    "Collect feedback from {customer}",
    "Plan the next sprint",
    "Fix the {feature} bug",
    "Call the bank",
    "Buy a birthday gift for {name}",
    "Pick up the dry cleaning",
    "Renew the gym membership",
)
TASK_NOTES = (None, None, "Before the weekly sync", "Ask {name} first", "Low priority", "See the last meeting")


def _fill(template: str, rng: random.Random, language: str = "en") -> str:
    name, name2 = rng.sample(NAMES, 2)
    return template.format(
        name=name,
        name2=name2,
        customer=rng.choice(CUSTOMERS),
        feature=rng.choice(FEATURES),
        topic=rng.choice(TOPICS[language]),
        day=rng.choice(DAYS[language]),
        num=rng.randint(2, 40),
    )


def line(rng: random.Random, language: str) -> str:
    return _fill(rng.choice(LINES[language]), rng, language)


def meeting_title(rng: random.Random, language: str) -> str:
    return _fill(rng.choice(MEETING_TITLES[language]), rng, language)


def dictation(rng: random.Random) -> tuple[str, str]:
    title = _fill(rng.choice(DICTATION_TITLES), rng)
    text = " ".join(line(rng, "en") for _ in range(rng.randint(1, 4)))
    return title, text


def file_title(rng: random.Random) -> str:
    return _fill(rng.choice(FILE_TITLES), rng)


def task(rng: random.Random) -> tuple[str, str | None]:
    notes = rng.choice(TASK_NOTES)
    return _fill(rng.choice(TASKS), rng), _fill(notes, rng) if notes else None
