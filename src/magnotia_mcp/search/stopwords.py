"""Function words that do not decide what a search is about, in the languages the app transcribes.

Models phrase searches as questions ("what did we decide about the budget"):
these words are in nearly every transcript and say nothing about the topic, so
they are dropped from a query (unless quoted, or unless nothing else is left).
Words are folded (lower case, no diacritics), as ``querylang.fold`` leaves them, and
cut where the index cuts them: "don't" is the tokens "don" and "t".
"""

from __future__ import annotations

_ENGLISH = """
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just let me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves also any anything ever every get got
tell told say said know many much please find show give us something thing things
s t d ll re ve m don didn doesn isn wasn aren weren
"""
_PORTUGUESE = """
a ao aos as ate com como da das de dela delas dele deles depois do dos e ela elas ele eles em entre era eram essa
essas esse esses esta estas este estes eu foi fomos for foram ha isso isto ja la lhe lhes mais mas me mesmo meu
meus minha minhas muito na nas nao nem no nos nossa nossas nosso nossos num numa o os ou para pela pelas pelo pelos
por qual quando que quem se sem ser seu seus so sobre sua suas tambem te tem temos ter teu teus tu tua tuas um uma
umas uns voce voces vos onde porque quais sao esta estao foi fez fizemos decidimos disse dizer
"""
_SPANISH = """
a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el ella ellas ellos
en entre era eran es esa esas ese eso esos esta estaba estado estan estar este esto estos fue fueron ha habia han
hay la las le les lo los mas me mi mis mucho muy nada ni no nos nosotros o otra otro para pero poco por porque
que quien se sea ser si sin sobre son su sus tambien te tiene tu tus un una uno unos usted y ya yo que cual quien
cuales hicimos dijo
"""
_GERMAN = """
aber alle als also am an auch auf aus bei bin bis bist da damit dann das dass dem den der des die dies diese
dieser dieses doch dort du durch ein eine einem einen einer eines er es etwas fur hat hatte ich ihr ihre im in
ist ja jetzt kann kein keine mit man mein meine mich mir nach nicht noch nun nur ob oder sich sie sind so uber
um und uns unser unsere unter vom von vor war waren was wie wir wird wo zu zum zur wann warum wer welche welcher
haben wurde wurden
"""
_FRENCH = """
a au aux avec ce ces cette c dans de des du elle elles en est et etait eu il ils je la le les leur leurs lui ma
mais me meme mes moi mon ne nos notre nous on ou par pas pour qu que qui quoi quand quel quelle quels quelles sa
sans se ses son sont sur ta te tes toi ton tu un une vos votre vous y ete etre fait avons avez ont comment
pourquoi ou l d j n m s t qu jusqu lorsqu puisqu
"""

# Keyed by snowball's language names, which ``stemming`` uses.
BY_LANGUAGE: dict[str, frozenset[str]] = {
    "english": frozenset(_ENGLISH.split()),
    "portuguese": frozenset(_PORTUGUESE.split()),
    "spanish": frozenset(_SPANISH.split()),
    "german": frozenset(_GERMAN.split()),
    "french": frozenset(_FRENCH.split()),
}
WORDS: frozenset[str] = frozenset().union(*BY_LANGUAGE.values())
