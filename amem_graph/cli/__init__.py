"""The ``amem`` command line (click; rich on stderr, ``--json`` on stdout)."""

from amem_graph.cli.main import main

__all__ = ["main"]
