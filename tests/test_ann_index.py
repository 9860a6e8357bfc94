"""The embedded store's ANN index (stores/local/ann.py), with the switch-over forced low so a
few thousand vectors go through it: hits equal exact top-k (or recall >= 0.99 where the index
is approximate), filters lose nothing, the index persists beside the SQLite file, follows
other connections' commits, never returns deleted or retracted memories, is rebuilt when its
file is damaged or stale, and without usearch the store stays exact."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Memory, content_hash
from amem_graph.stores.base import MemoryFilter, MemoryUpdate, WriteBatch
from amem_graph.stores.local import ann as ann_module
from amem_graph.stores.local import search as search_module
from amem_graph.stores.local.store import LocalStore

pytest.importorskip("usearch")

DIMS = 32
N = 3000
THRESHOLD = 500
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ANY = MemoryFilter()


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors in 60 clusters, so neighbours are close like sentence embeddings."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, DIMS))
    x = centres[rng.integers(0, 60, n)] + rng.standard_normal((n, DIMS)) * 0.5
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def mem(mid: str, vec: np.ndarray, scope: str = "default", status: str = "active") -> Memory:
    text = f"memory {mid}"
    return Memory(
        id=mid,
        content=text,
        scope=scope,
        status=status,  # type: ignore[arg-type]
        created_at=T0,
        valid_from=T0,
        content_hash=content_hash(text),
        embedding=vec.tolist(),
    )


def scope_of(i: int) -> str:
    """60% 'big' (a filter the index serves), 5% 'small' (the selective fast path)."""
    return "big" if i % 20 < 12 else "small" if i % 20 == 12 else "rest"


def fill(store: LocalStore, x: np.ndarray) -> None:
    store.ensure_embedder("test", DIMS)
    for start in range(0, len(x), 500):
        store.apply(
            WriteBatch(
                memories=[
                    mem(f"m{i}", x[i], scope_of(i)) for i in range(start, min(len(x), start + 500))
                ]
            )
        )


def open_store(path: Path, threshold: int | None = THRESHOLD) -> LocalStore:
    return LocalStore(path, ann_threshold=threshold)


def queries(x: np.ndarray, count: int = 40, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q = x[rng.choice(len(x), count, replace=False)] + rng.standard_normal((count, DIMS)) * 0.2
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [mid for mid, _ in hits]


def recall(got: list[list[str]], truth: list[list[str]]) -> float:
    found = sum(len(set(g) & set(t)) for g, t in zip(got, truth, strict=True))
    return found / sum(len(t) for t in truth)


def data_files(db: Path) -> list[Path]:
    """The index's data files beside ``<db>.ann`` (the file naming the current one)."""
    return sorted(db.parent.glob(f"{db.name}.ann.*-*"))


@pytest.fixture
def data() -> np.ndarray:
    return clustered(N)


@pytest.fixture
def db(tmp_path: Path, data: np.ndarray) -> Path:
    path = tmp_path / "ann.db"
    store = open_store(path, None)
    fill(store, data)
    store.close()
    return path


def test_hits_match_exact_top_k(db: Path, data: np.ndarray) -> None:
    exact, store = open_store(db, None), open_store(db)
    got, truth = [], []
    for q in queries(data, 100):
        hits = store.vector_search(q.tolist(), 10, ANY)
        ref = exact.vector_search(q.tolist(), 10, ANY)
        got.append(ids(hits))
        truth.append(ids(ref))
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True)
        for mid, score in hits:  # every score is the exact cosine
            assert score == pytest.approx(float(data[int(mid[1:])] @ q), abs=1e-5)
    assert store._ann is not None and len(store._ann) == N
    assert recall(got, truth) >= 0.99
    assert exact._ann is None


def test_batched_searches_answer_as_the_index_does(db: Path, data: np.ndarray) -> None:
    store = open_store(db)
    qs = queries(data, 12)
    searches = [
        (q.tolist(), ANY if j % 2 else MemoryFilter(scopes=("big",))) for j, q in enumerate(qs)
    ]
    many = store.vector_search_many(searches, 10)
    assert store._ann is not None  # past the threshold: through the index, not one product
    assert many == [store.vector_search(v, 10, flt) for v, flt in searches]


def test_below_threshold_stays_exact(db: Path, data: np.ndarray) -> None:
    store = open_store(db, N + 1)
    store.vector_search(queries(data)[0].tolist(), 10, ANY)
    assert store._ann is None


def test_filters_lose_no_hits(db: Path, data: np.ndarray) -> None:
    exact, store = open_store(db, None), open_store(db)
    big, small = MemoryFilter(scopes=("big",)), MemoryFilter(scopes=("small",))
    got, truth = [], []
    for q in queries(data, 100):
        hits = store.vector_search(q.tolist(), 10, big)
        assert all(scope_of(int(mid[1:])) == "big" for mid in ids(hits))
        got.append(ids(hits))
        truth.append(ids(exact.vector_search(q.tolist(), 10, big)))
        # the selective fast path: exact over the admitted rows, the same list
        assert store.vector_search(q.tolist(), 10, small) == exact.vector_search(
            q.tolist(), 10, small
        )
    assert recall(got, truth) >= 0.99


def test_filter_far_from_the_query_falls_back_to_exact(tmp_path: Path) -> None:
    """Every near neighbour is filtered out: over-fetch cannot find k, exact over the admitted
    set does, and the result is the exact one."""
    # every vector leans along one axis and the 'far' third along its opposite, so each far
    # row is less similar to every query than all 2,000 near rows: an over-fetch below a
    # quarter of the index never reaches k far rows (-x alone was as near as x in 32 dims,
    # and the approximate candidates then decided the answer)
    x = clustered(2000)
    x[:, 0] += 2.0
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    far = x[:1000].copy()
    far[:, 0] = -far[:, 0]
    store = open_store(tmp_path / "far.db")
    store.ensure_embedder("test", DIMS)
    store.apply(WriteBatch(memories=[mem(f"n{i}", v) for i, v in enumerate(x)]))
    store.apply(WriteBatch(memories=[mem(f"f{i}", v, "far") for i, v in enumerate(far)]))
    flt = MemoryFilter(scopes=("far",))
    exact = open_store(tmp_path / "far.db", None)
    for q in queries(x, 10):
        hits = store.vector_search(q.tolist(), 10, flt)
        assert len(hits) == 10
        assert hits == exact.vector_search(q.tolist(), 10, flt)
    assert store._ann is not None and len(store._ann) == 3000


def test_index_persists_across_reopen(db: Path, data: np.ndarray) -> None:
    q = queries(data, 5)
    store = open_store(db)
    before = [store.vector_search(v.tolist(), 10, ANY) for v in q]
    assert store._ann is not None and store._ann.last_sync == "built"
    store.close()
    assert Path(f"{db}.ann").exists() and len(data_files(db)) == 1
    again = open_store(db)
    assert [again.vector_search(v.tolist(), 10, ANY) for v in q] == before
    assert again._ann is not None and again._ann.last_sync == "loaded"


def test_two_processes_saving_leave_one_loadable_index(db: Path, data: np.ndarray) -> None:
    q = queries(data, 2)
    a, b = open_store(db), open_store(db)
    a.vector_search(q[0].tolist(), 10, ANY)  # each builds and saves its own index
    b.vector_search(q[0].tolist(), 10, ANY)
    b.apply(WriteBatch(memories=[mem("late", q[1])]))
    assert ids(a.vector_search(q[1].tolist(), 1, ANY)) == ["late"]
    a.close()  # saves the index holding "late"; b has nothing new to save
    b.close()
    assert len(data_files(db)) == 1
    again = open_store(db)
    assert ids(again.vector_search(q[1].tolist(), 1, ANY)) == ["late"]
    assert again._ann is not None and again._ann.last_sync == "loaded"


def test_other_connection_commits_are_seen(db: Path, data: np.ndarray) -> None:
    reader, writer = open_store(db), open_store(db, None)
    q = queries(data, 3)
    reader.vector_search(q[0].tolist(), 10, ANY)  # index built
    writer.apply(WriteBatch(memories=[mem("new", q[1])]))
    assert ids(reader.vector_search(q[1].tolist(), 1, ANY)) == ["new"]
    top = ids(reader.vector_search(q[2].tolist(), 3, ANY))
    writer.apply(WriteBatch(delete_memories=[top[0]]))
    writer.apply(WriteBatch(memory_updates=[MemoryUpdate(top[1], {"embedding": (-q[2]).tolist()})]))
    after = ids(reader.vector_search(q[2].tolist(), 10, ANY))
    assert top[0] not in after and top[1] not in after and after[0] == top[2]
    moved = reader.vector_search((-q[2]).tolist(), 1, ANY)
    assert ids(moved) == [top[1]]


def test_stale_file_is_reconciled_on_open(db: Path, data: np.ndarray) -> None:
    """The file was saved before another process's commits: the new rows are added, the
    changed and deleted ones dropped, and nothing stale is returned."""
    q = queries(data, 2)
    store = open_store(db)
    old_top = ids(store.vector_search(q[0].tolist(), 2, ANY))
    store.close()
    writer = open_store(db, None)
    writer.apply(WriteBatch(memories=[mem("late", q[1])], delete_memories=[old_top[0]]))
    writer.apply(
        WriteBatch(memory_updates=[MemoryUpdate(old_top[1], {"embedding": (-q[0]).tolist()})])
    )
    writer.close()
    again = open_store(db)
    assert ids(again.vector_search(q[1].tolist(), 1, ANY)) == ["late"]
    assert again._ann is not None and again._ann.last_sync == "reconciled"
    hits = ids(again.vector_search(q[0].tolist(), 10, ANY))
    assert old_top[0] not in hits and old_top[1] not in hits
    assert ids(again.vector_search((-q[0]).tolist(), 1, ANY)) == [old_top[1]]


def test_deleted_and_retracted_are_never_returned(db: Path, data: np.ndarray) -> None:
    store = open_store(db)
    q = queries(data, 10)
    tops = [ids(store.vector_search(v.tolist(), 2, ANY)) for v in q]
    store.apply(
        WriteBatch(
            delete_memories=list(dict.fromkeys(t[0] for t in tops)),
            memory_updates=[MemoryUpdate(t[1], {"status": "retracted"}) for t in tops],
        )
    )
    banned = {m for t in tops for m in t}
    for v in q:
        assert not banned & set(ids(store.vector_search(v.tolist(), 30, ANY)))
    retracted = MemoryFilter(statuses=("retracted",))
    assert set(ids(store.vector_search(q[0].tolist(), 30, retracted))) <= {t[1] for t in tops}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "meta"])
def test_damaged_index_file_is_rebuilt(
    db: Path, data: np.ndarray, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    q = queries(data, 50)
    store = open_store(db)
    store.vector_search(q[0].tolist(), 10, ANY)
    store.close()
    target = Path(f"{db}.ann") if damage == "meta" else data_files(db)[0]
    blob = target.read_bytes()
    target.write_bytes(b"\x00junk" * 100 if damage != "truncated" else blob[: len(blob) // 2])
    exact = open_store(db, None)
    with caplog.at_level(logging.WARNING, logger=ann_module.__name__):
        again = open_store(db)
        got = [ids(again.vector_search(v.tolist(), 10, ANY)) for v in q]
    assert again._ann is not None and again._ann.last_sync == "built"
    assert "rebuilding" in caplog.text
    assert recall(got, [ids(exact.vector_search(v.tolist(), 10, ANY)) for v in q]) >= 0.99


def test_without_usearch_search_stays_exact(
    db: Path, data: np.ndarray, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(search_module, "ann_available", lambda: False)
    monkeypatch.setattr(ann_module, "_warned", False)
    exact, store = open_store(db, None), open_store(db)
    with caplog.at_level(logging.WARNING, logger=ann_module.__name__):
        for v in queries(data, 5):
            assert store.vector_search(v.tolist(), 10, ANY) == exact.vector_search(
                v.tolist(), 10, ANY
            )
    assert store._ann is None
    assert caplog.text.count("usearch is not installed") == 1


@pytest.mark.parametrize("bad", [0, -5, True, 2.5])
def test_bad_threshold_is_refused(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValidationError, match="ann_threshold"):
        LocalStore(tmp_path / "x.db", ann_threshold=bad)  # type: ignore[arg-type]
