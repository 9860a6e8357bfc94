"""The GraphStore protocol: the one seam between memory logic and storage.

Logic above this line (retrieval, provenance, feedback, evolution) speaks only these calls, so
the embedded store and Neo4j stay interchangeable and one contract suite holds them to the same
behaviour.  Writes go in as one ``WriteBatch`` applied in one transaction: all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import Memory, beta_confidence
from amem_graph.core.schema import MEMORY, check_identifier, check_label, edge_endpoints
from amem_graph.core.seeding import SeedPlan

if TYPE_CHECKING:
    from amem_graph.stores.bulk import ImportBatch

Direction = Literal["out", "in", "both"]
PropValue = str | int | float | bool | datetime | None | list[str] | list[float] | list[int]

#: memory fields a store may update in place (status changes, credit, evolution)
MEMORY_MUTABLE_FIELDS = frozenset(
    {
        "status",
        "successes",
        "failures",
        "tags",
        "keywords",
        "context",
        "content",
        "content_hash",
        "version",
        "valid_to",
        "importance",
        "embedding",
        "support",
        "note_keywords",
        "note_tags",
        "note_context",
    }
)


def check_props(props: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Props must have identifier keys and scalar or list-of-scalar values (Neo4j's rule)."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        check_identifier(key, f"property name in {where}")
        if isinstance(value, dict):
            raise ValidationError(f"property {key!r} in {where} is a map; store scalars or lists")
        if isinstance(value, list | tuple):
            if any(isinstance(v, dict | list | tuple) for v in value):
                raise ValidationError(f"property {key!r} in {where} nests collections")
            value = list(value)
        out[key] = value
    return out


@dataclass(frozen=True)
class NodeWrite:
    """Create a node or merge ``props`` into the existing one with the same label and id.

    ``on_create`` props are set only when the node is new (an episode keeps its first start).
    ``create_only`` makes the store refuse a node that already exists: the whole batch fails
    with ``ConflictError``, checked in its transaction, so of two racing writers one wins.
    """

    label: str
    id: str
    props: dict[str, Any] = field(default_factory=dict)
    on_create: dict[str, Any] = field(default_factory=dict)
    create_only: bool = False

    def __post_init__(self) -> None:
        check_label(self.label)
        if self.label == MEMORY:
            raise ValidationError("write memories with WriteBatch.memories, not as plain nodes")
        where = f"{self.label} {self.id!r}"
        object.__setattr__(self, "props", check_props(self.props, where))
        object.__setattr__(self, "on_create", check_props(self.on_create, where))


@dataclass(frozen=True)
class EdgeWrite:
    """Create an edge, or merge ``props`` into the one with the same (type, src, dst, key)."""

    type: str
    src: str
    dst: str
    props: dict[str, Any] = field(default_factory=dict)
    key: str = ""

    def __post_init__(self) -> None:
        edge_endpoints(self.type)
        object.__setattr__(self, "props", check_props(self.props, f"{self.type} edge"))

    @property
    def labels(self) -> tuple[str, str]:
        """(source label, target label) fixed by the edge type."""
        return edge_endpoints(self.type)


@dataclass(frozen=True)
class MemoryUpdate:
    """Set some mutable fields of one memory and add to numeric ones.

    ``increments`` are applied inside the transaction (read-modify-write in the store), so two
    outcomes crediting the same memory never lose an update.
    """

    id: str
    changes: dict[str, Any] = field(default_factory=dict)
    increments: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = (set(self.changes) | set(self.increments)) - MEMORY_MUTABLE_FIELDS
        if unknown:
            raise ValidationError(f"memory fields {sorted(unknown)} cannot be updated")
        bad = set(self.increments) - {"successes", "failures", "version", "importance", "support"}
        if bad:
            raise ValidationError(f"memory fields {sorted(bad)} are not numeric counters")


@dataclass
class WriteBatch:
    """Everything one public mutation writes; a store applies it in one transaction.

    Order inside a transaction: memories, nodes, memory updates, node updates, edges, then
    deletions, so edges may point at nodes created in the same batch.
    """

    memories: list[Memory] = field(default_factory=list)
    nodes: list[NodeWrite] = field(default_factory=list)
    edges: list[EdgeWrite] = field(default_factory=list)
    memory_updates: list[MemoryUpdate] = field(default_factory=list)
    delete_memories: list[str] = field(default_factory=list)
    delete_edges: list[tuple[str, str, str, str]] = field(default_factory=list)

    def is_empty(self) -> bool:
        """True when applying would change nothing."""
        return not (
            self.memories
            or self.nodes
            or self.edges
            or self.memory_updates
            or self.delete_memories
            or self.delete_edges
        )


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a retrieval path may return; applied inside every path, never after.

    ``scopes=None`` means any scope and is only for analyst and admin calls; recall always
    passes one.
    """

    scopes: tuple[str, ...] | None = None
    statuses: tuple[str, ...] | None = ("active",)
    as_of: datetime | None = None
    agents: tuple[str, ...] | None = None
    tasks: tuple[str, ...] | None = None

    def admits(self, memory: Memory) -> bool:
        """Reference semantics every store's filtered query must reproduce."""
        if self.scopes is not None and memory.scope not in self.scopes:
            return False
        if self.statuses is not None and memory.status not in self.statuses:
            return False
        if self.as_of is not None and not memory.is_valid_at(self.as_of):
            return False
        if self.agents is not None and memory.agent not in self.agents:
            return False
        return self.tasks is None or memory.task in self.tasks


@dataclass(frozen=True, slots=True)
class RankFields:
    """What recall's priors read of a candidate: fetched for every candidate, so no content.

    Recall ranks a few hundred candidates and shows only k of them; reading the full memory of
    each candidate was most of a server store's recall time.
    """

    created_at: float  #: seconds since the epoch
    importance: float
    successes: float
    failures: float

    @property
    def confidence(self) -> float:
        """Same posterior as ``Memory.confidence``."""
        return beta_confidence(self.successes, self.failures)

    @classmethod
    def of(cls, memory: Memory) -> RankFields:
        """The fields of a memory in hand (reference values for the stores' queries)."""
        return cls(
            memory.created_at.timestamp(), memory.importance, memory.successes, memory.failures
        )


@dataclass(frozen=True, slots=True)
class Gist:
    """What recall's re-scoring reads of a likely hit (``HybridRetriever._rescore``): its
    agent, words and time, no parse of the whole memory.

    Recall re-scores 3 x k likely hits and shows k. A store whose reads cost no round trip
    reads these for the likely hits and whole memories only for the k shown: on the embedded
    store, parsing 30 memories to show 10 was the largest part of what a scoped recall
    among 100 tenants cost over a store of one tenant's size.
    """

    agent: str | None
    content: str
    created_at: datetime

    @classmethod
    def of(cls, memory: Memory) -> Gist:
        """The gist of a memory in hand."""
        return cls(memory.agent, memory.content, memory.created_at)


@dataclass(frozen=True)
class SearchResult:
    """Recall's direct candidates: both paths' (id, score) lists, best first, and the ranking
    fields of every id in them."""

    vector: list[tuple[str, float]]
    text: list[tuple[str, float]]
    fields: dict[str, RankFields]


def search_by_parts(
    store: GraphStore,
    vector: Sequence[float] | None,
    query: str,
    n_vector: int,
    n_text: int,
    flt: MemoryFilter,
) -> SearchResult:
    """``GraphStore.search`` made of the single-path calls (three reads).

    What an embedded store does, where a read costs no round trip; a server store answers
    ``search`` in one query and falls back to this for the rare cases that query cannot cover.
    """
    by_vector = store.vector_search(vector, n_vector, flt) if vector is not None else []
    by_text = store.text_search(query, n_text, flt)
    fields = store.rank_fields([i for i, _ in by_vector + by_text], flt)
    return SearchResult(by_vector, by_text, fields)


def vector_search_many(
    store: GraphStore, searches: Sequence[tuple[Sequence[float], MemoryFilter]], k: int
) -> list[list[tuple[str, float]]]:
    """``vector_search`` for each (vector, filter), in order: in one call on a store that has
    ``vector_search_many`` (the embedded one scores a batch's vectors in one matrix product
    per filter), else one call each. The answers are ``vector_search``'s."""
    many = getattr(store, "vector_search_many", None)
    if many is not None:
        return many(searches, k)  # type: ignore[no-any-return]
    return [store.vector_search(vector, k, flt) for vector, flt in searches]


#: memory-memory edges recall expands along, both ways
LINEAGE_EDGES = ("DERIVED_FROM", "LINKED")
#: memory -> hub edges whose other members are a memory's siblings (same episode, same task)
SIBLING_EDGES = ("GENERATED_IN", "FOR_TASK")


@dataclass(frozen=True)
class Neighbourhood:
    """One expansion hop's reads: the ``LINEAGE_EDGES`` touching the ids, their siblings per
    ``SIBLING_EDGES`` type (as ``GraphStore.siblings``), the ranking fields of every
    neighbour the filter admits (a neighbour without fields is not admitted), and the memories
    asked for with ``fetch``, read whole without embeddings (as ``get_memories``)."""

    edges: list[Edge]
    siblings: dict[str, dict[str, list[tuple[str, str]]]]
    fields: dict[str, RankFields]
    memories: dict[str, Memory] = field(default_factory=dict)


def neighbourhood_by_parts(
    store: GraphStore,
    ids: Sequence[str],
    flt: MemoryFilter,
    limit: int,
    fetch: Sequence[str] = (),
) -> Neighbourhood:
    """``GraphStore.neighbourhood`` made of the single calls (five reads); see
    ``search_by_parts``."""
    edges = store.edges(ids, list(LINEAGE_EDGES), "both")
    siblings = {via: store.siblings(ids, via, flt, limit) for via in SIBLING_EDGES}
    seeds = set(ids)
    found = {b for e in edges for a, b in ((e.src, e.dst), (e.dst, e.src)) if a in seeds}
    found |= {
        other for by_seed in siblings.values() for pairs in by_seed.values() for other, _ in pairs
    }
    fields = store.rank_fields(sorted(found), flt)
    return Neighbourhood(edges, siblings, fields, store.get_memories(fetch, embeddings=False))


@dataclass(frozen=True)
class Expansion:
    """Recall's store reads up to the end of its first expansion hop: the search lists, the
    seeds ``SeedPlan.choose`` picks from them (best first), the hop from those seeds (in
    id order, with the plan's fetch read whole), and which of the ``names`` it was asked
    about wrote a memory the filter admits (``GraphStore.authors``, read with the rest)."""

    found: SearchResult
    seeds: list[str]
    hood: Neighbourhood
    authors: frozenset[str] = frozenset()


def prior_fields(fields: Mapping[str, RankFields]) -> dict[str, tuple[float, float]]:
    """Memory id -> (created_at, importance): what ``SeedPlan.choose``'s priors read."""
    return {mid: (f.created_at, f.importance) for mid, f in fields.items()}


def search_expand_by_parts(
    store: GraphStore,
    vector: Sequence[float] | None,
    query: str,
    n_vector: int,
    n_text: int,
    flt: MemoryFilter,
    plan: SeedPlan,
    names: Sequence[str] = (),
) -> Expansion:
    """``GraphStore.search_expand`` as ``authors``, ``search`` then ``neighbourhood`` (up to
    three calls); see ``search_by_parts``."""
    authors = frozenset(store.authors(names, flt)) if names else frozenset()
    found = store.search(vector, query, n_vector, n_text, flt)
    seeds, fetch = plan.choose(
        found.vector, found.text, prior_fields(found.fields), (n_vector, n_text)
    )
    hood = store.neighbourhood(sorted(seeds), flt, plan.limit, fetch)
    return Expansion(found, seeds, hood, authors)


@dataclass(frozen=True)
class Edge:
    """A stored edge as read back."""

    type: str
    src: str
    dst: str
    props: dict[str, Any]
    key: str = ""


@dataclass(frozen=True)
class Node:
    """A stored non-memory node as read back."""

    label: str
    id: str
    props: dict[str, Any]


@runtime_checkable
class GraphStore(Protocol):
    """Storage for the memory graph. Every method may raise only ``AmemGraphError``s."""

    #: short backend name, e.g. "local" or "neo4j"
    backend: str

    def ensure_embedder(self, name: str, dims: int) -> None:
        """Record the embedder on first use; raise EmbedderMismatchError if it differs."""
        ...

    def embedder_info(self) -> tuple[str, int] | None:
        """The (name, dims) recorded in the store, if any."""
        ...

    def apply(self, batch: WriteBatch) -> None:
        """Apply a whole batch in one transaction, or nothing of it."""
        ...

    def import_memories(self, batch: ImportBatch) -> None:
        """Write new memories given as columns in one transaction; refuse the whole batch
        with ConflictError if any id exists (``amem_graph.stores.bulk``)."""
        ...

    def get_memories(self, ids: Sequence[str], *, embeddings: bool = True) -> dict[str, Memory]:
        """Memories by id (missing ids are absent); ``embeddings=False`` skips the vectors."""
        ...

    def find_memories(self, flt: MemoryFilter, limit: int | None = None) -> list[Memory]:
        """Memories the filter admits, oldest first (created_at, then id)."""
        ...

    def get_nodes(self, label: str, ids: Sequence[str]) -> dict[str, Node]:
        """Non-memory nodes by label and id."""
        ...

    def find_nodes(self, label: str, where: Mapping[str, Any] | None = None) -> list[Node]:
        """Non-memory nodes of a label whose props equal every item of ``where``."""
        ...

    def edges(
        self,
        ids: Iterable[str],
        types: Sequence[str] | None = None,
        direction: Direction = "out",
    ) -> list[Edge]:
        """Edges touching the given node ids (as src for "out", dst for "in")."""
        ...

    def vector_search(
        self, vector: Sequence[float], k: int, flt: MemoryFilter
    ) -> list[tuple[str, float]]:
        """Top-k memory ids by cosine similarity among those the filter admits."""
        ...

    def text_search(self, query: str, k: int, flt: MemoryFilter) -> list[tuple[str, float]]:
        """Top-k memory ids by BM25 over content, keywords, tags and context (higher is better)."""
        ...

    def search(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
    ) -> SearchResult:
        """``vector_search(vector, n_vector)`` and ``text_search(query, n_text)`` under one
        filter, with ``rank_fields`` of every hit: recall's first read, at once."""
        ...

    def neighbourhood(
        self, ids: Sequence[str], flt: MemoryFilter, limit: int, fetch: Sequence[str] = ()
    ) -> Neighbourhood:
        """Recall's expansion reads for one hop from ``ids``, at once (see ``Neighbourhood``);
        ``limit`` bounds the siblings per id and hub type. The ``fetch`` memories are read in
        the same round trip: recall asks for the hits it will most likely show."""
        ...

    def search_expand(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
        plan: SeedPlan,
        names: Sequence[str] = (),
    ) -> Expansion:
        """``search``, the seeds ``plan`` picks from its lists, ``neighbourhood`` from them
        with the plan's fetch, and ``authors`` of ``names``: what ``search_expand_by_parts``
        returns, in as few round trips as the store can (a default recall's whole store
        work; a recall that guessed which words of its query are agents checks its guess
        here, ``HybridRetriever.search``)."""
        ...

    def filter_ids(self, ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        """The subset of memory ids the filter admits."""
        ...

    def rank_fields(self, ids: Iterable[str], flt: MemoryFilter) -> dict[str, RankFields]:
        """Memory id -> its ranking fields, for the ids the filter admits (one round trip)."""
        ...

    def gists(self, ids: Sequence[str]) -> dict[str, Gist]:
        """Memory id -> its ``Gist``, any status (missing ids are absent; one round trip)."""
        ...

    def authors(self, agent_ids: Iterable[str], flt: MemoryFilter) -> set[str]:
        """Those of ``agent_ids`` that wrote a memory the filter admits (one round trip): the
        agents a query may name, so recall searches without the name (``recall/names.py``).
        Scoped by the filter, so an agent of another tenant is never one."""
        ...

    def one_per_scope(self, flt: MemoryFilter) -> dict[str, str]:
        """Scope -> the id of one memory in it the filter admits (any one), for each of the
        filter's scopes that holds one; one round trip whatever their number (which
        namespaces of a LangGraph store are live: ``AmemStore.list_namespaces``)."""
        ...

    def episode_tails(
        self, wanted: Mapping[tuple[str, str], datetime]
    ) -> dict[tuple[str, str], Memory]:
        """(scope, episode) -> that scope's memory written in that episode (its ``episode``)
        latest at or before the given time, ties to the greater id, whatever its status, with
        its embedding; a key with none is left out. One read for every key, through the
        episode's members only: a write into an episode asks for the memory before its own
        (``amem_graph.notes.episode_context``)."""
        ...

    def statuses(self, ids: Iterable[str]) -> dict[str, str]:
        """Memory id -> status, for the ids that exist (one round trip for many ids)."""
        ...

    def siblings(
        self, ids: Sequence[str], via: str, flt: MemoryFilter, limit: int
    ) -> dict[str, list[tuple[str, str]]]:
        """Memories sharing a hub with each given memory, nearest in time first.

        ``via`` is ``GENERATED_IN`` (same episode) or ``FOR_TASK`` (same task). For each id,
        up to ``limit`` (other memory id, hub id) pairs among memories the filter admits,
        ordered by ``|created_at - the id's created_at|``, then id. Bounded so a hub with
        thousands of members costs no more than a small one.
        """
        ...

    def counts(self) -> dict[str, int]:
        """Node counts per label and edge counts per type (only non-zero entries)."""
        ...

    def iter_nodes(self) -> Iterator[Node]:
        """Every non-memory node (for export)."""
        ...

    def iter_edges(self) -> Iterator[Edge]:
        """Every edge (for export)."""
        ...

    def index_problems(self) -> list[str]:
        """Where the store's own indexes disagree with its records (vector, text and row
        counts, unreadable rows); empty when they agree. ``check`` adds the graph-level rules."""
        ...

    def close(self) -> None:
        """Release connections; idempotent."""
        ...


@runtime_checkable
class CypherReader(Protocol):
    """A store that answers read-only Cypher (Neo4j): the analyst pack's one way in.

    Logic asks ``isinstance(store, CypherReader)`` instead of importing a concrete store.
    """

    def run_read_query(
        self, cypher: str, params: Mapping[str, Any], *, timeout: float, what: str = "query"
    ) -> tuple[list[str], list[list[Any]]]:
        """(columns, JSON-ready rows) of ``cypher`` run in a READ transaction."""
        ...
