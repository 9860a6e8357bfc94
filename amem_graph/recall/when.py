"""The period a query names ("in May", "in 2023", "spring 2023", "Christmas 2024"), as months;
whether a query asks when, and whether a memory tells when.

Recall re-scores its likely hits on their time (``time_weight``): a memory written in a month
the query names, or in the month after (people tell of an event at the next chat), gains. Only
absolute periods are read: a relative one ("last year") depends on when the question was asked,
which a stored conversation does not say.

A question that asks when ("When did Caroline go to the support group?") is answered by the
memory that placed the event in time ("I went yesterday"), while its neighbours in the ranking
talk about the same thing without a date; so for such a query a likely hit that tells a time
gains (``dated_weight``).
"""

from __future__ import annotations

import re
from datetime import datetime

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
#: a season's months (northern hemisphere; "winter 2023" is December 2023 to February 2024)
SEASONS = {
    "spring": (3, 4, 5),
    "summer": (6, 7, 8),
    "autumn": (9, 10, 11),
    "fall": (9, 10, 11),
    "winter": (12, 1, 2),
    "christmas": (12,),
}
_YEAR = r"(?:19|20)\d\d"
_PERIOD = re.compile(
    rf"\b(?P<name>{'|'.join(MONTHS + tuple(SEASONS))})\b(?:\s+(?:of\s+)?(?P<year>{_YEAR})\b)?"
    rf"|\b(?:in|during|of|since)\s+(?P<alone>{_YEAR})\b",
    re.IGNORECASE,
)
#: "may" is also a verb: as a month only after a word that takes a month, or before a year
_MAY_MONTH = re.compile(
    rf"\b(?:in|since|early|late|mid|of|during|last|this|next)\s+may\b|\bmay\s+{_YEAR}\b",
    re.IGNORECASE,
)

_SPAN = (
    r"(?:morning|afternoon|evening|night|week|weekend|month|year|summer|spring|fall|autumn|winter)"
)
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
#: a memory that tells when: a relative day ("yesterday", "last weekend", "two weeks ago",
#: "on Friday"), a month (other than the verb "may") or a year
_DATED = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|recently|{_WEEKDAY}s?|"
    rf"(?:last|next|this|past|coming)\s+(?:{_SPAN}|{_WEEKDAY}|{'|'.join(MONTHS)})|"
    rf"{'|'.join(m for m in MONTHS if m != 'may')}|{_YEAR})\b",
    re.IGNORECASE,
)
#: a query that asks when: "When did ...", "..., and when was he ...", "What year ...", "How
#: long ago ..."; not "when" as a conjunction ("What did she buy when she moved?")
_ASKS_WHEN = re.compile(
    r"\bwhen\s+(?:did|do|does|was|were|is|are|will|would|has|have|had|can|could|should)\b"
    r"|\b(?:what|which)\s+(?:date|day|year|month)\b|\bhow\s+long\s+(?:ago|after|before)\b"
    r"|\b(?:happened|came)\s+first\b",
    re.IGNORECASE,
)

#: (year or None for any year, month 1-12)
Month = tuple[int | None, int]


def named_months(query: str) -> frozenset[Month]:
    """The months a query names, each with its year when the query gives one ("summer ...
    in 2022": the summer of 2022; "in 2022" alone: every month of it)."""
    named: set[Month] = set()
    years: set[int] = set()
    for m in _PERIOD.finditer(query):
        if m.group("alone"):
            years.add(int(m.group("alone")))
            continue
        name = m.group("name").lower()
        if name == "may" and not _MAY_MONTH.search(query):
            continue
        year = int(m.group("year")) if m.group("year") else None
        for month in SEASONS.get(name, (MONTHS.index(name) + 1 if name in MONTHS else 0,)):
            # a winter's January and February belong to the next year
            shift = 1 if name == "winter" and month < 12 else 0
            named.add((None if year is None else year + shift, month))
    if not years:
        return frozenset(named)
    if not named:
        return frozenset((y, month) for y in years for month in range(1, 13))
    out = {(y, m) for y, m in named if y is not None}
    out.update((y, m) for y0, m in named if y0 is None for y in years)
    return frozenset(out)


def in_period(when: datetime, months: frozenset[Month]) -> bool:
    """Whether ``when`` falls in one of ``months`` or in the month after one."""
    for year, month in ((when.year, when.month), _previous(when.year, when.month)):
        if (year, month) in months or (None, month) in months:
            return True
    return False


def _previous(year: int, month: int) -> tuple[int, int]:
    return (year - 1, 12) if month == 1 else (year, month - 1)


def asks_when(query: str) -> bool:
    """Whether ``query`` asks when something happened."""
    return _ASKS_WHEN.search(query) is not None


def dated(text: str) -> bool:
    """Whether ``text`` tells when something happened (a relative day, a month, a year)."""
    return _DATED.search(text) is not None
