"""Outcome credit: an episode's outcome moves the confidence of the memories it read.

Credit is rank-weighted (``1 / rank`` of the best rank at which the episode read a memory),
scaled by the outcome's score (default 1). Success adds to a memory's ``successes``, failure to
its ``failures``; confidence is the Beta posterior mean ``(1 + s) / (2 + s + f)``, so success
raises it and failure lowers it.
"""

from __future__ import annotations

from datetime import datetime

from amem_graph.core.errors import ConflictError, ValidationError
from amem_graph.core.models import Outcome, beta_confidence
from amem_graph.core.schema import OUTCOME
from amem_graph.stores.base import EdgeWrite, GraphStore, MemoryUpdate, NodeWrite, WriteBatch


def outcome_id(episode_id: str) -> str:
    """One outcome per episode: its id derives from the episode's."""
    return f"outcome-{episode_id}"


def read_credit(store: GraphStore, episode_id: str) -> dict[str, float]:
    """Memory id -> credit weight (1 / best rank) for what the episode read."""
    best: dict[str, int] = {}
    for e in store.edges([episode_id], ["READ"], "out"):
        rank = int(e.props.get("rank", 1))
        best[e.dst] = min(rank, best.get(e.dst, rank))
    return {mid: 1.0 / max(rank, 1) for mid, rank in best.items()}


def outcome_batch(
    store: GraphStore,
    episode_id: str,
    success: bool,
    score: float | None,
    detail: str,
    at: datetime,
) -> tuple[WriteBatch, Outcome]:
    """The batch that records an outcome and credits the memories read; empty if a repeat."""
    if score is not None and not 0.0 <= score <= 1.0:
        raise ValidationError(f"outcome score must be within [0, 1], got {score}")
    oid = outcome_id(episode_id)
    existing = store.get_nodes(OUTCOME, [oid]).get(oid)
    if existing is not None:
        same = existing.props.get("success") == success and existing.props.get("score") == score
        if not same:
            raise ConflictError(
                f"episode {episode_id!r} already has an outcome "
                f"(success={existing.props.get('success')}, score={existing.props.get('score')})",
                hint="an outcome is recorded once per episode",
            )
        return WriteBatch(), Outcome(
            id=oid,
            episode=episode_id,
            success=bool(existing.props["success"]),
            score=existing.props.get("score"),
            detail=str(existing.props.get("detail", "")),
            at=existing.props["at"],
        )
    outcome = Outcome(
        id=oid, episode=episode_id, success=success, score=score, detail=detail, at=at
    )
    magnitude = 1.0 if score is None else score
    counter = "successes" if success else "failures"
    batch = WriteBatch(
        nodes=[
            NodeWrite(
                OUTCOME,
                oid,
                {
                    "episode": episode_id,
                    "success": success,
                    "score": score,
                    "detail": detail,
                    "at": at,
                },
            )
        ],
        edges=[EdgeWrite("RESULTED_IN", episode_id, oid)],
    )
    for mid, weight in sorted(read_credit(store, episode_id).items()):
        batch.memory_updates.append(MemoryUpdate(mid, increments={counter: weight * magnitude}))
    return batch, outcome


def agent_trust(successes: float, failures: float) -> float:
    """Trust of an agent: the Beta posterior over the credit all its memories received."""
    return beta_confidence(successes, failures)
