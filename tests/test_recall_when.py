"""The period a query names, and the re-scoring of likely hits written in it (``time_weight``);
a query that asks when, and the re-scoring of likely hits that tell a time (``dated_weight``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from amem_graph import MemoryGraph
from amem_graph.recall.when import asks_when, dated, in_period, named_months


@pytest.mark.parametrize(
    ("query", "months"),
    [
        ("What did Marta do in May?", {(None, 5)}),
        ("When is Marta landing in Toronto in December?", {(None, 12)}),
        ("How did her job change between January and June?", {(None, 1), (None, 6)}),
        ("What did Sunil mend in October 2023?", {(2023, 10)}),
        ("Where did she spend Christmas 2024?", {(2024, 12)}),
        ("Where was the field season in summer of 2022?", {(2022, 6), (2022, 7), (2022, 8)}),
        (
            "Where did her summer field season in 2022 take place?",
            {(2022, 6), (2022, 7), (2022, 8)},
        ),
        ("What did they do in winter 2023?", {(2023, 12), (2024, 1), (2024, 2)}),
        ("What did Walt buy in 2023?", {(2023, m) for m in range(1, 13)}),
        ("You may want to ask Jonah", set()),  # "may" the verb
        ("May I ask where Jonah lives?", set()),
        ("What did Jonah bake?", set()),
    ],
)
def test_named_months(query: str, months: set[tuple[int | None, int]]) -> None:
    assert named_months(query) == months


def test_in_period_takes_the_month_and_the_month_after() -> None:
    may = named_months("in May 2023")
    assert in_period(datetime(2023, 5, 30, tzinfo=UTC), may)
    assert in_period(datetime(2023, 6, 12, tzinfo=UTC), may)  # told at the next chat
    assert not in_period(datetime(2023, 4, 30, tzinfo=UTC), may)
    assert not in_period(datetime(2024, 5, 3, tzinfo=UTC), may)
    assert in_period(datetime(2024, 1, 5, tzinfo=UTC), named_months("in December"))


def test_a_likely_hit_written_in_the_named_month_is_lifted(mg: MemoryGraph) -> None:
    """Two turns tell of a trip; the one written in the month the query names is lifted."""
    mg.remember("We went hiking in the mountains, brilliant trip", id="march",
                timestamp=datetime(2023, 3, 12, 18, tzinfo=UTC))  # fmt: skip
    mg.remember("We went hiking in the mountains, lovely trip", id="july",
                timestamp=datetime(2023, 7, 9, 18, tzinfo=UTC))  # fmt: skip
    for i in range(5):
        mg.remember(f"Unrelated chatter number {i} about trains and weather")
    query = "a brilliant hiking trip in July 2023"
    plain = mg.recall(query, k=2, time_weight=0)
    assert ids(plain) == ["march", "july"]  # "brilliant" is the rarer word: it leads without time
    hits = mg.recall(query, k=2, explain=True)  # time_weight 0.2 by default
    assert ids(hits) == ["july", "march"]
    assert_lifted_by_only_the_first(hits, "time")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When did Caroline go to the support group?", True),
        ("About Ziggy: when did Samir bring his dog home?", True),
        ("What did Kwame do to his ankle, and when was he playing again?", True),
        ("Since when has the whippet lived with them?", True),
        ("What year did Devon get her first phone?", True),
        ("On which day did Rafael visit Eikando?", True),
        ("How long ago did Avery buy the Jeep?", True),
        ("How long after adopting Otis did Priya take him to the vet?", True),
        ("Which happened first for Marcus: the move or the trip?", True),
        ("What did Emery learn when his teacher was away?", False),  # "when" the conjunction
        ("Which option did Hana consider when shopping for a piano?", False),
        ("What time did Maya finish the marathon in?", False),  # a clock time, not a date
        ("How long did Ife wait for her result?", False),
        ("What breed is Maya's dog?", False),
    ],
)
def test_asks_when(query: str, expected: bool) -> None:
    assert asks_when(query) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday, it was powerful", True),
        ("We're flying out next weekend!", True),
        ("Got the puppy two weeks ago", True),
        ("On Friday we finally signed the lease", True),
        ("We moved here in March", True),
        ("Back in 2019 I ran my first marathon", True),
        ("last May we went to Lisbon", True),
        ("I may go to Lisbon", False),  # "may" the verb
        ("That was the last time I saw him", False),
        ("Ha, brilliant. Give Biscuit a scratch from me", False),
    ],
)
def test_dated(text: str, expected: bool) -> None:
    assert dated(text) is expected


def test_a_likely_hit_that_tells_when_is_lifted_for_a_query_that_asks_when(
    mg: MemoryGraph,
) -> None:
    """Two memories tell of the support group; asked when, the one that says when is lifted
    ("powerful" is the rarer word: the other leads without it), and asked what, nothing moves."""
    assert_lifts(
        mg,
        "dated",
        (
            "The support group was so powerful and moving, honestly",
            "I went to the support group yesterday",
        ),
        asked="When did Caroline go to the powerful support group?",
        unasked="What did Caroline think of the powerful support group?",
    )


def assert_lifts(
    mg: MemoryGraph, signal: str, texts: tuple[str, str], *, asked: str, unasked: str
) -> None:
    """``texts`` stored beside some chatter: recalled for ``asked`` without the re-scoring
    ``signal`` (its ``<signal>_weight`` 0) the first leads; with the defaults the second is
    lifted by it; the ranking for ``unasked`` is the same either way."""
    mg.remember(texts[0], id="led")
    mg.remember(texts[1], id="lifted")
    for i in range(5):
        mg.remember(f"Unrelated chatter number {i} about trains and weather")
    off = {f"{signal}_weight": 0}
    assert ids(mg.recall(asked, k=2, **off)) == ["led", "lifted"]
    hits = mg.recall(asked, k=2, explain=True)
    assert ids(hits) == ["lifted", "led"]
    assert_lifted_by_only_the_first(hits, signal)
    assert ids(mg.recall(unasked, k=2)) == ids(mg.recall(unasked, k=2, **off))


def assert_lifted_by_only_the_first(hits: list, signal: str) -> None:  # type: ignore[type-arg]
    """The first hit's explanation holds ``signal`` with a gain and adds up to its score; the
    second's has no such signal."""
    assert hits[0].explanation is not None
    assert hits[0].explanation.signals[signal].contribution > 0
    assert sum(s.contribution for s in hits[0].explanation.signals.values()) == pytest.approx(
        hits[0].score, abs=1e-12
    )
    assert signal not in (hits[1].explanation.signals if hits[1].explanation else {})


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.memory.id for h in hits]
