"""Pictures of provenance views: what is drawn, where, in which colour, and the PNG.

Artists carry gids (``node:ID``, ``label:ID``, ``edge:TYPE:SRC->DST``, ``edgelabel:TYPE``), so
the assertions read the figure matplotlib would render, not the code that built it.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest
from poisoning import World, build

from amem_graph import MemoryGraph, ValidationError
from amem_graph.provenance import draw

pytest.importorskip("matplotlib")
from matplotlib.colors import to_hex


def artists(fig: Any, prefix: str) -> dict[str, Any]:
    """gid (without the prefix) -> artist, over every artist of the figure's axes."""
    found: dict[str, Any] = {}
    for ax in fig.axes:
        for artist in [*ax.collections, *ax.texts, *ax.patches]:
            gid = artist.get_gid()
            if gid and gid.startswith(prefix):
                found[gid.removeprefix(prefix)] = artist
    return found


def fill(fig: Any, node: str) -> str:
    return to_hex(artists(fig, "node:")[node].get_facecolor()[0])


@pytest.fixture
def world(mg: MemoryGraph) -> World:
    return build(mg)


def test_trace_draws_every_node_once_with_captions_and_edge_labels(
    mg: MemoryGraph, world: World
) -> None:
    view = mg.trace(world.poison)
    fig = view.draw()
    keys = set(view.to_networkx().nodes)
    assert set(artists(fig, "node:")) == keys  # one marker per node, nothing extra
    labels = artists(fig, "label:")
    assert set(labels) == keys
    assert labels[world.poison].get_text().startswith(f"{world.poison}\n")
    assert "FAILED" in labels[f"outcome-{world.reader1}"].get_text()
    edge_types = {e.type for e in view.edges}
    assert set(artists(fig, "edgelabel:")) == edge_types  # one label per type at least
    assert len(artists(fig, "edge:")) == len(view.edges)
    assert "Lineage and use of poison" in fig.axes[0].get_title(loc="left")
    focus = artists(fig, "node:")[world.poison]
    assert focus.get_linewidths()[0] > artists(fig, "node:")[world.derived1].get_linewidths()[0]


def test_colours_follow_status_and_success(mg: MemoryGraph, world: World) -> None:
    mg.retract(world.poison, reason="poisoned")
    fig = mg.impact(world.poison).draw()
    assert fill(fig, world.poison) == draw.STATUS_COLOURS["retracted"]
    assert fill(fig, world.derived1) == draw.STATUS_COLOURS["retracted"]
    assert fill(fig, world.written1) == draw.STATUS_COLOURS["quarantined"]
    assert fill(fig, f"outcome-{world.reader1}") == draw.OUTCOME_COLOURS[False]
    assert fill(fig, world.reader1) == draw.LABEL_COLOURS["Episode"]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "memory · retracted" in legend and "memory · quarantined" in legend
    assert "READ" in legend and "DERIVED_FROM" in legend


def test_columns_run_from_origins_to_outcomes(mg: MemoryGraph, world: World) -> None:
    plan = draw.layout(mg.trace(world.poison))
    col = plan.column
    source = next(n for n, d in plan.graph.nodes(data=True) if d["label"] == "Source")
    assert col["mallory"] < col[world.poison] and col[source] < col[world.poison]
    assert col[world.poison] < col[world.derived1] < col[world.derived2]
    assert col[world.poison] < col[world.reader1] < col[f"outcome-{world.reader1}"]
    assert col[world.reader1] < col[world.written1]
    assert col[world.derived2] < col[world.reader2]


def test_png_is_written_and_not_blank(mg: MemoryGraph, world: World, tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    out = tmp_path / "impact.png"
    mg.impact(world.poison).draw(path=out)
    assert out.stat().st_size > 20_000
    pixels = mpimg.imread(out)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 600
    assert (pixels[..., :3] < 0.9).any(axis=-1).mean() > 0.02  # ink on more than 2% of it


def test_a_crowded_column_folds_into_one_summary_node() -> None:
    mg = MemoryGraph.open(":memory:", embedder="hashing")
    mg.remember("the hub memory everyone reads: orchid", id="hub")
    for i in range(30):
        with mg.episode(agent="a", id=f"ep-{i:02d}") as ep:
            assert [h.memory.id for h in ep.recall("orchid hub", k=1)] == ["hub"]
            ep.outcome(success=i % 3 != 0)
    view = mg.impact("hub")
    plan = draw.layout(view, focus=["hub"], max_per_column=8)
    per_column: dict[int, int] = {}
    for c in plan.column.values():
        per_column[c] = per_column.get(c, 0) + 1
    assert max(per_column.values()) <= 8
    assert sum(len(hidden) for hidden in plan.folded.values()) == 2 * (30 - 7)
    fig = view.draw(max_per_column=8)
    texts = [t.get_text() for t in artists(fig, "label:").values()]
    assert "+23 more\nepisode" in texts
    failed = [t for t in texts if t.endswith("FAILED")]
    assert len(failed) == 7  # failed outcomes are kept before successful ones
    with pytest.raises(ValidationError, match="max_per_column"):
        draw.layout(view, max_per_column=1)
    mg.close()


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r'pip install "amem-graph\[notebooks\]"'):
        draw.require_matplotlib()
