"""Outcome credit: an episode's outcome moves the confidence of the memories it used.

Credit goes to what the agent acted on, not to everything it read (``CreditPolicy``):

- with ``used=[ids]`` each used memory gets ``used_weight`` (1) and every other memory the
  episode read ``unused_weight`` (0 by default: a bystander is neither blamed nor credited);
- without ``used`` the top ``presumed_used`` hits of each recall (the top hit, by default) are
  taken as used, the rest as bystanders.

The credit, scaled by the outcome's score (default 1), is added to each memory's ``successes``
or ``failures``: confidence is the Beta posterior over those counts, so success raises it and
failure lowers it. Each credited memory gets an ``(Outcome)-[:CREDITED {credit, basis}]->
(Memory)`` edge, so failure suspects and audits can tell what an outcome charged, and why.

Once per episode, enforced by the store: the Outcome node is written create-only in the same
transaction as the credit, so of writers racing on one episode exactly one credits. The others
find the stored outcome: the same values return it (a no-op), different ones raise
``ConflictError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from amem_graph.core.errors import ConflictError, NotFoundError, ValidationError
from amem_graph.core.models import Outcome, beta_confidence, valid_name
from amem_graph.core.schema import EPISODE, OUTCOME
from amem_graph.stores.base import EdgeWrite, GraphStore, MemoryUpdate, NodeWrite, WriteBatch

#: why a memory got credit: the agent said it used it, it was a recall's top hit (presumed
#: used), or it was only read (``unused_weight``)
Basis = Literal["used", "top", "read"]


class CreditPolicy(BaseModel):
    """How an outcome's credit is shared among the memories its episode read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: credit to each memory the agent acted on
    used_weight: float = Field(default=1.0, gt=0.0, le=1.0)
    #: credit to each memory read but not used; 0 so that a bystander is never charged
    unused_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    #: without ``used``: hits at this rank or better in any recall are taken as used
    presumed_used: int = Field(default=1, ge=0)


def outcome_id(episode_id: str) -> str:
    """One outcome per episode: its id derives from the episode's."""
    return f"outcome-{episode_id}"


def best_ranks(store: GraphStore, episode_id: str) -> dict[str, int]:
    """Memory id -> the best rank at which the episode read it."""
    best: dict[str, int] = {}
    for e in store.edges([episode_id], ["READ"], "out"):
        rank = int(e.props.get("rank", 1))
        best[e.dst] = min(rank, best.get(e.dst, rank))
    return best


def credit_shares(
    ranks: dict[str, int], used: Sequence[str] | None, policy: CreditPolicy
) -> dict[str, tuple[float, Basis]]:
    """Memory id -> (weight, basis) for every memory that gets credit (weight > 0)."""
    shares: dict[str, tuple[float, Basis]] = {}
    chosen = (
        {mid for mid, rank in ranks.items() if rank <= policy.presumed_used}
        if used is None
        else set(used)
    )
    for mid in sorted(ranks):
        if mid in chosen:
            shares[mid] = (policy.used_weight, "used" if used is not None else "top")
        elif policy.unused_weight > 0:
            shares[mid] = (policy.unused_weight, "read")
    return shares


def check_outcome(
    success: object, score: object, detail: object, used: object
) -> tuple[bool, float | None, str, list[str] | None]:
    """The outcome's arguments, strictly typed: a ValidationError names the first bad one."""
    if not isinstance(success, bool):
        raise ValidationError(f"success must be True or False, got {success!r}")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValidationError(f"outcome score must be a number or None, got {score!r}")
        if not (math.isfinite(score) and 0.0 <= score <= 1.0):
            raise ValidationError(f"outcome score must be within [0, 1], got {score}")
    if not isinstance(detail, str):
        raise ValidationError(f"detail must be a string, got {type(detail).__name__}")
    if used is None:
        return success, None if score is None else float(score), detail, None
    if isinstance(used, str | bytes) or not isinstance(used, Sequence):
        raise ValidationError("used takes a list of memory ids")
    ids = sorted({valid_name(i, "used memory id") for i in used})
    return success, None if score is None else float(score), detail, ids


def stored_outcome(store: GraphStore, episode_id: str) -> Outcome | None:
    """The outcome recorded for the episode, if any."""
    oid = outcome_id(episode_id)
    node = store.get_nodes(OUTCOME, [oid]).get(oid)
    if node is None:
        return None
    used = node.props.get("used")
    return Outcome(
        id=oid,
        episode=episode_id,
        success=bool(node.props["success"]),
        score=node.props.get("score"),
        detail=str(node.props.get("detail", "")),
        at=node.props["at"],
        used=None if used is None else list(used),
    )


def _repeat(stored: Outcome, wanted: Outcome) -> Outcome:
    """A second report of an episode's outcome: the stored one if it says the same."""
    if (stored.success, stored.score, stored.used) == (wanted.success, wanted.score, wanted.used):
        return stored
    raise ConflictError(
        f"episode {stored.episode!r} already has an outcome "
        f"(success={stored.success}, score={stored.score}, used={stored.used})",
        hint="an outcome is recorded once per episode",
    )


def outcome_batch(
    store: GraphStore,
    outcome: Outcome,
    policy: CreditPolicy,
) -> WriteBatch:
    """The batch that records ``outcome`` (create-only) and credits what its episode used."""
    ranks = best_ranks(store, outcome.episode)
    if outcome.used is not None:
        unread = [mid for mid in outcome.used if mid not in ranks]
        if unread:
            raise ValidationError(
                f"used: {unread} were not read in episode {outcome.episode!r}",
                hint="used names memories the episode recalled and acted on",
            )
    magnitude = 1.0 if outcome.score is None else outcome.score
    counter = "successes" if outcome.success else "failures"
    props = outcome.model_dump(include={"episode", "success", "score", "detail", "at", "used"})
    batch = WriteBatch(
        nodes=[NodeWrite(OUTCOME, outcome.id, props, create_only=True)],
        edges=[EdgeWrite("RESULTED_IN", outcome.episode, outcome.id)],
    )
    for mid, (weight, basis) in credit_shares(ranks, outcome.used, policy).items():
        credit = weight * magnitude
        batch.memory_updates.append(MemoryUpdate(mid, increments={counter: credit}))
        batch.edges.append(
            EdgeWrite("CREDITED", outcome.id, mid, {"credit": credit, "basis": basis})
        )
    return batch


def record_outcome(
    store: GraphStore,
    episode_id: str,
    *,
    success: object,
    score: object,
    detail: object,
    at: datetime,
    used: object,
    policy: CreditPolicy,
) -> Outcome:
    """Record how an episode ended and credit what it used, once (see the module doc)."""
    valid_name(episode_id, "episode")
    ok, value, text, used_ids = check_outcome(success, score, detail, used)
    if episode_id not in store.get_nodes(EPISODE, [episode_id]):
        raise NotFoundError(f"no episode {episode_id!r}")
    wanted = Outcome(
        id=outcome_id(episode_id),
        episode=episode_id,
        success=ok,
        score=value,
        detail=text,
        at=at,
        used=used_ids,
    )
    stored = stored_outcome(store, episode_id)
    if stored is not None:
        return _repeat(stored, wanted)
    try:
        store.apply(outcome_batch(store, wanted, policy))
    except ConflictError:
        stored = stored_outcome(store, episode_id)  # another writer won the race
        if stored is None:
            raise
        return _repeat(stored, wanted)
    return wanted


def agent_trust(successes: float, failures: float) -> float:
    """Trust of an agent: the Beta posterior over the credit its memories received, which
    (under the default policy) is the outcomes of the memories it wrote that were used."""
    return beta_confidence(successes, failures)
