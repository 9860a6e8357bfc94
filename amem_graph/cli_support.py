"""What every ``amem`` command shares: global settings, opening stores, output, progress.

Kept apart from the command modules so each of them only says what its commands do. Results go
to stdout (rich, or plain JSON with ``--json``); progress and spinners go to stderr.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from amem_graph.config import default_store_path
from amem_graph.embeddings import Embedder, HashingEmbedder, MiniLMEmbedder, resolve_embedder
from amem_graph.errors import AmemGraphError, NotFoundError
from amem_graph.memory import NEO4J_SCHEMES, MemoryGraph, open_store
from amem_graph.models import ensure_aware
from amem_graph.stores.base import GraphStore


def err_console() -> Console:
    """Console on stderr, made per call so redirected streams (tests, pipes) are honoured."""
    return Console(stderr=True)


@dataclass(frozen=True)
class Settings:
    """Global options as given; the environment is read when a command needs it."""

    store: str | None
    embedder: str | None
    as_json: bool

    def target(self) -> str:
        """``--store``, else ``$AMEM_STORE``, else ``./.amem/memory.db``."""
        return self.store or default_store_path()

    def embedder_choice(self) -> str | None:
        """``--embedder``, else ``$AMEM_EMBEDDER``; None lets the store's own embedder win."""
        return self.embedder or os.environ.get("AMEM_EMBEDDER") or None


pass_settings = click.make_pass_decorator(Settings)


class RecordedEmbedder:
    """Stands in for the store's embedder in commands that never embed (show, trace, ...).

    It lets those commands open any store whatever ``--embedder`` says, and cannot embed.
    """

    def __init__(self, name: str, dims: int) -> None:
        self._name = name
        self._dims = dims

    @property
    def name(self) -> str:
        """The name recorded in the store."""
        return self._name

    @property
    def dims(self) -> int:
        """The dimension recorded in the store."""
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Never used: these commands do not embed."""
        raise AmemGraphError("this command opened the store without an embedder")

    def embed_query(self, text: str) -> list[float]:
        """Never used: these commands do not embed."""
        raise AmemGraphError("this command opened the store without an embedder")


def is_local_file(target: str) -> bool:
    """A path to an embedded store file (not ``:memory:``, not a Neo4j URI)."""
    return target != ":memory:" and not target.startswith(NEO4J_SCHEMES)


def _embedder_for(store: GraphStore, choice: str | None, no_embedding: bool) -> Embedder:
    """The embedder to open with: the store's own unless the user chose one.

    Without a choice, a store built with ``hashing`` keeps working without repeating
    ``--embedder hashing`` on every call.
    """
    recorded = store.embedder_info()
    if no_embedding and recorded is not None:
        return RecordedEmbedder(*recorded)
    if choice is None and recorded is not None:
        name, dims = recorded
        if name.startswith("hashing-"):
            return HashingEmbedder(dims)
    return resolve_embedder(choice or "minilm")


def _warm_up(embedder: Embedder) -> None:
    """Load MiniLM under a spinner: the first load takes seconds and should not look hung."""
    if isinstance(embedder, MiniLMEmbedder):
        with err_console().status("Loading the all-MiniLM-L6-v2 embedding model…"):
            embedder.embed_query("warm-up")


def _require_existing(target: str) -> None:
    if is_local_file(target) and not Path(target).expanduser().exists():
        raise NotFoundError(f"no store at {target}", hint="pass --store PATH or set AMEM_STORE")


def open_graph(
    target: str, choice: str | None, *, existing: bool = False, embeds: bool = True
) -> MemoryGraph:
    """Open a MemoryGraph on a path, ``:memory:`` or a bolt/neo4j URI.

    ``existing`` refuses a store file that does not exist rather than creating one (for
    commands that only make sense on a store that has data). Commands that never embed
    (``embeds=False``) use the store's recorded embedder and load no model.
    """
    if existing:
        _require_existing(target)
    store = open_store(target)
    try:
        embedder = _embedder_for(store, choice, no_embedding=not embeds)
        mg = MemoryGraph(store, embedder)
        if embeds:
            _warm_up(embedder)
        return mg
    except BaseException:
        store.close()
        raise


def graph(settings: Settings, *, existing: bool = False, embeds: bool = True) -> MemoryGraph:
    """The MemoryGraph the global options name (see ``open_graph``)."""
    return open_graph(
        settings.target(), settings.embedder_choice(), existing=existing, embeds=embeds
    )


def raw_store(settings: Settings, *, must_exist: bool) -> GraphStore:
    """The store itself, without a MemoryGraph (and so without recording any embedder)."""
    target = settings.target()
    if must_exist:
        _require_existing(target)
    return open_store(target)


def emit(settings: Settings, data: Any, show: Callable[[Console], None]) -> None:
    """JSON to stdout with ``--json``, else let ``show`` draw on a stdout console."""
    if settings.as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        show(Console())


@contextmanager
def progress_bar(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr; yields ``advance(n)``."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
    ) as progress:
        task = progress.add_task(label, total=total)
        yield lambda n: progress.advance(task, n)


@contextmanager
def progress_to(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr driven by ``update(done, total)``; it appears on the first
    update, so a command that fails while validating shows only its error."""
    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
    )
    task: list[TaskID] = []

    def update(done: int, total: int) -> None:
        if not task:
            progress.start()
            task.append(progress.add_task(label, total=total))
        progress.update(task[0], completed=done, total=total)

    try:
        yield update
    finally:
        if task:
            progress.stop()


if TYPE_CHECKING:  # click >= 8.2 types ParamType as a generic; older clicks are not subscriptable
    _TimeParam = click.ParamType[datetime]
else:
    _TimeParam = click.ParamType


class IsoTime(_TimeParam):
    """An ISO 8601 time with a timezone (``Z`` allowed), as an aware UTC datetime."""

    name = "ISO_TIME"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 time, e.g. 2026-01-05T09:30:00Z", param, ctx)
        try:
            return ensure_aware(parsed)
        except ValueError:
            self.fail(
                f"{value!r} has no timezone; add one, e.g. 2026-01-05T09:30:00Z or +02:00",
                param,
                ctx,
            )


ISO_TIME = IsoTime()
