"""``amem trace / impact / retract / restore / audit / forget / suspects``: the provenance
API on the command line.

Each command is "call the facade, then render"; none embeds text, so none loads a model.
"""

from __future__ import annotations

import shlex
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from amem_graph.cli import render
from amem_graph.cli.support import ISO_TIME, Settings, emit, err_console, graph, pass_settings
from amem_graph.core.errors import ConflictError, ValidationError
from amem_graph.memory import AUDIT_KINDS, ProvenanceGraph

SCOPE_VIEW = click.option(
    "--scope",
    help="See it as an operator of this scope: another scope's memory is not found, and what "
    "belongs to other scopes is left out (counted as hidden).",
)

PNG_OPTION = click.option(
    "--png",
    metavar="FILE",
    type=click.Path(dir_okay=False, writable=True),
    help="Also draw it as a picture into FILE (needs the notebooks extra: matplotlib).",
)


def write_picture(view: ProvenanceGraph, png: str) -> str:
    """Draw a provenance view into ``png``; an ImportError names the extra to install."""
    path = Path(png).expanduser()
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise ValidationError(f"--png {png}: give a .png (or .svg / .pdf) file name")
    try:
        view.draw(path=path)
    except ImportError as exc:
        raise ValidationError(str(exc), hint='pip install "amem-graph[notebooks]"') from None
    return str(path)


@click.command()
@click.argument("memory_id", metavar="ID")
@SCOPE_VIEW
@PNG_OPTION
@pass_settings
def trace(settings: Settings, memory_id: str, scope: str | None, png: str | None) -> None:
    """Where memory ID came from (derivation chain, agents, episodes, tasks, sources) and
    where it went (derived memories, episodes that read it, their outcomes, what they wrote)."""
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.trace(memory_id, scope=scope)
    data = result.model_dump(mode="json")
    if png is not None:
        data["png"] = write_picture(result, png)
        err_console().print(f"drew the lineage of {memory_id} into {data['png']}")
    emit(settings, data, lambda c: c.print(render.trace_tree(result)))


@click.command()
@click.argument("memory_id", metavar="ID")
@SCOPE_VIEW
@PNG_OPTION
@pass_settings
def impact(settings: Settings, memory_id: str, scope: str | None, png: str | None) -> None:
    """The blast radius of memory ID: what a cascading retraction of it would act on."""
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.impact(memory_id, scope=scope)
    data = render.impact_record(result)
    if png is not None:
        data["png"] = write_picture(result, png)
        err_console().print(f"drew the blast radius of {memory_id} into {data['png']}")
    emit(settings, data, lambda c: c.print(render.impact_table(result)))


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
@click.option(
    "--scope",
    help="Select only this scope's memories (and episodes); a cascade into another scope is "
    "refused unless --cross-scope.",
)
@click.option(
    "--cross-scope",
    is_flag=True,
    help="With --scope: also take back what the cascade reaches in other scopes (listed).",
)
@click.option("--dry-run", is_flag=True, help="Report what would change; change nothing.")
@click.option(
    "--by", help="Who is retracting, for the audit log (default: $AMEM_ACTOR, else your login)."
)
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
    scope: str | None,
    cross_scope: bool,
    dry_run: bool,
    by: str | None,
) -> None:
    """Take memories back, reversibly, in one transaction: by ID(s), --agent, --source or
    --episode (exactly one way).

    With cascade (the default) memories derived from them are retracted and memories that
    episodes wrote after reading them are quarantined. Undo with `amem restore RETRACTION_ID`.
    Without --scope a retraction spans every scope (an operator's call).
    """
    if cross_scope and scope is None:
        raise ValidationError("--cross-scope needs --scope", hint="see: amem retract --help")
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
            scope=scope,
            cross_scope=cross_scope,
            by=settings.actor(by),
        )
    data = report.model_dump(mode="json")
    if report.dry_run:
        data["id"] = None  # a dry run stores nothing: no id for `amem restore`
    emit(settings, data, lambda c: c.print(render.retraction_table(report)))


@click.command()
@click.argument("retraction_id", metavar="RETRACTION_ID")
@click.option(
    "--by", help="Who is restoring, for the audit log (default: $AMEM_ACTOR, else your login)."
)
@click.option("--reason", default="", help="Why, for the audit log.")
@pass_settings
def restore(settings: Settings, retraction_id: str, by: str | None, reason: str) -> None:
    """Undo a retraction exactly; memories another active retraction holds stay down."""
    with graph(settings, existing=True, embeds=False) as mg:
        report = mg.restore(retraction_id, by=settings.actor(by), reason=reason)
    emit(settings, report.model_dump(mode="json"), lambda c: c.print(render.restore_table(report)))


@click.command()
@click.option("--memory", "memory_id", metavar="ID", help="Only events concerning this memory.")
@click.option("--agent", help="Only events concerning this agent's memories, or by it.")
@click.option("--since", type=ISO_TIME, help="From this time (inclusive).")
@click.option("--until", type=ISO_TIME, help="Before this time (exclusive).")
@click.option("--kind", type=click.Choice(AUDIT_KINDS), help="Only this kind of event.")
@click.option(
    "--scope",
    help="Only events concerning this scope's memories, narrowed to them (other scopes' "
    "memories and authors are left out).",
)
@pass_settings
def audit(
    settings: Settings,
    memory_id: str | None,
    agent: str | None,
    since: datetime | None,
    until: datetime | None,
    kind: str | None,
    scope: str | None,
) -> None:
    """The audit log, oldest first: retractions, restores and forgets."""
    with graph(settings, existing=True, embeds=False) as mg:
        events = mg.audit(
            memory=memory_id, agent=agent, since=since, until=until, kind=kind, scope=scope
        )
    emit(
        settings,
        [e.model_dump(mode="json") for e in events],
        lambda c: c.print(render.audit_table(events, width=c.width)),
    )


@click.command()
@click.argument("memory_id", metavar="[ID]", required=False)
@click.option("--scope", help="Erase every memory of this scope.")
@click.option("--agent", help="Erase every memory this agent wrote.")
@click.option("--source", help="Erase every memory taken from this source URI.")
@click.option("--episode", help="Erase every memory written in this episode.")
@click.option("--reason", default="", help="Why, for the audit log (never the content).")
@click.option("--by", help="Who is erasing (recorded in the audit log).")
@pass_settings
def forget(
    settings: Settings,
    memory_id: str | None,
    scope: str | None,
    agent: str | None,
    source: str | None,
    episode: str | None,
    reason: str,
    by: str | None,
) -> None:
    """Erase memories for good (an erasure request): ID, or every memory of --scope, by
    --agent, from --source or in --episode (exactly one way). Unlike retract this cannot be
    undone; the audit log keeps ids and content hashes, never the content."""
    with graph(settings, existing=True, embeds=False) as mg:
        event = mg.forget(
            memory_id,
            scope=scope,
            agent=agent,
            source=source,
            episode=episode,
            reason=reason,
            by=by,
        )
    emit(
        settings,
        event.model_dump(mode="json"),
        lambda c: c.print(f"forgot {len(event.memory_ids)} memories (audit event {event.id})"),
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
            # the proposal stays in the scope asked about: an agent's other tenants are not ours
            within = [] if scope is None else ["--scope", scope]
            if by == "agent":
                command = ["amem", "retract", "--agent", top.id, *within, "--reason", why]
                selector: dict[str, Any] = {"agent": top.id}
            else:
                command = ["amem", "retract", top.id, *within, "--reason", why]
                selector = {"id": top.id}
            try:
                report = mg.retract(**selector, reason=why, dry_run=True, scope=scope)
            except ConflictError as exc:  # the cascade would cross into another scope
                proposal = {"command": shlex.join(command), "dry_run": None, "refused": exc}
            else:
                proposal = {"command": shlex.join(command), "dry_run": report, "refused": None}

    def show(console: Console) -> None:
        console.print(render.suspects_table(found))
        if proposal is None:
            console.print("No failed outcome has charged any memory: nothing to propose.")
            return
        console.print(f"Proposed (not run): [bold]{proposal['command']}[/]")
        if proposal["refused"] is not None:
            refused = proposal["refused"]
            console.print(f"It would be refused: {refused.message}. {refused.hint or ''}")
            return
        console.print(render.retraction_table(proposal["dry_run"]))

    emit(
        settings,
        {
            "suspects": [s.model_dump(mode="json") for s in found],
            "proposal": None
            if proposal is None
            else {
                "command": proposal["command"],
                "dry_run": None
                if proposal["dry_run"] is None
                else proposal["dry_run"].model_dump(mode="json"),
                "refused": None if proposal["refused"] is None else proposal["refused"].message,
            },
        },
        show,
    )


COMMANDS: tuple[click.Command, ...] = (trace, impact, retract, restore, audit, forget, suspects)
