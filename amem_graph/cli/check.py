"""``amem check``: verify a store; exit 1 with a report when it finds a problem."""

from __future__ import annotations

import click
from rich.console import Console

from amem_graph.cli.support import Settings, emit, graph, pass_settings


@click.command()
@pass_settings
def check(settings: Settings) -> None:
    """Verify the store: edges whose ends are missing, values the API would refuse (names,
    NaN, negative credit, READ ranks), statuses that disagree with the retractions holding
    them, and the store's own vector/text/row counts. Exits 1 if anything is wrong."""
    with graph(settings, existing=True, embeds=False) as mg:
        report = mg.check()

    def show(console: Console) -> None:
        if report.ok:
            total = sum(report.counts.values())
            console.print(f"ok: {report.backend} store, {total} nodes and edges checked")
            return
        for kind, items in report.problems.items():
            console.print(f"[bold red]{kind}[/]: {report.totals[kind]}")
            for item in items:
                console.print(f"  {item}", markup=False, highlight=False)
            if report.totals[kind] > len(items):
                console.print(f"  ... and {report.totals[kind] - len(items)} more")

    emit(settings, {**report.model_dump(mode="json"), "ok": report.ok}, show)
    if not report.ok:
        raise SystemExit(1)


COMMANDS: tuple[click.Command, ...] = (check,)
