"""Hybrid recall on every store: filters inside each path, explanations, fusion options."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from amem_graph import MemoryGraph, ValidationError
from amem_graph.recall.retriever import (
    PREFETCH,
    READ_AHEAD,
    reads_ahead,
    settled,
    text_confidence,
)
from amem_graph.stores.base import MemoryUpdate, WriteBatch

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.memory.id for h in hits]


@pytest.fixture
def lineage(mg: MemoryGraph) -> MemoryGraph:
    """A root fact the query finds, a child that shares no words with it, other noise."""
    mg.remember("The payments service retries webhooks five times", id="root", timestamp=T0)
    mg.remember(
        "Zebra crossings glow orange at dusk",
        id="child",
        derived_from=["root"],
        timestamp=T0 + timedelta(hours=1),
    )
    for i in range(8):
        mg.remember(f"Unrelated note number {i} about gardening tulips", id=f"noise{i}")
    return mg


def test_expansion_brings_in_derived_memory_with_its_path(lineage: MemoryGraph) -> None:
    hits = lineage.recall("payments webhooks retries", k=10, explain=True)
    assert ids(hits)[0] == "root"
    child = next(h for h in hits if h.memory.id == "child")
    assert child.explanation is not None
    assert "graph" in child.explanation.signals
    assert [(s.source, s.edge, s.target) for s in child.explanation.path] == [
        ("child", "DERIVED_FROM", "root")
    ]
    root = hits[0].explanation
    assert root is not None and root.signals["vector"].rank == 1
    assert root.signals["text"].rank == 1 and root.fused == pytest.approx(hits[0].score)


def test_graph_weight_zero_disables_expansion(lineage: MemoryGraph) -> None:
    hits = lineage.recall("payments webhooks retries", k=10, graph_weight=0.0, explain=True)
    assert all("graph" not in (h.explanation.signals if h.explanation else {}) for h in hits)


@pytest.mark.parametrize("status", ["retracted", "quarantined", "superseded"])
def test_inactive_memory_never_comes_back_on_any_path(lineage: MemoryGraph, status: str) -> None:
    lineage.store.apply(WriteBatch(memory_updates=[MemoryUpdate("child", {"status": status})]))
    hits = lineage.recall("payments webhooks retries", k=10)
    assert "child" not in ids(hits)
    lineage.store.apply(WriteBatch(memory_updates=[MemoryUpdate("root", {"status": status})]))
    assert "root" not in ids(lineage.recall("payments webhooks retries zebra crossings", k=10))
    assert "child" in ids(lineage.recall("zebra crossings", k=10, include=("active", status)))


def test_scope_is_enforced_through_expansion(mg: MemoryGraph) -> None:
    mg.remember("Tenant A deploy key lives in vault path kv/a", id="a1", scope="tenant-a")
    mg.remember("Orange zebra glows", id="b1", scope="tenant-b", derived_from=["a1"])
    mg.remember("Tenant B sibling note", id="b2", scope="tenant-b", episode="shared-ep")
    mg.remember("Tenant A deploy sibling", id="a2", scope="tenant-a", episode="shared-ep")
    hits = mg.recall("tenant deploy key vault", k=10, scope="tenant-a")
    assert set(ids(hits)) <= {"a1", "a2"}
    assert "a1" in ids(hits)


def test_agent_task_and_time_filters(mg: MemoryGraph) -> None:
    mg.remember("Cache warmup takes ten minutes", id="p1", agent="planner", task="t1")
    mg.remember("Cache warmup needs the big instance", id="c1", agent="coder", task="t2")
    mg.remember(
        "Cache warmup used to be manual",
        id="old",
        agent="coder",
        task="t2",
        timestamp=T0 - timedelta(days=400),
        valid_to=T0 - timedelta(days=200),
    )
    assert ids(mg.recall("cache warmup", agent="planner")) == ["p1"]
    assert set(ids(mg.recall("cache warmup", task="t2"))) == {"c1"}
    assert "old" in ids(mg.recall("cache warmup", as_of=T0 - timedelta(days=300)))
    assert "old" not in ids(mg.recall("cache warmup"))


def test_selective_filter_does_not_starve(mg: MemoryGraph) -> None:
    mg.remember_many(
        [{"content": f"backup rotation policy for cluster {i}", "scope": "big"} for i in range(120)]
    )
    mg.remember_many(
        [
            {"content": f"backup rotation detail {i}", "scope": "small", "id": f"s{i}"}
            for i in range(5)
        ]
    )
    hits = mg.recall("backup rotation policy", k=5, scope="small", candidates=5)
    assert sorted(ids(hits)) == [f"s{i}" for i in range(5)]


def test_weighted_mode_and_per_call_weights(lineage: MemoryGraph) -> None:
    rrf = lineage.recall("payments webhooks retries", k=3)
    weighted = lineage.recall("payments webhooks retries", k=3, mode="weighted")
    assert ids(rrf)[0] == ids(weighted)[0] == "root"
    text_only = lineage.recall(
        "tulips gardening", k=3, vector_weight=0, graph_weight=0, explain=True
    )
    assert all(set(h.explanation.signals) >= {"text"} for h in text_only if h.explanation)
    assert all("vector" not in h.explanation.signals for h in text_only if h.explanation)
    with pytest.raises(ValidationError, match="bad recall option"):
        lineage.recall("x", rrf_k=0)


def test_recency_prefers_newer_of_equal_memories(mg: MemoryGraph) -> None:
    mg.remember("Standup moved to the blue room", id="older", timestamp=T0 - timedelta(days=90))
    mg.remember("Standup moved to the blue room!", id="newer", timestamp=T0)
    hits = mg.recall("standup room", k=2, recency_weight=5.0, as_of=T0 + timedelta(days=1))
    assert ids(hits) == ["newer", "older"]
    hits = mg.recall(
        "standup room", k=2, recency_weight=0.0, as_of=T0 + timedelta(days=1), explain=True
    )
    assert hits[0].explanation is not None
    assert hits[0].explanation.signals["recency"].value > 0


def test_confidence_signal_follows_outcomes(mg: MemoryGraph) -> None:
    mg.remember("Restart the worker to clear the queue", id="good")
    mg.remember("Restart the worker to clear the queue.", id="bad")
    for success, memory in ((True, "good"), (False, "bad")):
        with mg.episode(agent="ops", id=f"ep-{memory}") as ep:
            hits = ep.recall("restart worker queue", k=2)
            assert memory in ids(hits)
            # credit only the memory this episode relied on
            mg.store.apply(
                WriteBatch(
                    memory_updates=[
                        MemoryUpdate(memory, increments={"successes" if success else "failures": 3})
                    ]
                )
            )
    hits = mg.recall("restart worker queue", k=2, confidence_weight=5.0)
    assert ids(hits) == ["good", "bad"]
    assert hits[0].memory.confidence > 0.5 > hits[1].memory.confidence


def _spy_whole_reads(
    mg: MemoryGraph, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """The ids recall reads whole: with the search and first hop (``search_expand``), and
    after them (``get_memories``; the embedded store's own use of it inside the hop not
    counted); and those it reads the gists of (``gists``)."""
    fetched: list[list[str]] = []
    read: list[list[str]] = []
    glimpsed: list[list[str]] = []
    store = mg.store
    search_expand, get_memories, gists = store.search_expand, store.get_memories, store.gists
    inside = [False]

    def start_spy(*args):  # type: ignore[no-untyped-def]
        inside[0] = True
        try:
            start = search_expand(*args)
        finally:
            inside[0] = False
        fetched.append(list(start.hood.memories))
        return start

    def get_spy(ids, *, embeddings=True):  # type: ignore[no-untyped-def]
        if not inside[0]:
            read.append(list(ids))
        return get_memories(ids, embeddings=embeddings)

    def gists_spy(ids):  # type: ignore[no-untyped-def]
        glimpsed.append(list(ids))
        return gists(ids)

    monkeypatch.setattr(store, "search_expand", start_spy)
    monkeypatch.setattr(store, "get_memories", get_spy)
    monkeypatch.setattr(store, "gists", gists_spy)
    return fetched, read, glimpsed


def test_recall_reads_whole_only_the_likely_hits_during_expansion(
    lineage: MemoryGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidates are ranked on their few ranking fields. A server store reads the top
    READ_AHEAD x k whole in the expansion's round trip, and nothing after it when they hold
    the hits; the embedded store (no round trip to save) reads the gists of the PREFETCH x
    k it re-scores, after ranking, and only the k shown whole."""
    for i in range(10):  # more memories than the READ_AHEAD x k read whole
        lineage.remember(f"Another note number {i} about planting roses", id=f"roses{i}")
    fetched, read, glimpsed = _spy_whole_reads(lineage, monkeypatch)
    hits = lineage.recall("payments webhooks retries gardening tulips", k=3, explain=True)
    assert len(hits) == 3
    assert len(fetched) == 1
    if reads_ahead(lineage.store):
        assert len(fetched[0]) == READ_AHEAD * 3
        assert set(ids(hits)) <= set(fetched[0])
        assert read == [] and glimpsed == []
    else:
        assert fetched == [[]]
        assert len(glimpsed) == 1 and len(glimpsed[0]) == PREFETCH * 3
        assert set(ids(hits)) <= set(glimpsed[0])
        assert read == [ids(hits)]
    # the priors came from the ranking fields: every hit was ranked on all three of them
    assert all(
        set(h.explanation.signals) >= {"recency", "importance", "confidence"}
        for h in hits
        if h.explanation is not None
    )


def test_a_hit_the_expansion_did_not_read_is_read_after_it(
    lineage: MemoryGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched, read, glimpsed = _spy_whole_reads(lineage, monkeypatch)
    # a heavy graph weight lifts the child, reached from the root, above every direct match
    query = "payments webhooks retries note"  # the root first, then the noise notes
    hits = lineage.recall(query, k=1, graph_weight=100.0)
    assert ids(hits) == ["child"]
    if reads_ahead(lineage.store):
        assert "child" not in fetched[0]  # the premise: it was not in the top READ_AHEAD x k
        assert read == [["child"]]
    else:  # glimpsed once ranked, with the other likely hits, then read whole when shown
        assert fetched == [[]] and "child" in glimpsed[0] and read == [["child"]]
    assert hits[0].memory.content.startswith("Zebra crossings")


def test_a_memory_by_the_agent_the_query_names_is_lifted(mg: MemoryGraph) -> None:
    """Questions about a person are mostly answered by what that person said."""
    mg.remember("We finally painted the kitchen a deep green colour", id="by-tomas", agent="tomas")
    mg.remember("We finally painted the kitchen a deep green shade", id="by-maya", agent="maya")
    for i in range(6):
        mg.remember(f"Unrelated chatter number {i} about trains and weather", agent="tomas")
    hits = mg.recall("what colour did maya paint the kitchen", k=3, explain=True)
    assert ids(hits)[0] == "by-maya"
    assert hits[0].explanation is not None and hits[0].explanation.signals["speaker"].value == 1
    plain = mg.recall("what colour did maya paint the kitchen", k=3, speaker_weight=0, explain=True)
    assert ids(plain)[0] == "by-tomas"  # "colour" matches BM25: without the agent it leads
    assert all("speaker" not in (h.explanation.signals if h.explanation else {}) for h in plain)


def test_a_named_agent_is_searched_for_without_its_name(mg: MemoryGraph) -> None:
    """The name picks the author (re-scoring); the search runs on what is asked about."""
    mg.remember("We finally painted the kitchen a deep green", id="by-maya", agent="maya")
    mg.remember("Maya! Maya, so good to see you Maya", id="calls-maya", agent="tomas")
    for i in range(6):
        mg.remember(f"Unrelated chatter number {i} about trains and weather", agent="tomas")
    query = "What did Maya's family paint?"
    flt = mg.memory_filter("default")
    assert mg.retriever.search_text(query, flt) == "What did family paint?"
    hits = mg.recall(query, k=3, explain=True)
    assert ids(hits)[0] == "by-maya"
    assert all(h.explanation and h.explanation.searched == "What did family paint?" for h in hits)
    assert "calls-maya" not in ids(hits)  # it matched the name only
    named = mg.recall(query, k=3, unnamed_search=False, explain=True)
    assert "calls-maya" in ids(named)
    assert all(h.explanation and h.explanation.searched is None for h in named)
    cfg = mg.retriever.config
    for off in ({"unnamed_search": False}, {"speaker_weight": 0.0}):
        assert mg.retriever.search_text(query, flt, cfg.model_copy(update=off)) == query


def test_a_server_store_checks_the_guessed_names_in_the_search_itself(
    mg: MemoryGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a server store ``authors`` is a round trip of its own only for the first recall
    under a filter: after it, recall guesses the names from the authors it saw there and the
    search checks the guess; a wrong guess (an author since retracted, an agent new to the
    filter) is searched again as it should have been. The embedded store asks ``authors``
    first every time. Either way the hits are those of the right search."""
    mg.remember("We finally painted the kitchen a deep green", id="by-maya", agent="maya")
    mg.remember("Maya! Maya, so good to see you Maya", id="calls-maya", agent="tomas")
    for i in range(6):
        mg.remember(f"Unrelated chatter number {i} about trains and weather", agent="tomas")
    store = mg.store
    searched: list[str] = []
    asked: list[list[str]] = []
    search_expand, authors = store.search_expand, store.authors

    def expand_spy(vector, text, *rest):  # type: ignore[no-untyped-def]
        searched.append(text)
        return search_expand(vector, text, *rest)

    def authors_spy(words, flt):  # type: ignore[no-untyped-def]
        asked.append(list(words))
        return authors(words, flt)

    monkeypatch.setattr(store, "search_expand", expand_spy)
    monkeypatch.setattr(store, "authors", authors_spy)
    server = reads_ahead(store)
    query, cut = "What did Maya's family paint?", "What did family paint?"
    first = mg.recall(query, k=3, explain=True)
    again = mg.recall(query, k=3, explain=True)
    assert ids(first) == ids(again) and ids(first)[0] == "by-maya"
    assert all(h.explanation and h.explanation.searched == cut for h in first + again)
    assert searched == [cut, cut]
    assert len(asked) == (1 if server else 2)  # the guess was checked in the search itself
    mg.retract("by-maya", reason="test: maya's only memory")
    searched.clear()
    after = mg.recall(query, k=3, explain=True)
    assert all(h.explanation and h.explanation.searched is None for h in after)
    assert "calls-maya" in ids(after)  # the name is a plain word again
    assert searched == ([cut, query] if server else [query])  # a guess of maya, corrected
    mg.remember("The trains to the coast are late again", id="by-zoe", agent="zoe")
    searched.clear()
    zoe = mg.recall("What did Zoe say about trains?", k=3, explain=True)
    assert ids(zoe)[0] == "by-zoe"  # named: the speaker signal lifts it
    assert all(
        h.explanation and h.explanation.searched == "What did say about trains?" for h in zoe
    )
    assert searched[-1] == "What did say about trains?" and len(searched) == (2 if server else 1)
    assert len(asked) == (1 if server else 4)


def test_an_agent_id_of_two_words_is_named_by_both(mg: MemoryGraph) -> None:
    mg.remember("The wall needs more ravens before the winter", id="by-jon", agent="jon_snow")
    mg.remember("Jon Snow! Jon, come back to the wall", id="calls-jon", agent="sam")
    query = "What does Jon Snow say the wall needs?"
    assert mg.retriever.search_text(query, mg.memory_filter("default")) == (
        "What does say the wall needs?"
    )
    hits = mg.recall(query, k=2, explain=True)
    assert ids(hits)[0] == "by-jon"
    assert hits[0].explanation is not None and "speaker" in hits[0].explanation.signals


def test_only_an_agent_of_the_recalled_scope_is_taken_out(mg: MemoryGraph) -> None:
    """Another tenant's agent id is a plain word here (and its existence does not leak)."""
    mg.remember("Roll back with the release script", agent="deploy", scope="other")
    mg.remember("The service restarts on its own", agent="ops", scope="mine")
    query = "how do we deploy the service"
    assert mg.retriever.search_text(query, mg.memory_filter("mine")) == query
    assert mg.retriever.search_text(query, mg.memory_filter("other")) == "how do we the service"
    # a query that would have nothing left is searched whole
    assert mg.retriever.search_text("deploy?", mg.memory_filter("other")) == "deploy?"


def test_a_hit_shown_was_always_re_scored(mg: MemoryGraph) -> None:
    """A penalty on every likely hit must not hand the top to a candidate never re-scored."""
    for i in range(4):
        mg.remember(f"Ferry times {i}!", id=f"terse{i}")
    for i in range(12):
        mg.remember(f"Notes on ferry times and harbour boats, a longer entry {i}", id=f"long{i}")
    plain = mg.recall("ferry times", k=4, terse_weight=0)
    assert sorted(ids(plain)) == [f"terse{i}" for i in range(4)]  # premise: they lead unpenalised
    (hit,) = mg.recall("ferry times", k=1)  # the 3 likely hits penalised, then the 4th as well
    assert hit.memory.id.startswith("long")
    for h in mg.recall("ferry times", k=6, explain=True):
        assert h.explanation is not None
        assert ("terse" in h.explanation.signals) == h.memory.id.startswith("terse")


def test_a_few_word_memory_is_lowered(mg: MemoryGraph) -> None:
    """A reaction seldom carries a fact, though BM25 favours short texts."""
    mg.remember("Kettle broke!", id="short")
    mg.remember("The kettle in the office broke again on Monday, someone dropped it", id="long")
    hits = mg.recall("kettle broke", k=2, explain=True)
    assert ids(hits) == ["long", "short"]
    assert hits[1].explanation is not None and hits[1].explanation.signals["terse"].value == 2
    assert ids(mg.recall("kettle broke", k=2, terse_weight=0)) == ["short", "long"]


@pytest.mark.parametrize("mode", ["rrf", "weighted"])
def test_the_signals_contributions_sum_to_the_fused_score(mg: MemoryGraph, mode: str) -> None:
    """An explanation accounts for the whole score: BM25's boost and the re-scoring too."""
    mg.remember("Zanzibar ferry timetable for the harbour", id="rare", agent="maya")
    mg.remember("Ha, brilliant.", id="terse", agent="tomas")
    mg.remember("The ferry timetable changed in the harbour", id="child", derived_from=["rare"])
    for i in range(6):  # ids given: the note layer merges near-duplicates written without
        mg.remember(f"Harbour note number {i} about boats and the ferry", id=f"h{i}", agent="tomas")
    hits = mg.recall("zanzibar ferry timetable maya brilliant", k=9, mode=mode, explain=True)
    assert len(hits) == 9
    seen: set[str] = set()
    for h in hits:
        assert h.explanation is not None
        parts = {name: s.contribution for name, s in h.explanation.signals.items()}
        assert sum(parts.values()) == pytest.approx(h.score, abs=1e-12)
        seen.update(name for name, part in parts.items() if part != 0)
        if "terse" in parts:
            assert parts["terse"] < 0
    assert {"vector", "text", "graph", "speaker", "terse"} <= seen
    rare = next(h for h in hits if h.memory.id == "rare").explanation
    assert rare is not None and rare.signals["text"].rank == 1
    if mode == "rrf":  # "zanzibar" matched one memory alone: BM25's weight rose above 0.2
        assert rare.signals["text"].contribution > 0.2 / (mg.config.retrieval.rrf_k + 1)


def test_text_confidence_tells_a_lone_peak_from_a_flat_top() -> None:
    assert text_confidence([]) == 0.0
    assert text_confidence([3.0]) == 1.0  # one memory matched at all
    assert text_confidence([9.0, 2.0, 2.0, 1.5, 1.0, 1.0]) > 0.99
    assert text_confidence([2.1, 2.0, 2.0, 1.9, 1.9, 1.8]) < 0.1
    low, high = text_confidence([3.6, 2.0, 2.0]), text_confidence([4.4, 2.0, 2.0])
    assert low < 0.5 < high  # the step sits at twice the mean of the next few


def test_a_tie_group_split_by_the_cut_is_dropped_from_a_full_list() -> None:
    """Which members of a tie group made a store's top n is float noise: c or d here."""
    one = settled([("a", 0.9), ("b", 0.5), ("c", 0.3000001), ("d", 0.3)], 4)
    other = settled([("a", 0.9), ("b", 0.5), ("d", 0.3), ("e", 0.3)], 4)
    assert one == other == [("a", (0.9, 1)), ("b", (0.5, 2))]
    # a list shorter than asked for was not cut; one that is all one tie group is kept
    assert [m for m, _ in settled([("a", 0.9), ("b", 0.3), ("c", 0.3)], 4)] == ["a", "b", "c"]
    assert [r for _, (_, r) in settled([("a", 0.3), ("b", 0.3)], 2)] == [1, 1]
    assert settled([("a", 0.9)], 0) == [("a", (0.9, 1))]


def test_validity_is_exact_at_every_time_of_a_sweep(mg: MemoryGraph) -> None:
    """Recall just before, at and just after each window's edges, forward then back, with the
    windowed memories the whole store (searched over every row) and then a small scope of a
    bigger one (searched on its own rows). The embedded store keeps what a time admits until
    the next edge, so an answer kept too long would show here."""
    windows = {
        f"w{i}": (T0 + timedelta(days=10 * i), T0 + timedelta(days=10 * i + 15)) for i in range(4)
    }
    for mid, (start, end) in windows.items():
        mg.remember(
            "The office door code changed", id=mid, scope="a", timestamp=start, valid_to=end
        )
    second = timedelta(seconds=1)
    edges = {t for window in windows.values() for t in window}
    times = sorted({t + d for t in edges for d in (-second, timedelta(0), second)})

    def sweep() -> None:
        for t in [*times, *reversed(times)]:
            want = {mid for mid, (start, end) in windows.items() if start <= t < end}
            assert set(ids(mg.recall("office door code", k=10, scope="a", as_of=t))) == want, t

    sweep()
    for i in range(40):  # now scope "a" is a tenth of the store
        mg.remember(f"Unrelated note {i} on the office door", scope="b", timestamp=T0)
    sweep()
