"""The BM25 index saved beside the SQLite file (``<db>.bm25``), so a reopened store does not
analyse every memory's text again: at 100k memories that was 4.5 s of a 7.5 s first recall,
at 1M most of 78 s.

The file is a cache, trusted only for the state of the store it was written from. It names
the store (``meta.store_uid``), the change-log row it reflects (its seq and a digest of its
body: a store put back from an older copy and written again reuses seqs, not bodies) and the
analyzer (the terms a fixed probe text gives, so a changed stemmer or stop list is not read
with old terms). A reader re-indexes what the change log names since that row; a file from
another store or analyzer, or whose row the log no longer holds, is not read at all.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from amem_graph.core.text import analyze
from amem_graph.stores.local.bm25 import ARRAY_NAMES, BM25Index

log = logging.getLogger(__name__)

#: indexes of fewer documents are not saved: they are rebuilt from text in well under a second
SAVE_MIN = 20_000
_FORMAT = 1
#: a half-written file untouched for this many seconds was left by a process that died
_ABANDONED_AFTER = 3600
#: words that exercise the analyzer: stop words, possessives, stems, digits, accents
_PROBE = "The runners' quickly running caches were deployed; Maya's 3 dogs at 10:30, naïve"


@dataclass(frozen=True)
class SavedIndex:
    """A saved index read back: the change-log row it reflects and its arrays."""

    seq: int
    arrays: dict[str, np.ndarray]


def analyzer_print() -> str:
    """What the analyzer makes of a probe text: a saved index of other terms is not read."""
    return " ".join(analyze(_PROBE))


def body_digest(body: str) -> str:
    """A digest of a change-log row's body."""
    return hashlib.blake2b(body.encode(), digest_size=16).hexdigest()


def read_saved(path: str, uid: str, body_of: Callable[[int], str | None]) -> SavedIndex | None:
    """The index saved at ``path`` for store ``uid`` whose change-log row is still the one
    it was written at (``body_of``: a seq's body, None once the log no longer holds it),
    else None."""
    if not os.path.exists(path):
        return None
    try:
        with np.load(path, allow_pickle=False) as saved:
            head = json.loads(str(saved["head"]))
            seq = int(head.get("seq", -1))
            body = body_of(seq)
            usable = (
                head.get("format") == _FORMAT
                and head.get("uid") == uid
                and head.get("analyzer") == analyzer_print()
                and body is not None
                and head.get("body") == body_digest(body)
            )
            if not usable:
                log.info("the BM25 index at %s is not this store's state: rebuilding it", path)
                return None
            arrays = {name: saved[name] for name in ARRAY_NAMES}
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        log.warning("the BM25 index at %s is unreadable (%s): rebuilding it", path, exc)
        return None
    return SavedIndex(seq, arrays)


def write_saved(
    path: str, uid: str, seq: int, body: str, index: BM25Index, rid_of_doc: np.ndarray
) -> None:
    """Save ``index`` as of change-log row ``seq`` (whose body is ``body``): written to a new
    file, then atomically put in place, so a reader sees the old file or the new one."""
    head = {
        "format": _FORMAT,
        "uid": uid,
        "seq": seq,
        "body": body_digest(body),
        "analyzer": analyzer_print(),
    }
    tmp = f"{path}.{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"
    try:
        with open(tmp, "wb") as f:
            arrays = {"head": np.asarray(json.dumps(head)), **index.export(rid_of_doc)}
            np.savez(f, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, path)
    except OSError as exc:  # a read-only directory: the next open builds it again
        log.warning("cannot save the BM25 index at %s: %s", path, exc)
        with contextlib.suppress(OSError):
            os.remove(tmp)
        return
    for left in glob.glob(glob.escape(path) + ".*.tmp"):  # from a process that died saving
        with contextlib.suppress(OSError):
            if os.path.getmtime(left) < time.time() - _ABANDONED_AFTER:
                os.remove(left)
