"""The facade: ``MemoryGraph`` and its episodes, the one door the CLI and integrations use."""

from amem_graph.memory.episode import EpisodeSession
from amem_graph.memory.graph import MemoryGraph

__all__ = ["EpisodeSession", "MemoryGraph"]
