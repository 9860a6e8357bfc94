"""``amem trace / impact / retract / restore / audit``: the provenance API on the command line.

Each command is "call the facade, then render"; none embeds text, so none loads a model.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from amem_graph.cli import render
from amem_graph.cli.support import ISO_TIME, Settings, emit, err_console, graph, pass_settings
from amem_graph.core.errors import ValidationError
from amem_graph.memory import AUDIT_KINDS, ProvenanceGraph

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
@PNG_OPTION
@pass_settings
def trace(settings: Settings, memory_id: str, png: str | None) -> None:
    """Where memory ID came from (derivation chain, agents, episodes, tasks, sources) and
    where it went (derived memories, episodes that read it, their outcomes, what they wrote)."""
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.trace(memory_id)
    data = result.model_dump(mode="json")
    if png is not None:
        data["png"] = write_picture(result, png)
        err_console().print(f"drew the lineage of {memory_id} into {data['png']}")
    emit(settings, data, lambda c: c.print(render.trace_tree(result)))


@click.command()
@click.argument("memory_id", metavar="ID")
@PNG_OPTION
@pass_settings
def impact(settings: Settings, memory_id: str, png: str | None) -> None:
    """The blast radius of memory ID: what a cascading retraction of it would act on."""
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.impact(memory_id)
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
        lambda c: c.print(render.audit_table(events, width=c.width)),
    )


COMMANDS: tuple[click.Command, ...] = (trace, impact, retract, restore, audit)
