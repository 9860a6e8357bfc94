"""The A-Mem note layer: enrichment, links, evolution, conflicts, consolidation, forgetting.

Pure policy over the ``GraphStore`` protocol; every change it makes is stored as a version or an
edge it can be undone from.
"""
