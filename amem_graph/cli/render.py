"""How the ``amem`` CLI shows things: rich tables for people, plain dicts for ``--json``.

Kept apart from the commands so each command body is only "call the facade, then render".
Every piece of stored text goes into a ``Text`` so memory content is never read as rich markup.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from amem_graph.core.models import Agent, Hit, Memory, PathStep, Signal
from amem_graph.core.schema import MEMORY, NODE_LABELS, OUTCOME
from amem_graph.memory import (
    AuditEvent,
    Impact,
    ProvenanceGraph,
    RestoreReport,
    RetractionReport,
    Suspect,
    Trace,
)

if TYPE_CHECKING:  # the analyst module pulls in the Neo4j driver; only its types are needed
    from amem_graph.analyst.pack import AnalystQuery

#: narrowest a column may get before a table is laid out record by record
MIN_COLUMN_WIDTH = 14
SIGNALS = ("vector", "text", "graph", "recency", "importance", "confidence")
SHOW_FIELDS = (
    "id",
    "content",
    "kind",
    "scope",
    "agent",
    "task",
    "episode",
    "source",
    "tags",
    "keywords",
    "context",
    "created_at",
    "status",
    "confidence",
    "version",
)


def memory_record(memory: Memory) -> dict[str, Any]:
    """JSON-ready memory without its embedding (large and meaningless to a reader)."""
    return memory.model_dump(mode="json", exclude={"embedding"})


def hit_record(hit: Hit) -> dict[str, Any]:
    """JSON-ready hit: rank, score, memory and, when asked for, the explanation."""
    record = hit.model_dump(mode="json", exclude={"memory": {"embedding"}})
    if record.get("explanation") is None:
        record.pop("explanation", None)
    return record


def snippet(text: str, width: int = 80) -> str:
    """One line of at most ``width`` characters, so tables stay one row per hit."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _cell(value: object) -> Text:
    if value is None or value == [] or value == "":
        return Text("—", style="dim")
    if isinstance(value, list):
        return Text(", ".join(str(v) for v in value))
    if isinstance(value, float):
        return Text(f"{value:.3f}")
    return Text(str(value))


def memory_table(memory: Memory, title: str = "Memory") -> Table:
    """Field/value table of one memory (what ``amem show`` prints)."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    data = memory_record(memory)
    for name in SHOW_FIELDS:
        table.add_row(name, _cell(data.get(name)))
    return table


def hits_table(hits: Sequence[Hit], title: str = "Recall") -> Table:
    """Rank, id, score, agent and a content snippet per hit."""
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column("score", justify="right")
    table.add_column("agent")
    table.add_column("content", ratio=1)
    for hit in hits:
        table.add_row(
            str(hit.rank),
            Text(hit.memory.id),
            f"{hit.score:.4f}",
            _cell(hit.memory.agent),
            Text(snippet(hit.memory.content)),
        )
    return table


def signal_cell(signal: Signal | None) -> str:
    """``value #rank``, or a dash when this signal did not see the memory."""
    if signal is None:
        return "—"
    rank = "" if signal.rank is None else f" #{signal.rank}"
    return f"{signal.value:.3f}{rank}"


def format_path(path: Sequence[PathStep]) -> str:
    """Graph path as ``a -[EDGE]-> b``, chained while steps share a node."""
    if not path:
        return "—"
    first = path[0]
    out = f"{first.source} -[{first.edge}]-> {first.target}"
    here = first.target
    for step in path[1:]:
        if step.source == here:
            out += f" -[{step.edge}]-> {step.target}"
            here = step.target
        elif step.target == here:
            out += f" <-[{step.edge}]- {step.source}"
            here = step.source
        else:
            out += f"; {step.source} -[{step.edge}]-> {step.target}"
            here = step.target
    return out


#: the fused score in words: it is a sum of weighted reciprocal ranks, so only its order counts
FUSED_NOTE = (
    "fused = the sum over signals of weight / (rrf_k + rank), plus the priors: it only orders "
    "the hits; its size means nothing on its own."
)


def explain_table(hits: Sequence[Hit]) -> Group:
    """Every retrieval signal per hit (value and rank) and the fused score, then each graph
    path on a line of its own (a path in a table column folds one character per line)."""
    table = Table(
        title="Why these hits",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        caption=FUSED_NOTE,
        caption_justify="left",
    )
    table.add_column("#", justify="right")
    table.add_column("id", overflow="fold", min_width=6)
    for name in SIGNALS:
        table.add_column(name, justify="right")
    table.add_column("fused", justify="right")
    paths = Text()
    searched = next((h.explanation.searched for h in hits if h.explanation), None)
    if searched is not None:  # the same for every hit of a recall
        paths.append("searched without the agents it names: ", style="bold")
        paths.append(searched + "\n")
    for hit in hits:
        exp = hit.explanation
        signals = {} if exp is None else exp.signals
        table.add_row(
            str(hit.rank),
            Text(hit.memory.id),
            *(signal_cell(signals.get(name)) for name in SIGNALS),
            "—" if exp is None else f"{exp.fused:.4f}",
        )
        if exp is not None and exp.path:
            paths.append(f"#{hit.rank} {hit.memory.id} came in by the graph: ", style="bold")
            paths.append(format_path(exp.path) + "\n")
    return Group(table, paths) if paths else Group(table)


def stats_heading(stats: dict[str, Any]) -> Text:
    """The backend and embedder, one line above the counts."""
    embedder = stats.get("embedder")
    used = "none yet" if not embedder else f"{embedder['name']} ({embedder['dims']} dims)"
    return Text(f"backend: {stats['backend']}   embedder: {used}")


def stats_table(stats: dict[str, Any]) -> Table:
    """Node counts by label and edge counts by type."""
    table = Table()
    table.add_column("kind")
    table.add_column("label / edge type")
    table.add_column("count", justify="right")
    counts: dict[str, int] = stats.get("counts", {})
    for name in sorted(counts, key=lambda n: (n not in NODE_LABELS, n)):
        table.add_row("node" if name in NODE_LABELS else "edge", name, str(counts[name]))
    if not counts:
        table.add_row("", Text("(empty)", style="dim"), "0")
    return table


def llm_table(stats: dict[str, Any]) -> Table | None:
    """Chat-model usage per note operation, or None when no model was ever used."""
    usage: dict[str, dict[str, int]] = stats.get("llm") or {}
    if not usage:
        return None
    metrics = list(next(iter(usage.values())))
    table = Table(title="LLM usage (note layer)")
    table.add_column("operation")
    for metric in metrics:
        table.add_column(metric.replace("_", " "), justify="right")
    for op, row in usage.items():
        table.add_row(op, *(str(row.get(m, 0)) for m in metrics))
    return table


# -- provenance ---------------------------------------------------------------------------

_STATUS_STYLE = {
    "active": "green",
    "quarantined": "yellow",
    "retracted": "red",
    "superseded": "dim",
    "archived": "dim",
}


def _status(status: object) -> Text:
    name = str(status or "?")
    return Text(f"[{name}]", style=_STATUS_STYLE.get(name, ""))


class _View:
    """Lookups over a provenance view's nodes and edges, for drawing it."""

    def __init__(self, graph: ProvenanceGraph) -> None:
        self.nodes = {(n.label, n.id): n for n in graph.nodes}
        self.parents: dict[str, list[str]] = defaultdict(list)
        self.children: dict[str, list[str]] = defaultdict(list)
        self.readers: dict[str, set[str]] = defaultdict(set)
        self.outcome: dict[str, str] = {}
        self.generated_in: dict[str, list[str]] = defaultdict(list)
        for e in graph.edges:
            if e.type == "DERIVED_FROM":
                self.parents[e.src].append(e.dst)
                self.children[e.dst].append(e.src)
            elif e.type == "READ":
                self.readers[e.dst].add(e.src)
            elif e.type == "RESULTED_IN":
                self.outcome[e.src] = e.dst
            elif e.type == "GENERATED_IN":
                self.generated_in[e.dst].append(e.src)

    def memory(self, memory_id: str) -> Text:
        node = self.nodes.get((MEMORY, memory_id))
        props = {} if node is None else node.props
        return Text.assemble(
            (memory_id, "bold"),
            " ",
            _status(props.get("status")),
            "  ",
            snippet(str(props.get("content", "")), 60),
            (f"  by {props['agent']}" if props.get("agent") else "", "dim"),
        )

    def verdict(self, episode_id: str) -> Text:
        outcome = self.nodes.get((OUTCOME, self.outcome.get(episode_id, "")))
        success = None if outcome is None else outcome.props.get("success")
        if success is None:
            return Text("no outcome yet", style="dim")
        return Text("success", style="green") if success else Text("failure", style="red")


def _grow(
    view: _View, branch: Tree, memory_id: str, links: dict[str, list[str]], seen: set[str]
) -> None:
    for other in sorted(links.get(memory_id, [])):
        node = branch.add(view.memory(other))
        if other not in seen:
            seen.add(other)
            _grow(view, node, other, links, seen)


def trace_tree(trace: Trace) -> Tree:
    """Upstream lineage and downstream use of one memory, as ``amem trace`` draws it."""
    view = _View(trace)
    tree = Tree(view.memory(trace.memory_id))
    up = tree.add(Text("upstream", style="bold cyan"))
    lineage = trace.upstream
    derived_from = up.add("derived from" if view.parents.get(trace.memory_id) else "derived from —")
    _grow(view, derived_from, trace.memory_id, view.parents, {trace.memory_id})
    up.add(Text("agents: " + (", ".join(lineage.agent_ids) or "—")))
    up.add(Text("episodes: " + (", ".join(lineage.episode_ids) or "—")))
    up.add(Text("tasks: " + (", ".join(lineage.task_ids) or "—")))
    up.add(Text("sources: " + (", ".join(lineage.sources) or "—")))
    down = tree.add(Text("downstream", style="bold magenta"))
    derived = down.add(
        "derived memories" if view.children.get(trace.memory_id) else "derived memories —"
    )
    _grow(view, derived, trace.memory_id, view.children, {trace.memory_id})
    impact = trace.downstream
    read = down.add("read by" if impact.episode_ids else "read by —")
    written = set(impact.written_ids)
    tainted = {trace.memory_id, *impact.derived_ids}
    for episode_id in impact.episode_ids:
        what = sorted(m for m in tainted if episode_id in view.readers.get(m, set()))
        branch = read.add(
            Text.assemble(
                (episode_id, "bold"), f" read {', '.join(what)} → ", view.verdict(episode_id)
            )
        )
        for mid in sorted(m for m in view.generated_in.get(episode_id, []) if m in written):
            branch.add(Text.assemble("then wrote ", view.memory(mid)))
    if trace.hidden:
        tree.add(Text(f"{trace.hidden} nodes of other scopes left out", style="dim"))
    return tree


def impact_record(impact: Impact) -> dict[str, Any]:
    """JSON-ready blast radius: counts and id lists (not the view's nodes and edges)."""
    return impact.model_dump(mode="json", exclude={"nodes", "edges"})


def _ids(ids: Sequence[str]) -> Text:
    return Text(", ".join(ids)) if ids else Text("—", style="dim")


def impact_table(impact: Impact) -> Table:
    """How many of each kind of thing the roots reached, and which."""
    table = Table(title=f"Impact of {', '.join(impact.roots)}", title_justify="left")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_column("ids", overflow="fold")
    rows = (
        ("derived memories", impact.derived_ids),
        ("written after reading", impact.written_ids),
        ("episodes that read", impact.episode_ids),
        ("outcomes", impact.outcome_ids),
        ("failed outcomes", impact.failed_outcome_ids),
    )
    for label, ids in rows:
        table.add_row(label, str(len(ids)), _ids(ids))
    if impact.hidden:
        table.caption = f"{impact.hidden} nodes of other scopes left out"
    return table


def _field_table(title: str, caption: str | None) -> Table:
    """A two-column field/value table for a report."""
    table = Table(
        title=title,
        caption=caption,
        show_header=False,
        title_justify="left",
        caption_justify="left",
    )
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    return table


def retraction_table(report: RetractionReport) -> Table:
    """What a retraction did (or, dry, would do), and how to undo it."""
    if report.dry_run:  # nothing is stored, so there is no id that restore could take
        table = _field_table(
            "Retraction (dry run)",
            "dry run: nothing was changed or stored; run it again without --dry-run to retract",
        )
    else:
        table = _field_table(f"Retraction {report.id}", None)
    table.add_row("selector", Text(report.selector))
    table.add_row("reason", Text(report.reason))
    table.add_row("by", _cell(report.by))
    table.add_row("cascade", "yes" if report.cascade else "no")
    table.add_row("targets", _ids(report.targets))
    table.add_row(Text("retracted", style="red"), _ids(report.retracted))
    table.add_row(Text("quarantined", style="yellow"), _ids(report.quarantined))
    if report.scope is not None:
        table.add_row("scope", Text(report.scope))
    if report.cross_scope:
        table.add_row(Text("in other scopes", style="red"), _ids(report.cross_scope))
    if report.restored_at is not None:
        table.add_row("restored at", report.restored_at.isoformat())
    elif not report.dry_run:
        table.add_row("undo", Text(f"amem restore {report.id}"))
    return table


def restore_table(report: RestoreReport) -> Table:
    """What a restore changed, and what another retraction still holds down."""
    table = _field_table(
        f"Restored {report.id}",
        "it was already restored: nothing changed" if report.already_restored else None,
    )
    table.add_row("restored at", report.restored_at.isoformat())
    table.add_row(Text("back to their own status", style="green"), _ids(report.restored))
    table.add_row(Text("still held by another retraction", style="yellow"), _ids(report.held))
    for mid, rivals in report.forked.items():
        table.add_row(
            Text("current beside", style="yellow"),
            Text(f"{mid} and {', '.join(rivals)} supersede the same memory: supersede one"),
        )
    return table


def records_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], width: int | None
) -> Table:
    """Rows as a table, or, when ``width`` is too narrow for the columns, one record after
    another as field/value pairs, so words never break across lines."""
    if width is None or len(columns) * MIN_COLUMN_WIDTH <= width:
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for name in columns:
            table.add_column(name, overflow="fold")
        for row in rows:
            table.add_row(*(_cell(v) for v in row))
    else:
        table = Table(title=title, title_justify="left", show_header=False, box=box.SIMPLE)
        table.add_column("field", style="bold", no_wrap=True)
        table.add_column("value", overflow="fold")
        for n, row in enumerate(rows):
            if n:
                table.add_section()
            for name, value in zip(columns, row, strict=True):
                table.add_row(name, _cell(value))
    if not rows:
        table.add_row(Text("(none)", style="dim"), *[""] * (len(table.columns) - 1))
    return table


def agent_table(agent: Agent) -> Table:
    """An agent's trust overall (or in the scope asked for) and per scope."""
    table = _field_table(f"Agent {agent.id}", None)
    table.add_row("trust", f"{agent.trust:.3f}")
    table.add_row("memories", str(agent.memory_count))
    table.add_row("credit", f"{agent.successes:g} success, {agent.failures:g} failure")
    for scope, trust in sorted(agent.trust_by_scope.items()):
        table.add_row(f"trust in {scope}", f"{trust:.3f}")
    return table


def suspects_table(suspects: Sequence[Suspect]) -> Table:
    """Failure suspects, most suspicious first, with their evidence."""
    kind = suspects[0].kind if suspects else "memory"
    table = Table(title=f"Failure suspects ({kind})", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column("suspicion", justify="right")
    table.add_column("failures", justify="right")
    table.add_column("successes", justify="right")
    table.add_column("failed episodes", justify="right")
    table.add_column("agent" if kind == "memory" else "memories")
    table.add_column("content" if kind == "memory" else "episodes", ratio=1)
    for i, s in enumerate(suspects, start=1):
        table.add_row(
            str(i),
            Text(s.id),
            f"{s.suspicion:.3f}",
            f"{s.failures:g}",
            f"{s.successes:g}",
            str(len(s.failed_episodes)),
            _cell(s.agent) if kind == "memory" else _ids(s.memory_ids),
            Text(snippet(s.content or "")) if kind == "memory" else _ids(s.failed_episodes),
        )
    return table


def audit_table(events: Sequence[AuditEvent], width: int | None = None) -> Table:
    """Audit events, oldest first."""
    columns = ("at", "kind", "actor", "reason", "memories", "agents", "retraction")
    rows = [
        (
            e.at.isoformat(timespec="seconds"),
            e.kind,
            e.actor,
            e.reason,
            _ids(e.memory_ids),
            _ids(e.agent_ids),
            e.retraction_id,
        )
        for e in events
    ]
    return records_table("Audit log", columns, rows, width)


# -- data: transfer, analyst queries, indexes ---------------------------------------------


def rows_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str, width: int | None = None
) -> Table:
    """Any tabular result (lists joined); vertical when ``width`` is narrow for its columns."""
    return records_table(title, columns, rows, width)


def queries_table(queries: Sequence[AnalystQuery]) -> Table:
    """The analyst pack: name, question, parameters."""
    table = Table(title="Analyst queries (amem cypher NAME --param k=v)", title_justify="left")
    table.add_column("name", no_wrap=True, style="bold")
    table.add_column("question", ratio=3)
    table.add_column("params", ratio=1)
    for q in queries:
        params = "\n".join(p.describe() for p in q.params) or "—"
        table.add_row(q.name, Text(q.question), Text(params))
    return table
