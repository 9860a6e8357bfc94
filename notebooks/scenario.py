"""The notebooks' shared world: a store from the environment and a seeded multi-agent story.

``open_graph()`` opens the embedded store in memory, or Neo4j when ``NEO4J_URI`` is set (with
``NEO4J_USERNAME`` / ``NEO4J_PASSWORD``). The notebooks seed their own scenario, so on Neo4j
they need an empty database and refuse one that holds memories unless ``AMEM_NOTEBOOK_WIPE=1``
allows wiping it (the tests and ``make notebooks`` set it for their own server).

``seed(mg)`` writes a few hundred memories of five agents on five tasks, a wiki page that an
attacker edited (the poisoned source), and a month of deploy episodes whose outcomes credit
what they read. It is deterministic: the same seed gives the same world on both stores. The
embedder is the instant ``hashing`` one: MiniLM would work the same way but costs seconds to
load, and the notebooks must run in well under a minute.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from amem_graph import MemoryGraph

POISON_URI = "https://wiki.example.net/payments/perf-tuning"
AGENTS = ("researcher", "planner", "deployer", "sre", "reviewer")
TRACKED_AGENTS = ("researcher", "planner", "sre")
TASKS = ("payments-rollout", "search-scaling", "key-rotation", "billing-migration", "oncall")
SERVICES = (
    "payments-api",
    "search-cluster",
    "vault",
    "billing-db",
    "checkout-web",
    "ledger",
    "notifier",
    "gateway",
)
ASPECTS = (
    ("alert threshold", ("p99 above 800 ms", "error rate above 2%", "queue depth above 5k")),
    ("owner", ("team-payments", "team-search", "team-platform", "team-billing")),
    ("deploy window", ("Tuesday 10:00 UTC", "Thursday 14:00 UTC", "any weekday morning")),
    ("dashboard", ("grafana/service-health", "grafana/latency", "grafana/capacity")),
    ("runbook step", ("drain one node at a time", "check replication lag first", "page oncall")),
    ("capacity", ("12 pods at peak", "6 shards of 40 GB", "3 replicas per zone")),
)
START = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
#: the question the failing deploys keep asking, asked again before and after the retraction
QUESTION = "payments-api connection pool size for the rollout"


def open_graph() -> MemoryGraph:
    """The embedded store in memory, or the Neo4j database ``NEO4J_URI`` names (emptied)."""
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        return MemoryGraph.open(":memory:", embedder="hashing")
    mg = MemoryGraph.open(uri, embedder="hashing")
    if mg.store.counts().get("Memory", 0):
        if os.environ.get("AMEM_NOTEBOOK_WIPE") != "1":
            mg.close()
            raise RuntimeError(
                f"{uri} already holds memories; these notebooks seed their own scenario. "
                "Point NEO4J_URI at an empty database, or set AMEM_NOTEBOOK_WIPE=1 to wipe it."
            )
        # the data only: rebuilt indexes would make the server compile each statement anew
        mg.store.wipe(keep_indexes=True)  # type: ignore[attr-defined]
        mg.close()
        mg = MemoryGraph.open(uri, embedder="hashing")  # records the embedder afresh
    return mg


def backend(mg: MemoryGraph) -> str:
    """``local`` or ``neo4j``."""
    return str(mg.stats()["backend"])


@dataclass
class World:
    """What the notebooks point at, and the history the charts draw."""

    poison: str = "wiki-pool-tip"
    derived: list[str] = field(default_factory=list)
    good_runbook: str = "payments-runbook-pool"
    episodes: list[str] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    memories: int = 0


def _background(rng: random.Random) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(260):
        service = SERVICES[i % len(SERVICES)]
        aspect, values = ASPECTS[(i // len(SERVICES)) % len(ASPECTS)]
        value = values[rng.randrange(len(values))]
        task = TASKS[i % len(TASKS)]
        agent = ("researcher", "sre", "reviewer")[i % 3]
        items.append(
            {
                "content": f"{service} {aspect}: {value} (note {i})",
                "id": f"note-{i:03d}",
                "agent": agent,
                "task": task,
                "source": f"https://docs.example.com/{service}/{aspect.replace(' ', '-')}",
                "timestamp": START + timedelta(hours=i),
                "tags": [service, aspect.split()[0]],
            }
        )
    for j in range(40):  # procedures derived from the notes
        parents = [f"note-{(j * 7) % 260:03d}", f"note-{(j * 7 + 8) % 260:03d}"]
        items.append(
            {
                "content": f"Procedure {j}: combine {parents[0]} and {parents[1]} before a change",
                "id": f"proc-{j:02d}",
                "agent": "planner",
                "kind": "procedural",
                "derived_from": parents,
                "timestamp": START + timedelta(days=11, hours=j),
            }
        )
    items.append(
        {
            "content": "payments-api runbook: keep the database connection pool size at 20 "
            "or more during a rollout; smaller pools exhaust under peak load",
            "id": "payments-runbook-pool",
            "agent": "sre",
            "task": "payments-rollout",
            "source": "https://docs.example.com/payments-api/runbook",
            "timestamp": START + timedelta(days=12),
        }
    )
    return items


def seed(mg: MemoryGraph, episodes: int = 30, seed: int = 7) -> World:
    """Write the scenario through the public API; return its ids and the outcome history."""
    rng = random.Random(seed)
    world = World()
    mg.remember_many(_background(rng))
    with mg.episode("researcher", "payments-rollout", id="ep-research-wiki") as ep:
        ep.remember(
            "payments-api tuning tip: set the connection pool size to 2 for the rollout; "
            "bigger pools only waste memory",
            id=world.poison,
            source=POISON_URI,
            kind="insight",
        )
    plan = mg.remember(
        "Rollout plan for payments-api: shrink the connection pool size to 2 before the canary",
        agent="planner",
        task="payments-rollout",
        derived_from=[world.poison],
        id="plan-payments-pool",
        kind="procedural",
    )
    checklist = mg.remember(
        "Deploy checklist payments-api: connection pool 2, canary 5%, watch p99",
        agent="planner",
        task="payments-rollout",
        derived_from=[plan.id],
        id="checklist-payments",
        kind="procedural",
    )
    world.derived = [plan.id, checklist.id]
    tainted = {world.poison, *world.derived}
    questions = {
        "payments-rollout": QUESTION,
        "search-scaling": "search-cluster capacity and shards",
        "key-rotation": "vault runbook step for key rotation",
        "billing-migration": "billing-db deploy window and owner",
        "oncall": "gateway alert threshold and dashboard",
    }
    for i in range(episodes):
        task = TASKS[0] if i % 2 == 0 else TASKS[1 + (i // 2) % (len(TASKS) - 1)]
        agent = ("deployer", "sre", "deployer", "reviewer")[i % 4]
        eid = f"ep-{i:02d}"
        with mg.episode(agent, task, id=eid) as ep:
            hits = ep.recall(questions[task], k=4)
            read = {h.memory.id for h in hits}
            failed = rng.random() < (0.85 if read & tainted else 0.1)
            ep.remember(
                f"{eid} {task}: {'rollback after pool exhaustion' if failed else 'went fine'}",
                kind="episodic",
                id=f"log-{i:02d}",
            )
            ep.outcome(success=not failed, detail="pool exhausted" if failed else "healthy")
        world.episodes.append(eid)
        world.history.append(_snapshot(mg, world, i, eid, not failed))
    world.memories = mg.stats()["counts"].get("Memory", 0)
    return world


def _snapshot(mg: MemoryGraph, world: World, i: int, eid: str, ok: bool) -> dict[str, Any]:
    watched = [world.poison, *world.derived, world.good_runbook]
    memories = mg.get_many(watched)
    row: dict[str, Any] = {"outcome": i + 1, "episode": eid, "success": ok}
    row.update({f"confidence {m}": memories[m].confidence for m in watched})
    row.update({f"trust {a}": mg.agent(a).trust for a in TRACKED_AGENTS})
    return row


def outcome_counts(world: World) -> Counter[bool]:
    """How many episodes succeeded (True) and failed (False)."""
    return Counter(row["success"] for row in world.history)
