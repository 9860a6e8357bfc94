"""amem_graph: long-term graph memory for fleets of LLM agents.

Memories are graph nodes linked to the agents, tasks, episodes and outcomes that produced or
used them, so a wrong memory can be traced, and taken back with everything it touched.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the module that defines it. Imported on first use (PEP 562): ``import
#: amem_graph`` stays cheap, and a door such as the CLI loads only what its command needs.
_EXPORTS = {
    "Agent": "amem_graph.core.models",
    "AmemGraphError": "amem_graph.core.errors",
    "ConflictError": "amem_graph.core.errors",
    "CreditPolicy": "amem_graph.provenance.credit",
    "Embedder": "amem_graph.embeddings",
    "EmbedderMismatchError": "amem_graph.core.errors",
    "Episode": "amem_graph.core.models",
    "EpisodeSession": "amem_graph.memory.episode",
    "Explanation": "amem_graph.core.models",
    "HashingEmbedder": "amem_graph.embeddings",
    "Hit": "amem_graph.core.models",
    "LangChainEmbedder": "amem_graph.embeddings",
    "Memory": "amem_graph.core.models",
    "MemoryGraph": "amem_graph.memory.graph",
    "MemoryGraphConfig": "amem_graph.core.config",
    "MiniLMEmbedder": "amem_graph.embeddings",
    "NotFoundError": "amem_graph.core.errors",
    "Outcome": "amem_graph.core.models",
    "RetrievalConfig": "amem_graph.core.config",
    "Signal": "amem_graph.core.models",
    "StoreError": "amem_graph.core.errors",
    "StoreUnavailableError": "amem_graph.core.errors",
    "Suspect": "amem_graph.provenance.suspects",
    "ValidationError": "amem_graph.core.errors",
}

if TYPE_CHECKING:
    from amem_graph.core.config import MemoryGraphConfig, RetrievalConfig
    from amem_graph.core.errors import (
        AmemGraphError,
        ConflictError,
        EmbedderMismatchError,
        NotFoundError,
        StoreError,
        StoreUnavailableError,
        ValidationError,
    )
    from amem_graph.core.models import Agent, Episode, Explanation, Hit, Memory, Outcome, Signal
    from amem_graph.embeddings import Embedder, HashingEmbedder, LangChainEmbedder, MiniLMEmbedder
    from amem_graph.memory.episode import EpisodeSession
    from amem_graph.memory.graph import MemoryGraph
    from amem_graph.provenance.credit import CreditPolicy
    from amem_graph.provenance.suspects import Suspect


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'amem_graph' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "Agent",
    "AmemGraphError",
    "ConflictError",
    "CreditPolicy",
    "Embedder",
    "EmbedderMismatchError",
    "Episode",
    "EpisodeSession",
    "Explanation",
    "HashingEmbedder",
    "Hit",
    "LangChainEmbedder",
    "Memory",
    "MemoryGraph",
    "MemoryGraphConfig",
    "MiniLMEmbedder",
    "NotFoundError",
    "Outcome",
    "RetrievalConfig",
    "Signal",
    "StoreError",
    "StoreUnavailableError",
    "Suspect",
    "ValidationError",
    "__version__",
]
