"""Doors for agent developers: LangGraph, LangChain and async callers reach the memory graph.

Each door lives in its own module and imports its framework on first import, with an
ImportError that names the extra to install:

* ``amem_graph.integrations.langgraph_store`` — ``AmemStore``, a LangGraph ``BaseStore``
  (``pip install "amem-graph[langgraph]"``);
* ``amem_graph.integrations.middleware`` — ``AmemMemoryMiddleware`` for
  ``langchain.agents.create_agent`` (``pip install "amem-graph[langchain]"``);
* ``amem_graph.integrations.tools`` — ``remember``/``recall``/``report_outcome``/``trace`` agent
  tools (``[langchain]``);
* ``amem_graph.integrations.retriever`` — ``AmemRetriever``, a langchain-core ``BaseRetriever``
  (no extra: langchain-core is a dependency).

Integrations reach storage only through the facade (``amem_graph.memory``).
"""
