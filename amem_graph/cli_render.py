"""How the ``amem`` CLI shows things: rich tables for people, plain dicts for ``--json``.

Kept apart from the commands so each command body is only "call the facade, then render".
Every piece of stored text goes into a ``Text`` so memory content is never read as rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from amem_graph.models import Hit, Memory, PathStep, Signal
from amem_graph.schema import NODE_LABELS

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


def explain_table(hits: Sequence[Hit]) -> Table:
    """Every retrieval signal per hit (value and rank), the fused score and the graph path."""
    table = Table(title="Why these hits", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("#", justify="right")
    table.add_column("id", no_wrap=True)
    for name in SIGNALS:
        table.add_column(name, justify="right")
    table.add_column("fused", justify="right")
    table.add_column("path", overflow="fold")
    for hit in hits:
        exp = hit.explanation
        signals = {} if exp is None else exp.signals
        table.add_row(
            str(hit.rank),
            Text(hit.memory.id),
            *(signal_cell(signals.get(name)) for name in SIGNALS),
            "—" if exp is None else f"{exp.fused:.4f}",
            Text(format_path([] if exp is None else exp.path)),
        )
    return table


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
