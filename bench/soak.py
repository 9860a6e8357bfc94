"""Soak: a mixed multi-agent workload for a while, with faults injected, then ``check``.

Agents (threads) run episodes that recall, remember and report outcomes; an operator retracts
and restores. Faults: on the embedded store a separate writer process is killed with SIGKILL
mid-write and started again; on Neo4j the server is restarted with ``scripts/neo4j-local
restart`` (on ``$NEO4J_PORT``). Reported: operations and throughput, p95 latency per time window
(and its ratio to the first window, the baseline of this run), errors by type, RSS at start
and end, faults injected, and the final ``check``.

    python bench/soak.py --store local --seconds 600
    NEO4J_PORT=7708 python bench/soak.py --store neo4j --seconds 600

Documented errors (``ConflictError``: a busy store, an outcome already recorded, a cascade
across scopes; ``StoreUnavailableError`` while Neo4j restarts) are counted, not fatal.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from amem_graph import AmemGraphError, HashingEmbedder, MemoryGraph  # noqa: E402
from amem_graph.stores.local.store import LocalStore  # noqa: E402

#: errors the library documents for these situations; anything else is a bug
DOCUMENTED = {"ConflictError", "StoreUnavailableError"}
TOPICS = ["deploy", "cache", "billing", "auth", "search", "queue", "backup", "alerts"]


def rss_mb() -> float:
    """Resident memory of this process, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Stats:
    """Latencies per window and op, error counts; shared by the threads under a lock."""

    window: float
    start: float = field(default_factory=time.perf_counter)
    lat: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_op: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    ops: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, op: str, seconds: float) -> None:
        with self.lock:
            self.ops[op] += 1
            self.by_op[op].append(seconds)
            self.lat[int((time.perf_counter() - self.start) / self.window)].append(seconds)

    def error(self, exc: BaseException) -> None:
        with self.lock:
            self.errors[type(exc).__name__] += 1

    def bug(self, exc: BaseException) -> None:
        """An undocumented error: counted, and its first traceback of each kind printed."""
        name = f"BUG {type(exc).__name__}: {exc}"
        with self.lock:
            self.errors[name] += 1
            first = self.errors[name] == 1
        if first:
            print(name, "".join(traceback.format_exception(exc)), sep="\n", file=sys.stderr)


def timed(stats: Stats, op: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    t0 = time.perf_counter()
    try:
        out = fn(*args, **kwargs)
    except AmemGraphError as exc:
        stats.error(exc)
        return None
    stats.record(op, time.perf_counter() - t0)
    return out


def agent_loop(mg: MemoryGraph, name: str, stats: Stats, stop: threading.Event) -> None:
    """Episodes in one of two scopes: recall, remember, outcome."""
    rnd = random.Random(name)
    n = 0
    while not stop.is_set():
        n += 1
        scope = rnd.choice(("team-a", "team-b"))
        topic = rnd.choice(TOPICS)
        try:
            with mg.episode(agent=name, task=f"task-{topic}", scope=scope) as ep:
                timed(stats, "recall", ep.recall, f"how do we handle {topic}", k=5)
                timed(stats, "remember", ep.remember, f"{name} note {n}: {topic} runbook step {n}")
                timed(stats, "outcome", ep.outcome, success=rnd.random() < 0.7)
        except AmemGraphError as exc:  # opening or closing the episode
            stats.error(exc)
        except Exception as exc:  # not documented: counted as a bug
            stats.bug(exc)


def operator_loop(mg: MemoryGraph, stats: Stats, stop: threading.Event) -> None:
    """Retract a random recent memory in its scope, and later restore it."""
    rnd = random.Random("operator")
    held: list[str] = []
    while not stop.wait(0.2):
        try:
            if held and (len(held) > 3 or rnd.random() < 0.5):
                timed(stats, "restore", mg.restore, held.pop(0), reason="soak")
                continue
            scope = rnd.choice(("team-a", "team-b"))
            hits = mg.recall(rnd.choice(TOPICS), k=5, scope=scope)
            if hits:
                target = rnd.choice(hits).memory.id
                report = timed(
                    stats, "retract", mg.retract, target, scope=scope, reason="soak", cascade=True
                )
                if report is not None:
                    held.append(report.id)
        except AmemGraphError as exc:
            stats.error(exc)
        except Exception as exc:
            stats.bug(exc)
    for rid in held:
        timed(stats, "restore", mg.restore, rid, reason="soak end")


def _writer_process(path: str, pause: float) -> None:
    """Writes a batch every ``pause`` seconds until killed: the process the fault kills."""
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        i = 0
        while True:
            i += 1
            items = [{"content": f"writer batch {i} item {j} about {TOPICS[j % 8]}",
                      "agent": "writer", "scope": "team-a"} for j in range(20)]  # fmt: skip
            mg.remember_many(items)
            time.sleep(pause)


def fault_loop(
    kind: str, path: str, every: float, pause: float, stop: threading.Event, log: list[str]
) -> None:
    """Inject one fault every ``every`` seconds until stopped."""
    ctx = multiprocessing.get_context("spawn")
    writer = None
    if kind == "local":
        writer = ctx.Process(target=_writer_process, args=(path, pause), daemon=True)
        writer.start()
    while not stop.wait(every):
        if kind == "local" and writer is not None:
            os.kill(writer.pid or 0, signal.SIGKILL)
            writer.join()
            log.append(f"{time.strftime('%H:%M:%S')} killed writer pid {writer.pid} (SIGKILL)")
            writer = ctx.Process(target=_writer_process, args=(path, pause), daemon=True)
            writer.start()
        elif kind == "neo4j":
            t0 = time.perf_counter()
            done = subprocess.run(
                [str(ROOT / "scripts" / "neo4j-local"), "restart"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            log.append(
                f"{time.strftime('%H:%M:%S')} neo4j restart rc={done.returncode} in "
                f"{time.perf_counter() - t0:.0f}s"
            )
    if writer is not None:
        os.kill(writer.pid or 0, signal.SIGKILL)
        writer.join()


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


def soak(
    kind: str, seconds: float, agents: int, fault_every: float, target: str, pause: float = 0.5
) -> dict[str, Any]:
    """Run the workload and return the figures (printed by ``main``)."""
    mg = MemoryGraph.open(target, embedder=HashingEmbedder())
    stats = Stats(window=max(seconds / 10, 1.0))
    stop = threading.Event()
    faults: list[str] = []
    rss0 = rss_mb()
    threads = [
        threading.Thread(target=agent_loop, args=(mg, f"agent-{i}", stats, stop))
        for i in range(agents)
    ]
    threads.append(threading.Thread(target=operator_loop, args=(mg, stats, stop)))
    threads.append(
        threading.Thread(target=fault_loop, args=(kind, target, fault_every, pause, stop, faults))
    )
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - stats.start
    report = mg.check()
    rss1 = rss_mb()
    mg.close()
    windows = [p95(stats.lat[w]) * 1000 for w in sorted(stats.lat)]
    base = windows[0] if windows and windows[0] else 1.0
    total = sum(stats.ops.values())
    return {
        "store": kind,
        "seconds": round(elapsed, 1),
        "operations": dict(stats.ops),
        "throughput_ops_s": round(total / elapsed, 1),
        "p95_ms_per_window": [round(w, 1) for w in windows],
        "p95_ms_by_op": {op: round(p95(v) * 1000, 1) for op, v in sorted(stats.by_op.items())},
        "p95_ratio_to_first_window": [round(w / base, 2) for w in windows],
        "errors": dict(stats.errors),
        "undocumented_errors": {e: n for e, n in stats.errors.items() if e not in DOCUMENTED},
        "faults": faults,
        "rss_mb": {"start": round(rss0, 1), "end": round(rss1, 1)},
        "check_ok": report.ok,
        "check_problems": report.problems,
        "counts": report.counts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("local", "neo4j"), default="local")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--fault-every", type=float, default=20.0, help="seconds between faults")
    parser.add_argument(
        "--writer-pause", type=float, default=0.5, help="seconds between the writer's batches"
    )
    parser.add_argument("--target", help="store path or bolt URI (default: a temp file / $NEO4J)")
    args = parser.parse_args()
    target = args.target
    if target is None and args.store == "local":
        target = os.path.join(tempfile.mkdtemp(prefix="soak-"), "soak.db")
    if target is None:
        target = f"bolt://127.0.0.1:{os.environ.get('NEO4J_PORT', '7687')}"
    if args.store == "neo4j":
        from amem_graph.stores.neo4j.store import Neo4jStore

        Neo4jStore.connect(target).wipe()
    figures = soak(
        args.store, args.seconds, args.agents, args.fault_every, target, args.writer_pause
    )
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
