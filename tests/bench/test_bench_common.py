"""bench/common.py's ``holds``: a ``--reuse`` benchmark run measures a store again only when it
holds that run's own memories, laid out as that run would write them."""

from __future__ import annotations

from bench_scripts import load

from amem_graph import MemoryGraph

common = load("common.py")


def _tenants(n: int, tenants: int, interleaved: bool) -> list[dict[str, object]]:
    """``bench_scope``'s layouts: tenants in runs, or dealt round-robin."""
    texts, _ = common.corpus(n)
    rows: list[dict[str, object]] = common.items(texts)
    for i, row in enumerate(rows):
        row["scope"] = f"t{i % tenants if interleaved else i // (n // tenants)}"
    return rows


def test_a_store_holds_the_items_written_to_it_and_no_others(mg: MemoryGraph) -> None:
    runs = _tenants(40, 2, interleaved=False)
    assert not common.holds(mg.store, runs)  # empty
    mg.remember_many(runs)
    assert common.holds(mg.store, runs)
    assert not common.holds(mg.store, runs[:-1])  # another count
    assert not common.holds(mg.store, _tenants(40, 2, interleaved=True))  # another layout
    assert not common.holds(mg.store, [])
    other = [dict(row) for row in runs]
    other[-1]["content"] = "another text"
    assert not common.holds(mg.store, other)
