"""Pictures of provenance views: a layered drawing of a trace or a blast radius.

A provenance view is drawn left to right in the order of its story: agents and tasks, then
sources and the episodes that wrote the lineage, the lineage memories by derivation depth, the
episodes that read them, their outcomes, and what those episodes wrote after reading. Each
column is ordered by its neighbours' positions so edges cross little. A column with more than
``max_per_column`` nodes keeps the focus and the nodes that matter most (withdrawn memories,
failed outcomes, then the best connected) and folds the rest into one "+N more" node, so a
large radius stays a picture and not a hairball.

Arrows keep the stored direction of each edge (``ep READ m`` points from the episode back to
the memory), coloured by type, with one label per type and column pair. Marker shape says what
a node is, fill says its state: memories by status, outcomes by success.

matplotlib is imported only when drawing (``pip install "amem-graph[notebooks]"``); figures are
built without pyplot, so nothing global is touched and nothing needs a display.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import networkx as nx

from amem_graph.core.errors import ValidationError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from amem_graph.provenance.trace import ProvenanceGraph

INSTALL_HINT: Final = 'pip install "amem-graph[notebooks]"'

#: marker per node label (memories round, episodes diamonds, outcomes hexagons ...)
SHAPES: Final = {
    "Memory": "o",
    "Episode": "D",
    "Outcome": "h",
    "Agent": "s",
    "Task": "p",
    "Source": "^",
}
#: fill of a memory by status
STATUS_COLOURS: Final = {
    "active": "#4c9be8",
    "quarantined": "#f2a93b",
    "retracted": "#d64545",
    "superseded": "#9e9e9e",
}
#: fill of an outcome by success
OUTCOME_COLOURS: Final = {True: "#3baa5c", False: "#d64545", None: "#bdbdbd"}
#: fill of the other labels
LABEL_COLOURS: Final = {
    "Episode": "#b39ddb",
    "Agent": "#ffd54f",
    "Task": "#80cbc4",
    "Source": "#a1887f",
}
EDGE_COLOURS: Final = {
    "DERIVED_FROM": "#1f4e9c",
    "READ": "#7e57c2",
    "RESULTED_IN": "#2e7d32",
    "GENERATED_IN": "#ef6c00",
    "ATTRIBUTED_TO": "#8d6e63",
    "FROM_SOURCE": "#5d4037",
    "PERFORMED_BY": "#9e9d24",
    "PART_OF": "#00897b",
    "FOR_TASK": "#26a69a",
}
FOLDED_COLOUR: Final = "#eeeeee"
#: which nodes a crowded column keeps first (lower is kept first)
_KEEP_ORDER: Final = {"Memory": 0, "Outcome": 1, "Episode": 2, "Source": 3, "Agent": 4, "Task": 5}


def require_matplotlib() -> None:
    """Fail with the install command when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"drawing needs matplotlib: {INSTALL_HINT}") from exc


def node_colour(data: dict[str, Any]) -> str:
    """Fill of one networkx node: status for memories, success for outcomes, else its label."""
    label = data.get("label")
    if label == "Memory":
        return STATUS_COLOURS.get(str(data.get("status")), STATUS_COLOURS["active"])
    if label == "Outcome":
        success = data.get("success")
        return OUTCOME_COLOURS[success if isinstance(success, bool) else None]
    if label == "Folded":
        return FOLDED_COLOUR
    return LABEL_COLOURS.get(str(label), "#cccccc")


def caption(data: dict[str, Any], width: int = 20, strip: str = "") -> str:
    """Two short lines under a node: its id (``strip`` removed), and its kind and status (or
    its verdict)."""
    label = data.get("label")
    if label == "Folded":
        return str(data["text"])
    name = str(data.get("uri") or data.get("id")) if label == "Source" else str(data.get("id"))
    if label == "Source":
        name = name.split("://", 1)[-1]
    if strip:
        name = name.replace(strip, "")
    short = name if len(name) <= width else name[: width - 1] + "…"
    if label == "Memory":
        return f"{short}\n{data.get('kind', '')} · {data.get('status', '')}"
    if label == "Outcome":
        success = data.get("success")
        verdict = "success" if success is True else "FAILED" if success is False else "no verdict"
        return f"{short}\n{verdict}"
    return f"{short}\n{str(label).lower()}"


@dataclass
class Layout:
    """Where each drawn node goes, and which real nodes were folded into which summary."""

    graph: Any  #: the networkx DiGraph actually drawn (folded nodes replaced)
    column: dict[str, int]
    position: dict[str, tuple[float, float]]
    folded: dict[str, list[str]]


def columns(graph: Any) -> dict[str, int]:
    """Column per node, in the order of the story a provenance view tells.

    Agents and tasks first; then sources and the episodes that wrote the lineage; the lineage
    memories by derivation depth (a memory one column right of its deepest parent); then the
    episodes that read them, their outcomes, and what those episodes wrote after reading.
    Empty columns close up.
    """
    labels = {n: str(d.get("label")) for n, d in graph.nodes(data=True)}
    by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for src, dst, data in graph.edges(data=True):
        by_type[str(data.get("type"))].append((src, dst))
    readers = {src for src, _ in by_type["READ"]}
    written = {m for m, e in by_type["GENERATED_IN"] if e in readers and labels[m] == "Memory"} - {
        child for child, _ in by_type["DERIVED_FROM"]
    }
    lineage = [n for n, label in labels.items() if label == "Memory" and n not in written]
    derivation = nx.DiGraph()
    derivation.add_nodes_from(lineage)
    derivation.add_edges_from(
        (parent, child)
        for child, parent in by_type["DERIVED_FROM"]
        if child in derivation and parent in derivation
    )
    depth: dict[str, int] = {}
    for scc in _topological_components(derivation):
        level = 1 + max((depth[p] for n in scc for p in derivation.predecessors(n)), default=-1)
        depth.update(dict.fromkeys(scc, level))
    deepest = max(depth.values(), default=0)
    col: dict[str, int] = {}
    for node, label in labels.items():
        if label in ("Agent", "Task"):
            col[node] = 0
        elif label == "Source" or (label == "Episode" and node not in readers):
            col[node] = 1
        elif label == "Memory":
            col[node] = 2 + depth[node] if node in depth else deepest + 5
        elif label == "Episode":
            col[node] = deepest + 3
        else:  # outcomes, and anything else a view may hold
            col[node] = deepest + 4
    used = sorted(set(col.values()))
    closed = {c: i for i, c in enumerate(used)}
    return {node: closed[c] for node, c in col.items()}


def _topological_components(graph: Any) -> list[list[str]]:
    """Strongly connected components in topological order (a cycle shares one depth)."""
    dag = nx.condensation(graph)
    members = dag.graph["mapping"]
    groups: dict[int, list[str]] = defaultdict(list)
    for node, scc in members.items():
        groups[scc].append(node)
    return [sorted(groups[scc]) for scc in nx.topological_sort(dag)]


def _keep_rank(graph: Any, node: str, focus: set[str]) -> tuple[int, int, int, str]:
    data = graph.nodes[node]
    notable = data.get("status") not in (None, "active") or data.get("success") is False
    return (
        0 if node in focus else 1 if notable else 2,
        _KEEP_ORDER.get(str(data.get("label")), 9),
        -graph.degree(node),
        node,
    )


def fold(graph: Any, col: dict[str, int], focus: set[str], limit: int) -> dict[str, list[str]]:
    """Fold each crowded column's least important nodes into one summary node, in place."""
    folded: dict[str, list[str]] = {}
    by_col: dict[int, list[str]] = defaultdict(list)
    for node, c in col.items():
        by_col[c].append(node)
    for c, nodes in sorted(by_col.items()):
        if len(nodes) <= limit:
            continue
        ranked = sorted(nodes, key=lambda n: _keep_rank(graph, n, focus))
        hidden = ranked[limit - 1 :]
        key = f"+more:{c}"
        kinds = sorted({str(graph.nodes[n].get("label", "node")).lower() for n in hidden})
        text = f"+{len(hidden)} more\n{' / '.join(kinds)}"
        graph.add_node(key, label="Folded", id=key, text=text)
        for node in hidden:
            for src, _, data in list(graph.in_edges(node, data=True)):
                if src not in hidden and not graph.has_edge(src, key):
                    graph.add_edge(src, key, **data)
            for _, dst, data in list(graph.out_edges(node, data=True)):
                if dst not in hidden and not graph.has_edge(key, dst):
                    graph.add_edge(key, dst, **data)
            graph.remove_node(node)
            del col[node]
        col[key] = c
        folded[key] = sorted(hidden)
    return folded


def order_columns(graph: Any, col: dict[str, int], sweeps: int = 6) -> dict[str, float]:
    """Vertical slot of each node: barycentre sweeps over its neighbours, ties by kind and id."""
    by_col: dict[int, list[str]] = defaultdict(list)
    for node in sorted(col, key=lambda n: (_KEEP_ORDER.get(graph.nodes[n].get("label"), 9), n)):
        by_col[col[node]].append(node)
    slot = {node: float(i) for nodes in by_col.values() for i, node in enumerate(nodes)}
    undirected = graph.to_undirected(as_view=True)
    for sweep in range(sweeps):
        order = sorted(by_col) if sweep % 2 == 0 else sorted(by_col, reverse=True)
        for c in order:
            nodes = by_col[c]

            def centre(node: str, nodes: list[str] = nodes) -> tuple[float, str]:
                near = [slot[n] for n in undirected.neighbors(node) if col[n] != col[node]]
                return (sum(near) / len(near) if near else slot[node], node)

            nodes.sort(key=centre)
            for i, node in enumerate(nodes):
                slot[node] = float(i)
    tallest = max((len(nodes) for nodes in by_col.values()), default=1)
    return {
        node: (tallest - 1) / 2 - (slot[node] - (len(by_col[col[node]]) - 1) / 2) for node in col
    }


def layout(view: ProvenanceGraph, focus: Iterable[str] = (), max_per_column: int = 12) -> Layout:
    """Columns, folding and positions for ``view`` (see the module docstring)."""
    if max_per_column < 2:
        raise ValidationError(f"max_per_column must be at least 2, got {max_per_column}")
    graph = view.to_networkx()
    col = columns(graph)
    folded = fold(graph, col, set(focus), max_per_column)
    ys = order_columns(graph, col)
    position = {node: (float(col[node]), ys[node]) for node in col}
    return Layout(graph=graph, column=col, position=position, folded=folded)


def _new_figure(width: float, height: float) -> Figure:
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def draw_graph(
    view: ProvenanceGraph,
    *,
    focus: Sequence[str] = (),
    title: str | None = None,
    max_per_column: int = 12,
    edge_labels: bool = True,
    strip: str = "",
    path: str | Path | None = None,
) -> Figure:
    """A matplotlib Figure of ``view``; ``focus`` nodes get a heavy outline; ``strip`` is cut
    from captions (say a run prefix all ids share); ``path`` also writes it (PNG, SVG or PDF by
    suffix)."""
    plan = layout(view, focus, max_per_column)
    graph, pos = plan.graph, plan.position
    n_cols = max(plan.column.values(), default=0) + 1
    tallest = max(
        (sum(1 for c in plan.column.values() if c == k) for k in range(n_cols)), default=1
    )
    width, height = max(7.0, 2.2 * n_cols + 2.0), max(3.5, 0.62 * tallest + 1.6)
    fig = _new_figure(width, height)
    # fixed margins, the legend in the right-hand 1.9 inches (a layout engine costs seconds)
    ax = fig.add_axes((0.01, 0.02, 1 - 1.95 / width, 1 - 0.45 / height))
    _draw_edges(ax, graph, pos, plan.column, edge_labels)
    _draw_nodes(ax, graph, pos, set(focus), strip)
    ax.set_xlim(-0.6, n_cols - 0.4)
    ax.set_ylim(-0.9, tallest - 0.3)
    ax.set_axis_off()
    if title:
        ax.set_title(
            title.replace(strip, "") if strip else title, loc="left", fontsize=12, fontweight="bold"
        )
    _legend(fig, ax, graph)
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


def _draw_nodes(
    ax: Axes, graph: Any, pos: dict[str, tuple[float, float]], focus: set[str], strip: str
) -> None:
    for node, data in graph.nodes(data=True):
        x, y = pos[node]
        label = data.get("label")
        marker = SHAPES.get(str(label), "o") if label != "Folded" else "s"
        dot = ax.scatter(
            [x],
            [y],
            s=520 if label != "Folded" else 900,
            marker=marker,
            c=[node_colour(data)],
            edgecolors="black" if node in focus else "#555555",
            linewidths=3.0 if node in focus else 0.8,
            zorder=3,
        )
        dot.set_gid(f"node:{node}")
        text = ax.annotate(
            caption(data, strip=strip),
            (x, y),
            xytext=(0, -17),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=7.5,
            fontweight="bold" if node in focus else "normal",
            zorder=4,
        )
        text.set_gid(f"label:{node}")


def _draw_edges(
    ax: Axes,
    graph: Any,
    pos: dict[str, tuple[float, float]],
    col: dict[str, int],
    edge_labels: bool,
) -> None:
    from matplotlib.patches import FancyArrowPatch

    bundles: dict[tuple[str, int, int], list[tuple[str, str]]] = defaultdict(list)
    per_type = Counter(str(d.get("type")) for _, _, d in graph.edges(data=True))
    for src, dst, data in graph.edges(data=True):
        kind = str(data.get("type"))
        crowded = per_type[kind] > 15  # a fan of many edges: lighter, so it reads as one
        span = abs(col[src] - col[dst])
        # same column: a loop-like arc; long edges bow a little so parallel ones separate
        rad = 0.35 if span == 0 else min(0.15, 0.06 * (span - 1))
        arrow = FancyArrowPatch(
            pos[src],
            pos[dst],
            arrowstyle="-|>",
            mutation_scale=11,
            color=EDGE_COLOURS.get(kind, "#777777"),
            linewidth=0.8 if crowded else 1.1,
            alpha=0.45 if crowded else 0.8,
            shrinkA=11,
            shrinkB=11,
            connectionstyle=f"arc3,rad={rad}",
            zorder=1,
        )
        arrow.set_gid(f"edge:{kind}:{src}->{dst}")
        ax.add_patch(arrow)
        low, high = sorted((col[src], col[dst]))
        bundles[(kind, low, high)].append((src, dst))
    if not edge_labels:
        return
    for (kind, _, _), pairs in sorted(bundles.items()):
        src, dst = sorted(pairs, key=lambda p: (pos[p[0]][1] + pos[p[1]][1], p))[len(pairs) // 2]
        (x0, y0), (x1, y1) = pos[src], pos[dst]
        # in the column gap next to the right-hand end, clear of the columns a long edge spans
        span = abs(col[src] - col[dst])
        t = 0.5 if span <= 1 else (1 - 0.5 / span if x1 > x0 else 0.5 / span)
        text = ax.text(
            x0 + (x1 - x0) * t,
            y0 + (y1 - y0) * t + (0.18 if span == 0 else 0.0),
            kind,
            fontsize=6.5,
            color=EDGE_COLOURS.get(kind, "#777777"),
            ha="center",
            va="center",
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            zorder=2,
        )
        text.set_gid(f"edgelabel:{kind}")


def _legend(fig: Figure, ax: Axes, graph: Any) -> None:
    from matplotlib.lines import Line2D

    handles: list[Line2D] = []
    present = {str(d.get("label")) for _, d in graph.nodes(data=True)}
    statuses = {
        str(d.get("status")) for _, d in graph.nodes(data=True) if d.get("label") == "Memory"
    }
    for status in STATUS_COLOURS:
        if status in statuses:
            handles.append(_marker("o", STATUS_COLOURS[status], f"memory · {status}"))
    verdicts = {d.get("success") for _, d in graph.nodes(data=True) if d.get("label") == "Outcome"}
    for verdict, name in ((True, "success"), (False, "failure")):
        if verdict in verdicts:
            handles.append(_marker("h", OUTCOME_COLOURS[verdict], f"outcome · {name}"))
    for label, colour in LABEL_COLOURS.items():
        if label in present:
            handles.append(_marker(SHAPES[label], colour, label.lower()))
    types = sorted({str(d.get("type")) for _, _, d in graph.edges(data=True)})
    for kind in types:
        handles.append(
            Line2D([], [], color=EDGE_COLOURS.get(kind, "#777777"), linewidth=2, label=kind)
        )
    if handles:
        ax.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            fontsize=7.5,
            frameon=False,
            borderaxespad=0.2,
        )


def _marker(shape: str, colour: str, label: str) -> Any:
    from matplotlib.lines import Line2D

    return Line2D(
        [],
        [],
        marker=shape,
        linestyle="",
        markersize=9,
        markerfacecolor=colour,
        markeredgecolor="#555555",
        label=label,
    )
