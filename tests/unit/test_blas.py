"""The BLAS thread cap: set inside, the count found put back after, and overlapping caps from
several threads (closing in any order) never leave the process's setting changed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import numpy as np  # noqa: F401  (loads the BLAS the caps act on)
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from amem_graph.core import blas
from amem_graph.core.errors import ValidationError

#: the count every test starts from: not 1, so that a cap shows
FOUND = 4


def blas_threads() -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


@pytest.fixture(autouse=True)
def found() -> Iterator[None]:
    if not blas_threads():
        pytest.skip("numpy has no BLAS library threadpoolctl can see")
    with threadpool_limits(limits=FOUND, user_api="blas"):
        yield
    assert blas.open_caps() == []


def test_a_cap_applies_inside_and_the_found_count_comes_back() -> None:
    with blas.capped(1):
        assert blas_threads() == {1}
    assert blas_threads() == {FOUND}


def test_no_cap_changes_nothing() -> None:
    with blas.capped(None):
        assert blas_threads() == {FOUND}
        assert blas.open_caps() == []
    assert blas_threads() == {FOUND}


def test_the_count_comes_back_after_an_error_inside() -> None:
    with pytest.raises(RuntimeError), blas.capped(2):
        assert blas_threads() == {2}
        raise RuntimeError("boom")
    assert blas_threads() == {FOUND}


def _holding(threads: int, opened: threading.Event, release: threading.Event) -> Callable[[], None]:
    """A thread body that opens a cap, says so, and closes it when released."""

    def body() -> None:
        with blas.capped(threads):
            opened.set()
            assert release.wait(10)

    return body


@pytest.mark.parametrize("first, second", [(3, 1), (1, 3)])
@pytest.mark.parametrize("first_closes_first", [True, False])
def test_overlapping_caps_apply_the_smallest_and_restore_when_the_last_closes(
    first: int, second: int, first_closes_first: bool
) -> None:
    opened = [threading.Event(), threading.Event()]
    release = [threading.Event(), threading.Event()]
    workers = [
        threading.Thread(target=_holding(n, opened[i], release[i]))
        for i, n in enumerate((first, second))
    ]
    workers[0].start()
    assert opened[0].wait(10)
    assert blas_threads() == {first}
    workers[1].start()
    assert opened[1].wait(10)
    assert blas_threads() == {min(first, second)}
    closing, staying = (0, 1) if first_closes_first else (1, 0)
    release[closing].set()
    workers[closing].join(10)
    assert blas_threads() == {(first, second)[staying]}
    release[staying].set()
    workers[staying].join(10)
    assert blas_threads() == {FOUND}


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "1"])
def test_a_bad_count_is_refused_by_name(bad: object) -> None:
    with pytest.raises(ValidationError, match="blas_threads must be positive"):
        blas.checked_threads(bad, "blas_threads")
    assert blas.checked_threads(None, "blas_threads") is None
    assert blas.checked_threads(3, "blas_threads") == 3
