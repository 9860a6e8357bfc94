"""Note construction and links on remember / remember_many, offline and with a scripted model."""

from __future__ import annotations

from typing import Any

from amem_graph import MemoryGraph
from amem_graph.stores.base import MemoryFilter
from notes.fakes import MakeGraph, note, scripted, with_usage

ROTATION = "The staging database password rotates every Monday morning"
ROTATE_HOW = "Rotate the staging database password with the vault CLI on Monday"
KITTEN = "Maya adopted a kitten named Pixel last spring"


def note_of(mg: MemoryGraph, mid: str) -> tuple[list[str], list[str], str]:
    m = mg.get(mid)
    return m.note_keywords, m.note_tags, m.note_context


def linked(mg: MemoryGraph) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e.src, e.dst): e.props for e in mg.store.iter_edges() if e.type == "LINKED"}


def test_offline_note_keywords_tags_and_context(make_graph: MakeGraph) -> None:
    mg = make_graph()
    m = mg.remember(
        "Deploys to eu-west need the VPN profile 'ops-eu'; ask Maya Lopez for access",
        agent="researcher",
    )
    assert {"eu-west", "ops-eu", "VPN", "Maya Lopez"} <= set(m.note_keywords)
    assert "need" not in m.note_keywords and "the" not in m.note_keywords
    assert "security" in m.note_tags and "deploy" in m.note_tags
    assert m.note_context.startswith("Semantic note by researcher about ")
    assert mg.get(m.id).note_keywords == m.note_keywords  # stored as built


def test_idf_comes_from_the_store_vocabulary(make_graph: MakeGraph) -> None:
    mg = make_graph(max_keywords=1)
    for i in range(5):
        mg.remember(f"Weekly report number {i} about the cluster", scope="s")
    rare = mg.remember("Weekly report about the zeppelin", scope="s")
    assert rare.note_keywords == ["zeppelin"]  # "weekly" and "report" are common in scope s
    fresh = mg.remember("Weekly report about the zeppelin", scope="t", kind="episodic")
    assert fresh.note_keywords != [] and fresh.scope == "t"


def test_tags_come_from_the_configured_vocabulary(make_graph: MakeGraph) -> None:
    mg = make_graph(tag_vocabulary={"pets": ("kitten", "dog")})
    m = mg.remember(KITTEN)
    assert m.note_tags == ["pets"]


def test_caller_keywords_tags_context_are_kept(make_graph: MakeGraph) -> None:
    mg = make_graph()
    m = mg.remember(
        ROTATION,
        keywords=["password"],
        tags=["security"],
        context="From the ops handbook",
    )
    assert (m.keywords, m.tags, m.context) == (["password"], ["security"], "From the ops handbook")
    assert "password" not in m.note_keywords and "security" not in m.note_tags


def test_offline_notes_links_and_versions_are_deterministic(make_graph: MakeGraph) -> None:
    mg = make_graph()
    texts = [ROTATION, ROTATE_HOW, KITTEN, "Pixel the kitten chases laser pointers, says Maya"]
    for scope in ("a", "b"):
        mg.remember_many(
            [{"content": t, "id": f"{scope}-{i}", "scope": scope} for i, t in enumerate(texts)]
        )

    def view(scope: str) -> Any:
        notes = {
            m.id[2:]: (m.note_keywords, m.note_tags, m.note_context, m.version)
            for m in mg.store.find_memories(MemoryFilter(scopes=(scope,)))
        }
        links = {(s[2:], d[2:]): p["weight"] for (s, d), p in linked(mg).items() if s[0] == scope}
        return notes, links

    assert view("a") == view("b")
    assert view("a")[1]  # something linked
    assert all(s[0] == d[0] for s, d in linked(mg))  # never across scopes


def test_offline_links_need_similarity_and_a_shared_keyword(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember(ROTATION, id="a")
    mg.remember(ROTATE_HOW, id="b")
    mg.remember(KITTEN, id="c")
    edges = linked(mg)
    assert set(edges) == {("b", "a")}
    props = edges[("b", "a")]
    assert props["by"] == "offline" and 0.45 * 0.5 <= props["weight"] <= 0.5  # offline: x 0.5
    assert "shares" in props["reason"] and "staging" in props["reason"]


def test_a_batch_links_like_the_same_writes_one_by_one(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember_many([{"content": ROTATION, "id": "a"}, {"content": ROTATE_HOW, "id": "b"}])
    assert set(linked(mg)) == {("b", "a")}


def test_recall_expands_along_note_links(make_graph: MakeGraph) -> None:
    mg = make_graph()
    mg.remember(ROTATION, id="a")
    mg.remember(ROTATE_HOW, id="b")
    hits = {h.memory.id: h for h in mg.recall("vault CLI", k=5, explain=True)}
    explanation = hits["a"].explanation  # shares no word with the query: found by the link
    assert explanation is not None
    assert [(p.source, p.edge, p.target) for p in explanation.path] == [("b", "LINKED", "a")]


def test_notes_off_writes_plain_memories(make_graph: MakeGraph) -> None:
    mg = make_graph(enabled=False)
    mg.remember(ROTATION, id="a")
    m = mg.remember(ROTATE_HOW, id="b")
    assert (m.note_keywords, m.note_tags, m.note_context) == ([], [], "")
    assert linked(mg) == {}


def test_index_notes_feeds_bm25(make_graph: MakeGraph) -> None:
    mg = make_graph(index_notes=True, tag_vocabulary={"pets": ("kitten",)})
    m = mg.remember(KITTEN, id="k")
    assert m.note_indexed
    hits = [h.memory.id for h in mg.recall("pets", k=3, vector_weight=0, graph_weight=0)]
    assert hits == ["k"]  # only the note says "pets"
    plain = make_graph(tag_vocabulary={"pets": ("kitten",)})
    plain.remember(KITTEN, id="k2", scope="other")
    hits = [
        h.memory.id
        for h in plain.recall("pets", k=3, scope="other", vector_weight=0, graph_weight=0)
    ]
    assert hits == []


# -- with a scripted model ----------------------------------------------------------------------


def test_model_notes_are_used_and_tokens_counted(make_graph: MakeGraph) -> None:
    model = scripted(
        with_usage(note(["vpn", "eu-west"], ["network"], "How to reach eu-west."), 50, 9)
    )
    mg = make_graph(llm=model)
    m = mg.remember("Deploys to eu-west need the VPN profile ops-eu", tags=["deploy"])
    assert (m.note_keywords, m.note_tags, m.note_context) == (
        ["vpn", "eu-west"],
        ["network"],
        "How to reach eu-west.",
    )
    usage = mg.stats()["llm"]["enrich"]
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (1, 50, 9)


def test_model_notes_never_repeat_the_callers_terms(make_graph: MakeGraph) -> None:
    mg = make_graph(llm=scripted(note(["VPN", "ops-eu"], ["Deploy", "network"])))
    m = mg.remember("Deploys need the VPN profile ops-eu", keywords=["vpn"], tags=["deploy"])
    assert m.note_keywords == ["ops-eu"] and m.note_tags == ["network"]


def test_model_failures_fall_back_to_offline_notes(make_graph: MakeGraph) -> None:
    model = scripted("garbage", RuntimeError("provider down"), "", note(["kitten"]))
    mg = make_graph(llm=model, llm_retries=2)
    first = mg.remember(KITTEN, id="k1", kind="episodic")
    second = mg.remember(KITTEN, id="k2", kind="episodic", scope="elsewhere")
    assert "Pixel" in first.note_keywords  # offline: the model never gave a valid note
    assert second.note_keywords == ["kitten"]
    usage = mg.stats()["llm"]["enrich"]
    assert (usage["calls"], usage["fallbacks"], usage["errors"], usage["malformed"]) == (4, 1, 1, 2)


def test_model_links_are_checked_against_real_candidate_ids(make_graph: MakeGraph) -> None:
    model = scripted(
        note(["password"]),
        note(["password", "vault"]),
        {
            "links": [
                {"id": "a", "reason": "same procedure", "weight": 0.9},
                {"id": "1", "reason": "rank, not id", "weight": 0.8},
                {"id": "ghost", "reason": "hallucinated", "weight": 0.7},
            ],
            "evolve": [{"id": "2", "context": "rewritten wrong note"}],
        },
    )
    mg = make_graph(llm=model, adjudicate=False)
    mg.remember(ROTATION, id="a")
    mg.remember(ROTATE_HOW, id="b")
    edges = linked(mg)
    assert set(edges) == {("b", "a")}
    assert (edges[("b", "a")]["by"], edges[("b", "a")]["weight"]) == ("llm", 0.9)
    assert mg.stats()["llm"]["link"]["dropped_ids"] == 3
    assert mg.get("a").version == 1  # no rewrite of a note nobody named correctly


def test_usage_is_stored_and_summed_across_graphs(make_graph: MakeGraph) -> None:
    first = make_graph(llm=scripted(note(["a"])))
    first.remember(KITTEN, kind="episodic")
    second = make_graph(llm=scripted(note(["b"])))
    second.remember(ROTATION, kind="episodic")
    reader = make_graph()
    assert reader.stats()["llm"]["enrich"]["calls"] == 2
    assert reader.store.counts()["LlmUsage"] == 2
