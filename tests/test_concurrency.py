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
                # full credit to what was used (here the top hit), none to what was only read
                used = [hits[0].memory.id] if hits else None
                outcome = ep.outcome(success=r % 2 == 0, used=used)
                for mid in used or ():
                    key = f"{mid}:{'s' if outcome.success else 'f'}"
                    credited[key] = credited.get(key, 0.0) + 1.0
        except ConflictError as exc:  # documented: a busy store; retried by callers
            errors[f"ConflictError:{exc}"] += 1
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
    conflicts = {e: n for r in results for e, n in r["errors"].items()}
    assert sum(len(r["written"]) for r in results) == 8 * ROUNDS, conflicts


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
