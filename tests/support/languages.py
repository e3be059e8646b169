"""Meetings as people hold them, in the languages and kinds of text a store holds, for measuring answers' tokens.

Each kind is a few sentences of everyday meeting speech; ``said`` strings them into as many segments as asked,
speakers taking turns, so a store of long meetings, many short notes and their tasks can be built from them.
"""

from __future__ import annotations

import itertools

from devkit.storefactory import StoreBuilder, ts

SENTENCES: dict[str, tuple[str, ...]] = {
    "english": (
        "Morning everyone, let's go through the launch checklist before the release on Thursday.",
        "The crash on older Android phones is fixed and the build went to beta testers last night.",
        "Marketing wants a friendlier first screen, so I rewrote the onboarding copy yesterday.",
        "Legal still needs the data-retention table before they sign off the privacy review.",
        "Can you own the retention table by Wednesday? I'll check that transcripts never leave the device.",
        "We agreed to hire two more engineers for the platform team once the budget is approved.",
        "Honestly, I think the roadmap is too ambitious for one quarter; let's cut the reporting feature.",
        "Dana promised to send the customer interviews to everyone by the end of next week.",
        "The café in São Paulo asked for a demo for their staff, maybe early next month.",
        "Decision: we ship on the 14th if the privacy review passes, otherwise we slip a week.",
    ),
    "portuguese": (
        "Bom dia a todos, vamos revisar a lista de lançamento antes da versão de quinta-feira.",
        "O erro nos celulares Android mais antigos foi corrigido e a versão beta já está com os testadores.",
        "A equipe de marketing quer uma primeira tela mais simpática, então reescrevi o texto ontem.",
        "O jurídico ainda precisa da tabela de retenção de dados antes de aprovar a revisão de privacidade.",
        "Você consegue cuidar da tabela até quarta? Eu confirmo que as transcrições nunca saem do aparelho.",
        "Decidimos contratar mais dois engenheiros para a equipe de plataforma quando o orçamento for aprovado.",
        "Sinceramente, acho o planejamento ambicioso demais para um trimestre; vamos cortar os relatórios.",
        "A Joana prometeu enviar as entrevistas com clientes até o fim da próxima semana.",
    ),
    "spanish": (
        "Buenos días a todos, repasemos la lista de lanzamiento antes de la versión del jueves.",
        "El fallo en los teléfonos Android antiguos está corregido y la beta ya la tienen los probadores.",
        "Marketing quiere una primera pantalla más amable, así que reescribí el texto de bienvenida ayer.",
        "El equipo legal todavía necesita la tabla de conservación de datos para aprobar la revisión.",
        "¿Puedes encargarte de la tabla antes del miércoles? Yo compruebo que nada sale del dispositivo.",
        "Acordamos contratar a dos ingenieros más para el equipo de plataforma cuando se apruebe el presupuesto.",
        "La verdad, creo que la hoja de ruta es demasiado ambiciosa para un trimestre; quitemos los informes.",
        "Lucía prometió mandar las entrevistas con clientes antes del final de la semana que viene.",
    ),
    "german": (
        "Guten Morgen zusammen, lasst uns die Checkliste vor der Veröffentlichung am Donnerstag durchgehen.",
        "Der Absturz auf älteren Android-Geräten ist behoben, und die Beta ist seit gestern bei den Testern.",
        "Das Marketing wünscht sich einen freundlicheren Startbildschirm, deshalb habe ich den Text überarbeitet.",
        "Die Rechtsabteilung braucht die Tabelle zur Datenaufbewahrung, bevor sie die Datenschutzprüfung freigibt.",
        "Kannst du die Tabelle bis Mittwoch übernehmen? Ich prüfe, dass Transkripte das Gerät nie verlassen.",
        "Wir haben beschlossen, zwei weitere Entwickler einzustellen, sobald das Budget genehmigt ist.",
        "Ehrlich gesagt ist die Roadmap für ein Quartal zu ehrgeizig; streichen wir die Berichtsfunktion.",
        "Jonas hat versprochen, die Kundeninterviews bis Ende nächster Woche an alle zu schicken.",
    ),
    "french": (
        "Bonjour à tous, passons en revue la liste de lancement avant la version de jeudi.",
        "Le plantage sur les anciens téléphones Android est corrigé et la bêta est chez les testeurs depuis hier soir.",
        "Le marketing veut un premier écran plus accueillant, alors j'ai réécrit le texte d'accueil hier.",
        "Le service juridique attend toujours le tableau de conservation des données avant de valider la revue.",
        "Peux-tu t'occuper du tableau d'ici mercredi ? Je vérifie que rien ne quitte l'appareil.",
        "Nous avons décidé d'embaucher deux ingénieurs de plus dès que le budget sera approuvé.",
        "Franchement, la feuille de route est trop ambitieuse pour un trimestre ; supprimons les rapports.",
        "Hélène a promis d'envoyer les entretiens clients à tout le monde d'ici la fin de la semaine prochaine.",
    ),
    "chinese": (
        "大家早上好，我们先过一下周四发布前的上线检查清单。",
        "旧款安卓手机上的崩溃问题已经修复，测试版昨晚已经发给测试人员了。",
        "市场部希望首屏更友好一些，所以我昨天重写了引导文案。",
        "法务部门在批准隐私审查之前还需要数据保留表。",
        "你能在周三之前负责这张表吗？我会确认转录内容不会离开设备。",
        "我们决定在预算批准后为平台团队再招聘两名工程师。",
    ),
    "japanese": (
        "皆さんおはようございます。木曜日のリリース前にローンチのチェックリストを確認しましょう。",
        "古いAndroid端末でのクラッシュは修正済みで、ベータ版は昨夜テスターに配布しました。",
        "マーケティングから最初の画面をもっと親しみやすくしてほしいと言われたので、昨日文言を書き直しました。",
        "プライバシーレビューの承認前に、法務はまだデータ保持の表を必要としています。",
        "水曜日までにその表を担当してもらえますか？文字起こしが端末の外に出ないことは私が確認します。",
    ),
    "emoji": (
        "Launch day 🚀🚀 checklist done ✅ and the beta is out 🎉",
        "Crash fixed 🐛➡️✅ thanks to Ben 🙏🏽 great work 👏👏",
        "Budget approved 💰📈 hiring two engineers 👩🏻‍💻👨🏾‍💻 next quarter",
        "Privacy review ⏳ still waiting on legal ⚖️ 😬",
        "Team dinner on Friday 🍕🍻 who's in? 🙋‍♀️🙋‍♂️",
        "Demo in São Paulo ☕🇧🇷 next month 📅 ❤️",
    ),
    "numbers": (
        "Revenue was 1,284,937.52 in Q3 against 1,102,448.10 in Q2, up 16.55 percent.",
        "Call the vendor at +1 415 555 0132 or +44 20 7946 0958 before 2026-05-14T09:30:00Z.",
        "Order 4839201 shipped 12,500 units; invoice INV-2026-000873 is due on 2026-06-30.",
        "Latency p50 was 12.7 ms, p90 48.3 ms and p99 213.9 ms over 3,845,112 requests.",
        "Ticket a3f9c2e1-7b4d-4e8a-9c21-5d6f0e8b1a47 tracks the 2.14.3 regression since 2026-04-02.",
        "The budget line is 250000 for hardware, 1800000 for salaries and 37500 for travel.",
    ),
}

KINDS = tuple(SENTENCES)
LANGUAGE = {
    "english": "en",
    "portuguese": "pt",
    "spanish": "es",
    "german": "de",
    "french": "fr",
    "chinese": "zh",
    "japanese": "ja",
}
SPEAKERS = ("Ana", "Bruno", "Chloé", "Dana")


def said(kind: str, segments: int, offset: int = 0) -> list[tuple[str | None, str]]:
    """segments (speaker, words) of a meeting in kind: one to three of its sentences each, speakers taking turns."""
    sentences = itertools.cycle(SENTENCES[kind][offset % len(SENTENCES[kind]) :] + SENTENCES[kind])
    sep = "" if kind in ("chinese", "japanese") else " "
    return [(SPEAKERS[k % len(SPEAKERS)], sep.join(next(sentences) for _ in range(1 + k % 3))) for k in range(segments)]


def meeting_id(kind: str, k: int) -> str:
    """A transcript id of the kind's k-th meeting, a UUID as the app writes them."""
    return f"{KINDS.index(kind):08x}-7b4d-4e8a-9c21-{k:012x}"


def build(b: StoreBuilder, kinds: tuple[str, ...] = KINDS, meetings: int = 6, segments: int = 400) -> None:
    """Per kind: one long meeting of segments, and more short ones, each with a few tasks in its language."""
    for n, kind in enumerate(kinds):
        for k in range(meetings):
            size = segments if k == 0 else 6 + 5 * k
            talk = said(kind, size, k)
            text = " ".join(words for _, words in talk)
            tid = meeting_id(kind, k)
            title = SENTENCES[kind][k % len(SENTENCES[kind])][:60]
            b.transcript(
                id=tid,
                title=title,
                source="meeting",
                language=LANGUAGE.get(kind, "en"),
                raw_text=text,
                formatted_text=None,
                created_at=ts(1 + n, minute=k),
                segments=talk,
            )
            for t in range(3):
                sentence = SENTENCES[kind][(k + t) % len(SENTENCES[kind])]
                b.task(transcript_id=tid, title=sentence[:80], notes=sentence, created_at=ts(1 + n, minute=k))
