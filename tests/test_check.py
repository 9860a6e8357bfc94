"""``check`` finds each kind of damage, on a copy corrupted on purpose, and nothing on a store
written through the API (with retractions and restores), on both stores and from the CLI."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from poisoning import build

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.cli.main import cli
from amem_graph.stores.local.store import LocalStore


def _world(mg: MemoryGraph) -> None:
    build(mg)
    first = mg.retract("poison", reason="poisoned")
    mg.retract("clean", reason="overlaps", cascade=False)
    mg.restore(first.id)


def test_a_store_written_through_the_api_passes(mg: MemoryGraph) -> None:
    _world(mg)
    report = mg.check()
    assert report.ok, report.problems
    assert report.counts["Memory"] >= 8 and report.backend == mg.store.backend


#: (kind check must report, words in the problem, SQL that does the damage)
LOCAL_DAMAGE = [
    ("orphan_edge", "its target Memory is missing",
     "INSERT INTO edges(type, src, dst, key, props) VALUES('READ', 'ep-reader1', 'ghost', "
     "'k', '{\"rank\": 1}')"),
    ("bad_value", "importance nan is not a number",
     "UPDATE memories SET doc = replace(doc, '\"importance\":0.5', '\"importance\":NaN') "
     "WHERE id = 'clean'"),
    ("bad_value", "successes -2.0 is not a finite count",
     "UPDATE memories SET doc = json_set(doc, '$.successes', -2.0) WHERE id = 'derived1'"),
    ("bad_value", "rank 'first' is not a whole number",
     "UPDATE edges SET props = json_set(props, '$.rank', 'first') WHERE type = 'READ'"),
    ("bad_value", "'n 1' is not a valid name",
     "UPDATE memories SET id = 'n 1', doc = json_set(doc, '$.id', 'n 1') WHERE id = 'clean'"),
    ("status", "is retracted but no active retraction holds it",
     "UPDATE memories SET status = 'retracted', doc = json_set(doc, '$.status', 'retracted') "
     "WHERE id = 'derived2'"),
    ("status", "its active retractions make it retracted",
     "UPDATE memories SET status = 'active', doc = json_set(doc, '$.status', 'active') "
     "WHERE id = 'clean'"),
    ("index", "memory documents that are not valid JSON",
     "UPDATE memories SET doc = replace(doc, '\"importance\":0.5', '\"importance\":NaN') "
     "WHERE id = 'clean'"),
    ("index", "column disagrees with the document",
     "UPDATE memories SET scope = 'elsewhere' WHERE id = 'clean'"),
    ("index", "stored vectors do not have the store's 256 dimensions",
     "UPDATE memories SET embedding = x'0000803f' WHERE id = 'clean'"),
]  # fmt: skip


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("check") / "pristine.db"
    with MemoryGraph(LocalStore(path), HashingEmbedder()) as mg:
        _world(mg)
    return path


def _damaged_copy(pristine: Path, tmp_path: Path, sql: str) -> Path:
    copy = tmp_path / "damaged.db"
    shutil.copy(pristine, copy)
    db = sqlite3.connect(copy)
    with db:
        assert db.execute(sql).rowcount >= 1, "the damage touched nothing"
    db.close()
    return copy


@pytest.mark.parametrize(("kind", "words", "sql"), LOCAL_DAMAGE, ids=[d[1] for d in LOCAL_DAMAGE])
def test_check_finds_each_kind_of_damage_on_the_embedded_store(
    pristine: Path, tmp_path: Path, kind: str, words: str, sql: str
) -> None:
    copy = _damaged_copy(pristine, tmp_path, sql)
    with MemoryGraph(LocalStore(copy), HashingEmbedder()) as mg:
        report = mg.check()
    assert not report.ok
    assert any(words in p for p in report.problems.get(kind, [])), report.problems


def test_amem_check_exits_nonzero_with_a_report(pristine: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    good = runner.invoke(cli, ["--store", str(pristine), "check"])
    assert good.exit_code == 0 and good.output.startswith("ok: local store"), good.output
    copy = _damaged_copy(pristine, tmp_path, LOCAL_DAMAGE[0][2])
    bad = runner.invoke(cli, ["--store", str(copy), "check"])
    assert bad.exit_code == 1 and "orphan_edge: 1" in bad.output and "ghost" in bad.output
    as_json = runner.invoke(cli, ["--json", "--store", str(copy), "check"])
    assert as_json.exit_code == 1 and '"ok": false' in as_json.output


NEO4J_DAMAGE: list[tuple[str, str, str]] = [
    ("orphan_edge", "its target Memory is missing",
     "MATCH (m:Memory {id: 'clean'}) REMOVE m:Memory SET m:Ghost"),
    ("bad_value", "importance nan is not a number",
     "MATCH (m:Memory {id: 'clean'}) SET m.importance = 0.0 / 0.0"),
    ("bad_value", "successes -2.0 is not a finite count",
     "MATCH (m:Memory {id: 'derived1'}) SET m.successes = -2.0"),
    ("bad_value", "rank 'first' is not a whole number",
     "MATCH (:Episode)-[r:READ]->(:Memory) SET r.rank = 'first'"),
    ("status", "is quarantined but no active retraction holds it",
     "MATCH (m:Memory {id: 'derived2'}) SET m.status = 'quarantined'"),
    ("index", "memories have no search text",
     "MATCH (m:Memory {id: 'derived2'}) REMOVE m.search_terms"),
]  # fmt: skip


@pytest.mark.neo4j
@pytest.mark.parametrize(
    ("kind", "words", "cypher"), NEO4J_DAMAGE, ids=[d[1] for d in NEO4J_DAMAGE]
)
def test_check_finds_each_kind_of_damage_on_neo4j(kind: str, words: str, cypher: str) -> None:
    from conftest import open_neo4j_store

    store: Any = open_neo4j_store()
    try:
        mg = MemoryGraph(store, HashingEmbedder())
        _world(mg)
        assert mg.check().ok
        store._driver.execute_query(cypher)
        report = mg.check()
        assert any(words in p for p in report.problems.get(kind, [])), report.problems
    finally:
        store.close()
