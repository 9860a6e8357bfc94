"""The words of a query that may be agent ids, and the query without the named ones."""

from __future__ import annotations

from amem_graph.recall.names import candidates, without


def test_candidates_are_the_words_as_written_and_in_common_casings() -> None:
    found = candidates("What did Avery's agent-7 say, planner?")
    for word in ("Avery", "avery", "AVERY", "agent-7", "Agent-7", "planner", "Planner"):
        assert word in found
    assert "planner?" not in found and "Avery's" not in found
    assert len(found) == len(set(found))
    assert candidates("?!") == []


def test_without_drops_the_names_with_possessive_and_punctuation_only() -> None:
    assert without("What did Avery's dog eat, avery?", {"Avery"}) == "What did dog eat,"
    assert without("Was (agent-7) right?", {"agent-7"}) == "Was right?"
    assert without("what about Averyville", {"Avery"}) == "what about Averyville"
    assert without("Avery", {"Avery"}) == "Avery"  # nothing left to search: kept whole
    assert without("Avery and Blake?", {"Avery", "Blake"}) == "Avery and Blake?"
    assert without("what did Avery say", set()) == "what did Avery say"
