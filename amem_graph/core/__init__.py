"""The bottom layer: types, errors, settings, the graph schema and the shared text analysis.

Nothing here imports another amem_graph package, so every layer above can depend on it.
"""
