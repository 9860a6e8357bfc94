"""langchain-tests' standard suites for the retriever and the four tools, on both stores."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import STORE_PARAMS, open_neo4j_store
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from amem_graph import HashingEmbedder, MemoryGraph
from amem_graph.integrations.retriever import AmemRetriever
from amem_graph.integrations.tools import RecallTool, RememberTool, ReportOutcomeTool, TraceTool
from amem_graph.stores.base import GraphStore
from amem_graph.stores.local.store import LocalStore

SCOPE = "suite"
NOTES = [
    "The staging DB rotates its password on Mondays",
    "Deploys to eu-west need the ops-eu VPN profile",
    "The payments service retries a failed charge three times",
    "Cache keys for sessions expire after one hour",
]


@pytest.fixture(scope="class", params=STORE_PARAMS)
def seeded_graph(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MemoryGraph]:
    """One graph per suite class and store (the suites only read NOTES and add to them)."""
    store: GraphStore
    if request.param == "neo4j":
        store = open_neo4j_store()
    else:
        store = LocalStore(os.fspath(Path(tmp_path_factory.mktemp("suite")) / "suite.db"))
    graph = MemoryGraph(store, HashingEmbedder())
    for i, note in enumerate(NOTES):
        graph.remember(note, id=f"n{i}", scope=SCOPE, agent="ops", task="runbook")
    yield graph
    graph.close()


class _Seeded:
    """Gives each standard test the class's graph holding NOTES."""

    graph: MemoryGraph

    @pytest.fixture(autouse=True)
    def _seed(self, seeded_graph: MemoryGraph) -> None:
        self.graph = seeded_graph

    def bound(self, cls: type[BaseTool]) -> BaseTool:
        episode = self.graph.episode("suite-agent", scope=SCOPE)
        episode.__enter__()
        return cls(graph=self.graph, scope=SCOPE, agent="suite-agent", episode=episode)


class TestRetriever(_Seeded, RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return AmemRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"graph": self.graph, "scope": SCOPE}

    @property
    def retriever_query_example(self) -> str:
        return "when does the staging password change?"


class _Remember(_Seeded):
    @property
    def tool_constructor(self) -> BaseTool:
        return self.bound(RememberTool)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"content": "Builds on main are tagged nightly", "tags": ["ci"]}


class _Recall(_Seeded):
    @property
    def tool_constructor(self) -> BaseTool:
        return self.bound(RecallTool)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "how do I reach eu-west?", "k": 2}


class _ReportOutcome(_Seeded):
    @property
    def tool_constructor(self) -> BaseTool:
        return self.bound(ReportOutcomeTool)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"success": True, "detail": "deployed"}


class _Trace(_Seeded):
    @property
    def tool_constructor(self) -> BaseTool:
        return self.bound(TraceTool)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"memory_id": "n1"}


class TestRememberUnit(_Remember, ToolsUnitTests):
    pass


class TestRememberIntegration(_Remember, ToolsIntegrationTests):
    pass


class TestRecallUnit(_Recall, ToolsUnitTests):
    pass


class TestRecallIntegration(_Recall, ToolsIntegrationTests):
    pass


class TestReportOutcomeUnit(_ReportOutcome, ToolsUnitTests):
    pass


class TestReportOutcomeIntegration(_ReportOutcome, ToolsIntegrationTests):
    pass


class TestTraceUnit(_Trace, ToolsUnitTests):
    pass


class TestTraceIntegration(_Trace, ToolsIntegrationTests):
    pass
