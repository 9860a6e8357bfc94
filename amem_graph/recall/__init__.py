"""Recall policy: hybrid retrieval (vector, BM25, graph expansion) fused with the priors.

Pure policy: it reaches storage only through the ``GraphStore`` protocol.
"""
