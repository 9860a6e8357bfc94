"""``MemoryGraph``: the facade agents and tools use (episodes live in ``episode.py``).

It owns no storage logic: it validates input, builds write batches, and asks the retriever and
the store. Every public mutation is one store transaction.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import pydantic

from amem_graph.core.config import MemoryGraphConfig, RetrievalConfig
from amem_graph.core.errors import NotFoundError, ValidationError
from amem_graph.core.models import (
    Agent,
    Hit,
    Memory,
    MemoryInput,
    MemoryKind,
    Outcome,
    utcnow,
    valid_count,
    valid_name,
    valid_time,
)
from amem_graph.core.schema import AGENT, MEMORY_STATUSES, SOURCE, source_id
from amem_graph.embeddings import Embedder, resolve_embedder
from amem_graph.memory.bulk import ImportMethods
from amem_graph.memory.episode import EpisodeSession
from amem_graph.memory.notes import NoteMethods
from amem_graph.memory.vectors import CheckedEmbedder
from amem_graph.notes.pipeline import NoteLayer
from amem_graph.provenance import credit, retraction, suspects
from amem_graph.provenance import trace as provenance
from amem_graph.provenance.audit import (
    AUDIT_KINDS,
    AuditEvent,
    query_events,
)
from amem_graph.provenance.integrity import CheckReport, check_store
from amem_graph.provenance.retraction import RestoreReport, RetractionPolicy, RetractionReport
from amem_graph.provenance.scoped import agent_in_scopes, scoped_impact, scoped_trace
from amem_graph.provenance.suspects import Suspect, SuspectKind
from amem_graph.provenance.trace import Impact, Trace
from amem_graph.provenance.training_data import TrainingRow, training_rows, write_jsonl
from amem_graph.recall.retriever import HybridRetriever
from amem_graph.stores.base import GraphStore, MemoryFilter
from amem_graph.stores.factory import open_store

if TYPE_CHECKING:  # langchain-core costs about a second to import; only an llm needs it
    from langchain_core.language_models import BaseChatModel


def _optional_name(value: str | None, what: str) -> str | None:
    return None if value is None else valid_name(value, what)


def _optional_time(value: datetime | None, what: str) -> datetime | None:
    return None if value is None else valid_time(value, what)


def _ids(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    if not items:
        raise ValidationError("retract got an empty list of ids")
    return [valid_name(i, "memory id") for i in items]


def _policy(value: RetractionPolicy | Mapping[str, Any] | None) -> RetractionPolicy | None:
    if value is None or isinstance(value, RetractionPolicy):
        return value
    try:
        return RetractionPolicy.model_validate(value)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"bad retraction policy: {exc}") from None


def _flag(value: bool, what: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(f"{what} must be True or False, got {value!r}")
    return value


def _reason(value: str, required: bool) -> str:
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValidationError("a reason is required: say why, for the audit log")
    return value


class MemoryGraph(NoteMethods, ImportMethods):
    """Long-term memory for agents, on the embedded store or on Neo4j.

    Open with ``MemoryGraph.open()``; use as a context manager to close it.
    """

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        config: MemoryGraphConfig | None = None,
        llm: BaseChatModel | None = None,
    ) -> None:
        self.store = store
        self.embedder: Embedder = CheckedEmbedder(embedder)
        self.config = config or MemoryGraphConfig()
        if llm is not None:
            from langchain_core.language_models import BaseChatModel  # only an llm needs it

            if not isinstance(llm, BaseChatModel):
                raise ValidationError(
                    f"llm must be a langchain-core BaseChatModel, got {type(llm)!r}"
                )
        #: notes, links, evolution and conflicts on every write (``amem_graph.notes``)
        self.note_layer = NoteLayer(store, self.config.notes, llm)
        store.ensure_embedder(embedder.name, embedder.dims)
        self.retriever = HybridRetriever(store, self.embedder, self.config.retrieval)
        #: what a cascading ``retract`` does beyond its targets, unless the call passes a policy
        self.retraction_policy = RetractionPolicy()
        #: how an outcome's credit is shared among what its episode read
        self.credit_policy = credit.CreditPolicy()

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str] | None = None,
        *,
        embedder: object = "minilm",
        config: MemoryGraphConfig | None = None,
        llm: BaseChatModel | None = None,
        **store_options: Any,
    ) -> MemoryGraph:
        """Open the store at ``target``: a path, ``":memory:"``, or a ``bolt://``/``neo4j://`` URI.

        With no target: ``$AMEM_STORE`` or ``./.amem/memory.db``. ``embedder`` is ``"minilm"``
        (default), ``"hashing"``, an ``Embedder`` or a langchain-core ``Embeddings``. ``llm``
        (any langchain-core chat model) writes the notes, links and conflict verdicts; without
        it the note layer runs offline. ``store_options`` go to the store (Neo4j's or LocalStore).
        """
        resolved = resolve_embedder(embedder)
        store = open_store(target, **store_options)
        try:
            return cls(store, resolved, config, llm)
        except BaseException:
            store.close()
            raise

    def __enter__(self) -> MemoryGraph:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the store; idempotent."""
        self.store.close()

    # -- writing --------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        agent: str | None = None,
        task: str | None = None,
        episode: str | None = None,
        scope: str | None = None,
        kind: MemoryKind = "semantic",
        tags: Sequence[str] = (),
        keywords: Sequence[str] = (),
        context: str = "",
        derived_from: Sequence[str] = (),
        source: str | None = None,
        timestamp: datetime | None = None,
        valid_to: datetime | None = None,
        importance: float = 0.5,
        id: str | None = None,
        supersedes: str | None = None,
    ) -> Memory:
        """Store one memory with its provenance.

        Remembering an existing id again with the same content returns the stored memory
        unchanged (idempotent); with different content it raises ``ConflictError`` (``update``
        replaces a memory). Without an id, a duplicate of an active memory in the scope merges
        into it and that memory is returned (see ``NotesConfig``). ``supersedes`` names an active
        memory of the same scope that this one replaces: it becomes ``superseded`` (kept, out of
        recall) behind a SUPERSEDES edge, in the same transaction, with an audit event.
        """
        item: dict[str, Any] = {
            "content": content,
            "agent": agent,
            "task": task,
            "episode": episode,
            "scope": self.config.default_scope if scope is None else scope,
            "kind": kind,
            "tags": tags,  # validated as a list: a bare string is an error, not its letters
            "keywords": keywords,
            "context": context,
            "derived_from": derived_from,
            "source": source,
            "timestamp": timestamp,
            "valid_to": valid_to,
            "importance": importance,
            "id": id,
            "supersedes": supersedes,
        }
        return self.remember_many([item])[0]

    def remember_many(self, items: Sequence[Mapping[str, Any] | MemoryInput]) -> list[Memory]:
        """Store many memories in one transaction: all of them, or none if any is invalid.

        Each item takes the keyword arguments of ``remember``. Embeddings are computed in batch.
        ``ingest`` takes the same items and also says what was written and what merged.
        """
        return self.ingest(items).memories

    # -- reading --------------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        """The memory with this id, whatever its status; ``NotFoundError`` if there is none."""
        valid_name(memory_id, "memory id")
        found = self.store.get_memories([memory_id]).get(memory_id)
        if found is None:
            raise NotFoundError(
                f"no memory with id {memory_id!r}",
                hint="ids are case-sensitive; recall or `amem search` shows them",
            )
        return found

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """The stored memories among ``memory_ids``, by id (missing ids are simply absent)."""
        return self.store.get_memories([valid_name(i, "memory id") for i in memory_ids])

    def list_memories(
        self,
        *,
        scope: str | None = None,
        agent: str | None = None,
        task: str | None = None,
        status: Sequence[str] | None = None,
        since: datetime | None = None,
    ) -> list[Memory]:
        """Memories oldest first, any scope and status unless narrowed (an analyst's listing,
        not recall); ``since`` keeps those created at or after it."""
        statuses = None if status is None else tuple(status)
        for name in statuses or ():
            if name not in MEMORY_STATUSES:
                raise ValidationError(f"unknown memory status {name!r}; known: {MEMORY_STATUSES}")
        flt = MemoryFilter(
            scopes=None if scope is None else (valid_name(scope, "scope"),),
            statuses=statuses,
            agents=None if agent is None else (valid_name(agent, "agent"),),
            tasks=None if task is None else (valid_name(task, "task"),),
        )
        start = _optional_time(since, "since")
        found = self.store.find_memories(flt)
        return found if start is None else [m for m in found if m.created_at >= start]

    def find(
        self,
        scope: str | Sequence[str] | None = None,
        *,
        agent: str | None = None,
        task: str | None = None,
        include: Sequence[str] = ("active",),
        limit: int | None = None,
    ) -> list[Memory]:
        """The memories in ``scope`` with these statuses, oldest first: a listing, not recall."""
        flt = self.memory_filter(scope, agent=agent, task=task, include=include)
        return self.store.find_memories(flt, limit)

    def sources(self, prefix: str = "") -> list[str]:
        """The source URIs memories came from, sorted; those starting with ``prefix``."""
        uris = (str(node.props.get("uri", "")) for node in self.store.find_nodes(SOURCE))
        return sorted(uri for uri in uris if uri.startswith(prefix))

    def by_source(
        self, uris: Sequence[str], *, include: Sequence[str] | None = None
    ) -> dict[str, list[Memory]]:
        """URI -> the memories from that source (any status, or ``include``), oldest first."""
        by_id = {source_id(uri): uri for uri in uris}
        edges = self.store.edges(list(by_id), ["FROM_SOURCE"], "in")
        found = self.store.get_memories(sorted({e.src for e in edges}), embeddings=False)
        out: dict[str, list[Memory]] = {uri: [] for uri in uris}
        for e in edges:
            memory = found.get(e.src)
            if memory is not None and (include is None or memory.status in include):
                out[by_id[e.dst]].append(memory)
        for memories in out.values():
            memories.sort(key=lambda m: (m.created_at, m.id))
        return out

    def memory_filter(
        self,
        scope: str | Sequence[str] | None = None,
        *,
        agent: str | None = None,
        task: str | None = None,
        as_of: datetime | None = None,
        include: Sequence[str] = ("active",),
    ) -> MemoryFilter:
        """The filter recall applies inside every retrieval path (one scope, or several)."""
        if scope is None or isinstance(scope, str):
            scope = [scope or self.config.default_scope]
        scopes = tuple(valid_name(name, "scope") for name in scope)
        if not scopes:
            raise ValidationError("scope is an empty list")
        statuses = tuple(include)
        for status in statuses:
            if status not in MEMORY_STATUSES:
                raise ValidationError(f"unknown memory status {status!r} in include")
        return MemoryFilter(
            scopes=scopes,
            statuses=statuses,
            as_of=_optional_time(as_of, "as_of"),
            agents=None if agent is None else (valid_name(agent, "agent"),),
            tasks=None if task is None else (valid_name(task, "task"),),
        )

    def recall(
        self,
        query: str,
        k: int = 10,
        scope: str | Sequence[str] | None = None,
        *,
        agent: str | None = None,
        task: str | None = None,
        as_of: datetime | None = None,
        include: Sequence[str] = ("active",),
        explain: bool = False,
        mode: Literal["rrf", "weighted"] | None = None,
        **weights: Any,
    ) -> list[Hit]:
        """The k memories most useful for ``query`` in ``scope`` (active, valid at ``as_of``).

        Extra keyword arguments override ``RetrievalConfig`` fields for this call, e.g.
        ``recall(q, text_weight=0, half_life_days=7)``. With ``explain=True`` each hit carries
        its signals, fused score and graph path.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query is empty")
        valid_count(k, "k")
        when = utcnow() if as_of is None else as_of
        flt = self.memory_filter(scope, agent=agent, task=task, as_of=when, include=include)
        cfg = self._retrieval_config(mode, weights)
        return self.retriever.search(query, k, flt, flt.as_of or when, cfg, explain=explain)

    def _retrieval_config(self, mode: str | None, overrides: Mapping[str, Any]) -> RetrievalConfig:
        base = self.config.retrieval
        unknown = set(overrides) - set(RetrievalConfig.model_fields)
        if unknown:
            raise ValidationError(
                f"unknown recall option(s) {sorted(unknown)}; "
                f"known: {sorted(RetrievalConfig.model_fields)}"
            )
        changes = dict(overrides)
        if mode is not None:
            changes["mode"] = mode
        if not changes:
            return base
        try:
            return RetrievalConfig.model_validate({**base.model_dump(), **changes})
        except ValueError as exc:
            raise ValidationError(f"bad recall option: {exc}") from None

    # -- episodes and outcomes ------------------------------------------------------------

    def episode(
        self,
        agent: str | None = None,
        task: str | None = None,
        *,
        scope: str | None = None,
        id: str | None = None,
    ) -> EpisodeSession:
        """A context for one agent run: its recalls are logged as READ edges, its memories
        are GENERATED_IN it, and its outcome credits what it read."""
        return EpisodeSession(self, agent=agent, task=task, scope=scope, episode_id=id)

    def record_outcome(
        self,
        episode_id: str,
        *,
        success: bool,
        score: float | None = None,
        detail: str = "",
        at: datetime | None = None,
        used: Sequence[str] | None = None,
    ) -> Outcome:
        """Record how an episode ended and credit the memories it acted on: ``used`` (ids it
        read), or by default each recall's top hit; ``self.credit_policy`` says how much.

        Once per episode, even under races: a repeat with the same values returns the stored
        outcome, a differing one raises ``ConflictError``.
        """
        return credit.record_outcome(
            self.store,
            episode_id,
            success=success,
            score=score,
            detail=detail,
            at=_optional_time(at, "at") or utcnow(),
            used=used,
            policy=self.credit_policy,
        )

    def agent(self, agent_id: str, *, scope: str | None = None) -> Agent:
        """An agent with its trust: the Beta posterior over the credit its memories got, over
        all scopes (or only ``scope``), and per scope in ``trust_by_scope``."""
        node = self.store.get_nodes(AGENT, [valid_name(agent_id, "agent")]).get(agent_id)
        if node is None:
            raise NotFoundError(f"no agent {agent_id!r}")
        return agent_in_scopes(self.store, node, _optional_name(scope, "scope"))

    def failure_suspects(
        self,
        *,
        by: SuspectKind = "memory",
        limit: int = 20,
        scope: str | None = None,
        include: Sequence[str] = ("active",),
    ) -> list[Suspect]:
        """The memories (``by="agent"``: authors) most implicated in failed outcomes, most
        suspicious first (``provenance/suspects.py``). It only points: see what taking one
        back would do with ``retract(..., dry_run=True)``."""
        if by not in ("memory", "agent"):
            raise ValidationError(f"by must be 'memory' or 'agent', got {by!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationError(f"limit must be a positive integer, got {limit!r}")
        return suspects.failure_suspects(
            self.store,
            by=by,
            limit=limit,
            scope=_optional_name(scope, "scope"),  # None: every scope
            statuses=self.memory_filter(include=include).statuses,  # checked there
            z=self.config.retrieval.confidence_bound,
        )

    # -- provenance, retraction, audit -----------------------------------------------------

    def trace(self, memory_id: str, *, scope: str | None = None) -> Trace:
        """Where a memory came from (derivation chain, agents, episodes, tasks, sources) and
        where it went (its impact); with ``scope``, only what belongs to that scope."""
        self._in_scope(memory_id, scope)
        view = provenance.trace(self.store, memory_id)
        return view if scope is None else scoped_trace(view, scope)

    def impact(self, memory_id: str, *, scope: str | None = None) -> Impact:
        """The blast radius: derived memories (transitively), episodes that read it or them,
        their outcomes, and what those episodes wrote after reading (in ``scope``, if given)."""
        self._in_scope(memory_id, scope)
        view = provenance.impact(self.store, [memory_id])
        return view if scope is None else scoped_impact(view, scope)

    def _in_scope(self, memory_id: str, scope: str | None) -> None:
        """The memory exists (in ``scope``, if given): another scope's is not found."""
        memory = self.get(memory_id)
        if scope is not None and memory.scope != valid_name(scope, "scope"):
            raise NotFoundError(f"no memory with id {memory_id!r} in scope {scope!r}")

    def retract(
        self,
        id: str | Sequence[str] | None = None,
        *,
        reason: str,
        cascade: bool = True,
        dry_run: bool = False,
        agent: str | None = None,
        since: datetime | None = None,
        source: str | None = None,
        episode: str | None = None,
        policy: RetractionPolicy | Mapping[str, Any] | None = None,
        by: str | None = None,
        scope: str | None = None,
        cross_scope: bool = False,
    ) -> RetractionReport:
        """Take back memories, reversibly, in one transaction.

        Select by memory id(s), by ``agent`` (optionally only what it wrote ``since`` a time),
        by ``source`` URI or by ``episode``. With ``cascade`` the policy (default
        ``self.retraction_policy``) retracts what derives from the targets and quarantines what
        episodes wrote after reading them. ``dry_run`` returns the same report and writes
        nothing. Undo with ``restore(report.id)``. With a ``scope`` only that scope's memories
        are selected, and a cascade into another scope needs ``cross_scope=True``.
        """
        selector = retraction.make_selector(
            _ids(id),
            _optional_name(agent, "agent"),
            _optional_time(since, "since"),
            source,
            _optional_name(episode, "episode"),
            _optional_name(scope, "scope"),
        )
        batch, report = retraction.plan_retraction(
            self.store,
            selector,
            reason=_reason(reason, required=True),
            by=_optional_name(by, "by"),
            cascade=bool(cascade),
            policy=_policy(policy) or self.retraction_policy,
            at=utcnow(),
            cross_scope=_flag(cross_scope, "cross_scope"),
        )
        if dry_run:
            return report.model_copy(update={"dry_run": True})
        self.store.apply(batch)
        return report

    def restore(
        self, retraction_id: str, *, by: str | None = None, reason: str = ""
    ) -> RestoreReport:
        """Undo a retraction exactly; memories another active retraction holds stay down.
        Restoring twice is a no-op."""
        valid_name(retraction_id, "retraction id")
        batch, report = retraction.plan_restore(
            self.store,
            retraction_id,
            by=_optional_name(by, "by"),
            reason=_reason(reason, required=False),
            at=utcnow(),
        )
        self.store.apply(batch)
        return report

    def retraction(self, retraction_id: str) -> RetractionReport:
        """A stored retraction's report, with ``restored_at`` once restored."""
        return retraction.load_report(self.store, valid_name(retraction_id, "retraction id"))

    def audit(
        self,
        *,
        memory: str | None = None,
        agent: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: str | None = None,
        scope: str | None = None,
    ) -> list[AuditEvent]:
        """Audit events oldest first: retractions, restores, forgets (``since`` inclusive,
        ``until`` exclusive; ``agent`` matches authors of the memories concerned or the actor;
        ``scope`` keeps what concerns that scope's memories, narrowed to them)."""
        if kind is not None and kind not in AUDIT_KINDS:
            raise ValidationError(f"unknown audit kind {kind!r}; known: {list(AUDIT_KINDS)}")
        return query_events(
            self.store,
            memory=_optional_name(memory, "memory"),
            agent=_optional_name(agent, "agent"),
            kind=kind,
            since=_optional_time(since, "since"),
            until=_optional_time(until, "until"),
            scope=_optional_name(scope, "scope"),
        )

    def training_data(
        self, *, scope: str | None = None, agent: str | None = None
    ) -> Iterator[TrainingRow]:
        """One row per recall in an episode: query, retrieved ids with ranks and scores, the
        outcome, and whether a since-retracted memory was in play (schema: training_data)."""
        return training_rows(
            self.store,
            scope=_optional_name(scope, "scope"),
            agent=_optional_name(agent, "agent"),
        )

    def write_training_data(
        self,
        path: str | os.PathLike[str],
        *,
        scope: str | None = None,
        agent: str | None = None,
    ) -> int:
        """Write ``training_data`` rows to ``path`` as JSON Lines; how many were written."""
        return write_jsonl(self.training_data(scope=scope, agent=agent), path)

    def check(self) -> CheckReport:
        """Verify the store (read-only): orphan edges, values the API would refuse, statuses
        against retractions, the store's own index counts; ``report.ok`` if none."""
        return check_store(self.store)

    def stats(self) -> dict[str, Any]:
        """Counts of nodes and edges, the store and embedder in use, and chat-model usage per
        note operation (calls, retries, fallbacks, tokens; every graph that wrote here)."""
        info = self.store.embedder_info()
        return {
            "backend": self.store.backend,
            "embedder": None if info is None else {"name": info[0], "dims": info[1]},
            "counts": self.store.counts(),
            "llm": self.llm_usage(),
        }
