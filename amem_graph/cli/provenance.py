"""``amem trace / impact / retract / restore / audit / suspects``: the provenance API on the
command line.

Each command is "call the facade, then render"; none embeds text, so none loads a model.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from typing import Any

import click
from rich.console import Console

from amem_graph.cli import render
from amem_graph.cli.support import ISO_TIME, Settings, emit, graph, pass_settings
from amem_graph.provenance.audit import AUDIT_KINDS


@click.command()
@click.argument("memory_id", metavar="ID")
@pass_settings
def trace(settings: Settings, memory_id: str) -> None:
    """Where memory ID came from (derivation chain, agents, episodes, tasks, sources) and
    where it went (derived memories, episodes that read it, their outcomes, what they wrote)."""
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.trace(memory_id)
    emit(settings, result.model_dump(mode="json"), lambda c: c.print(render.trace_tree(result)))


@click.command()
@click.argument("memory_id", metavar="ID")
@pass_settings
def impact(settings: Settings, memory_id: str) -> None:
    """The blast radius of memory ID: what a cascading retraction of it would act on."""
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.impact(memory_id)
    emit(settings, render.impact_record(result), lambda c: c.print(render.impact_table(result)))


@click.command()
@click.argument("memory_ids", metavar="[ID]...", nargs=-1)
@click.option("--reason", required=True, help="Why, for the audit log (required).")
@click.option("--agent", help="Retract everything this agent wrote (see --since).")
@click.option("--since", type=ISO_TIME, help="With --agent: only what it wrote from this time.")
@click.option("--source", help="Retract every memory taken from this source URI.")
@click.option("--episode", help="Retract every memory written in this episode.")
@click.option(
    "--no-cascade",
    "no_cascade",
    is_flag=True,
    help="Only the selected memories; leave what derives from them or was written after "
    "reading them.",
)
@click.option("--dry-run", is_flag=True, help="Report what would change; change nothing.")
@click.option("--by", help="Who is retracting (recorded on the retraction).")
@pass_settings
def retract(
    settings: Settings,
    memory_ids: tuple[str, ...],
    reason: str,
    agent: str | None,
    since: datetime | None,
    source: str | None,
    episode: str | None,
    no_cascade: bool,
    dry_run: bool,
    by: str | None,
) -> None:
    """Take memories back, reversibly, in one transaction: by ID(s), --agent, --source or
    --episode (exactly one way).

    With cascade (the default) memories derived from them are retracted and memories that
    episodes wrote after reading them are quarantined. Undo with `amem restore RETRACTION_ID`.
    """
    with graph(settings, existing=True, embeds=False) as mg:
        report = mg.retract(
            list(memory_ids) or None,
            reason=reason,
            cascade=not no_cascade,
            dry_run=dry_run,
            agent=agent,
            since=since,
            source=source,
            episode=episode,
            by=by,
        )
    emit(
        settings,
        report.model_dump(mode="json"),
        lambda c: c.print(render.retraction_table(report)),
    )


@click.command()
@click.argument("retraction_id", metavar="RETRACTION_ID")
@click.option("--by", help="Who is restoring (recorded in the audit log).")
@click.option("--reason", default="", help="Why, for the audit log.")
@pass_settings
def restore(settings: Settings, retraction_id: str, by: str | None, reason: str) -> None:
    """Undo a retraction exactly; memories another active retraction holds stay down."""
    with graph(settings, existing=True, embeds=False) as mg:
        report = mg.restore(retraction_id, by=by, reason=reason)
    emit(settings, report.model_dump(mode="json"), lambda c: c.print(render.restore_table(report)))


@click.command()
@click.option("--memory", "memory_id", metavar="ID", help="Only events concerning this memory.")
@click.option("--agent", help="Only events concerning this agent's memories, or by it.")
@click.option("--since", type=ISO_TIME, help="From this time (inclusive).")
@click.option("--until", type=ISO_TIME, help="Before this time (exclusive).")
@click.option("--kind", type=click.Choice(AUDIT_KINDS), help="Only this kind of event.")
@pass_settings
def audit(
    settings: Settings,
    memory_id: str | None,
    agent: str | None,
    since: datetime | None,
    until: datetime | None,
    kind: str | None,
) -> None:
    """The audit log, oldest first: retractions, restores and forgets."""
    with graph(settings, existing=True, embeds=False) as mg:
        events = mg.audit(memory=memory_id, agent=agent, since=since, until=until, kind=kind)
    emit(
        settings,
        [e.model_dump(mode="json") for e in events],
        lambda c: c.print(render.audit_table(events)),
    )


@click.command()
@click.option(
    "--by",
    type=click.Choice(["memory", "agent"]),
    default="memory",
    show_default=True,
    help="Rank memories, or the agents that wrote them.",
)
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--scope", help="Only memories in this scope (default: every scope).")
@click.option("--reason", help="Reason for the proposed retraction (default: the evidence).")
@pass_settings
def suspects(
    settings: Settings, by: str, limit: int, scope: str | None, reason: str | None
) -> None:
    """The memories (or, --by agent, authors) most implicated in failed outcomes, most
    suspicious first, and a proposed retraction of the top one, shown as a dry run.

    It never retracts: run the printed `amem retract ...` to take the suspect back.
    """
    with graph(settings, existing=True, embeds=False) as mg:
        found = mg.failure_suspects(
            by="agent" if by == "agent" else "memory", limit=limit, scope=scope
        )
        proposal: dict[str, Any] | None = None
        if found:
            top = found[0]
            why = reason or (
                f"failure suspect: {top.failures:g} failure credit over "
                f"{len(top.failed_episodes)} failed episode(s)"
            )
            if by == "agent":
                report = mg.retract(agent=top.id, reason=why, dry_run=True)
                command = ["amem", "retract", "--agent", top.id, "--reason", why]
            else:
                report = mg.retract(top.id, reason=why, dry_run=True)
                command = ["amem", "retract", top.id, "--reason", why]
            proposal = {"command": shlex.join(command), "dry_run": report}

    def show(console: Console) -> None:
        console.print(render.suspects_table(found))
        if proposal is None:
            console.print("No failed outcome has charged any memory: nothing to propose.")
            return
        console.print(f"Proposed (not run): [bold]{proposal['command']}[/]")
        console.print(render.retraction_table(proposal["dry_run"]))

    emit(
        settings,
        {
            "suspects": [s.model_dump(mode="json") for s in found],
            "proposal": None
            if proposal is None
            else {
                "command": proposal["command"],
                "dry_run": proposal["dry_run"].model_dump(mode="json"),
            },
        },
        show,
    )


COMMANDS: tuple[click.Command, ...] = (trace, impact, retract, restore, audit, suspects)
