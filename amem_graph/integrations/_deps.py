"""Optional framework imports that fail with the pip command that fixes them."""

from __future__ import annotations


def missing(extra: str, exc: ImportError) -> ImportError:
    """The ImportError to raise when an extra's package is absent: it names the pip command.

    Use as ``except ImportError as exc: raise missing("langgraph", exc) from exc``.
    """
    return ImportError(
        f"{exc.name or 'a package'} is not installed; this integration needs it: "
        f'pip install "amem-graph[{extra}]"'
    )
