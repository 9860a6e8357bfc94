"""Provenance policy: trace, impact, retraction and restore, the audit log, outcome credit and
the training data a fleet yields. Storage only through the ``GraphStore`` protocol.

Report models are ``defer_build=True``: pydantic builds their validators on first use, not when
the facade is imported, so a command that never traces or retracts does not pay for them."""
