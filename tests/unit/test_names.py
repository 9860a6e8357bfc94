"""The words of a query that may be agent ids, and the query without the named ones."""

from __future__ import annotations

from amem_graph.core.text import analyze
from amem_graph.recall.names import KnownAuthors, candidates, named, without


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


def test_two_words_can_name_one_agent_as_ids_join_them() -> None:
    found = candidates("What did Jon Snow's wolf eat?")
    for joined in ("Jon_Snow", "jon_snow", "jon-snow", "Jon-Snow", "JON_SNOW"):
        assert joined in found
    assert without("What did Jon Snow's wolf eat?", {"jon_snow"}) == "What did wolf eat?"
    assert without("Did Jon see snow?", {"jon_snow"}) == "Did Jon see snow?"  # not neighbours


def test_an_agent_is_named_when_all_of_its_terms_are_in_the_query() -> None:
    terms = frozenset(analyze("what did Jon Snow and agent-7 say to Maya"))
    assert named("maya", terms) and named("Maya", terms)
    assert named("jon_snow", terms) and named("jon-snow", terms) and named("agent-7", terms)
    assert not named("jon_targaryen", terms) and not named("tomas", terms)
    assert named("jon_snow", frozenset(analyze("ask jon_snow")))  # written as the id itself
    assert not named("", terms) and not named("the", terms)  # no terms: names nobody


def test_known_authors_guess_only_under_a_filter_asked_about_and_follow_the_answers() -> None:
    known = KnownAuthors(limit=2, per_filter=3)
    assert known.guess("a", ["maya", "the"]) is None  # never asked: no guess
    known.learn("a", ["maya", "the"], {"maya"})
    assert known.guess("a", ["Maya", "maya", "the"]) == {"maya"}
    assert known.guess("b", ["maya"]) is None  # another filter knows nothing of it
    known.learn("a", ["maya"], set(), seen={"tomas", "maya"})  # the answer beats what was seen
    assert known.guess("a", ["maya", "tomas"]) == {"tomas"}
    known.learn("b", [], set())
    assert known.guess("b", ["maya"]) == set()  # asked about: an empty guess
    known.learn("c", ["x"], {"x"})  # a third filter: the least recently used one goes
    assert known.guess("a", ["tomas"]) is None and known.guess("c", ["x"]) == {"x"}
    known.learn("c", [], set(), seen={"p", "q", "r", "s"})  # at most per_filter, unless told
    known.learn("c", [], set(), seen={"t"})
    assert known.guess("c", ["t"]) == set()
    known.learn("c", ["t"], {"t"})
    assert known.guess("c", ["t", "x"]) == {"t", "x"}
