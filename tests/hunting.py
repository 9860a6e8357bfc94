"""Hypothesis settings for the model tests: a fixed set of examples in the suite, new ones in a
hunt (``AMEM_HYPOTHESIS_EXAMPLES=3000 pytest tests/test_retraction_model.py``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

#: how many examples a hunt draws; unset, the suite runs the same fixed examples every run
HUNT = os.environ.get("AMEM_HYPOTHESIS_EXAMPLES")


def model_settings(default: int) -> settings:
    """``default`` examples, derandomized so that CI cannot turn red on a rare draw (a hunt's
    count is drawn afresh); no deadline, a store call can be slow; the graph fixture shared by
    the examples, each of which writes under ids and scopes of its own."""
    return settings(
        max_examples=int(HUNT or default),
        derandomize=HUNT is None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
