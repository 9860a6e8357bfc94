"""The facade calls the integrations needed: supersede, listing, sources, several scopes."""

from __future__ import annotations

import pytest

from amem_graph import ConflictError, MemoryGraph, NotFoundError, ValidationError


def test_supersedes_replaces_an_active_memory_in_one_transaction(mg: MemoryGraph) -> None:
    mg.remember("VPN profile is ops-eu", id="v1", scope="s", agent="a")
    new = mg.remember("VPN profile is ops-eu-2", id="v2", scope="s", agent="b", supersedes="v1")
    assert (mg.get("v1").status, new.status) == ("superseded", "active")
    assert [(e.src, e.dst) for e in mg.store.edges(["v2"], ["SUPERSEDES"], "out")] == [("v2", "v1")]
    [event] = mg.audit(kind="supersede")
    assert event.memory_ids == ["v1", "v2"] and event.agent_ids == ["a", "b"]
    assert [h.memory.id for h in mg.recall("VPN profile", k=5, scope="s")] == ["v2"]
    again = mg.remember("VPN profile is ops-eu-2", id="v2", scope="s", supersedes="v1")
    assert again.id == "v2" and len(mg.audit(kind="supersede")) == 1  # idempotent repeat
    before = mg.stats()["counts"]
    for bad, error in [
        ({"supersedes": "nope"}, NotFoundError),
        ({"supersedes": "v1"}, ConflictError),  # already superseded
        ({"supersedes": "v2", "scope": "t"}, ValidationError),  # another scope
        ({"supersedes": "bad id!"}, ValidationError),
    ]:
        with pytest.raises(error):
            mg.remember_many([{"content": "x", "scope": "s", **bad}])
    with pytest.raises(ValidationError, match="twice"):
        mg.remember_many(
            [{"content": "x", "supersedes": "v2"}, {"content": "y", "supersedes": "v2"}]
        )
    assert mg.stats()["counts"] == before  # nothing half-written


def test_find_sources_and_several_scopes(mg: MemoryGraph) -> None:
    mg.remember("alpha note", id="a1", scope="s1", source="https://x.example/a")
    mg.remember("alpha again", id="a2", scope="s1", source="https://x.example/a")
    mg.remember("beta note", id="b1", scope="s2", source="https://y.example/b")
    mg.retract("a2", reason="wrong", cascade=False)
    assert [m.id for m in mg.find("s1")] == ["a1"]
    assert [m.id for m in mg.find(["s1", "s2"], include=("active", "retracted"))] == [
        "a1", "a2", "b1",
    ]  # fmt: skip
    assert mg.sources("https://x.") == ["https://x.example/a"]
    by = mg.by_source(["https://x.example/a", "https://none.example"])
    assert [m.id for m in by["https://x.example/a"]] == ["a1", "a2"]
    assert by["https://none.example"] == []
    live = mg.by_source(["https://x.example/a"], include=("active",))
    assert [m.id for m in live["https://x.example/a"]] == ["a1"]
    assert {h.memory.id for h in mg.recall("note", k=5, scope=["s1", "s2"])} == {"a1", "b1"}
    assert {h.memory.id for h in mg.recall("note", k=5, scope="s2")} == {"b1"}
    with pytest.raises(ValidationError, match="empty"):
        mg.recall("note", scope=[])
