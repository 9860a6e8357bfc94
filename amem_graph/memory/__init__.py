"""The facade: ``MemoryGraph`` and its episodes, the one door the CLI and integrations use.

It also names the result types its calls return, so a door never imports the logic behind them.
"""

from amem_graph.memory.episode import EpisodeSession
from amem_graph.memory.graph import MemoryGraph
from amem_graph.provenance.audit import AUDIT_KINDS, AuditEvent
from amem_graph.provenance.retraction import RestoreReport, RetractionPolicy, RetractionReport
from amem_graph.provenance.trace import Impact, ProvenanceGraph, Trace
from amem_graph.provenance.training_data import TrainingRow

__all__ = [
    "AUDIT_KINDS",
    "AuditEvent",
    "EpisodeSession",
    "Impact",
    "MemoryGraph",
    "ProvenanceGraph",
    "RestoreReport",
    "RetractionPolicy",
    "RetractionReport",
    "Trace",
    "TrainingRow",
]
