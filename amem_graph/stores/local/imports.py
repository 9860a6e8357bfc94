"""An ``ImportBatch`` as SQLite rows, without a pydantic ``Memory`` per row.

The rows are byte for byte what ``apply`` stores for the same memories (the contract test
``test_the_embedded_fast_route_leaves_the_reference_routes_state`` compares the tables): the
template's document is dumped once and each row overrides only its own fields (the keys of
``ImportBatch.row``); the batch's datetimes go through the model's serialiser in one call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import numpy as np
from pydantic import TypeAdapter

from amem_graph.core import codec
from amem_graph.core.text import search_text_of
from amem_graph.stores.bulk import ImportBatch

#: fields a memory's document never holds (the vector has its own column; confidence is
#: derived when read)
DOC_EXCLUDE = frozenset({"embedding", "confidence"})
#: a JSON string literal as ``codec.dumps`` writes it (``ensure_ascii=False``)
_STRING: Final = json.encoder.encode_basestring


def unit_blob(vec: np.ndarray) -> bytes:
    """A float32 vector scaled to unit length (a zero vector kept as is), as stored: the
    row ``unit_blobs`` makes of it, so a memory written alone and one imported in a batch
    store the same bits."""
    return unit_blobs(np.asarray(vec, dtype=np.float32)[None, :])[0]


def unit_blobs(vectors: np.ndarray) -> list[bytes]:
    """Each row scaled to unit length (a zero row kept as is), in one numpy pass."""
    rows = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    rows = np.where(norms > 0, rows / np.where(norms > 0, norms, 1), rows).astype(np.float32)
    data, width = rows.tobytes(), rows.shape[1] * 4
    return [data[i : i + width] for i in range(0, len(data), width)]


def memory_rows(batch: ImportBatch) -> list[tuple[Any, ...]]:
    """One ``memories`` row per import row, in the column order of ``writes._INSERT_MEMORY``."""
    if not len(batch):
        return []
    template = batch.template
    base = template.model_dump(mode="json", exclude=set(DOC_EXCLUDE))
    encode = _doc_encoder(base, frozenset(batch.row(0)))
    times = _JSON_TIMES.dump_python(batch.created_at, mode="json")
    note = template.note_indexed
    valid_to = None if template.valid_to is None else template.valid_to.timestamp()
    blobs = unit_blobs(batch.vectors)
    rows = []
    for i, at in enumerate(batch.created_at):
        doc = encode({**batch.row(i), "created_at": times[i], "valid_from": times[i]})
        text = search_text_of(
            batch.agents[i], batch.contents[i], template.keywords, template.tags,
            template.context,
            (batch.note_keywords[i], batch.note_tags[i], batch.note_contexts[i]) if note else None,
            batch.lead_ins[i],
        )  # fmt: skip
        stamp = at.timestamp()
        row = (batch.ids[i], batch.scopes[i], template.status, batch.agents[i], batch.tasks[i])
        rows.append((*row, stamp, stamp, valid_to, doc, text, blobs[i]))
    return rows


#: datetimes as the model's JSON serialiser writes them (``Memory`` fields are plain datetimes)
_JSON_TIMES: Final = TypeAdapter(list[datetime])


def _doc_encoder(base: dict[str, Any], per_row: frozenset[str]) -> Callable[[dict[str, Any]], str]:
    """``codec.dumps`` of ``{**base, **fields}`` for rows that override the keys ``per_row``
    with JSON-ready values: the template's other keys are encoded once, as text between them."""
    holes: list[str] = []
    pieces: list[str] = []
    text = "{"
    for name, value in base.items():
        text += ("" if text == "{" else ",") + codec.dumps(name) + ":"
        if name in per_row:
            pieces.append(text)
            holes.append(name)
            text = ""
        else:
            text += codec.dumps(value)
    pieces.append(text + "}")

    def encode(fields: dict[str, Any]) -> str:
        out = [pieces[0]]
        for name, piece in zip(holes, pieces[1:], strict=True):
            out.append(_field_json(fields[name]))
            out.append(piece)
        return "".join(out)

    return encode


def _field_json(value: str | list[str] | None) -> str:
    """JSON of a row field (a string, a list of strings or None), as ``codec.dumps`` writes
    it; the general encoder costs several times more per value."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _STRING(value)
    return "[" + ",".join(map(_STRING, value)) + "]"
