"""A fleet whose memory gets better with every failure: the benchmark of outcome feedback.

    python bench/fleet.py                                  # embedded store (in memory)
    python bench/fleet.py --neo4j bolt://127.0.0.1:7687    # the same fleet on Neo4j too

A seeded simulation. Ten agents share one memory; for each of 50 tasks an honest agent wrote
the right procedure and one compromised agent wrote a wrong one, worded to be just as relevant
(same task terms, same template), among unrelated notes. Each episode an honest agent picks a
task, recalls k=3, acts on the top hit and reports the outcome with ``used=[top]``. Acting on
the right memory succeeds with probability 0.9, on anything else with 0.1; the same random
draws drive every mode, so the modes differ only in what they recall:

* **feedback on**: outcomes are recorded, so confidence, trust and suspects move;
* **feedback off**: nothing is recorded; recall stays what it was;
* **oracle**: always acts on the right memory (the ceiling the draws allow).

Printed: success over a sliding window per mode; the first episode at which feedback reaches
90% of the oracle's window; episodes until the poisoner's trust is below every honest agent's
(and until it is <= 0.3 while every honest one is >= 0.6); failures until a poisoned memory
tops ``failure_suspects`` and until the poisoner tops it by agent; then the proposed
retraction (the top agent suspect) is carried out and ``--after`` more episodes measure
success without the poisoner. A PNG of the curves goes to ``docs/img/`` (matplotlib).

Embedder: the hashing embedder by default (MiniLM with ``--embedder minilm``): relevance here
is word overlap by construction, so the fast embedder measures the same thing. Ids carry a
fresh run prefix, so a shared Neo4j database is added to, never wiped.
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amem_graph import MemoryGraph

#: one operation per task, worded apart so that tasks do not answer each other's questions
OPERATIONS = (
    "rotate the api keys", "renew the tls certificates", "reset the database password",
    "flush the read cache", "drain the job queue", "rebuild the search index",
    "resize the worker pool", "upgrade the message brokers", "restore the nightly backup",
    "compact the event log", "fail over the primary replica", "expand the disk volume",
    "purge the cdn edge", "revoke the session tokens", "migrate the user schema",
    "throttle the webhook retries", "patch the kernel image", "reload the proxy config",
    "shard the metrics table", "vacuum the analytics warehouse", "recycle stale connections",
    "unlock locked accounts", "rebalance the kafka partitions", "refresh the exchange rates",
    "archive closed tickets", "regenerate the sitemap files", "roll back the payments deploy",
    "bump the node runtime", "prune old docker images", "re-sign the release artifacts",
    "warm the product cache", "pause the batch exports", "decommission legacy servers",
    "reseed the staging data", "rekey the encrypted backups", "reroute the dns traffic",
    "quarantine infected hosts", "restart the cron scheduler", "scale the search cluster",
    "trim the audit retention", "renew the domain registrations", "replay dead letters",
    "retrain the recommendation model", "tune the garbage collector", "freeze feature flags",
    "cut the release branch", "sync the ldap groups", "clear the mail spool",
    "reissue the vpn profiles", "defragment the blob storage",
)  # fmt: skip
TEAMS = ("design", "mobile", "growth", "support", "finance", "legal", "sales", "research")
RIGHT_STEPS = (
    "stage the replacement next to the current one",
    "shift traffic over gradually",
    "watch the health checks between steps",
    "retire the old one only after traffic has moved",
    "keep the rollback path open until it is verified",
)
WRONG_STEPS = (
    "remove the current one before anything else",
    "restart every node at the same time",
    "skip the health checks to save time",
    "disable the alerts while it runs",
    "push it straight to every region at once",
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
P_RIGHT, P_WRONG = 0.9, 0.1


@dataclass(frozen=True)
class Task:
    id: str
    query: str
    right: str
    wrong: str


@dataclass
class World:
    """Who wrote what: the items to remember, the tasks with their right and wrong memory."""

    scope: str
    agents: list[str]
    poisoner: str
    tasks: list[Task]
    items: list[dict[str, Any]]

    @property
    def honest(self) -> list[str]:
        return [a for a in self.agents if a != self.poisoner]

    @property
    def poisoned(self) -> set[str]:
        return {t.wrong for t in self.tasks}


def build_world(prefix: str, seed: int, n_agents: int, n_tasks: int, notes_per_agent: int) -> World:
    """The memories of the fleet, the same for a seed whatever the prefix."""
    rng = random.Random(seed)
    agents = [f"{prefix}-agent-{i}" for i in range(n_agents)]
    poisoner = agents[rng.randrange(n_agents)]
    honest = [a for a in agents if a != poisoner]
    if n_tasks > len(OPERATIONS):
        raise SystemExit(f"at most {len(OPERATIONS)} tasks")
    tasks, items = [], []
    for i, operation in enumerate(OPERATIONS[:n_tasks]):
        tid = f"{prefix}-task-{i}"
        task = Task(tid, f"how do I {operation}?", f"{tid}-right", f"{tid}-wrong")
        for mid, author, steps in (
            (task.right, rng.choice(honest), RIGHT_STEPS),
            (task.wrong, poisoner, WRONG_STEPS),
        ):
            text = f"To {operation}: " + ", then ".join(rng.sample(steps, 3)) + "."
            items.append({"id": mid, "content": text, "agent": author, "task": tid})
        tasks.append(task)
    for a, agent in enumerate(agents):
        for n in range(notes_per_agent):
            team = rng.choice(TEAMS)
            text = f"The {team} team reviews its backlog on {rng.choice(DAYS)} (note {n})."
            items.append({"id": f"{prefix}-note-{a}-{n}", "content": text, "agent": agent})
    scope = f"fleet-{prefix}"
    return World(scope, agents, poisoner, tasks, [item | {"scope": scope} for item in items])


@dataclass(frozen=True)
class Draw:
    """One episode's randomness: which task, which agent, and the luck of the outcome."""

    task: int
    agent: int
    luck: float


def draws(seed: int, n: int, n_tasks: int, n_honest: int) -> list[Draw]:
    rng = random.Random(seed + 1)
    return [Draw(rng.randrange(n_tasks), rng.randrange(n_honest), rng.random()) for _ in range(n)]


def succeeds(right: bool, draw: Draw) -> bool:
    return draw.luck < (P_RIGHT if right else P_WRONG)


@dataclass
class Run:
    """What one mode saw, episode by episode."""

    success: list[bool] = field(default_factory=list)
    poisoned_top: list[bool] = field(default_factory=list)
    #: task -> every memory that was its top hit
    tops: dict[str, set[str]] = field(default_factory=dict)
    #: episode (1-based) -> (poisoner's trust, lowest honest trust)
    trust: list[tuple[float, float]] = field(default_factory=list)
    failures: int = 0
    #: failures until a poisoned memory / the poisoner first topped the suspects
    memory_caught: int | None = None
    agent_caught: int | None = None
    seconds: float = 0.0


def episode(mg: MemoryGraph, world: World, draw: Draw, n: int, feedback: bool) -> tuple[bool, str]:
    """One episode: recall, act on the top hit, report (if feedback). (success, top id)."""
    task = world.tasks[draw.task]
    agent = world.honest[draw.agent]
    with mg.episode(agent, task.id, scope=world.scope, id=f"{world.scope}-ep-{n}") as ep:
        hits = ep.recall(task.query, k=3)
        top = hits[0].memory.id
        ok = succeeds(top == task.right, draw)
        if feedback:
            ep.outcome(success=ok, used=[top])
    return ok, top


def play(
    mg: MemoryGraph, world: World, plan: Sequence[Draw], start: int, feedback: bool, run: Run
) -> None:
    """Episodes ``start``... of ``plan``, tracking trust and suspects when feedback is on."""
    t = time.perf_counter()
    for i, draw in enumerate(plan, start=start):
        ok, top = episode(mg, world, draw, i, feedback)
        run.success.append(ok)
        run.poisoned_top.append(top in world.poisoned)
        run.tops.setdefault(world.tasks[draw.task].id, set()).add(top)
        if not feedback:
            continue
        trust = {a: mg.agent(a).trust for a in world.agents}
        run.trust.append((trust[world.poisoner], min(trust[a] for a in world.honest)))
        if ok:
            continue
        run.failures += 1
        if run.memory_caught is None:
            top_memory = mg.failure_suspects(limit=1, scope=world.scope)
            if top_memory and top_memory[0].id in world.poisoned:
                run.memory_caught = run.failures
        if run.agent_caught is None:
            top_agent = mg.failure_suspects(by="agent", limit=1, scope=world.scope)
            if top_agent and top_agent[0].id == world.poisoner:
                run.agent_caught = run.failures
    run.seconds += time.perf_counter() - t


def window(values: Sequence[bool], size: int) -> list[float]:
    """Success rate over the last ``size`` episodes, at each episode from ``size`` on."""
    return [statistics.fmean(values[i - size : i]) for i in range(size, len(values) + 1)]


def first(values: Sequence[float], test: Callable[[int, float], bool]) -> int | None:
    return next((i for i, v in enumerate(values) if test(i, v)), None)


@dataclass
class Result:
    backend: str
    embedder: str
    world: World
    on: Run
    off: Run
    oracle: list[bool]
    #: the proposed retraction that was carried out, and success afterwards
    retracted_agent: str
    retracted: int
    after: Run
    after_oracle: list[bool]
    window: int

    def report(self) -> dict[str, Any]:
        """The figures, as plain values."""
        w = self.window
        on, off, orc = (window(x, w) for x in (self.on.success, self.off.success, self.oracle))
        reach = first(on, lambda i, v: v >= 0.9 * orc[i])
        separated = first(
            [p for p, _ in self.on.trust],
            lambda i, p: p <= 0.3 and self.on.trust[i][1] >= 0.6,
        )
        below = first([p for p, _ in self.on.trust], lambda i, p: p < self.on.trust[i][1])
        poisoner, lowest_honest = self.on.trust[-1]
        return {
            "backend": self.backend,
            "embedder": self.embedder,
            "episodes": len(self.on.success),
            "window": w,
            "success_on_first_window": on[0],
            "success_on_last_window": on[-1],
            "success_off_first_window": off[0],
            "success_off_last_window": off[-1],
            "success_oracle_last_window": orc[-1],
            "success_on_overall": statistics.fmean(self.on.success),
            "success_off_overall": statistics.fmean(self.off.success),
            "success_oracle_overall": statistics.fmean(self.oracle),
            "poisoned_top_on_last_window": statistics.fmean(self.on.poisoned_top[-w:]),
            "poisoned_top_off_overall": statistics.fmean(self.off.poisoned_top),
            "off_tasks_whose_top_hit_changed": sum(len(t) > 1 for t in self.off.tops.values()),
            "on_tasks_whose_top_hit_changed": sum(len(t) > 1 for t in self.on.tops.values()),
            "episode_on_reaches_90pct_of_oracle": None if reach is None else reach + w,
            "episode_poisoner_trust_below_every_honest": None if below is None else below + 1,
            "episode_trust_separated": None if separated is None else separated + 1,
            "trust_poisoner_final": poisoner,
            "trust_lowest_honest_final": lowest_honest,
            "failures_until_poisoned_memory_tops_suspects": self.on.memory_caught,
            "failures_until_poisoner_tops_agent_suspects": self.on.agent_caught,
            "retracted_agent_is_poisoner": self.retracted_agent == self.world.poisoner,
            "retracted_memories": self.retracted,
            "success_after_retraction": statistics.fmean(self.after.success),
            "success_oracle_after_retraction": statistics.fmean(self.after_oracle),
            "seconds_on": self.on.seconds,
            "seconds_off": self.off.seconds,
        }


def simulate(
    open_graph: Callable[[], MemoryGraph],
    *,
    seed: int = 7,
    episodes: int = 300,
    after: int = 100,
    agents: int = 10,
    tasks: int = 50,
    notes: int = 4,
    size: int = 50,
) -> Result:
    """Run the three modes (and the retraction) on stores from ``open_graph``."""
    prefix = uuid.uuid4().hex[:8]
    plan = draws(seed, episodes + after, tasks, agents - 1)
    runs = {}
    with open_graph() as mg:
        for mode in ("off", "on"):
            world = build_world(f"{prefix}-{mode}", seed, agents, tasks, notes)
            mg.remember_many(world.items)
            run = Run()
            play(mg, world, plan[:episodes], 1, mode == "on", run)
            runs[mode] = run
        (suspect,) = mg.failure_suspects(by="agent", limit=1, scope=world.scope)
        report = mg.retract(
            agent=suspect.id, reason="fleet bench: top failure suspect", by="fleet-bench"
        )
        rest = Run()
        play(mg, world, plan[episodes:], episodes + 1, True, rest)
        backend, embedder = mg.store.backend, mg.embedder.name
    oracle = [succeeds(True, d) for d in plan]
    return Result(
        backend=backend,
        embedder=embedder,
        world=world,
        on=runs["on"],
        off=runs["off"],
        oracle=oracle[:episodes],
        retracted_agent=suspect.id,
        retracted=len(report.retracted),
        after=rest,
        after_oracle=oracle[episodes:],
        window=size,
    )


def plot(result: Result, path: Path) -> None:
    """Success over the sliding window per mode, and after the retraction."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = result.window
    n = len(result.on.success)
    both = result.on.success + result.after.success
    oracle = result.oracle + result.after_oracle
    xs = range(w, n + len(result.after.success) + 1)
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=110)
    ax.plot(xs, window(oracle, w), color="#999999", ls="--", label="oracle (right memory)")
    ax.plot(range(w, n + 1), window(result.off.success, w), color="#d62728", label="feedback off")
    ax.plot(xs, window(both, w), color="#1f77b4", lw=2, label="feedback on")
    ax.axvline(n + 0.5, color="#2ca02c", ls=":")
    ax.text(n + 3, 0.3, "poisoner retracted\n(top agent suspect)", color="#2ca02c", fontsize=8)
    figures = result.report()
    reach = figures["episode_on_reaches_90pct_of_oracle"]
    if reach is not None:
        ax.axvline(reach, color="#1f77b4", ls=":", alpha=0.6)
        ax.text(reach + 3, 0.3, f"90% of oracle\n(episode {reach})", color="#1f77b4", fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("episode")
    ax.set_ylabel(f"task success, last {w} episodes")
    ax.set_title(
        f"{len(result.world.agents)} agents, {len(result.world.tasks)} tasks, 1 compromised "
        f"({result.backend} store, {result.embedder} embedder)",
        fontsize=10,
    )
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "never" if value is None else str(value)


def print_report(result: Result) -> None:
    figures = result.report()
    print(f"\n== {figures['backend']} store, {figures['embedder']} embedder")
    for key, value in figures.items():
        if key not in ("backend", "embedder"):
            print(f"  {key:48s} {_fmt(value)}")
    checks = {
        "feedback reaches 90% of the oracle within 200 episodes": (
            figures["episode_on_reaches_90pct_of_oracle"] or 10**9
        )
        <= 200,
        "feedback off stays where it started (no task's top hit ever changes)": figures[
            "off_tasks_whose_top_hit_changed"
        ]
        == 0,
        "poisoner trust <= 0.3, every honest agent's >= 0.6": figures["trust_poisoner_final"] <= 0.3
        and figures["trust_lowest_honest_final"] >= 0.6,
        "a poisoned memory tops the suspects after <= 3 failures": (
            figures["failures_until_poisoned_memory_tops_suspects"] or 10**9
        )
        <= 3,
        "the proposed retraction is the poisoner": figures["retracted_agent_is_poisoner"],
    }
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'MISSED'}] {name}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neo4j", metavar="URI", help="also run on this Neo4j (not wiped)")
    parser.add_argument("--no-local", action="store_true", help="only the Neo4j run")
    parser.add_argument("--embedder", default="hashing", choices=["hashing", "minilm"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--after", type=int, default=100, help="episodes after the retraction")
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--plot", type=Path, default=Path("docs/img"), help="PNG directory")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    targets = ([] if args.no_local else [":memory:"]) + ([args.neo4j] if args.neo4j else [])
    if not targets:
        parser.error("nothing to run: --no-local needs --neo4j")
    for target in targets:
        result = simulate(
            functools.partial(MemoryGraph.open, target, embedder=args.embedder),
            seed=args.seed,
            episodes=args.episodes,
            after=args.after,
            size=args.window,
        )
        print_report(result)
        if not args.no_plot:
            name = "fleet.png" if result.backend == "local" else f"fleet-{result.backend}.png"
            plot(result, args.plot / name)
            print(f"  plot: {args.plot / name}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
