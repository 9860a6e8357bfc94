"""The Beta posterior of an outcome record, shared by recall (confidence) and provenance
(failure suspects), so both read a record the same way."""

from __future__ import annotations

import math


def posterior(successes: float, failures: float) -> tuple[float, float]:
    """Mean and standard deviation of Beta(1 + successes, 1 + failures)."""
    a, b = 1.0 + successes, 1.0 + failures
    n = a + b
    return a / n, math.sqrt(a * b / (n * n * (n + 1.0)))


def bound(successes: float, failures: float, z: float) -> float:
    """The optimistic reading of a record: mean + z standard deviations, at most 1."""
    mean, sd = posterior(successes, failures)
    return min(1.0, mean + z * sd)
