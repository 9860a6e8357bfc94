"""Provenance policy: trace, impact, retraction and restore, the audit log, outcome credit and
the training data a fleet yields. Storage only through the ``GraphStore`` protocol."""
