"""amem_graph: long-term graph memory for fleets of LLM agents.

Memories are graph nodes linked to the agents, tasks, episodes and outcomes that produced or
used them, so a wrong memory can be traced, and taken back with everything it touched.
"""

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

__version__ = "0.1.0"

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
