"""The ``amem`` command line: the group, and add, ingest, search, show, stats and the demo.

Provenance commands (trace, impact, retract, restore, audit) live in ``provenance.py``; data in
and out (export, import, cypher, neo4j) in ``data.py``; shared plumbing in ``support.py``.

Results go to stdout (rich tables, or plain JSON with ``--json``); progress, spinners and
errors go to stderr, so ``amem --json ... | jq`` always sees clean JSON. Library errors
become ``error: ...`` and exit code 2, never a traceback; under ``--json`` an error is itself a
JSON document on stdout (``{"error", "hint", "exit"}``).
"""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any, NoReturn, cast

import click
import pydantic
from rich.console import Console

from amem_graph.cli import check as cli_check
from amem_graph.cli import data as cli_data
from amem_graph.cli import episodes as cli_episodes
from amem_graph.cli import provenance as cli_provenance
from amem_graph.cli import render
from amem_graph.cli.support import (
    EmbedderChoice,
    Settings,
    emit,
    err_console,
    graph,
    open_graph,
    pass_settings,
    progress_bar,
    warm_up,
)
from amem_graph.core.config import MemoryGraphConfig
from amem_graph.core.errors import (
    AmemGraphError,
    ConflictError,
    NotFoundError,
    ValidationError,
    format_pydantic_error,
)
from amem_graph.core.models import MemoryInput, MemoryKind, content_hash
from amem_graph.core.schema import MEMORY_KINDS
from amem_graph.memory.graph import MemoryGraph

USER_ERROR_EXIT = 2
UNEXPECTED_EXIT = 1


# -- errors -------------------------------------------------------------------------------


def _fail(message: str, hint: str | None, code: int, as_json: bool = False) -> NoReturn:
    if as_json:  # one JSON document on stdout, as on success; the exit code says it failed
        click.echo(json.dumps({"error": message, "hint": hint, "exit": code}, indent=2))
    else:
        click.echo(f"error: {message}", err=True)
        if hint:
            click.echo(f"hint: {hint}", err=True)
    raise click.exceptions.Exit(code)


class AmemGroup(click.Group):
    """Turns library errors into ``error: ...`` on stderr and exit 2, never a traceback.

    Unexpected errors exit 1 with one line too; ``AMEM_DEBUG=1`` shows their traceback. With
    ``--json`` every error, usage errors included, is ``{"error", "hint", "exit"}`` on stdout.
    """

    def invoke(self, ctx: click.Context) -> Any:
        as_json = bool(ctx.params.get("as_json"))
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException as exc:
            if not as_json:
                raise
            _fail(exc.format_message(), _usage_hint(exc), exc.exit_code, as_json)
        except (click.exceptions.Exit, click.Abort):
            raise
        except AmemGraphError as exc:
            _fail(exc.message, exc.hint, USER_ERROR_EXIT, as_json)
        except Exception as exc:
            if os.environ.get("AMEM_DEBUG"):
                traceback.print_exc()
            _fail(
                f"unexpected {type(exc).__name__}: {exc}",
                "this is a bug; rerun with AMEM_DEBUG=1 for the traceback",
                UNEXPECTED_EXIT,
                as_json,
            )


def _usage_hint(exc: click.exceptions.ClickException) -> str | None:
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        return f"see: {exc.ctx.command_path} --help"
    return None


# -- the group ----------------------------------------------------------------------------


@click.group(cls=AmemGroup)
@click.option(
    "--store",
    metavar="PATH_OR_URI",
    default=None,
    help="Store file, ':memory:', or a bolt:// / neo4j:// URI. "
    "Default: $AMEM_STORE, else ./.amem/memory.db.",
)
@click.option(
    "--embedder",
    type=EmbedderChoice(),
    default=None,
    help="Embedding model. Default: $AMEM_EMBEDDER, else the one the store was built with, "
    "else minilm. hashing is instant but not semantic; st:MODEL runs any sentence-transformers "
    'model (pip install "amem-graph[st]"); numpy:DIR a BERT or MPNet model directory without '
    "torch.",
)
@click.option("--json", "as_json", is_flag=True, help="Print plain JSON to stdout, nothing else.")
@click.version_option(package_name="amem-graph", prog_name="amem")
@click.pass_context
def cli(ctx: click.Context, store: str | None, embedder: str | None, as_json: bool) -> None:
    """Long-term graph memory for fleets of LLM agents."""
    ctx.obj = Settings(store=store, embedder=embedder, as_json=as_json)


# -- add, show, search, stats -------------------------------------------------------------


@cli.command()
@click.argument("text")
@click.option("--agent", help="Agent that wrote it.")
@click.option("--task", help="Task it is for.")
@click.option("--scope", help="Scope (tenant/project); default 'default'.")
@click.option("--kind", type=click.Choice(MEMORY_KINDS), default="semantic", show_default=True)
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--source", help="URI it came from.")
@click.option("--derived-from", "derived_from", multiple=True, help="Parent memory id (repeat).")
@click.option("--id", "memory_id", help="Id to use (re-adding the same text is a no-op).")
@click.option("--episode", help="Episode it was generated in.")
@pass_settings
def add(
    settings: Settings,
    text: str,
    agent: str | None,
    task: str | None,
    scope: str | None,
    kind: str,
    tags: tuple[str, ...],
    source: str | None,
    derived_from: tuple[str, ...],
    memory_id: str | None,
    episode: str | None,
) -> None:
    """Remember TEXT with its provenance and print the stored memory."""
    with graph(settings) as mg:
        memory = mg.remember(
            text,
            agent=agent,
            task=task,
            scope=scope,
            kind=cast(MemoryKind, kind),
            tags=tags,
            source=source,
            derived_from=derived_from,
            id=memory_id,
            episode=episode,
        )
    emit(
        settings,
        render.memory_record(memory),
        lambda c: c.print(render.memory_table(memory, title=f"Stored memory {memory.id}")),
    )


@cli.command()
@click.argument("memory_id", metavar="ID")
@pass_settings
def show(settings: Settings, memory_id: str) -> None:
    """Show one memory's fields (whatever its status; not its embedding)."""
    with graph(settings, existing=True, embeds=False) as mg:
        memory = mg.get(memory_id)
    emit(settings, render.memory_record(memory), lambda c: c.print(render.memory_table(memory)))


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--scope", help="Scope to search; default 'default'.")
@click.option("--agent", help="Only memories written by this agent.")
@click.option("--task", help="Only memories for this task.")
@click.option("--explain", is_flag=True, help="Also show every signal behind each hit.")
@click.option(
    "--episode",
    metavar="ID",
    help="Recall inside this episode (created on first use): the hits are logged as READ "
    "edges, and `amem outcome ID` later credits them.",
)
@click.option("--reader", metavar="AGENT", help="With --episode: the agent running it.")
@pass_settings
def search(
    settings: Settings,
    query: str,
    k: int,
    scope: str | None,
    agent: str | None,
    task: str | None,
    explain: bool,
    episode: str | None,
    reader: str | None,
) -> None:
    """Recall the K memories most useful for QUERY (hybrid vector, text and graph)."""
    if reader is not None and episode is None:
        raise click.UsageError("--reader names the agent of an --episode; give --episode too")
    with graph(settings) as mg:
        if episode is None:
            hits = mg.recall(query, k, scope, agent=agent, task=task, explain=explain)
        else:
            with mg.episode(agent=reader, task=task, scope=scope, id=episode) as ep:
                hits = ep.recall(query, k, agent=agent, task=task, explain=explain)

    def show_hits(console: Console) -> None:
        if not hits:
            console.print("no memories match")
            return
        console.print(render.hits_table(hits))
        if explain:
            console.print(render.explain_table(hits))

    emit(settings, [render.hit_record(h) for h in hits], show_hits)


@cli.command()
@pass_settings
def stats(settings: Settings) -> None:
    """Counts of nodes by label and edges by type, the backend and embedder, and chat-model
    usage of the note layer (calls, retries, fallbacks, tokens per operation)."""
    with graph(settings, existing=True, embeds=False) as mg:
        info = mg.stats()
    tables = [render.stats_table(info), render.llm_table(info)]
    emit(
        settings,
        info,
        lambda c: c.print(render.stats_heading(info), *(t for t in tables if t is not None)),
    )


# -- ingest -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One validated JSONL line and where it came from, for error messages."""

    number: int
    item: MemoryInput


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


#: every ingest error ends with what to do about it
INGEST_HINT = "fix that line and run the command again; nothing from the file was stored"


def parse_line(
    number: int, raw: str, default_scope: str, max_length: int, source: str = "-"
) -> MemoryInput:
    """Validate one JSONL line exactly as ``remember`` would; errors name ``source:line``."""
    where = f"{source}:{number}"
    try:
        raw.encode("utf-8")
        obj = json.loads(raw.strip())
    except UnicodeEncodeError:  # a byte that is not UTF-8, escaped when the file was read
        raise ValidationError(f"{where}: not valid UTF-8", hint=INGEST_HINT) from None
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{where}: invalid JSON: {exc.msg} (column {exc.colno})", hint=INGEST_HINT
        ) from None
    except RecursionError:
        raise ValidationError(
            f"{where}: invalid JSON: values nested too deeply", hint=INGEST_HINT
        ) from None
    if not isinstance(obj, dict):
        raise ValidationError(
            f"{where}: expected a JSON object, got {_json_type(obj)}", hint=INGEST_HINT
        )
    if obj.get("scope") is None:
        obj["scope"] = default_scope
    try:
        item = MemoryInput.model_validate(obj)
    except pydantic.ValidationError as exc:
        raise ValidationError(format_pydantic_error(exc, where), hint=INGEST_HINT) from None
    if len(item.content) > max_length:
        raise ValidationError(
            f"{where}: content is {len(item.content)} characters, the limit is {max_length}",
            hint=INGEST_HINT,
        )
    return item


def parse_jsonl(
    raw_lines: Iterable[str], default_scope: str, max_length: int, source: str = "-"
) -> list[Line]:
    """Every non-blank line, validated; the first bad one raises."""
    return [
        Line(n, parse_line(n, raw, default_scope, max_length, source))
        for n, raw in enumerate(raw_lines, start=1)
        if raw.strip()
    ]


def check_references(lines: Sequence[Line], mg: MemoryGraph, source: str = "-") -> int:
    """Catch, before any write, what would otherwise fail in a later batch; returns how many
    lines are already stored (same id, same content), which re-running a file writes again
    as no-ops.

    Repeated ids, parents defined later in the file or nowhere, and ids stored with other
    content would each leave earlier batches written; here they store nothing.
    """
    defined: dict[str, int] = {}
    for line in lines:
        mid = line.item.id
        if mid is not None:
            if mid in defined:
                raise ValidationError(
                    f"{source}:{line.number}: id {mid!r} repeats line {defined[mid]}",
                    hint=INGEST_HINT,
                )
            defined[mid] = line.number
    outside: dict[str, int] = {}
    for line in lines:
        for parent in line.item.derived_from:
            at = defined.get(parent)
            if at is None:
                outside.setdefault(parent, line.number)
            elif at >= line.number:
                raise ValidationError(
                    f"{source}:{line.number}: derived_from {parent!r} is defined on line {at}",
                    hint="put parents on earlier lines than the memories derived from them; "
                    "nothing from the file was stored",
                )
    stored = mg.get_many(sorted(set(outside) | set(defined)))
    for parent, number in outside.items():
        if parent not in stored:
            raise NotFoundError(
                f"{source}:{number}: derived_from names unknown memory {parent!r}",
                hint=INGEST_HINT,
            )
    for line in lines:
        old = None if line.item.id is None else stored.get(line.item.id)
        if old is not None and old.content_hash != content_hash(line.item.content):
            raise ConflictError(
                f"{source}:{line.number}: memory {line.item.id!r} already exists with other "
                "content",
                hint="give it another id, or drop the line; nothing from the file was stored",
            )
    return sum(1 for line in lines if line.item.id is not None and line.item.id in stored)


def write_batches(mg: MemoryGraph, lines: Sequence[Line], batch_size: int) -> int:
    """Write ``lines`` with one ``remember_many`` transaction per batch; return the count.

    If a batch fails, the batches before it stay stored and the error says up to which line.
    """
    stored = 0
    with progress_bar("ingesting", len(lines)) as advance:
        for start in range(0, len(lines), batch_size):
            chunk = lines[start : start + batch_size]
            try:
                stored += len(mg.remember_many([line.item for line in chunk]))
            except AmemGraphError as exc:
                raise _partial_failure(exc, chunk[0].number, lines[:start]) from exc
            advance(len(chunk))
    return stored


def _partial_failure(exc: AmemGraphError, first: int, done: Sequence[Line]) -> AmemGraphError:
    message = f"{exc.message} (in the batch starting at line {first})"
    if not done:
        return type(exc)(f"{message}; nothing was stored", hint=exc.hint)
    hint = (
        f"the {len(done)} memories up to line {done[-1].number} were stored by earlier batches "
        'and stay; lines with an "id" are idempotent, so re-running the file is safe when '
        "every line has one"
    )
    return type(exc)(message, hint=hint)


@cli.command()
@click.argument("file", type=click.File("r", encoding="utf-8", errors="surrogateescape"))
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Memories per write transaction.",
)
@pass_settings
def ingest(settings: Settings, file: IO[str], batch_size: int) -> None:
    """Store every line of a JSONL FILE ('-' for stdin) as a memory.

    Each line is a JSON object with the keywords of remember: content (required), id,
    agent, task, episode, scope, kind, tags, keywords, context, derived_from, source,
    timestamp and valid_to (ISO 8601 with a timezone), importance. Blank lines are skipped.

    Validation is whole-file: a bad line N (bad JSON, not an object, an invalid field, an
    unknown or later derived_from parent, a repeated or conflicting id) is reported as
    "line N: ..." and NOTHING from the file is stored.

    Writes are per batch: each --batch-size lines are one transaction. If a batch fails
    while writing (e.g. the store goes away), the earlier batches stay stored and the
    error says up to which line; lines with an "id" make re-running the file safe.
    """
    name = getattr(file, "name", "-")
    source = "<stdin>" if name in ("-", "<stdin>") else name
    config = MemoryGraphConfig()  # the CLI's graphs use the defaults: no model for validation
    lines = parse_jsonl(file, config.default_scope, config.max_content_length, source)
    with graph(settings, warm=False) as mg:  # a file that fails validation loads no model
        present = check_references(lines, mg, source)
        warm_up(mg)
        stored = write_batches(mg, lines, batch_size)
    written = stored - present
    emit(
        settings,
        {"stored": stored, "written": written, "already_present": present, "file": name},
        lambda c: c.print(
            f"wrote {_memories(written)} from {name}"
            + (f"; {_memories(present)} already present" if present else "")
        ),
    )


def _memories(n: int) -> str:
    return f"{n} memory" if n == 1 else f"{n} memories"


# -- demo ---------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--store",
    "demo_store",
    metavar="PATH_OR_URI",
    default=None,
    help="Keep the demo's graph here. Default: a throw-away in-memory store.",
)
@click.option(
    "--embedder",
    "demo_embedder",
    type=EmbedderChoice(),
    default=None,
    help="minilm (default, real model), hashing (instant), st:MODEL or numpy:DIR.",
)
@click.option(
    "--png",
    metavar="FILE",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Where to draw the lineage picture. Default: amem-demo-lineage.png in the system's "
    "temporary folder (the output names it).",
)
@click.option("--no-png", is_flag=True, help="Draw no picture.")
@pass_settings
def demo(
    settings: Settings,
    demo_store: str | None,
    demo_embedder: str | None,
    png: str | None,
    no_png: bool,
) -> None:
    """Run a one-minute scripted story: two agents, outcome credit, provenance, and an
    analyst retracting bad advice with its downstream, then restoring it.

    Uses a fresh in-memory store unless --store is given, so it never touches ./.amem; the
    lineage picture goes to the temporary folder unless --png says where.
    """
    import tempfile
    from pathlib import Path

    from amem_graph.cli.demo import run_demo

    target = demo_store or settings.store or ":memory:"
    choice = demo_embedder or settings.embedder_choice()
    console = err_console() if settings.as_json else Console()
    picture = None if no_png else Path(png or Path(tempfile.gettempdir()) / "amem-demo-lineage.png")
    with open_graph(target, choice) as mg:
        summary = run_demo(mg, console, picture=picture)
    if target == ":memory:":
        console.print("[dim]The demo store was in memory and is gone; pass --store to keep it.[/]")
    if settings.as_json:
        click.echo(json.dumps(summary, indent=2, default=str))


for _command in (
    *cli_provenance.COMMANDS,
    *cli_data.COMMANDS,
    *cli_episodes.COMMANDS,
    *cli_check.COMMANDS,
):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point (``amem``)."""
    cli(prog_name="amem")


if __name__ == "__main__":  # pragma: no cover
    main()
