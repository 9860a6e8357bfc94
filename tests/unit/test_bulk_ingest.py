"""The embedded store's batched vector search and ``ingest(bulk=True)``, against the paths they
stand in for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.core.errors import NotFoundError, ValidationError
from amem_graph.memory.vectors import CheckedEmbedder
from amem_graph.stores.base import MemoryFilter, vector_search_many
from amem_graph.stores.local.store import LocalStore


def _store(path: Path, n: int, scopes: int) -> tuple[MemoryGraph, np.ndarray]:
    mg = MemoryGraph.open(path, embedder=HashingEmbedder(dims=64))
    rng = np.random.default_rng(3)
    items = [
        {"content": f"memory {i} about {rng.integers(0, 40)}", "id": f"m{i}",
         "scope": f"s{i % scopes}"}
        for i in range(n)
    ]  # fmt: skip
    mg.ingest(items, bulk=True)
    return mg, rng.standard_normal((30, 64)).astype(np.float32)


@pytest.mark.parametrize("scopes", [1, 8])
def test_batched_search_answers_exactly_as_one_search_each(tmp_path: Path, scopes: int) -> None:
    mg, queries = _store(tmp_path / "s.db", 600, scopes)
    with mg:
        flts = [MemoryFilter(scopes=(f"s{j % scopes}",), statuses=("active",)) for j in range(30)]
        flts[0] = MemoryFilter(scopes=tuple(f"s{s}" for s in range(scopes)))  # the whole store
        searches = [(q.tolist(), f) for q, f in zip(queries, flts, strict=True)]
        assert isinstance(mg.store, LocalStore)
        many = vector_search_many(mg.store, searches, 7)
        one = [mg.store.vector_search(v, 7, f) for v, f in searches]
        assert many == one  # same ids, same order, same float scores bit for bit
        assert all(len(hits) == 7 for hits in many)


def test_bulk_ingest_writes_notes_but_no_links_or_merges(tmp_path: Path) -> None:
    with MemoryGraph.open(tmp_path / "b.db", embedder=HashingEmbedder(dims=64)) as mg:
        text = "the deploy runner pool is eu-west-2 for the payments service"
        normal = mg.ingest([{"content": text, "scope": "a"}, {"content": text, "scope": "a"}])
        assert len(normal.written) == 1 and normal.merged == {1: normal.memories[0].id}
        bulk = mg.ingest([{"content": text, "scope": "b"}, {"content": text, "scope": "b"}],
                         bulk=True)  # fmt: skip
        assert len(bulk.written) == 2 and not bulk.merged
        first = mg.get(bulk.written[0])
        assert first.note_keywords  # the note is still built
        linked = [e for e in mg.store.edges(bulk.written, types=("LINKED",))]
        assert linked == []


def test_bulk_ingest_is_all_or_nothing_and_checks_its_flag(tmp_path: Path) -> None:
    with MemoryGraph.open(tmp_path / "c.db", embedder=HashingEmbedder(dims=64)) as mg:
        with pytest.raises(NotFoundError, match="derived_from"):
            bad = {"content": "bad", "id": "b", "derived_from": ["nope"]}
            mg.ingest([{"content": "ok", "id": "a"}, bad], bulk=True)
        assert mg.get_many(["a", "b"]) == {}
        with pytest.raises(ValidationError, match="bulk must be"):
            mg.ingest([{"content": "x"}], bulk="yes")  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="cannot supersede"):
            mg.ingest([{"content": "x", "supersedes": "a"}], bulk=True)


class _Rows:
    name, dims = "rows", 3

    def __init__(self, rows: object) -> None:
        self.rows = rows

    def embed_documents(self, texts: object) -> object:
        return self.rows

    def embed_query(self, text: str) -> object:
        return [0.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[1.0, True, 0.5]], "value 1 is True"),  # numpy would make the bool a float
        ([[1.0, float("nan"), 0.5]], "not a finite number"),
        ([[1.0, 2.0]], "2 dimensions"),
        (np.array([[1.0, np.inf, 0.0]]), "not a finite number"),
    ],
)
def test_checked_embedder_fast_path_refuses_what_the_slow_one_does(
    rows: object, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        CheckedEmbedder(_Rows(rows)).embed_documents(["t"])  # type: ignore[arg-type]


def test_checked_embedder_returns_plain_floats() -> None:
    out = CheckedEmbedder(_Rows(np.array([[1, 2, 3]], dtype=np.float32))).embed_documents(["t"])  # type: ignore[arg-type]
    assert out == [[1.0, 2.0, 3.0]] and type(out[0][0]) is float
    mixed = CheckedEmbedder(_Rows([[1, 2.0, 3.0]])).embed_documents(["t"])  # type: ignore[arg-type]
    assert mixed == [[1.0, 2.0, 3.0]] and all(type(x) is float for x in mixed[0])


def test_whole_mirror_build_equals_row_by_row_upserts(tmp_path: Path) -> None:
    """The column-wise build holds what patching each row and edge in turn held."""
    from amem_graph.stores.local.mirror import _GROW_FILL, _Mirror
    from amem_graph.stores.local.sqlite import _MIRROR_COLUMNS

    with MemoryGraph.open(tmp_path / "m.db", embedder=HashingEmbedder(dims=32)) as mg:
        items = [
            {"content": f"note {i} on deploy {i % 7}", "id": f"m{i}", "scope": f"s{i % 3}",
             "agent": f"a{i % 4}", "episode": f"e{i // 5}",
             "derived_from": [f"m{i - 1}"] if i else []}
            for i in range(120)
        ]  # fmt: skip
        mg.ingest(items)
        mg.retract("m100", reason="test", cascade=False)
        store = mg.store
        assert isinstance(store, LocalStore)
        built = store._build_mirror()
        db = store._db
        slow = _Mirror(built.dims)
        for row in db.execute(f"SELECT {_MIRROR_COLUMNS} FROM memories"):
            slow.upsert(row)
        for r in db.execute("SELECT type, src, dst FROM edges"):
            slow.add_edge(r[0], r[1], r[2])
        assert built.ids == slow.ids and built.pos == slow.pos and built.codes == slow.codes
        n = len(built.ids)
        assert len(built.alive) == max(1024, -(-n // 16) * 16)  # reserved, not doubled
        for column in _GROW_FILL:
            assert np.array_equal(getattr(built, column)[:n], getattr(slow, column)[:n]), column
        fast_text, slow_text = built.bm25, slow.bm25
        assert fast_text.doc_terms == slow_text.doc_terms
        n = len(fast_text.doc_terms)
        assert np.array_equal(fast_text.digests[:n], slow_text.digests[:n])
        assert (fast_text.documents, fast_text.total_length) == (
            slow_text.documents,
            slow_text.total_length,
        )
        assert np.array_equal(fast_text.lengths[:n], slow_text.lengths[:n])
        assert fast_text.postings.keys() == slow_text.postings.keys()
        for term, post in fast_text.postings.items():
            other = slow_text.postings[term]
            assert np.array_equal(post.docs[: post.n], other.docs[: other.n]), term
            assert np.array_equal(post.tfs[: post.n], other.tfs[: other.n]), term
        assert built.members == slow.members and built.hubs == slow.hubs
        assert sum(len(m) for m in built.members["GENERATED_IN"].values()) == 120
        # every hub placed as the build ends, as the members' positions
        placed = {key: sorted(p.rows.tolist()) for key, p in built._hub_pos.items()}
        assert placed == {key: sorted(p.rows.tolist()) for key, p in slow._hub_pos.items()}
        assert len(placed) == sum(len(hubs) for hubs in built.members.values())


def test_mirror_reserves_exactly_and_grows_by_a_quarter() -> None:
    from amem_graph.stores.local.mirror import _Mirror

    mirror = _Mirror(4)
    mirror.reserve(5000)
    assert mirror.vectors.shape == (5008, 4) and len(mirror.valid_to) == 5008
    mirror._grow(5009)
    assert len(mirror.alive) == 6272  # 5008 * 1.25 rounded up to 16 rows
    assert np.isinf(mirror.valid_to[5008:]).all() and not mirror.alive.any()


def test_parsed_documents_are_never_served_stale(tmp_path: Path) -> None:
    with MemoryGraph.open(tmp_path / "p.db", embedder=HashingEmbedder(dims=32)) as mg:
        mg.remember("the cache warms at nine", id="a")

        def read() -> object:
            return mg.store.get_memories(["a"], embeddings=False)["a"]

        assert read() is read()  # parsed once
        mg.retract("a", reason="test", cascade=False)
        assert mg.get("a").status == "retracted" and read().status == "retracted"  # type: ignore[attr-defined]


def test_checked_query_vector_refuses_a_bool_among_floats() -> None:
    class Query(_Rows):
        def embed_query(self, text: str) -> object:
            return [1.0, True, 0.0]

    with pytest.raises(ValidationError, match="value 1 is True"):
        CheckedEmbedder(Query(None)).embed_query("q")  # type: ignore[arg-type]
    assert CheckedEmbedder(_Rows(None)).embed_query("q") == [0.0, 0.0, 1.0]  # type: ignore[arg-type]


def test_a_hub_with_a_member_missing_its_row_is_placed_when_walked() -> None:
    from amem_graph.stores.local.mirror import _Mirror

    mirror = _Mirror(4)
    mirror.ids, mirror.pos = ["a", "b"], {"a": 0, "b": 1}
    via = "GENERATED_IN"
    mirror.load_edges([(via, "a", "e1"), (via, "ghost", "e1"), (via, "b", "e1"), (via, "b", "e2")])
    mirror.loaded()
    assert (via, "e1") not in mirror._hub_pos  # an orphan edge: not placed at the build
    assert sorted(mirror._hub_rows(via, "e1").tolist()) == [0, 1]
    assert mirror._hub_pos[(via, "e2")].rows.tolist() == [1]
    assert mirror.hubs[via]["b"] == ("e1", "e2") and mirror.members[via]["e1"] == {
        "a",
        "b",
        "ghost",
    }
