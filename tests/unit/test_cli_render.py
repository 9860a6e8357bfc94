"""CLI tables stay readable at 80 and 120 columns: no line overflows, no word breaks."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console

from amem_graph.cli import render
from amem_graph.core.models import Explanation, Hit, Memory, PathStep, Signal, content_hash

T0 = datetime(2026, 1, 2, tzinfo=UTC)
LONG_ID = "retraction-5f2a9c41d0e84b7fa1c3"


def _draw(renderable: Any, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None, force_terminal=False).print(renderable)
    return out.getvalue().splitlines()


def _hit(rank: int, mid: str, path: list[PathStep]) -> Hit:
    signals = {name: Signal(value=0.5 / rank, rank=rank) for name in render.SIGNALS}
    return Hit(
        memory=Memory(
            id=mid,
            content=f"memory {mid} about the staging database",
            created_at=T0,
            valid_from=T0,
            content_hash=content_hash(mid),
        ),
        score=0.05 / rank,
        rank=rank,
        explanation=Explanation(signals=signals, fused=0.05 / rank, path=path),
    )


@pytest.mark.parametrize("width", [80, 120])
def test_explain_keeps_the_graph_path_on_one_readable_line(width: int) -> None:
    path = [
        PathStep(source="deploy-guide", edge="DERIVED_FROM", target="vpn-note"),
        PathStep(source="vpn-note", edge="GENERATED_IN", target="episode-7"),
    ]
    lines = _draw(render.explain_table([_hit(1, "vpn-note", []), _hit(2, "deploy", path)]), width)
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    assert "deploy-guide -[DERIVED_FROM]-> vpn-note" in text.replace("\n", " ")
    assert "only orders" in text.replace("\n", " ")  # the fused score is explained


@pytest.mark.parametrize("width", [80, 120])
def test_wide_results_go_vertical_instead_of_breaking_words(width: int) -> None:
    columns = ["memory_id", "memories", "episodes", "outcomes", "failed", "retraction", "reason"]
    rows = [
        [f"poison-{i}", ["derived-a", "derived-b"], 3, 2, 1, LONG_ID, "bad wiki"] for i in (1, 2)
    ]
    lines = _draw(render.rows_table(columns, rows, "Blast radius", width=width), width)
    assert max(len(line) for line in lines) <= width
    assert any(LONG_ID in line for line in lines), "the id was broken across lines"
    assert any("derived-a, derived-b" in line for line in lines)


def test_a_wide_terminal_keeps_the_table_layout() -> None:
    columns = ["name", "type"]
    lines = _draw(render.rows_table(columns, [["memory_id", "RANGE"]], "Indexes", width=120), 120)
    assert any("name" in line and "type" in line for line in lines)  # one header row


def test_explain_says_what_was_searched_when_names_were_left_out() -> None:
    hit = _hit(1, "by-maya", [])
    assert hit.explanation is not None
    plain = "\n".join(_draw(render.explain_table([hit]), 100))
    assert "searched without" not in plain
    hit.explanation.searched = "what did paint"
    text = "\n".join(_draw(render.explain_table([hit]), 100))
    assert "searched without the agents it names: what did paint" in text


@pytest.mark.parametrize("width", [80, 120])
def test_a_restore_names_the_versions_it_left_current_side_by_side(width: int) -> None:
    from amem_graph.provenance.retraction import RestoreReport

    report = RestoreReport(id=LONG_ID, restored_at=T0, restored=["v2"], forked={"v2": ["v3"]})
    text = "\n".join(_draw(render.restore_table(report), width))
    assert "current beside" in text and "v2 and v3 supersede the same memory" in text
    plain = RestoreReport(id=LONG_ID, restored_at=T0, restored=["v2"])
    assert "current beside" not in "\n".join(_draw(render.restore_table(plain), width))
