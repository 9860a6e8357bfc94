"""A cap on numpy's BLAS threads around the library's own products, safe when callers overlap.

OpenBLAS's worker threads spin for a while after each threaded call before they sleep. A
process that recalls more often than that keeps every core busy: a recall at 10k on the
embedded store took 4.3 ms of wall time and 8.3 ms of CPU, and two such processes on a 2-core
machine took 15.9 ms a recall each, against 4.7 ms with the products on one thread
(``bench/bench_processes.py``, ``bench/RESULTS.md``). The embedder's forward pass and a
recall's vector scores run capped (one thread by default; ``threads=None`` lifts the cap).

The thread count is one setting for the whole process, so the caps open at once are counted:
while any is open the smallest applies, and the count found when the first opened is put back
when the last closes, whichever thread opened them and in whatever order they close.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from amem_graph.core.errors import refuse_unless_positive

_LOCK = threading.Lock()
#: the thread counts of the caps open now (one entry per open cap)
_open: list[int] = []
#: each library's count when the first open cap was set, put back when the last closes
_found: list[int] = []
_libraries: list[tuple[Any, Callable[[int], object]]] | None = None


def checked_threads(threads: int | None, what: str) -> int | None:
    """``threads`` when it is None or a positive int, else a ``ValidationError`` naming ``what``."""
    if threads is not None:
        refuse_unless_positive(threads, what, " or None")
    return threads


def _setter(lib: Any) -> Callable[[int], object]:
    """How to set one library's thread count. OpenBLAS's own ``openblas_set_num_threads``
    (threadpoolctl's route) did nothing when called from another thread once the main thread
    had called it (OpenBLAS 0.3.31, numpy 2's wheel); ``openblas_set_num_threads_local``, where
    the library has it, set the count from any thread."""
    if getattr(lib, "internal_api", "") == "openblas":
        try:
            local = ctypes.CDLL(lib.filepath).openblas_set_num_threads_local
        except (OSError, AttributeError):
            pass
        else:
            local.argtypes, local.restype = [ctypes.c_int], ctypes.c_int
            return local
    return lib.set_num_threads  # type: ignore[no-any-return]


def _blas() -> list[tuple[Any, Callable[[int], object]]]:
    """numpy's BLAS libraries with their setters, found on first use (a scan of the loaded
    libraries)."""
    global _libraries
    if _libraries is None:
        import numpy  # noqa: F401  (the scan sees only the libraries loaded by then)
        from threadpoolctl import ThreadpoolController

        found = ThreadpoolController().select(user_api="blas").lib_controllers
        _libraries = [(lib, _setter(lib)) for lib in found]
    return _libraries


def _set(threads: int) -> None:
    for _, set_threads in _blas():
        set_threads(threads)


@contextmanager
def capped(threads: int | None) -> Iterator[None]:
    """BLAS products inside run on at most ``threads`` threads (None: no cap, nothing changed)."""
    if threads is None:
        yield
        return
    _open_cap(threads)
    try:
        yield
    finally:
        _close_cap(threads)


def _open_cap(threads: int) -> None:
    with _LOCK:
        before = min(_open) if _open else None
        _open.append(threads)
        if before is None:
            _found[:] = [lib.get_num_threads() for lib, _ in _blas()]
            _set(threads)
        elif threads < before:
            _set(threads)


def _close_cap(threads: int) -> None:
    with _LOCK:
        before = min(_open)
        _open.remove(threads)
        if not _open:
            for (_, set_threads), count in zip(_blas(), _found, strict=True):
                set_threads(count)
        elif min(_open) > before:
            _set(min(_open))


def open_caps() -> list[int]:
    """The caps open now (for tests)."""
    with _LOCK:
        return list(_open)
