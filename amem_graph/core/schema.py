"""The graph schema shared by every store: node labels, edge types and their endpoints.

Each edge type joins exactly one pair of labels, so a store can locate both ends from the ids
alone and no label or type ever reaches a query unchecked.  Names here are the ones documented
in ``cypher/schema.cypher``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from amem_graph.core.errors import ValidationError

MEMORY: Final = "Memory"
AGENT: Final = "Agent"
TASK: Final = "Task"
EPISODE: Final = "Episode"
OUTCOME: Final = "Outcome"
SOURCE: Final = "Source"
RETRACTION: Final = "Retraction"
MEMORY_VERSION: Final = "MemoryVersion"
AUDIT_EVENT: Final = "AuditEvent"
#: one per MemoryGraph that used a chat model: its call and token counters (``notes.llm``)
LLM_USAGE: Final = "LlmUsage"

NODE_LABELS: Final = frozenset(
    {
        MEMORY,
        AGENT,
        TASK,
        EPISODE,
        OUTCOME,
        SOURCE,
        RETRACTION,
        MEMORY_VERSION,
        AUDIT_EVENT,
        LLM_USAGE,
    }
)

#: edge type -> (source label, target label)
EDGE_TYPES: Final[dict[str, tuple[str, str]]] = {
    "ATTRIBUTED_TO": (MEMORY, AGENT),
    "GENERATED_IN": (MEMORY, EPISODE),
    "FOR_TASK": (MEMORY, TASK),
    "DERIVED_FROM": (MEMORY, MEMORY),
    "FROM_SOURCE": (MEMORY, SOURCE),
    "PERFORMED_BY": (EPISODE, AGENT),
    "PART_OF": (EPISODE, TASK),
    "READ": (EPISODE, MEMORY),
    "RESULTED_IN": (EPISODE, OUTCOME),
    "CREDITED": (OUTCOME, MEMORY),
    "LINKED": (MEMORY, MEMORY),
    "HAS_VERSION": (MEMORY, MEMORY_VERSION),
    "CAUSED_BY": (MEMORY_VERSION, MEMORY),
    "SUPERSEDES": (MEMORY, MEMORY),
    "CONTRADICTS": (MEMORY, MEMORY),
    "RETRACTED": (RETRACTION, MEMORY),
}

MEMORY_STATUSES: Final = ("active", "quarantined", "retracted", "superseded", "archived")
MEMORY_KINDS: Final = ("episodic", "semantic", "procedural", "insight")

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_identifier(name: str, what: str = "identifier") -> str:
    """Return ``name`` if it is safe to interpolate into Cypher or SQL, else raise."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValidationError(f"invalid {what} {name!r}: must match {_IDENTIFIER.pattern}")
    return name


def check_label(label: str) -> str:
    """Return ``label`` if it is one of the schema's node labels."""
    if label not in NODE_LABELS:
        raise ValidationError(f"unknown node label {label!r}; known: {sorted(NODE_LABELS)}")
    return label


def edge_endpoints(edge_type: str) -> tuple[str, str]:
    """The (source label, target label) of an edge type, or a ValidationError."""
    try:
        return EDGE_TYPES[edge_type]
    except KeyError:
        raise ValidationError(
            f"unknown edge type {edge_type!r}; known: {sorted(EDGE_TYPES)}"
        ) from None


def source_id(uri: str) -> str:
    """Stable node id for a source URI (URIs themselves are not safe ids)."""
    return "src-" + hashlib.sha256(uri.encode("utf-8")).hexdigest()[:24]
