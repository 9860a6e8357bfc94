"""The BM25 analyzer and index."""

from __future__ import annotations

import numpy as np
import pytest

from amem_graph.core.text import analyze
from amem_graph.stores.local.bm25 import BM25Index


def test_analyzer_drops_stop_words_possessives_and_stems() -> None:
    assert analyze("The runners' deploys are failing on Maya's ARM boxes") == [
        "runner",
        "deploi",
        "fail",
        "maya",
        "arm",
        "box",
    ]
    assert analyze('"quoted" AND (operators) * ~ : / \\ -') == ["quot", "oper"]
    assert analyze("the and of") == []


def test_bm25_prefers_rare_terms_and_short_documents() -> None:
    index = BM25Index()
    index.set(0, "deploy deploy pipeline")
    index.set(1, "deploy the pipeline to the staging cluster with extra words here")
    index.set(2, "kubernetes liveness probe")
    scores = index.scores("deploy pipeline", 3)
    assert scores[0] > scores[1] > 0
    assert scores[2] == 0
    rare = index.scores("kubernetes", 3)
    assert rare[2] > scores[0] / 2


def test_bm25_reindex_and_remove() -> None:
    index = BM25Index()
    index.set(0, "alpha beta")
    index.set(1, "gamma")
    index.set(0, "gamma delta")
    assert index.scores("alpha", 2).tolist() == [0.0, 0.0]
    both = index.scores("gamma", 2)
    assert both[0] > 0 and both[1] > 0
    index.remove(1)
    assert index.scores("gamma", 2)[1] == 0
    expected = np.log1p((1 - 1 + 0.5) / (1 + 0.5)) * 1 * 2.2 / (1 + 1.2)
    assert index.scores("gamma", 2)[0] == pytest.approx(expected, rel=1e-5)


def test_words_ending_in_a_digit_stem_as_the_porter_stemmer_stems_them() -> None:
    """The shortcut for such words gives the stemmer's own answer."""
    import snowballstemmer

    from amem_graph.core.text import stem

    porter = snowballstemmer.stemmer("porter")
    for word in ["0", "2026", "v2", "ies5", "running1", "a_b9", "x86_64", "ies", "running"]:
        assert stem(word) == porter.stemWord(word), word


@pytest.mark.parametrize("stretch", [False, True])
@pytest.mark.parametrize("reindexed", [False, True])
@pytest.mark.parametrize("share", [0.0005, 0.01, 0.1, 0.6])
def test_bm25_of_a_few_positions_is_the_whole_scoring_of_them(
    reindexed: bool, share: float, stretch: bool
) -> None:
    """``scores_at`` cuts ordered postings to the stretch between the first and last
    position; positions lying together are scored over that stretch whole, others searched
    for (a few) or masked; every way its values are ``scores``'s for those positions, bit for
    bit. ``stretch``: the positions lie together (a tenant written at once), with gaps, else
    scattered over the store."""
    rng = np.random.default_rng(int(share * 100) + reindexed)
    words = [f"w{i}" for i in range(30)]
    index = BM25Index()
    n = 2000
    common = [" ".join(rng.choice(words[:8], 6)) for _ in range(n)]  # long postings
    index.set_many(range(n // 2), common[: n // 2])
    for doc in range(n // 2, n):  # added one by one, at ascending positions: still ordered
        index.set(doc, " ".join(rng.choice(words, 9)) if doc % 7 == 0 else common[doc])
    if reindexed:  # a document indexed again goes to the end of its terms' postings
        for doc in rng.choice(n, 50, replace=False):
            index.set(int(doc), " ".join(rng.choice(words, 5)))
    index.remove(3)
    assert all(p.ordered for p in index.postings.values()) is not reindexed
    mask = rng.random(n) < share
    mask[int(rng.integers(0, n))] = True
    if stretch:  # the same number of positions, packed into one stretch of the store
        start = int(rng.integers(0, n // 2))
        mask = np.zeros(n, dtype=bool)
        mask[start : start + max(1, int(share * n * 1.5))] = True
        mask[start + 1 :: 3] = False
    positions = np.flatnonzero(mask)
    assert len(positions)
    for query in ["w0 w1", "w2 w9 w20 w20", "w29", "nothing here"]:
        whole = index.scores(query, n)[positions]
        assert index.scores_at(query, positions).tobytes() == whole.tobytes(), query


@pytest.mark.parametrize("reindexed", [False, True])
def test_bm25_renumbered_scores_each_document_as_before(reindexed: bool) -> None:
    """``renumber`` moves each document to its new number: every query scores it as before
    (bit for bit), postings come out ordered, and it is removed, re-indexed and added to as
    any document."""
    rng = np.random.default_rng(5 + reindexed)
    words = [f"w{i}" for i in range(20)]
    index = BM25Index()
    n = 500
    index.set_many(range(n), [" ".join(rng.choice(words, 7)) for _ in range(n)])
    if reindexed:
        for doc in rng.choice(n, 30, replace=False):
            index.set(int(doc), " ".join(rng.choice(words, 4)))
    index.remove(11)
    queries = ["w0 w1", "w3 w3 w17", "w19", "absent"]
    before = {q: index.scores(q, n) for q in queries}
    new_of_old = rng.permutation(n)
    index.renumber(new_of_old)
    assert all(p.ordered for p in index.postings.values())
    assert len(index) == n - 1 and not index.has(int(new_of_old[11]))
    for q in queries:
        after = np.zeros(n, dtype=np.float32)
        after[np.arange(n)] = index.scores(q, n)[new_of_old]
        assert after.tobytes() == before[q].tobytes(), q
    moved = int(new_of_old[7])
    index.set(moved, "w0 w0 w0")
    index.set(n, "w0 w19")
    top = index.scores("w0", n + 1)
    assert top[moved] > 0 and top[n] > 0 and index.indexed_as(moved, "w0 w0 w0")
    index.remove(moved)
    assert index.scores("w0", n + 1)[moved] == 0
