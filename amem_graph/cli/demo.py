"""A scripted multi-agent story, readable in a minute: what ``amem demo`` runs.

A researcher reads docs and writes findings (one derived from a dubious forum post); a
deployer recalls them in two episodes, one that succeeds and one that fails, and the outcome
credit moves the confidence of what it read. The story ends on the provenance of the bad
finding; then an analyst retracts the forum post it rests on, with cascade, shows recall no
longer returns it or what derives from it, and restores it. Each step is a separate function
in ``STEPS``, so more can be appended without touching the others.

Every run uses fresh ids and its own scope, so re-running on a kept store tells the same story.
Step 4 also draws the lineage it shows into a PNG (``run_demo(picture=...)``; the CLI's default
is a file in the system's temporary folder, named in the output), when matplotlib is installed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from amem_graph.cli import render
from amem_graph.cli.render import snippet
from amem_graph.core.models import Memory
from amem_graph.core.schema import OUTCOME
from amem_graph.memory.graph import MemoryGraph

RESEARCHER = "researcher"
DEPLOYER = "deployer"

#: (role, content, source URI) of the documents the researcher reads
DOCS: tuple[tuple[str, str, str], ...] = (
    (
        "doc-runbook",
        "payments-api runbook: the service needs a database connection pool of at least 20 "
        "connections under peak load.",
        "https://docs.example.com/payments/runbook#capacity",
    ),
    (
        "doc-policy",
        "Platform deploy policy: every production rollout goes through a 5% canary for "
        "10 minutes before full traffic.",
        "https://docs.example.com/platform/deploy-policy",
    ),
    (
        "doc-forum",
        "Forum post: payments-api runs fine with a connection pool of 2; bigger pools only "
        "waste memory.",
        "https://forum.example.net/t/payments-pool/4711",
    ),
)

#: (role, content, parent roles) of the findings the researcher derives from them
FINDINGS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "finding-rollout",
        "To roll out payments-api safely: canary at 5% for 10 minutes, with a connection "
        "pool of at least 20.",
        ("doc-runbook", "doc-policy"),
    ),
    (
        "finding-pool",
        "Cost tip: shrink the payments-api connection pool to 2 to save memory.",
        ("doc-forum",),
    ),
)

#: the bad finding whose provenance step 4 traces
POISONED = "finding-pool"
#: what the analyst retracts in step 5: the forum post the bad finding derives from
RETRACT_ROOT = "doc-forum"
ANALYST = "analyst"
#: how many hits step 5 shows for each recall
RECALL_K = 4


@dataclass
class DemoState:
    """What the steps share and what the summary reports."""

    run: str
    written: dict[str, str] = field(default_factory=dict)
    episodes: dict[str, str] = field(default_factory=dict)
    hits: dict[str, list[str]] = field(default_factory=dict)
    confidence: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    retraction: dict[str, Any] = field(default_factory=dict)
    #: where step 4 draws the lineage (None: no picture); ``picture`` is what it wrote
    picture_to: Path | None = None
    picture: str | None = None

    @property
    def scope(self) -> str:
        """A scope per run, so recalls never see an earlier run's memories."""
        return f"demo-{self.run}"

    @property
    def task(self) -> str:
        """The task both agents work on."""
        return f"{self.run}:payments-rollout"

    def new_id(self, role: str) -> str:
        """Readable, run-unique id for a memory or episode."""
        return f"{self.run}:{role}"

    def summary(self) -> dict[str, Any]:
        """Plain, JSON-ready summary of the run."""
        return {
            "run": self.run,
            "scope": self.scope,
            "task": self.task,
            "written": dict(self.written),
            "episodes": dict(self.episodes),
            "hits": {k: list(v) for k, v in self.hits.items()},
            "confidence": {k: dict(v) for k, v in self.confidence.items()},
            "provenance": dict(self.provenance),
            "retraction": dict(self.retraction),
            "picture": self.picture,
        }

    def role(self, memory_id: str) -> str:
        """The readable part of a run-unique id (``ab12cd:finding-pool`` -> ``finding-pool``)."""
        return memory_id.removeprefix(f"{self.run}:")


Step = Callable[[MemoryGraph, Console, DemoState], None]


def _header(console: Console, title: str, story: str) -> None:
    console.print(Panel(story, title=f"[bold]{title}", title_align="left", expand=True))


# -- step 1: the researcher ---------------------------------------------------------------


def step_research(mg: MemoryGraph, console: Console, state: DemoState) -> None:
    """The researcher reads three docs (with source URIs) and derives two findings."""
    _header(
        console,
        "1 · researcher reads the docs",
        "The researcher stores what each document says, with its source URI, then writes two "
        "findings DERIVED_FROM them. One rests on a forum post that is wrong.",
    )
    episode = state.new_id("ep-research")
    with mg.episode(RESEARCHER, state.task, scope=state.scope, id=episode) as ep:
        for role, content, uri in DOCS:
            state.written[role] = ep.remember(content, source=uri, id=state.new_id(role)).id
        for role, content, parents in FINDINGS:
            memory = ep.remember(
                content,
                kind="insight",
                derived_from=[state.written[p] for p in parents],
                id=state.new_id(role),
            )
            state.written[role] = memory.id
    state.episodes["research"] = episode
    console.print(_written_table(mg, [state.written[r] for r, _, _ in DOCS + FINDINGS]))


def _written_table(mg: MemoryGraph, ids: Sequence[str]) -> Table:
    table = Table(title="Written by the researcher", title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("source / derived from", overflow="fold")
    table.add_column("content")
    for mid in ids:
        m = mg.get(mid)
        origin = m.source or "⇐ " + ", ".join(parent_ids(mg, mid))
        table.add_row(Text(mid), Text(origin), Text(snippet(m.content, 72)))
    return table


# -- steps 2 and 3: the deployer ----------------------------------------------------------


@dataclass(frozen=True)
class Deployment:
    """One scripted deployer episode: what it asks, what it does, how it ends."""

    label: str
    query: str
    action: str
    success: bool
    detail: str
    k: int = 2


GOOD_DEPLOY = Deployment(
    label="success",
    query="canary rollout plan for payments-api",
    action="Rolled out payments-api v1.4 through a 5% canary with a pool of 20: healthy.",
    success=True,
    detail="v1.4 healthy after canary",
)
BAD_DEPLOY = Deployment(
    label="failure",
    query="shrink the payments-api connection pool to save memory",
    action="Set the payments-api connection pool to 2 in production.",
    success=False,
    detail="pool exhausted, p99 latency 8 s, rolled back",
)


def run_deployment(mg: MemoryGraph, console: Console, state: DemoState, plan: Deployment) -> None:
    """Recall (logged as READ edges), act, record the outcome, and show confidence move."""
    episode = state.new_id(f"ep-deploy-{plan.label}")
    with mg.episode(DEPLOYER, state.task, scope=state.scope, id=episode) as ep:
        hits = ep.recall(plan.query, k=plan.k)
        before = {h.memory.id: h.memory.confidence for h in hits}
        state.written[f"action-{plan.label}"] = ep.remember(
            plan.action, kind="episodic", id=state.new_id(f"action-{plan.label}")
        ).id
        ep.outcome(success=plan.success, detail=plan.detail)
    after = {mid: mg.get(mid).confidence for mid in before}
    state.episodes[plan.label] = episode
    state.hits[plan.label] = list(before)
    state.confidence[plan.label] = {
        mid: {"before": before[mid], "after": after[mid]} for mid in before
    }
    console.print(_credit_table(mg, plan, state.confidence[plan.label]))


def _credit_table(mg: MemoryGraph, plan: Deployment, moves: dict[str, dict[str, float]]) -> Table:
    verdict = "[green]success[/]" if plan.success else "[red]failure[/]"
    table = Table(
        title=f"Deployer read for “{plan.query}” → {verdict}: {plan.detail}",
        title_justify="left",
    )
    table.add_column("read", no_wrap=True)
    table.add_column("by", no_wrap=True)
    table.add_column("confidence", justify="right", no_wrap=True)
    table.add_column("content")
    for mid, move in moves.items():
        m = mg.get(mid)
        delta = move["after"] - move["before"]
        arrow = "↑" if delta > 0 else "↓" if delta < 0 else "="
        change = f"{move['before']:.2f} → {move['after']:.2f} {arrow}"
        table.add_row(Text(mid), Text(m.agent or "—"), change, Text(snippet(m.content, 72)))
    return table


def step_deploy_success(mg: MemoryGraph, console: Console, state: DemoState) -> None:
    """The deployer follows the rollout finding and succeeds: what it read gains confidence."""
    _header(
        console,
        "2 · deployer rolls out v1.4",
        "In an episode the deployer recalls (each hit becomes a READ edge), acts, and records "
        "the outcome. Success credits every memory it read, weighted by rank.",
    )
    run_deployment(mg, console, state, GOOD_DEPLOY)


def step_deploy_failure(mg: MemoryGraph, console: Console, state: DemoState) -> None:
    """The deployer follows the forum-based cost tip and fails: what it read loses confidence."""
    _header(
        console,
        "3 · deployer tries to cut costs",
        "A second episode recalls the cost tip, shrinks the pool, and the service falls over. "
        "The failure lowers the confidence of what this episode read.",
    )
    run_deployment(mg, console, state, BAD_DEPLOY)


# -- step 4: provenance -------------------------------------------------------------------


def parent_ids(mg: MemoryGraph, memory_id: str) -> list[str]:
    """Memories this one was DERIVED_FROM."""
    return sorted(e.dst for e in mg.store.edges([memory_id], ["DERIVED_FROM"], "out"))


def derivation_chain(mg: MemoryGraph, memory_id: str) -> list[tuple[str, str]]:
    """Every (child, parent) DERIVED_FROM edge reachable from ``memory_id``, nearest first."""
    chain: list[tuple[str, str]] = []
    seen = {memory_id}
    frontier = [memory_id]
    while frontier:
        nxt = []
        for child in frontier:
            for parent in parent_ids(mg, child):
                chain.append((child, parent))
                if parent not in seen:
                    seen.add(parent)
                    nxt.append(parent)
        frontier = nxt
    return chain


def readers(mg: MemoryGraph, memory_id: str) -> dict[str, bool | None]:
    """Episodes that READ the memory, with their outcome (None while it has none)."""
    episodes = sorted({e.src for e in mg.store.edges([memory_id], ["READ"], "in")})
    results = mg.store.edges(episodes, ["RESULTED_IN"], "out") if episodes else []
    outcome_ids = {e.src: e.dst for e in results}
    nodes = mg.store.get_nodes(OUTCOME, list(outcome_ids.values()))
    out: dict[str, bool | None] = {}
    for ep in episodes:
        node = nodes.get(outcome_ids.get(ep, ""))
        out[ep] = None if node is None else bool(node.props.get("success"))
    return out


def _describe(memory: Memory) -> Text:
    return Text.assemble((memory.id, "bold"), "  ", snippet(memory.content, 60))


def _add_parents(mg: MemoryGraph, branch: Tree, memory_id: str, seen: set[str]) -> None:
    for parent_id in parent_ids(mg, memory_id):
        parent = mg.get(parent_id)
        node = branch.add(_describe(parent))
        if parent.source:
            node.add(Text(f"source: {parent.source}"))
        node.add(Text(f"written by {parent.agent} in {parent.episode}"))
        if parent_id not in seen:
            seen.add(parent_id)
            _add_parents(mg, node, parent_id, seen)


def provenance_tree(mg: MemoryGraph, memory_id: str) -> Tree:
    """Who wrote a memory, where it came from, and who read it with what outcome."""
    memory = mg.get(memory_id)
    tree = Tree(_describe(memory))
    tree.add(Text(f"written by {memory.agent} in episode {memory.episode} (task {memory.task})"))
    tree.add(Text(f"source: {memory.source or '—'}"))
    _add_parents(mg, tree.add("derived from"), memory_id, {memory_id})
    read = tree.add("read by")
    for episode, success in readers(mg, memory_id).items():
        verdict = {True: "success", False: "failure", None: "no outcome yet"}[success]
        read.add(Text(f"{episode} → {verdict}"))
    return tree


def step_provenance(mg: MemoryGraph, console: Console, state: DemoState) -> None:
    """Trace the bad finding back to its forum source and forward to the episode it broke."""
    _header(
        console,
        "4 · where did the bad advice come from?",
        "Following the graph from the cost tip: its author, episode, the DERIVED_FROM chain "
        "down to the forum post it rests on, and the episodes that read it.",
    )
    target = state.written[POISONED]
    memory = mg.get(target)
    chain = derivation_chain(mg, target)
    sources = sorted({s for _, p in chain if (s := mg.get(p).source)})
    state.provenance = {
        "memory": target,
        "agent": memory.agent,
        "episode": memory.episode,
        "task": memory.task,
        "source": memory.source,
        "derived_from": [list(edge) for edge in chain],
        "sources": sources,
        "read_by": {ep: ok for ep, ok in readers(mg, target).items()},
    }
    console.print(provenance_tree(mg, target))
    if state.picture_to is not None:
        draw_lineage(mg, console, state, target)


def draw_lineage(mg: MemoryGraph, console: Console, state: DemoState, target: str) -> None:
    """The same lineage as a picture (trace().draw()); without matplotlib, say how to get it."""
    assert state.picture_to is not None
    try:
        mg.trace(target).draw(path=state.picture_to, strip=f"{state.run}:")
    except ImportError as exc:
        console.print(f"[dim]No lineage picture: {exc}[/]")
        return
    state.picture = str(state.picture_to)
    console.print(f"Lineage picture of {state.role(target)} written to [bold]{state.picture}[/]")


# -- step 5: retract and restore ----------------------------------------------------------


def recall_ids(mg: MemoryGraph, state: DemoState, query: str) -> list[str]:
    """What recall returns in the demo's scope (outside any episode: no READ edges)."""
    return [h.memory.id for h in mg.recall(query, k=RECALL_K, scope=state.scope)]


def _recall_table(state: DemoState, columns: dict[str, list[str]]) -> Table:
    withdrawn = set(state.retraction["retracted"]) | set(state.retraction["quarantined"])
    table = Table()
    table.add_column("#", justify="right")
    for name in columns:
        table.add_column(name, no_wrap=True)
    for rank in range(RECALL_K):
        cells = []
        for ids in columns.values():
            mid = ids[rank] if rank < len(ids) else None
            style = "red" if mid in withdrawn else ""
            cells.append(Text("—" if mid is None else state.role(mid), style=style))
        table.add_row(str(rank + 1), *cells)
    return table


def step_retract_and_restore(mg: MemoryGraph, console: Console, state: DemoState) -> None:
    """Retract the forum post with cascade, show recall without it, then restore it."""
    _header(
        console,
        "5 · the analyst takes the forum post back",
        "Its blast radius first; then one retraction with cascade: the post is retracted, the "
        "cost tip DERIVED_FROM it too, and what the failing episode wrote after reading the tip "
        "is quarantined. Recall stops returning them. Restoring undoes it exactly.",
    )
    target = state.written[RETRACT_ROOT]
    query = BAD_DEPLOY.query
    before = recall_ids(mg, state, query)
    impact = mg.impact(target)
    report = mg.retract(
        target, reason="forum advice contradicts the runbook; it caused the outage", by=ANALYST
    )
    after = recall_ids(mg, state, query)
    restored = mg.restore(report.id, by=ANALYST, reason="demo: a retraction is reversible")
    back = recall_ids(mg, state, query)
    state.retraction = {
        "target": target,
        "id": report.id,
        "impact": dict(impact.counts),
        "retracted": list(report.retracted),
        "quarantined": list(report.quarantined),
        "query": query,
        "recall": {"before": before, "after_retract": after, "after_restore": back},
        "restored": list(restored.restored),
    }

    def names(ids: list[str]) -> str:
        return ", ".join(state.role(i) for i in ids) or "nothing"

    console.print(
        f"Blast radius of {state.role(target)}: derived {names(impact.derived_ids)}; read by "
        f"{names(impact.episode_ids)} ({len(impact.failed_outcome_ids)} failed); written after "
        f"reading: {names(impact.written_ids)}."
    )
    console.print(render.retraction_table(report))
    console.print(f"Restored {len(restored.restored)} memories with `restore({report.id})`.")
    columns = {"before": before, "after retract": after, "after restore": back}
    console.print(Text(f"Recall “{query}” (red: what the retraction took back):"))
    console.print(_recall_table(state, columns))


STEPS: list[Step] = [
    step_research,
    step_deploy_success,
    step_deploy_failure,
    step_provenance,
    step_retract_and_restore,
]


def run_demo(
    mg: MemoryGraph,
    console: Console,
    steps: Sequence[Step] | None = None,
    *,
    picture: Path | None = None,
) -> dict[str, Any]:
    """Play the story on ``mg``, printing to ``console``; return a JSON-ready summary.

    ``picture`` is where step 4 draws the lineage it shows (a PNG; None draws nothing).
    """
    state = DemoState(run=uuid.uuid4().hex[:6], picture_to=picture)
    console.print(
        Panel(
            f"Two agents share one memory graph (scope [bold]{state.scope}[/]): a "
            f"[bold]{RESEARCHER}[/] and a [bold]{DEPLOYER}[/].",
            title="[bold]amem demo",
            title_align="left",
        )
    )
    for step in STEPS if steps is None else steps:
        step(mg, console, state)
    return state.summary()
