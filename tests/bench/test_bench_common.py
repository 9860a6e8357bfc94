"""bench/common.py's ``holds``: a ``--reuse`` benchmark run measures a store again only when it
holds that run's own memories, laid out as that run would write them."""

from __future__ import annotations

from bench_scripts import load

from amem_graph import MemoryGraph

common = load("common.py")
bench_scope = load("bench_scope.py")


def _tenants(n: int, tenants: int, interleaved: bool) -> list[dict[str, object]]:
    """``bench_scope``'s layouts: tenants in runs, or dealt round-robin."""
    rows: list[dict[str, object]] = bench_scope.Tenants(tenants, n // tenants, 4, interleaved).rows
    return rows


def test_dealt_tenants_are_the_same_memories_and_hubs_in_another_order() -> None:
    runs = bench_scope.Tenants(4, 50, 6)
    dealt = bench_scope.Tenants(4, 50, 6, interleaved=True)
    assert [r["scope"] for r in dealt.rows[:5]] == ["t0", "t1", "t2", "t3", "t0"]
    key = ("id", "content", "scope", "agent", "task", "episode")
    by_id = {r["id"]: r for r in runs.rows}
    assert len(dealt.rows) == len(runs.rows) == 200
    for row in dealt.rows:  # only the place (and its timestamp) changed
        assert tuple(row[k] for k in key) == tuple(by_id[row["id"]][k] for k in key)
    stamps = [r["timestamp"] for r in dealt.rows]
    assert stamps == sorted(stamps) == [r["timestamp"] for r in runs.rows]
    for layout in (runs, dealt):  # each episode within one tenant; the small store its own
        scopes_of: dict[object, set[object]] = {}
        for row in layout.rows:
            scopes_of.setdefault(row["episode"], set()).add(row["scope"])
        assert all(len(s) == 1 for s in scopes_of.values())
        assert {r["id"] for r in layout.small_rows} == {f"m{i}" for i in range(50)}
    assert dealt.qtexts == runs.qtexts and dealt.base_qtexts == runs.base_qtexts


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


def test_alternate_times_every_query_of_a_run_shorter_than_its_warm_up() -> None:
    bench_store = load("bench_store.py")
    calls: list[tuple[str, int]] = []
    sides = [lambda i: calls.append(("a", i)), lambda i: calls.append(("b", i))]
    n = bench_store.WARMUP // 2
    times = bench_store.alternate(sides, n)
    assert [len(side) for side in times] == [n, n]
    assert max(i for _, i in calls) == n - 1  # no query past the run's own
    assert bench_store.alternate(sides, 0) == [[], []]
