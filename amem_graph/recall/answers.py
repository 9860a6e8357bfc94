"""Whether a question is answered by a name, and whether a memory names something new.

"Where did Avery move?" is answered by the memory that names the place ("we moved to Provo"),
"Who fixed the Jeep?" by the one that names the person, while their neighbours in the ranking
talk about the same thing without the name. A name here is a capitalised word inside a sentence
(not its first word, which is capitalised anyway) that the question does not hold: the
question's own names (the person asked about, the thing asked after) answer nothing.
"""

from __future__ import annotations

import re

#: "Where did ...", "Who was ...", "..., who walks him?", "Which city ..."; not "who" opening a
#: relative clause ("the friend who lives there")
_ASKS_NAME = re.compile(
    r"\b(?:where|who|whom|whose)\s+(?:did|do|does|was|were|is|are|will|would|has|have|had)\b"
    r"|(?:^|[:,]\s*)who\b"
    r"|\bwhich\s+(?:city|country|town|place|state|restaurant|shop|store|school|band|team)\b",
    re.IGNORECASE,
)
#: a capitalised word that does not open a sentence
_NAME = re.compile(r"(?<![.!?:])(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+\b")
_WORD = re.compile(r"\w+")


def asked_name(query: str) -> frozenset[str] | None:
    """For a question answered by a name, its own words (lower case), which a memory's name
    must not be one of; None for any other query."""
    if _ASKS_NAME.search(query) is None:
        return None
    return frozenset(w.lower() for w in _WORD.findall(query))


def names_other(text: str, given: frozenset[str]) -> bool:
    """Whether ``text`` names something (a capitalised word inside a sentence) not in
    ``given``."""
    return any(w.lower() not in given for w in _NAME.findall(text))
