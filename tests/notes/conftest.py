"""Fixtures for the note layer: a graph with notes configured per test, on each store kind."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from amem_graph import HashingEmbedder, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig
from amem_graph.stores.base import GraphStore
from notes.fakes import MakeGraph


@pytest.fixture
def make_graph(store: GraphStore) -> Iterator[MakeGraph]:
    """``make_graph(llm=None, **NotesConfig fields)``: a graph on this test's store. Model
    calls run one at a time (``llm_concurrency=1``) so a scripted model answers in order."""
    made: list[MemoryGraph] = []

    def factory(llm: BaseChatModel | None = None, **notes: Any) -> MemoryGraph:
        notes.setdefault("llm_concurrency", 1)
        # the hashing embedder's similarities run lower than MiniLM's, the default's basis
        notes.setdefault("link_threshold", 0.45)
        config = MemoryGraphConfig(notes=NotesConfig(**notes))
        graph = MemoryGraph(store, HashingEmbedder(), config, llm)
        made.append(graph)
        return graph

    yield factory
    for graph in made:
        graph.close()
