"""``AmemStore``: a LangGraph ``BaseStore`` whose items are versioned memories with provenance.

* A namespace is a scope (``namespaces.py``): recall, filtered by scope inside every path, can
  never return another namespace's item; a search under a prefix reads exactly the namespaces
  below it.
* Version ``n`` of an item is memory ``lg-…-n`` holding the value as JSON. A put over a live
  key writes version ``n + 1`` that supersedes ``n`` (kept, ``superseded``, in ``history``);
  putting the same value again (keys in any order) writes nothing. A delete retracts the live
  version and the versions it superseded, in one retraction (audited, undone by
  ``MemoryGraph.restore``); retracting the live one alone would bring back the one before it.
  ``MemoryGraph.forget`` is the hard erasure.
* ``search`` with a ``query`` is the hybrid recall; every item read in an episode (bind one
  with ``bind``) is logged as a READ edge, so outcomes credit it and retraction finds it.
* Items are ``AmemItem``/``AmemSearchItem``: LangGraph ``Item``s with one more attribute,
  ``provenance`` (memory id, version, status, author, episode, task, confidence), which code
  written for LangGraph never sees.

Like ``InMemoryStore``, a batch's reads see the store as it was before the batch, and its
writes (the last put per key wins) come after them: the puts in one transaction, then the
deletes in one more. Searches without a query list items newest first; ``index`` lists and
TTLs are not supported (every item is searchable whole). A get reads one key's versions by
its source; a search first finds the namespaces under its prefix among the scopes that ever
held an item, then recalls or lists within exactly those scopes. Those scopes come from the
item sources (one small node per key ever written), read again only when the store's count of
sources moved: sources are never deleted and a new namespace's first item is a new source, so
the cache is exact, and a search at 10k items no longer reads 10k nodes.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Hit, Memory, MemoryKind
from amem_graph.core.schema import SOURCE
from amem_graph.integrations import namespaces as ns
from amem_graph.integrations._deps import missing
from amem_graph.integrations.filters import check_filter, matches
from amem_graph.memory import EpisodeSession, MemoryGraph

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing("langgraph", exc) from exc

#: how much deeper than the page a filtered or shared-scope search recalls, per retry
_GROWTH = 4
#: a key's current run of versions: the live one and those it superseded (an item's times
#: are read from them, and a delete retracts them all)
_HISTORY = ("active", "superseded")


class NamespaceError(ValidationError, InvalidNamespaceError):
    """A namespace LangGraph or amem_graph refuses (both exception types catch it)."""


@dataclass(frozen=True)
class ItemProvenance:
    """Where an item's current value came from, and how far it is trusted."""

    memory_id: str
    version: int
    status: str
    author: str | None
    episode: str | None
    task: str | None
    confidence: float


class AmemItem(Item):
    """A LangGraph ``Item`` that also carries ``provenance``."""

    __slots__ = ("provenance",)

    def __init__(self, *, provenance: ItemProvenance, **fields: Any) -> None:
        super().__init__(**fields)
        self.provenance = provenance


class AmemSearchItem(SearchItem):
    """A LangGraph ``SearchItem`` that also carries ``provenance``."""

    __slots__ = ("provenance",)

    def __init__(self, *, provenance: ItemProvenance, **fields: Any) -> None:
        super().__init__(**fields)
        self.provenance = provenance


@dataclass(frozen=True)
class _Versions:
    """One key's memories, by version: the live one (if any) and when its chain began."""

    namespace: tuple[str, ...]
    key: str
    by_version: dict[int, Memory]

    @property
    def live(self) -> tuple[int, Memory] | None:
        alive = [(v, m) for v, m in self.by_version.items() if m.status == "active"]
        return max(alive, key=lambda vm: vm[0]) if alive else None

    @property
    def revivable(self) -> list[str]:
        """The live version and those it superseded: what a delete retracts."""
        return [m.id for _, m in sorted(self.by_version.items()) if m.status in _HISTORY]

    @property
    def last(self) -> int:
        return max(self.by_version, default=0)

    def started(self, version: int) -> datetime:
        """When the run of puts that led to ``version`` began (a delete ends a run)."""
        first = version
        while self.by_version.get(first - 1) is not None and (
            self.by_version[first - 1].status == "superseded"
        ):
            first -= 1
        return self.by_version[first].created_at


def _same_value(stored: str, content: str) -> bool:
    """Whether two JSON texts hold the same value: keys in another order are the same value
    (a put of it writes nothing), ``1`` and ``1.0`` are not."""
    return json.dumps(json.loads(stored), sort_keys=True) == json.dumps(
        json.loads(content), sort_keys=True
    )


def _versions(
    memories: Iterable[Memory], scope: str, namespace: tuple[str, ...], key: str
) -> _Versions:
    found = {}
    for memory in memories:
        version = ns.item_version(memory.id, scope, key)
        if version is not None and memory.scope == scope:
            found[version] = memory
    return _Versions(namespace, key, found)


def _live_id(uri: str, memories: Iterable[Memory]) -> str | None:
    """The id of the live version of the item a source URI names, if it has one."""
    parsed = ns.parse_source(uri)
    if parsed is None:
        return None
    scope, key = parsed
    live = _versions(memories, scope, ns.scope_namespace(scope) or (), key).live
    return None if live is None else live[1].id


def _provenance(memory: Memory, version: int) -> ItemProvenance:
    return ItemProvenance(
        memory_id=memory.id,
        version=version,
        status=memory.status,
        author=memory.agent,
        episode=memory.episode,
        task=memory.task,
        confidence=memory.confidence,
    )


class _ItemScopes:
    """The scopes that ever held an item, and the id stems of their items
    (``ns.item_stem``), keyed by the store's count of sources (see above)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: tuple[int, dict[str, frozenset[str]]] | None = None

    def stems(self, graph: MemoryGraph) -> dict[str, frozenset[str]]:
        """Scope -> the id stems of every item ever written in it."""
        count = graph.store.counts().get(SOURCE, 0)  # read before the scan: never too new
        with self._lock:
            if self._cached is not None and self._cached[0] == count:
                return self._cached[1]
        found: dict[str, set[str]] = {}
        for uri in graph.sources(ns.SOURCE_PREFIX):
            parsed = ns.parse_source(uri)
            if parsed is not None:
                found.setdefault(parsed[0], set()).add(ns.item_stem(*parsed))
        stems = {scope: frozenset(s) for scope, s in found.items()}
        with self._lock:
            self._cached = (count, stems)
        return stems


class AmemStore(BaseStore):
    """LangGraph long-term memory over a ``MemoryGraph`` (embedded store or Neo4j).

    ``agent``, ``task`` and ``episode`` are the provenance of what this store writes;
    ``episode`` also logs what it reads. ``bind`` gives a sibling with other provenance.
    """

    __slots__ = ("_scopes", "agent", "episode", "graph", "kind", "task")

    def __init__(
        self,
        graph: MemoryGraph,
        *,
        agent: str | None = None,
        task: str | None = None,
        episode: EpisodeSession | None = None,
        kind: MemoryKind = "semantic",
        _scopes: _ItemScopes | None = None,
    ) -> None:
        self.graph = graph
        self._scopes = _ItemScopes() if _scopes is None else _scopes
        self.agent = agent if agent is not None or episode is None else episode.agent
        self.task = task if task is not None or episode is None else episode.task
        self.episode = episode
        self.kind: MemoryKind = kind

    def bind(
        self,
        *,
        agent: str | None = None,
        task: str | None = None,
        episode: EpisodeSession | None = None,
    ) -> AmemStore:
        """The same store, writing with this provenance and logging reads into ``episode``."""
        return AmemStore(
            self.graph,
            agent=agent,
            task=task,
            episode=episode,
            kind=self.kind,
            _scopes=self._scopes,
        )

    # -- BaseStore ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops: reads first, in order, on the state before the batch; then writes."""
        todo = list(ops)
        puts: dict[tuple[tuple[str, ...], str], str | None] = {}
        for op in todo:
            content = self._check(op)
            if isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = content  # the last put of a key wins
        results: list[Result] = [None if isinstance(op, PutOp) else self._read(op) for op in todo]
        if puts:
            self._write(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread: the event loop never waits on the store."""
        return await asyncio.to_thread(self.batch, list(ops))

    def history(self, namespace: tuple[str, ...], key: str) -> list[AmemItem]:
        """Every version of an item, oldest first, with its status (live, superseded, deleted)."""
        scope = self._scope(namespace)
        uri = ns.item_source(scope, key)
        found = _versions(self.graph.by_source([uri])[uri], scope, tuple(namespace), key)
        return [AmemItem(**self._fields(found, v)) for v in sorted(found.by_version)]

    # -- checking -------------------------------------------------------------------------

    @staticmethod
    def _scope(namespace: Sequence[str]) -> str:
        try:
            return ns.namespace_scope(namespace)
        except ValidationError as exc:
            raise NamespaceError(exc.message, hint=exc.hint) from None

    def _check(self, op: Op) -> str | None:
        """Validate an op before anything runs; a put's value comes back as its JSON."""
        validate_op_namespace(op)
        if isinstance(op, GetOp | PutOp):
            self._scope(op.namespace)
        if isinstance(op, SearchOp):
            check_filter(op.filter)
            if op.limit < 0 or op.offset < 0:
                raise ValidationError(f"search limit and offset must be >= 0, got {op}")
        if isinstance(op, ListNamespacesOp) and (op.limit < 0 or op.offset < 0):
            raise ValidationError(f"list_namespaces limit and offset must be >= 0, got {op}")
        if not isinstance(op, PutOp):
            return None
        if op.namespace[0] == "langgraph":
            raise NamespaceError(f'the root label of a namespace cannot be "langgraph": {op}')
        if not isinstance(op.key, str):
            raise ValidationError(f"item key must be a string, got {op.key!r}")
        if op.value is None:
            return None
        if not isinstance(op.value, Mapping):
            raise ValidationError(f"item value must be a dict, got {type(op.value).__name__}")
        try:
            content = json.dumps(dict(op.value), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"item {op.key!r}: value is not JSON: {exc}") from None
        limit = self.graph.config.max_content_length
        if len(content) > limit:
            raise ValidationError(
                f"item {op.key!r}: value is {len(content)} characters as JSON, the limit is "
                f"{limit}",
                hint="split it or raise MemoryGraphConfig.max_content_length",
            )
        return content

    # -- reading --------------------------------------------------------------------------

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(tuple(op.namespace), op.key)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list(op)
        raise ValidationError(f"unknown store operation {type(op).__name__}")

    def _get(self, namespace: tuple[str, ...], key: str) -> AmemItem | None:
        scope = self._scope(namespace)
        uri = ns.item_source(scope, key)
        found = _versions(self.graph.by_source([uri], include=_HISTORY)[uri], scope, namespace, key)
        live = found.live
        if live is None:
            return None
        self._log(f"langgraph get {'/'.join(namespace)}/{key}", [(live[1], 1.0)])
        return AmemItem(**self._fields(found, live[0]))

    def _search(self, op: SearchOp) -> list[SearchItem]:
        scopes = self._scopes_under(tuple(op.namespace_prefix))
        want = op.offset + op.limit
        if not scopes or op.limit == 0:
            return []
        history: dict[str, list[Memory]] | None = None
        if op.query:
            picked, history = self._recalled(op, scopes, want)
        else:  # a listing: every live item below the prefix, newest first
            picked = self._passing(((m, None) for m in reversed(self.graph.find(scopes))), op)
        page = picked[op.offset : want]
        query = op.query or f"langgraph search {'/'.join(op.namespace_prefix)}"
        self._log(query, [(m, 1.0 if s is None else s) for m, s in page])
        return self._as_items(page, history)

    def _recalled(
        self, op: SearchOp, scopes: list[str], want: int
    ) -> tuple[list[tuple[Memory, float | None]], dict[str, list[Memory]]]:
        """Recall deep enough that ``want`` items pass the filter, or everything was seen; and
        the versions of the keys recalled (by source).

        Only a key's live version counts: a restore can bring back a version that a later put
        had branched past (both active), and ``get`` shows the later one, so search must too.
        """
        assert op.query is not None
        k = want
        while True:
            hits = self.graph.recall(op.query, k, scopes)
            keyed = [(h.memory, h.score, self._key(h.memory)) for h in hits]
            uris = sorted({ns.item_source(m.scope, key) for m, _, key in keyed})
            history = self.graph.by_source(uris, include=_HISTORY)
            live = {uri: _live_id(uri, found) for uri, found in history.items()}
            current = (
                (m, score)
                for m, score, key in keyed
                if live.get(ns.item_source(m.scope, key)) == m.id
            )
            picked = self._passing(current, op)
            if len(picked) >= want or len(hits) < k:
                return picked, history
            k *= _GROWTH

    def _passing(
        self, found: Iterable[tuple[Memory, float | None]], op: SearchOp
    ) -> list[tuple[Memory, float | None]]:
        """The item memories whose value passes the filter, one per key (the first seen)."""
        out: list[tuple[Memory, float | None]] = []
        seen: set[tuple[str, str]] = set()
        for memory, score in found:
            value = self._value(memory)
            key = (memory.scope, self._key(memory))
            if value is not None and key not in seen and matches(value, op.filter):
                seen.add(key)
                out.append((memory, score))
        return out

    def _as_items(
        self,
        page: list[tuple[Memory, float | None]],
        history: dict[str, list[Memory]] | None = None,
    ) -> list[SearchItem]:
        """Items for recalled memories, each with its run's start time (one read, unless the
        versions of their keys are given)."""
        keys = [self._key(m) for m, _ in page]
        uris = [ns.item_source(m.scope, key) for (m, _), key in zip(page, keys, strict=True)]
        if history is None or not set(uris) <= history.keys():
            history = self.graph.by_source(list(dict.fromkeys(uris)), include=_HISTORY)
        out: list[SearchItem] = []
        for (memory, score), key, uri in zip(page, keys, uris, strict=True):
            namespace = ns.scope_namespace(memory.scope) or ()
            found = _versions(history[uri], memory.scope, namespace, key)
            version = ns.item_version(memory.id, memory.scope, key) or 1
            if version in found.by_version:
                out.append(AmemSearchItem(score=score, **self._fields(found, version)))
        return out

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        live = self._live_namespaces()
        chosen = [n for n in live if all(_match(c, n) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            chosen = list({n[: op.max_depth] for n in chosen})
        return sorted(chosen)[op.offset : op.offset + op.limit]

    # -- writing --------------------------------------------------------------------------

    def _write(self, puts: dict[tuple[tuple[str, ...], str], str | None]) -> None:
        where = {(n, k): ns.item_source(self._scope(n), k) for n, k in puts}
        stored = self.graph.by_source(list(where.values()))
        items: list[dict[str, Any]] = []
        deletes: list[str] = []
        for (namespace, key), content in puts.items():
            scope = self._scope(namespace)
            uri = where[(namespace, key)]
            found = _versions(stored[uri], scope, namespace, key)
            live = found.live
            if content is None:
                if live is not None:
                    # every version a later retract could bring back: retracting the live one
                    # alone would put the version it superseded back in its place
                    deletes.extend(found.revivable)
            elif live is None or not _same_value(live[1].content, content):
                items.append(
                    {
                        "content": content,
                        "id": ns.item_memory_id(scope, key, found.last + 1),
                        "scope": scope,
                        "source": uri,
                        "kind": self.kind,
                        "agent": self.agent,
                        "task": self.task,
                        "episode": None if self.episode is None else self.episode.id,
                        "supersedes": None if live is None else live[1].id,
                    }
                )
        if items:
            self.graph.remember_many(items)
        if deletes:
            reason = "deleted through the LangGraph store"
            self.graph.retract(deletes, reason=reason, cascade=False, by=self.agent)

    # -- helpers --------------------------------------------------------------------------

    def _scopes_under(self, prefix: tuple[str, ...]) -> list[str]:
        """The scopes of every namespace that ever held an item at or below ``prefix``."""
        head = ns.encode(prefix)
        found = self._scopes.stems(self.graph)  # its keys: every scope that held an item
        return sorted(s for s in found if ns.under(s[len(ns.SCOPE_PREFIX) :], head))

    def _live_namespaces(self) -> set[tuple[str, ...]]:
        """The namespaces with a live item: an active memory holding a version of a key.

        One read for all of them (``GraphStore.one_per_scope``): an active memory of each
        scope that ever held an item. It holds a version when its id is made of one of the
        scope's item stems; when it is another writer's memory, the scope is read whole for
        an item. (A read per namespace made 2,000 namespaces take 2 s on Neo4j.)
        """
        stems = self._scopes.stems(self.graph)
        if not stems:
            return set()
        one = self.graph.store.one_per_scope(self.graph.memory_filter(sorted(stems)))
        out = set()
        for scope, mid in one.items():
            namespace = ns.scope_namespace(scope)
            held = ns.memory_stem(mid) in stems[scope] or any(
                ns.memory_stem(m.id) in stems[scope] for m in self.graph.find(scope)
            )
            if namespace and held:
                out.add(namespace)
        return out

    @staticmethod
    def _key(memory: Memory) -> str:
        parsed = ns.parse_source(memory.source or "")
        return "" if parsed is None else parsed[1]

    def _value(self, memory: Memory) -> dict[str, Any] | None:
        """The item value a memory holds, or None if it holds no item of its scope."""
        parsed = ns.parse_source(memory.source or "")
        if parsed is None or parsed[0] != memory.scope:
            return None
        if ns.item_version(memory.id, memory.scope, parsed[1]) is None:
            return None
        try:
            value = json.loads(memory.content)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def _fields(self, found: _Versions, version: int) -> dict[str, Any]:
        """An item's constructor arguments for one version of it."""
        memory = found.by_version[version]
        return {
            "namespace": found.namespace,
            "key": found.key,
            "value": self._value(memory) or {},
            "created_at": found.started(version),
            "updated_at": memory.created_at,
            "provenance": _provenance(memory, version),
        }

    def _log(self, query: str, shown: list[tuple[Memory, float]]) -> None:
        if self.episode is not None and shown:
            hits = [Hit(memory=m, score=s, rank=i + 1) for i, (m, s) in enumerate(shown)]
            self.episode.log_reads(query, hits)


def _match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's prefix/suffix namespace match, ``*`` matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValidationError(f"unknown namespace match type {condition.match_type!r}")
    return all(want == "*" or have == want for have, want in pairs)
