"""A question answered by a name, and the re-scoring of likely hits that name something new
(``name_weight``, ``recall/answers.py``)."""

from __future__ import annotations

import pytest
from test_recall_when import assert_lifts

from amem_graph import MemoryGraph
from amem_graph.recall.answers import asked_name, names_other


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Where did Avery move to?", True),
        ("Who fixed the Jeep for Avery?", True),
        ("About Ziggy: who walks him?", True),
        ("Whose car did Parker borrow?", False),  # "whose" + a noun: not asked this way
        ("Which city did Greer visit with his family?", True),
        ("What did the friend who lives in town say?", False),  # a relative clause
        ("What did Avery fix on the Jeep?", False),
        ("When did Avery buy the Jeep?", False),
    ],
)
def test_asked_name(query: str, expected: bool) -> None:
    assert (asked_name(query) is not None) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we moved to Provo last year", True),
        ("I think Jeep is great", False),  # the question's own name
        ("Avery said we should go", False),  # a name opening the sentence is not told apart
        ("loved it. Provo is great", False),
        ("we moved to the lake house", False),
    ],
)
def test_names_other(text: str, expected: bool) -> None:
    given = asked_name("Where did Avery take the Jeep?")
    assert given is not None
    assert names_other(text, given) is expected


def test_a_likely_hit_that_names_a_place_is_lifted_for_a_question_that_asks_where(
    mg: MemoryGraph,
) -> None:
    """Two memories tell of the move; asked where, the one that names the place is lifted (the
    other holds one more of the query's words and leads without it), and asked what, nothing
    moves."""
    assert_lifts(
        mg,
        "name",
        (
            "the exhausting move, honestly, we did not want to go",
            "the exhausting move to Provo is done",
        ),
        asked="Where did Avery go on the exhausting move?",
        unasked="What did Avery think of the exhausting move?",
    )
