"""Whole-graph export and import as JSON Lines: backups, moves between stores, re-seeding tests.

File format (``FORMAT``, version ``FORMAT_VERSION``), one JSON object per line, UTF-8:

1. a header: ``{"record": "header", "format": ..., "version": 1, "embedder": {"name", "dims"}
   or null, "embedding_encoding": "float32-le-base64", "exported_at": ..., "backend": ...}``;
2. every memory with all its fields (status, successes, failures, version, validity, ...) and
   its embedding as base64 of little-endian float32 (both stores keep float32 unit vectors, so
   this is exact and about five times smaller than a list of decimals);
3. every other node: ``{"record": "node", "label", "id", "props"}``;
4. every edge: ``{"record": "edge", "type", "src", "dst", "key", "props"}``;
5. a trailer ``{"record": "end", "memories": n, "nodes": n, "edges": n}``, so a truncated
   file is refused instead of imported in part.

Datetimes anywhere are tagged ``{"$dt": "<ISO 8601>"}`` (``stores/codec.py``) and come back as
timezone-aware datetimes. A property that is null and one that is absent are the same thing
(Neo4j cannot store null).

Import is for an EMPTY store. It validates the whole file first (a bad line N is reported as
line N, and nothing is written), checks the file's embedder against the store's, then writes in
batches of ``batch_size`` records, each one transaction, in file order: memories, then nodes,
then edges, so every edge's endpoints already exist. If a batch fails, the batches before it
stay written; the store is then non-empty and a re-run is refused, so recover by emptying it
(delete the SQLite file, or ``Neo4jStore.wipe()``) and importing again. ``batch_size=None``
writes the whole file in one transaction instead: all or nothing, at the cost of holding it in
memory (and, on Neo4j, in the server's transaction heap).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, TextIO

import numpy as np
import pydantic

from amem_graph.core import codec
from amem_graph.core.config import DEFAULT_EPISODE_CONTEXT
from amem_graph.core.errors import (
    AmemGraphError,
    ConflictError,
    EmbedderMismatchError,
    ValidationError,
)
from amem_graph.core.models import Memory, utcnow
from amem_graph.core.rules import edge_problems, memory_problems, node_problems
from amem_graph.core.schema import EDGE_TYPES, MEMORY
from amem_graph.embeddings import Embedder
from amem_graph.notes.episode_context import EpisodeTails
from amem_graph.stores.base import (
    Edge,
    EdgeWrite,
    GraphStore,
    MemoryFilter,
    Node,
    NodeWrite,
    WriteBatch,
)
from amem_graph.transfer.re_embed import ReEmbedding, embed_into

FORMAT: Final = "amem-graph-export"
FORMAT_VERSION: Final = 1
EMBEDDING_ENCODING: Final = "float32-le-base64"
DEFAULT_BATCH_SIZE: Final = 1000
_PROGRESS_EVERY: Final = 500

#: records in the order a file must list them
_ORDER: Final = ("header", "memory", "node", "edge", "end")
_MEMORY_FIELDS: Final = frozenset(Memory.model_fields)
_NODE_KEYS: Final = frozenset({"record", "label", "id", "props"})
_EDGE_KEYS: Final = frozenset({"record", "type", "src", "dst", "key", "props"})

#: called with (records done, records in total)
Progress = Callable[[int, int], None]
Record = Memory | NodeWrite | EdgeWrite


@dataclass(frozen=True)
class TransferReport:
    """What an export wrote or an import stored."""

    path: str
    memories: int = 0
    nodes: int = 0
    edges: int = 0
    embedder: tuple[str, int] | None = None

    @property
    def records(self) -> int:
        """Memories, nodes and edges together."""
        return self.memories + self.nodes + self.edges

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form for the CLI."""
        name, dims = self.embedder or (None, None)
        return {
            "path": self.path,
            "memories": self.memories,
            "nodes": self.nodes,
            "edges": self.edges,
            "embedder": None if name is None else {"name": name, "dims": dims},
        }


# -- encoding -----------------------------------------------------------------------------------


def encode_embedding(vector: list[float] | None) -> str | None:
    """base64 of the vector as little-endian float32."""
    if vector is None:
        return None
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_embedding(text: object, dims: int | None) -> list[float] | None:
    """Inverse of ``encode_embedding``, checked against the file's dimension."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError("embedding must be a base64 string or null")
    if dims is None:
        raise ValueError("the header names no embedder, so no memory may carry an embedding")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("embedding is not valid base64") from None
    if len(raw) != 4 * dims:
        raise ValueError(
            f"embedding has {len(raw)} bytes, not the {4 * dims} of {dims} float32 values"
        )
    vector = np.frombuffer(raw, dtype="<f4")
    if not np.all(np.isfinite(vector)):
        raise ValueError("embedding has a non-finite value")
    return [float(v) for v in vector.tolist()]


def memory_record(memory: Memory) -> dict[str, Any]:
    """A memory as an export line (every stored field; confidence is derived, so left out)."""
    data = memory.model_dump(exclude={"embedding", "confidence"})
    return {"record": "memory", **data, "embedding": encode_embedding(memory.embedding)}


def _line(record: dict[str, Any]) -> str:
    return codec.dumps(record) + "\n"


# -- export -------------------------------------------------------------------------------------


def export_graph(
    store: GraphStore, path: str | os.PathLike[str], *, progress: Progress | None = None
) -> TransferReport:
    """Write the whole graph to ``path`` as JSONL (replaced atomically when complete).

    The store is read in three steps (memories, nodes, edges); export a store nobody is writing
    to. An edge whose endpoint was not exported means a write raced the export: ConflictError.
    """
    embedder = store.embedder_info()
    memories = store.find_memories(MemoryFilter(statuses=None))
    nodes = list(store.iter_nodes())
    edges = list(store.iter_edges())
    present = {(MEMORY, m.id) for m in memories} | {(n.label, n.id) for n in nodes}
    for e in edges:
        src_label, dst_label = EDGE_TYPES[e.type]
        if (src_label, e.src) not in present or (dst_label, e.dst) not in present:
            raise ConflictError(
                f"{e.type} edge {e.src!r}->{e.dst!r} has an endpoint that was not exported",
                hint="the store changed during the export; run it again when writes are quiet",
            )
    total = len(memories) + len(nodes) + len(edges)
    header = {
        "record": "header",
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "embedder": None if embedder is None else {"name": embedder[0], "dims": embedder[1]},
        "embedding_encoding": EMBEDDING_ENCODING,
        "exported_at": utcnow(),
        "backend": store.backend,
    }
    lines: Iterator[str] = _export_lines(header, memories, nodes, edges)
    _write_atomically(Path(path), lines, total, progress)
    return TransferReport(os.fspath(path), len(memories), len(nodes), len(edges), embedder)


def _export_lines(
    header: dict[str, Any], memories: list[Memory], nodes: list[Node], edges: list[Edge]
) -> Iterator[str]:
    yield _line(header)
    for m in memories:
        yield _line(memory_record(m))
    for n in nodes:
        yield _line({"record": "node", "label": n.label, "id": n.id, "props": n.props})
    for e in edges:
        edge = {"type": e.type, "src": e.src, "dst": e.dst, "key": e.key, "props": e.props}
        yield _line({"record": "edge", **edge})
    counts = {"memories": len(memories), "nodes": len(nodes), "edges": len(edges)}
    yield _line({"record": "end", **counts})


def _write_atomically(
    target: Path, lines: Iterator[str], total: int, progress: Progress | None
) -> None:
    """Write to a temporary file beside ``target``, then rename: never a half-written export."""
    target = target.expanduser()
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ValidationError(f"cannot write {target}: no directory {directory}")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for done, text in enumerate(lines):
                out.write(text)
                if progress is not None and done and done % _PROGRESS_EVERY == 0:
                    progress(min(done, total), total)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if progress is not None:
        progress(total, total)


# -- reading and validating ---------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    """The first line of an export file."""

    version: int
    embedder: tuple[str, int] | None
    exported_at: datetime | None
    backend: str | None


@dataclass
class _Seen:
    """What the validation pass remembers: ids per label, counts, the order reached."""

    ids: dict[str, set[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_ORDER, 0))
    stage: int = 0


def _fail(number: int, message: str) -> ValidationError:
    return ValidationError(f"line {number}: {message}")


def _parse_json(number: int, raw: str) -> dict[str, Any]:
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:  # a byte that is not UTF-8, escaped by ``_open``
        raise _fail(number, "not valid UTF-8 (an export file is UTF-8 text)") from None
    try:
        obj = codec.loads(raw)
    except (json.JSONDecodeError, ValueError, TypeError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise _fail(number, f"invalid JSON: {detail}") from None
    except RecursionError:
        raise _fail(number, "invalid JSON: values nested too deeply") from None
    if not isinstance(obj, dict):
        raise _fail(number, "expected a JSON object")
    return obj


def _check_times(number: int, value: Any, where: str) -> None:
    """Every datetime must be timezone-aware, as the stores require."""
    items = value.items() if isinstance(value, dict) else enumerate(value or ())
    for key, item in items:
        if isinstance(item, datetime) and (item.tzinfo is None or item.utcoffset() is None):
            raise _fail(number, f"{where} {key!r}: datetime {item.isoformat()} has no timezone")
        if isinstance(item, list):
            _check_times(number, item, where)


def parse_header(number: int, raw: str) -> Header:
    """The header line, or a ValidationError saying why the file is not an export."""
    obj = _parse_json(number, raw)
    if obj.get("record") != "header" or obj.get("format") != FORMAT:
        raise _fail(number, f"not an amem_graph export (expected a {FORMAT!r} header line)")
    version = obj.get("version")
    if version != FORMAT_VERSION:
        raise _fail(
            number, f"export format version {version!r}; this amem_graph reads {FORMAT_VERSION}"
        )
    if obj.get("embedding_encoding", EMBEDDING_ENCODING) != EMBEDDING_ENCODING:
        raise _fail(number, f"unknown embedding_encoding {obj.get('embedding_encoding')!r}")
    embedder = obj.get("embedder")
    parsed: tuple[str, int] | None = None
    if embedder is not None:
        name = embedder.get("name") if isinstance(embedder, dict) else None
        dims = embedder.get("dims") if isinstance(embedder, dict) else None
        if not isinstance(name, str) or not name or type(dims) is not int or dims <= 0:
            raise _fail(number, "embedder must be {'name': non-empty string, 'dims': int > 0}")
        parsed = (name, dims)
    exported_at = obj.get("exported_at")
    return Header(
        version=version,
        embedder=parsed,
        exported_at=exported_at if isinstance(exported_at, datetime) else None,
        backend=obj.get("backend") if isinstance(obj.get("backend"), str) else None,
    )


def _memory(number: int, obj: dict[str, Any], dims: int | None) -> Memory:
    unknown = set(obj) - _MEMORY_FIELDS - {"record"}
    if unknown:
        raise _fail(number, f"unknown memory field(s) {sorted(unknown)}")
    data = {k: v for k, v in obj.items() if k != "record"}
    _text(number, data, "id", "memory")
    try:
        data["embedding"] = decode_embedding(data.get("embedding"), dims)
    except ValueError as exc:
        raise _fail(number, f"memory {data.get('id')!r}: {exc}") from None
    _check_times(number, data, "memory field")
    try:
        memory = Memory.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise _fail(number, f"memory {data.get('id')!r}: {problems}") from None
    _refuse(number, [f"memory {memory.id!r}: {p}" for p in memory_problems(memory)])
    return memory


def _refuse(number: int, problems: list[str]) -> None:
    """A record the API would not have written is refused (the same rules as ``check``)."""
    if problems:
        raise _fail(number, "; ".join(problems))


def _keys(number: int, obj: dict[str, Any], allowed: frozenset[str], what: str) -> None:
    unknown = set(obj) - allowed
    if unknown:
        raise _fail(number, f"unknown {what} field(s) {sorted(unknown)}")
    if not isinstance(obj.get("props", {}), dict):
        raise _fail(number, f"{what} props must be an object")


def _text(number: int, obj: dict[str, Any], name: str, what: str, empty: bool = False) -> str:
    value = obj.get(name, "" if empty else None)
    if not isinstance(value, str) or (not empty and not value):
        raise _fail(number, f"{what} {name} must be a {'' if empty else 'non-empty '}string")
    return value


def _node(number: int, obj: dict[str, Any]) -> NodeWrite:
    _keys(number, obj, _NODE_KEYS, "node")
    label = _text(number, obj, "label", "node")
    nid = _text(number, obj, "id", "node")
    props = dict(obj.get("props") or {})
    if "id" in props:
        raise _fail(number, "node props must not repeat 'id'")
    _check_times(number, props, "property")
    _refuse(number, node_problems(label, nid, props))
    try:
        return NodeWrite(label, nid, props=props)
    except AmemGraphError as exc:
        raise _fail(number, exc.message) from None


def _edge(number: int, obj: dict[str, Any]) -> EdgeWrite:
    _keys(number, obj, _EDGE_KEYS, "edge")
    etype = _text(number, obj, "type", "edge")
    src = _text(number, obj, "src", "edge")
    dst = _text(number, obj, "dst", "edge")
    key = _text(number, obj, "key", "edge", empty=True)
    props = dict(obj.get("props") or {})
    if "key" in props:
        raise _fail(number, "edge props must not repeat 'key'")
    _check_times(number, props, "property")
    _refuse(number, edge_problems(etype, src, dst, key, props))
    try:
        return EdgeWrite(etype, src, dst, props, key=key)
    except AmemGraphError as exc:
        raise _fail(number, exc.message) from None


def _records(stream: TextIO, header: Header) -> Iterator[tuple[int, str, Any]]:
    """(line number, record kind, parsed record) for every line after the header."""
    dims = None if header.embedder is None else header.embedder[1]
    for number, raw in enumerate(stream, start=2):
        if not raw.strip():
            continue
        obj = _parse_json(number, raw)
        kind = obj.get("record")
        if kind == "memory":
            yield number, kind, _memory(number, obj, dims)
        elif kind == "node":
            yield number, kind, _node(number, obj)
        elif kind == "edge":
            yield number, kind, _edge(number, obj)
        elif kind == "end":
            yield number, kind, obj
        else:
            raise _fail(number, f"unknown record {kind!r}; expected memory, node, edge or end")


def _first_line(stream: TextIO) -> str:
    first = stream.readline()
    if not first.strip():
        raise _fail(1, "empty; expected the export header")
    return first


def _track(seen: _Seen, number: int, kind: str, record: Any) -> None:
    """Order, uniqueness and edge endpoints, checked as the file streams by."""
    if seen.stage == _ORDER.index("end"):
        raise _fail(number, "a record after the end record")
    stage = _ORDER.index(kind)
    if stage < seen.stage:
        raise _fail(
            number,
            f"{kind} record after {_ORDER[seen.stage]} records; an export lists memories, "
            "then nodes, then edges, then the end record",
        )
    seen.stage = stage
    seen.counts[kind] += 1
    if isinstance(record, Memory | NodeWrite):
        label = MEMORY if isinstance(record, Memory) else record.label
        ids = seen.ids.setdefault(label, set())
        if record.id in ids:
            raise _fail(number, f"{label} {record.id!r} appears twice")
        ids.add(record.id)
    elif isinstance(record, EdgeWrite):
        for label, nid in zip(record.labels, (record.src, record.dst), strict=True):
            if nid not in seen.ids.get(label, ()):
                raise _fail(number, f"{record.type} edge names {label} {nid!r}, not in the file")


def _check_end(seen: _Seen, number: int, trailer: dict[str, Any] | None) -> None:
    if trailer is None:
        raise _fail(number, "the file ends without its end record: truncated?")
    for kind, name in (("memory", "memories"), ("node", "nodes"), ("edge", "edges")):
        if trailer.get(name) != seen.counts[kind]:
            raise _fail(
                number,
                f"the end record counts {trailer.get(name)!r} {name}, the file has "
                f"{seen.counts[kind]}",
            )


def validate_file(path: str | os.PathLike[str]) -> tuple[Header, dict[str, int]]:
    """Check every line of an export; return its header and record counts. Writes nothing."""
    with _open(path) as stream:
        header = parse_header(1, _first_line(stream))
        seen = _Seen(stage=0)
        trailer: dict[str, Any] | None = None
        last = 1
        for number, kind, record in _records(stream, header):
            _track(seen, number, kind, record)
            last = number
            if kind == "end":
                trailer = record
    _check_end(seen, last + 1 if trailer is None else last, trailer)
    return header, {k: seen.counts[k] for k in ("memory", "node", "edge")}


def _open(path: str | os.PathLike[str]) -> TextIO:
    try:
        # bytes that are not UTF-8 become lone surrogates, refused with their line number
        return open(Path(path).expanduser(), encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        raise ValidationError(f"no export file at {path}") from None
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from None


# -- import -------------------------------------------------------------------------------------


def check_target(store: GraphStore, header: Header) -> None:
    """The store must be empty and, if it already recorded an embedder, the file's."""
    counts = store.counts()
    if counts:
        total = sum(counts.values())
        raise ConflictError(
            f"the target store is not empty ({total} nodes and edges); import only fills an "
            "empty store",
            hint="import into a new store file, or empty a Neo4j database first",
        )
    recorded = store.embedder_info()
    if recorded is not None and header.embedder is not None and recorded != header.embedder:
        raise EmbedderMismatchError(
            f"the file was exported with embedder {header.embedder[0]!r} "
            f"({header.embedder[1]} dims); the target store records {recorded[0]!r} "
            f"({recorded[1]} dims)",
            hint="import into a store that has no embedder recorded yet",
        )


def import_graph(
    store: GraphStore,
    path: str | os.PathLike[str],
    *,
    batch_size: int | None = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    re_embed: Embedder | None = None,
    episode_context: float = DEFAULT_EPISODE_CONTEXT,
) -> TransferReport:
    """Load an export into an EMPTY store, losslessly (see the module docstring).

    ``batch_size`` records per transaction; ``None`` for one transaction over the whole file.
    ``re_embed`` replaces every memory's vector with that embedder's (of its content) and
    records it as the store's embedder: the way to move a graph to another model. Each new
    vector carries ``episode_context`` of its episode's previous memory, as ``remember``'s do
    (``amem_graph.notes.episode_context``; an export lists an episode's memories in the order
    they were written).
    """
    if batch_size is not None and batch_size < 1:
        raise ValidationError(f"batch_size must be at least 1 (or None), got {batch_size}")
    header, counts = validate_file(path)
    target = header  # what the store will record: the file's embedder, or the new one
    if re_embed is not None:
        target = dataclasses.replace(header, embedder=(re_embed.name, re_embed.dims))
    check_target(store, target)
    if target.embedder is not None:
        store.ensure_embedder(*target.embedder)
    total = sum(counts.values())
    written = 0
    batch = WriteBatch()
    size = 0
    pending: list[int] = []  # positions in batch.memories still to re-embed
    context = ReEmbedding(re_embed, EpisodeTails(), episode_context)
    with _open(path) as stream:
        parse_header(1, _first_line(stream))
        for _number, kind, record in _records(stream, header):
            if kind == "end":
                break
            _add(batch, record)
            if re_embed is not None and isinstance(record, Memory):
                pending.append(len(batch.memories) - 1)
            size += 1
            if batch_size is not None and size >= batch_size:
                embed_into(batch, pending, context)
                written = _flush(store, batch, written, size, total, progress)
                batch, size, pending = WriteBatch(), 0, []
    embed_into(batch, pending, context)
    _flush(store, batch, written, size, total, progress)
    return TransferReport(
        os.fspath(path), counts["memory"], counts["node"], counts["edge"], target.embedder
    )


def _add(batch: WriteBatch, record: Record) -> None:
    if isinstance(record, Memory):
        batch.memories.append(record)
    elif isinstance(record, NodeWrite):
        batch.nodes.append(record)
    else:
        batch.edges.append(record)


def _flush(
    store: GraphStore,
    batch: WriteBatch,
    written: int,
    size: int,
    total: int,
    progress: Progress | None,
) -> int:
    """Apply one batch; on failure say how much of the file is already in the store."""
    try:
        store.apply(batch)
    except AmemGraphError as exc:
        if written == 0:
            raise type(exc)(f"{exc.message}; nothing was imported", hint=exc.hint) from exc
        raise type(exc)(
            f"{exc.message} (after {written} of {total} records were imported)",
            hint="earlier batches stay in the store; empty it (delete the store file, or wipe "
            "the Neo4j database) and import again, or import with batch_size=None (--atomic) "
            "for all or nothing",
        ) from exc
    written += size
    if progress is not None:
        progress(written, total)
    return written
