"""Many writers and readers on one store: 8 threads and 4 processes on one embedded file, 8
threads on Neo4j. Afterwards no id is stored twice, every write that returned is there, outcome
credit adds up exactly to what the outcomes that returned gave, and the only errors are the
documented ``ConflictError`` (a busy store, or an outcome already recorded)."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import Counter
from typing import Any

import pytest

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.core.errors import ConflictError
from amem_graph.stores.base import GraphStore, MemoryFilter
from amem_graph.stores.local.store import LocalStore

ROUNDS = 8


def _worker(mg: MemoryGraph, name: str, rounds: int) -> dict[str, Any]:
    """Episodes that recall, write and end with an outcome; returns what it saw."""
    errors: Counter[str] = Counter()
    written: list[str] = []
    credited: dict[str, float] = {}
    for r in range(rounds):
        try:
            with mg.episode(agent=name, task=f"task-{r % 3}", id=f"ep-{name}-{r}") as ep:
                hits = ep.recall(f"note about topic {r % 5} from any agent", k=4)
                mem = ep.remember(f"{name} learned fact {r} about topic {r % 5}", id=f"{name}-{r}")
                written.append(mem.id)
                outcome = ep.outcome(success=r % 2 == 0)
                if hits:
                    best: dict[str, int] = {}
                    for h in hits:
                        best[h.memory.id] = min(h.rank, best.get(h.memory.id, h.rank))
                    for mid, rank in best.items():  # the default policy: the top hit is
                        if rank > 1:  # presumed used, a bystander gets nothing
                            continue
                        key = f"{mid}:{'s' if outcome.success else 'f'}"
                        credited[key] = credited.get(key, 0.0) + 1.0
        except ConflictError as exc:  # documented: a busy store; retried by callers
            errors[f"ConflictError:{str(exc)[:40]}"] += 1
        except Exception as exc:  # anything else is a bug
            errors[f"{type(exc).__name__}:{exc}"] += 1
    return {"errors": dict(errors), "written": written, "credited": credited}


def _process_main(path: str, name: str, rounds: int, queue: Any) -> None:
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        queue.put(_worker(mg, name, rounds))


def _check(store: GraphStore, results: list[dict[str, Any]]) -> None:
    bad = {e: n for r in results for e, n in r["errors"].items() if not e.startswith("Conflict")}
    assert bad == {}
    memories = store.find_memories(MemoryFilter(statuses=None))
    ids = [m.id for m in memories]
    assert len(ids) == len(set(ids))
    written = [mid for r in results for mid in r["written"]]
    assert set(written) <= set(ids)
    assert len(written) == len(set(written))
    expected: Counter[str] = Counter()
    for r in results:
        expected.update(r["credited"])
    for m in memories:
        assert m.successes == pytest.approx(expected.get(f"{m.id}:s", 0.0)), m.id
        assert m.failures == pytest.approx(expected.get(f"{m.id}:f", 0.0)), m.id


def _run_threads(mg: MemoryGraph, n: int) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def body(i: int) -> None:
        out = _worker(mg, f"t{i}", ROUNDS)
        with lock:
            results.append(out)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_threads_share_one_store(mg: MemoryGraph) -> None:
    """8 threads on one MemoryGraph (both stores)."""
    mg.remember("seed note about topic 1 and topic 2", id="seed", agent="seeder", task="task-0")
    results = _run_threads(mg, 8)
    _check(mg.store, results)
    assert sum(len(r["written"]) for r in results) == 8 * ROUNDS


@pytest.mark.slow
def test_processes_share_one_file(tmp_path: os.PathLike[str]) -> None:
    path = os.path.join(tmp_path, "shared.db")
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        mg.remember("seed note about topic 1 and topic 2", id="seed", agent="seeder")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_process_main, args=(path, f"p{i}", ROUNDS, queue)) for i in range(4)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        _check(mg.store, results)
        assert sum(len(r["written"]) for r in results) == 4 * ROUNDS


def _expanding_reader(path: str, n: int, queue: Any) -> None:
    """Recalls with graph expansion over siblings while another process writes."""
    errors: Counter[str] = Counter()
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        for i in range(n):
            try:
                mg.recall(f"fact {i % 7} shared topic", k=5)
            except Exception as exc:
                errors[f"{type(exc).__name__}:{exc}"] += 1
    queue.put(dict(errors))


@pytest.mark.slow
def test_recall_never_sees_half_a_refresh(tmp_path: os.PathLike[str]) -> None:
    """Issue 18.2: a recall raised KeyError when a commit landed between the mirror's reads."""
    path = os.path.join(tmp_path, "race.db")
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        mg.remember("shared topic fact start", id="start", task="t", episode=None)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    reader = ctx.Process(target=_expanding_reader, args=(path, 120, queue))
    reader.start()
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        i = 0
        while reader.is_alive() and i < 3000:
            with mg.episode(agent="w", task="t") as ep:
                ep.remember(f"fact {i % 7} shared topic number {i}")
            i += 1
    errors = queue.get(timeout=300)
    reader.join(timeout=60)
    assert errors == {}


# -- the mirror catches up from the change log, never rebuilt whole ---------------------------


class _CountingStore(LocalStore):
    """A LocalStore that counts whole mirror builds."""

    builds = 0

    def _build_mirror(self) -> Any:
        type(self).builds += 1
        return super()._build_mirror()


def _mirror_state(store: LocalStore) -> tuple[Any, ...]:
    """What searches read from the mirror, comparable across two stores on one file."""
    mirror = store._fresh_mirror()
    names = {code: name for name, code in mirror.codes["scope"].items()}
    rows = sorted(
        (
            mid,
            int(mirror.status[i]),
            names.get(int(mirror.scope[i])),
            bool(mirror.has_vec[i]),
            mirror.vectors[i].tobytes() if mirror.has_vec[i] else b"",
            float(mirror.successes[i]),
            float(mirror.failures[i]),
            mirror.bm25.text(i),
        )
        for mid, i in mirror.pos.items()
        if mirror.alive[i]
    )
    edges = sorted(
        (u, v, k, sorted(d["props"].items()))
        for u, v, k, d in mirror.graph.edges(keys=True, data=True)
    )
    return tuple(rows), tuple(map(str, edges))


def _writer_main(path: str, name: str, rounds: int, queue: Any) -> None:
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        queue.put(_worker(mg, name, rounds))


def _reader_main(path: str, done: Any, queue: Any) -> None:
    """Recalls while the writers write; once they are done, its mirror as caught up."""
    errors: Counter[str] = Counter()
    store = _CountingStore(path)
    recalls = 0
    with MemoryGraph(store, HashingEmbedder()) as mg:
        while not done.is_set() or recalls < 5:
            try:
                mg.recall(f"note about topic {recalls % 5} from any agent", k=5)
            except Exception as exc:
                errors[f"{type(exc).__name__}:{exc}"] += 1
            recalls += 1
        queue.put(
            {
                "errors": dict(errors),
                "builds": _CountingStore.builds,
                "recalls": recalls,
                "state": _mirror_state(store),
            }
        )


@pytest.mark.slow
def test_readers_in_other_processes_catch_up_without_rebuilding(
    tmp_path: os.PathLike[str],
) -> None:
    """4 writer and 2 reader processes on one file (issue 18 soak: a whole rebuild on every
    foreign commit made p95 blow up). Each reader builds its mirror once and then patches it
    from the change log; at the end it holds exactly what a mirror built whole holds."""
    path = os.path.join(tmp_path, "shared.db")
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        mg.remember("seed note about topic 1 and topic 2", id="seed", agent="seeder")
    ctx = multiprocessing.get_context("spawn")
    writes, reads, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    writers = [
        ctx.Process(target=_writer_main, args=(path, f"w{i}", ROUNDS, writes)) for i in range(4)
    ]
    readers = [ctx.Process(target=_reader_main, args=(path, done, reads)) for _ in range(2)]
    for p in writers + readers:
        p.start()
    results = [writes.get(timeout=300) for _ in writers]
    done.set()
    seen = [reads.get(timeout=300) for _ in readers]
    for p in writers + readers:
        p.join(timeout=60)
        assert p.exitcode == 0
    whole = LocalStore(path)
    try:
        _check(whole, results)
        final = _mirror_state(whole)
    finally:
        whole.close()
    assert len(final[0]) == 1 + 4 * ROUNDS and final[1]
    for reader in seen:
        assert reader["errors"] == {}
        assert reader["recalls"] >= 5
        assert reader["builds"] == 1  # built once, then patched from the log
        assert reader["state"] == final


def test_a_foreign_commit_is_patched_in_not_rebuilt(tmp_path: os.PathLike[str]) -> None:
    """Another connection's writes of every kind (new memories and edges, updates, an edge
    prop removed, deletions) reach this connection's mirror through the change log, with the
    same result as a mirror built whole, and without a rebuild."""
    from amem_graph.stores.base import EdgeWrite, MemoryUpdate, WriteBatch

    path = os.path.join(tmp_path, "two.db")
    reader = _CountingStore(path)
    writer = LocalStore(path)
    try:
        with MemoryGraph(writer, HashingEmbedder()) as mg:
            mg.remember("alpha about cats", id="a", task="t1")
            mg.remember("beta about dogs", id="b", task="t1")
            reader._fresh_mirror()
            built = _CountingStore.builds
            mg.remember("gamma about cats and dogs", id="c", task="t1")
            writer.apply(
                WriteBatch(
                    edges=[EdgeWrite("DERIVED_FROM", "c", "a", props={"why": "x", "w": 1.0})],
                    memory_updates=[MemoryUpdate("b", changes={"status": "quarantined"})],
                )
            )
            writer.apply(WriteBatch(edges=[EdgeWrite("DERIVED_FROM", "c", "a", props={"w": None})]))
            assert _mirror_state(reader) == _mirror_state(LocalStore(path))
            writer.apply(WriteBatch(delete_memories=["a"]))
            state = _mirror_state(reader)
            fresh = LocalStore(path)
            assert state == _mirror_state(fresh)
            fresh.close()
            assert _CountingStore.builds == built
            assert "a" not in {mid for mid, *_ in state[0]}
            assert reader.vector_search(HashingEmbedder().embed_query("cats"), 5, MemoryFilter())
    finally:
        reader.close()
        writer.close()


def test_a_reader_behind_the_trimmed_log_rebuilds(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from amem_graph.stores.local import writes

    monkeypatch.setattr(writes, "CHANGE_LOG_KEEP", 3)
    path = os.path.join(tmp_path, "trim.db")
    reader = _CountingStore(path)
    writer = LocalStore(path)
    try:
        with MemoryGraph(writer, HashingEmbedder()) as mg:
            mg.remember("first note", id="n0")
            reader._fresh_mirror()
            built = _CountingStore.builds
            for i in range(1, 205):  # the log is trimmed every 100 rows
                mg.remember(f"note number {i}", id=f"n{i}")
            state = _mirror_state(reader)
            assert _CountingStore.builds == built + 1
            assert len(state[0]) == 205
    finally:
        reader.close()
        writer.close()


def test_threads_stem_words_without_corrupting_each_other() -> None:
    """The soak found an IndexError inside the snowball stemmer: one stemmer object was shared
    by every thread, and it keeps the word it works on in itself. Thread switches forced very
    often; every thread's stems must equal a single thread's."""
    import random
    import sys

    import snowballstemmer

    from amem_graph.core import text

    rnd = random.Random(3)
    letters = "abcdefghilmnoprstuvyz"
    suffixes = ["ational", "ization", "fulness", "iveness", "ement", "ing", "ed", "ies", "ness"]
    words = [
        "".join(rnd.choice(letters) for _ in range(rnd.randint(3, 9))) + rnd.choice(suffixes)
        for _ in range(24_000)
    ]
    words = list(dict.fromkeys(words))
    reference = snowballstemmer.stemmer("porter")
    expected = {w: reference.stemWord(w) for w in words}
    text.stem.cache_clear()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    got: dict[str, str] = {}
    errors: list[str] = []

    def body(part: list[str]) -> None:
        for w in part:
            try:
                got[w] = text.stem(w)
            except Exception as exc:
                errors.append(type(exc).__name__)

    try:
        threads = [threading.Thread(target=body, args=(words[i::8],)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
        text.stem.cache_clear()
    assert errors == []
    assert {w: s for w, s in got.items() if s != expected[w]} == {}
