"""What every ``amem`` command shares: global settings, opening stores, output, progress.

Kept apart from the command modules so each of them only says what its commands do. Results go
to stdout (rich, or plain JSON with ``--json``); progress and spinners go to stderr.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
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

from amem_graph.core.config import default_store_path
from amem_graph.core.models import ensure_aware
from amem_graph.embeddings import Embedder, NumpyEmbedder
from amem_graph.memory import admin
from amem_graph.memory.graph import MemoryGraph
from amem_graph.memory.vectors import CheckedEmbedder


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

    def actor(self, given: str | None) -> str:
        """Who acts, for the audit log: ``--by``, else ``$AMEM_ACTOR``, else the login name."""
        if given:
            return given
        try:
            return os.environ.get("AMEM_ACTOR") or getpass.getuser()
        except (KeyError, OSError):  # no login name (some containers)
            return "cli"

    def embedder_choice(self) -> str | None:
        """``--embedder``, else ``$AMEM_EMBEDDER``; None lets the store's own embedder win."""
        return self.embedder or os.environ.get("AMEM_EMBEDDER") or None


pass_settings = click.make_pass_decorator(Settings)


if TYPE_CHECKING:  # click >= 8.2 types ParamType as a generic; older clicks are not subscriptable
    _TextParam = click.ParamType[str]
else:
    _TextParam = click.ParamType


class EmbedderChoice(_TextParam):
    """``minilm``, ``hashing``, ``st:<model dir or cached hub name>`` (the ``[st]`` extra) or
    ``numpy:<model dir>`` (a BERT or MPNet directory, no torch)."""

    name = "embedder"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[minilm|hashing|st:MODEL|numpy:DIR]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        named = any(text.startswith(p) and text[len(p) :].strip() for p in ("st:", "numpy:"))
        if text in ("minilm", "hashing") or named:
            return text
        self.fail(
            f"{text!r} is not minilm, hashing, st:<model> (a sentence-transformers model "
            'directory or cached name; pip install "amem-graph[st]") or numpy:<model dir> '
            "(a BERT or MPNet directory, run without torch)",
            param,
            ctx,
        )


def _warm_up(embedder: Embedder) -> None:
    """Load a numpy model under a spinner: a slow disk can take seconds and should not look
    hung."""
    if isinstance(embedder, NumpyEmbedder):
        with err_console().status(f"Loading the {embedder.name} embedding model…"):
            embedder.load()


def warm_up(mg: MemoryGraph) -> None:
    """Load the graph's model now (under a spinner), e.g. once a file has been validated."""
    embedder = mg.embedder
    _warm_up(embedder.inner if isinstance(embedder, CheckedEmbedder) else embedder)


def open_graph(
    target: str,
    choice: str | None,
    *,
    existing: bool = False,
    embeds: bool = True,
    warm: bool = True,
) -> MemoryGraph:
    """``admin.open_graph`` with a spinner while a model loads; ``warm=False`` leaves the load
    to the first embed (or to ``warm_up``)."""
    return admin.open_graph(
        target, choice, existing=existing, embeds=embeds, warm_up=_warm_up if warm else None
    )


def graph(
    settings: Settings, *, existing: bool = False, embeds: bool = True, warm: bool = True
) -> MemoryGraph:
    """The MemoryGraph the global options name (see ``open_graph``)."""
    return open_graph(
        settings.target(), settings.embedder_choice(), existing=existing, embeds=embeds, warm=warm
    )


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
