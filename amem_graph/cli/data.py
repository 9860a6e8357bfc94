"""``amem list / export / import / cypher / neo4j``: data in and out, and the analyst side."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click
from rich.console import Console

from amem_graph.cli import render
from amem_graph.cli.support import (
    ISO_TIME,
    Settings,
    emit,
    err_console,
    graph,
    pass_settings,
    progress_to,
)
from amem_graph.core.errors import ValidationError
from amem_graph.core.schema import MEMORY_STATUSES
from amem_graph.memory import admin

if TYPE_CHECKING:
    from amem_graph.memory.admin import AnalystQuery

#: seconds before the server stops an analyst query (analyst.DEFAULT_TIMEOUT, which imports
#: the Neo4j driver: commands import it when they run, so `amem --help` stays quick)
QUERY_TIMEOUT = 60.0


def _write_path(value: str) -> Path:
    path = Path(value).expanduser()
    if path.is_dir():
        raise ValidationError(f"{value} is a directory; give a file name")
    return path


# -- list -------------------------------------------------------------------------------

LIST_COLUMNS = ("id", "created", "status", "kind", "agent", "task", "confidence", "content")


@click.command("list")
@click.option("--scope", help="Only this scope (default: every scope).")
@click.option("--agent", help="Only memories this agent wrote.")
@click.option("--task", help="Only memories for this task.")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(MEMORY_STATUSES),
    help="Only this status (repeatable; default: every status).",
)
@click.option("--since", type=ISO_TIME, help="Only memories created from this time on.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Show the newest N of them (0: all).",
)
@pass_settings
def list_(
    settings: Settings,
    scope: str | None,
    agent: str | None,
    task: str | None,
    statuses: tuple[str, ...],
    since: datetime | None,
    limit: int,
) -> None:
    """List memories, oldest first, whatever their status unless --status narrows it."""
    with graph(settings, existing=True, embeds=False) as mg:
        found = mg.list_memories(
            scope=scope, agent=agent, task=task, status=statuses or None, since=since
        )
    shown = found[-limit:] if limit else found
    title = f"{len(shown)} of {len(found)} memories" + (
        " (the newest)" if len(shown) < len(found) else ""
    )

    def table(console: Console) -> None:
        rows = [
            [
                m.id,
                f"{m.created_at:%Y-%m-%d %H:%M}",
                m.status,
                m.kind,
                m.agent or "—",
                m.task or "—",
                f"{m.confidence:.2f}",
                render.snippet(m.content, 48),
            ]
            for m in shown
        ]
        console.print(render.rows_table(LIST_COLUMNS, rows, title, width=console.width))

    emit(
        settings, {"total": len(found), "memories": [render.memory_record(m) for m in shown]}, table
    )


# -- export -------------------------------------------------------------------------------


@click.group(invoke_without_command=True)
@click.option("--out", metavar="FILE", help="Write the whole graph here as JSONL.")
@pass_settings
@click.pass_context
def export(ctx: click.Context, settings: Settings, out: str | None) -> None:
    """Export the whole graph (--out FILE), or a derived data set (a subcommand).

    The whole-graph file holds every memory (all fields, embedding included), every other
    node and every edge; `amem import FILE` loads it into an empty store of either kind.
    """
    if ctx.invoked_subcommand is not None:
        if out is not None:
            raise click.UsageError("--out is for the whole-graph export; drop it or the subcommand")
        return
    if out is None:
        raise click.UsageError("give --out FILE (whole graph) or a subcommand, e.g. training-data")
    path = _write_path(out)
    with progress_to("exporting") as update:
        report = admin.export_graph(settings.target(), path, progress=update)
    emit(
        settings,
        report.as_dict(),
        lambda c: c.print(
            f"exported {report.memories} memories, {report.nodes} nodes and "
            f"{report.edges} edges to {report.path}"
        ),
    )


@export.command("training-data")
@click.argument("out", metavar="OUT.jsonl")
@click.option("--scope", help="Only episodes in this scope.")
@click.option("--agent", help="Only episodes of this agent.")
@pass_settings
def training_data(settings: Settings, out: str, scope: str | None, agent: str | None) -> None:
    """One JSON line per recall in an episode: query, retrieved ids with ranks and scores,
    the outcome, and whether a since-retracted memory was in play."""
    path = _write_path(out)
    with graph(settings, existing=True, embeds=False) as mg:
        rows = mg.write_training_data(path, scope=scope, agent=agent)
    emit(
        settings,
        {"rows": rows, "path": str(path)},
        lambda c: c.print(f"wrote {rows} training rows to {path}"),
    )


# -- import -------------------------------------------------------------------------------


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=admin.DEFAULT_BATCH_SIZE,
    show_default=True,
    help="Records per write transaction.",
)
@click.option("--atomic", is_flag=True, help="One transaction for the whole file: all or nothing.")
@click.option(
    "--re-embed",
    is_flag=True,
    help="Embed every memory again with --embedder (default minilm) instead of keeping the "
    "file's vectors: the way to move a graph to another model.",
)
@pass_settings
def import_(settings: Settings, file: str, batch_size: int, atomic: bool, re_embed: bool) -> None:
    """Load a whole-graph export FILE into an EMPTY store (--store), losslessly.

    The whole file is validated first: a bad line N is reported as line N and nothing is
    written. The store keeps the file's embedder and vectors, unless --re-embed computes new
    ones with --embedder. Writes go in batches; if one fails, earlier batches stay: empty the
    store and re-run, or use --atomic.
    """
    with progress_to("importing") as update:
        report = admin.import_graph(
            settings.target(),
            file,
            batch_size=None if atomic else batch_size,
            progress=update,
            re_embed=(settings.embedder_choice() or "minilm") if re_embed else None,
        )
    emit(
        settings,
        report.as_dict(),
        lambda c: c.print(
            f"imported {report.memories} memories, {report.nodes} nodes and "
            f"{report.edges} edges from {report.path}"
        ),
    )


# -- cypher -------------------------------------------------------------------------------


@click.command()
@click.argument("name", required=False)
@click.option("--param", "-p", "params", multiple=True, metavar="NAME=VALUE", help="Repeatable.")
@click.option(
    "--file",
    "query_file",
    type=click.File("r", encoding="utf-8"),
    help="Run your own read-only Cypher from this file ('-' for stdin) instead of a packaged "
    "query; the server plans it first (EXPLAIN) and anything that would write is refused.",
)
@click.option("--list", "list_only", is_flag=True, help="List the queries and their parameters.")
@click.option("--show", is_flag=True, help="Print the query's Cypher instead of running it.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=QUERY_TIMEOUT,
    show_default=True,
    help="Seconds before the server stops the query.",
)
@pass_settings
def cypher(
    settings: Settings,
    name: str | None,
    params: tuple[str, ...],
    list_only: bool,
    show: bool,
    timeout: float,
    query_file: IO[str] | None,
) -> None:
    """Run the packaged read-only analyst query NAME on the Neo4j store (--store bolt://...),
    or your own with --file QUERY.cypher.

    `amem cypher --list` names them with their questions and parameters. A --file query's
    --param values are JSON when they parse as JSON (10, true, "text", ["a", "b"]), else text;
    it must only read: the server's EXPLAIN must plan it as a read query (type 'r').
    """
    if query_file is not None:
        if name is not None or list_only or show:
            raise click.UsageError("--file runs your own query; drop NAME, --list and --show")
        _run_file(settings, query_file, params, timeout)
        return
    if list_only:
        queries = admin.list_queries()
        emit(
            settings,
            [_query_record(q) for q in queries],
            lambda c: c.print(render.queries_table(queries)),
        )
        return
    if name is None:
        raise click.UsageError("name a query, or pass --list to see them")
    query = admin.load_query(name)
    if show:
        emit(
            settings,
            {**_query_record(query), "text": query.text},
            lambda c: c.out(query.text, highlight=False),
        )
        return
    given = admin.parse_assignments(params)
    result = admin.run_cypher(settings.target(), query, given, timeout=timeout)
    emit(
        settings,
        result.as_dict(),
        lambda c: c.print(
            render.rows_table(result.columns, result.rows, query.question, width=c.width)
        ),
    )


def _run_file(settings: Settings, file: IO[str], params: tuple[str, ...], timeout: float) -> None:
    name = Path(getattr(file, "name", "-")).name
    values = admin.guess_values(admin.parse_assignments(params))
    result = admin.run_cypher_text(
        settings.target(), file.read(), values, name=name, timeout=timeout
    )
    emit(
        settings,
        result.as_dict(),
        lambda c: c.print(render.rows_table(result.columns, result.rows, name, width=c.width)),
    )


def _query_record(query: AnalystQuery) -> dict[str, object]:
    return {
        "name": query.name,
        "question": query.question,
        "params": [
            {
                "name": p.name,
                "type": p.type,
                "required": p.required,
                "default": p.default,
                "doc": p.doc,
            }
            for p in query.params
        ],
        "returns": list(query.returns),
    }


# -- neo4j --------------------------------------------------------------------------------


@click.group()
def neo4j() -> None:
    """Neo4j administration."""


@neo4j.command()
@pass_settings
def init(settings: Settings) -> None:
    """Apply the schema (constraints, range, full-text and, once the embedder is known, vector
    indexes) to the --store Neo4j database, idempotently, and list its indexes.

    The vector index needs the embedder's dimension: it is created when the store records an
    embedder (its first write), or here with --embedder.
    """
    target = settings.target()
    with err_console().status(f"Applying the schema to {target}…"):
        data = admin.neo4j_init(target, settings.embedder_choice())
    indexes = data["indexes"]
    version = data["server_version"]
    columns = ["name", "type", "entityType", "labelsOrTypes", "properties", "state"]
    rows = [[i.get(c) for c in columns] for i in indexes]
    emit(
        settings,
        data,
        lambda c: c.print(
            render.rows_table(
                columns, rows, f"Indexes on {target} (Neo4j {version})", width=c.width
            )
        ),
    )


COMMANDS: tuple[click.Command, ...] = (list_, export, import_, cypher, neo4j)
