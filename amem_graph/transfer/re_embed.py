"""Vectors of another embedder for an export being imported (``import_graph(re_embed=...)``),
made as ``remember`` makes them: each carries its episode's previous vector."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from amem_graph.core.errors import ValidationError
from amem_graph.core.models import finite_vector
from amem_graph.embeddings import Embedder
from amem_graph.notes.episode_context import EpisodeTails, with_episode_context
from amem_graph.stores.base import WriteBatch


@dataclass
class ReEmbedding:
    """How re-embedded vectors are made: the embedder, and their episodes' context."""

    embedder: Embedder | None
    tails: EpisodeTails
    weight: float


def embed_into(batch: WriteBatch, positions: list[int], context: ReEmbedding) -> None:
    """Give the memories at ``positions`` the vectors of the context's embedder (checked like
    remember's), each carrying its episode's previous vector (their lead-ins are the file's)."""
    embedder = context.embedder
    if embedder is None or not positions:
        return
    memories = [batch.memories[i] for i in positions]
    vectors = embedder.embed_documents([m.content for m in memories])
    if len(vectors) != len(memories):
        raise ValidationError(
            f"the embedder returned {len(vectors)} vectors for {len(memories)} texts"
        )
    checked = [finite_vector(list(vector), embedder.dims) for vector in vectors]
    columns = (
        [m.content for m in memories],
        [m.scope for m in memories],
        [m.episode for m in memories],
        [m.created_at for m in memories],
    )
    blended, _ = with_episode_context(
        context.tails, np.asarray(checked), *columns, context.weight, lead_words=0
    )
    assert blended is not None  # vectors in, vectors out
    context.tails.saw(blended, *columns)
    for i, vector in zip(positions, blended.tolist(), strict=True):
        batch.memories[i] = batch.memories[i].model_copy(update={"embedding": vector})
