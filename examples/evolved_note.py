"""An evolved note, before and after, with its history: offline, then with a (scripted) model.

    python examples/evolved_note.py                           # embedded store in RAM
    python examples/evolved_note.py bolt://127.0.0.1:7687     # Neo4j (the demo's scopes wiped)

A runbook note is stored; a related memory arrives and evolves it. Offline the evolution only
adds the keywords the two share; with a model (here a scripted fake answering the note layer's
prompts) it rewrites the neighbour's context and tags. Each rewrite is a version in
``mg.history``; ``revert`` restores one; retracting the memory that caused an evolution undoes
it (``report.reverted_versions``) and ``restore`` re-applies it exactly.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from amem_graph import Memory, MemoryGraph, MemoryGraphConfig
from amem_graph.core.config import NotesConfig

RUNBOOK = (
    "The staging database password rotates every Monday morning; the vault CLI stores it and "
    "the oncall engineer checks the audit dashboard"
)
ARRIVAL = "Use the vault to rotate the staging database password on Monday"
#: the scripted model's answers, in the order the note layer asks: the runbook's note, the
#: arrival's note, then the arrival's links and evolution of the runbook
MODEL_SCRIPT: list[dict[str, Any]] = [
    {"keywords": ["password", "rotation"], "tags": ["security"],
     "context": "When the staging password rotates."},
    {"keywords": ["vault", "rotate"], "tags": ["howto"], "context": "How to rotate it."},
    {"links": [{"id": "runbook", "reason": "the procedure for this schedule", "weight": 0.8}],
     "evolve": [{"id": "runbook", "context": "Rotation schedule; the how-to is in the vault note.",
                 "tags": ["security", "runbook"]}]},
]  # fmt: skip


def note(m: Memory) -> str:
    return (
        f"v{m.version} keywords={m.note_keywords} tags={m.note_tags} "
        f"context={m.note_context!r} status={m.status}"
    )


def history(mg: MemoryGraph, memory_id: str) -> list[str]:
    return [
        f"  {v.id}: {v.kind} caused_by={v.caused_by} undone={v.undone} reason={v.reason!r}\n"
        f"    before keywords={v.before.keywords} tags={v.before.tags} "
        f"context={v.before.context!r}\n"
        f"    after  keywords={v.after.keywords} tags={v.after.tags} context={v.after.context!r}"
        for v in mg.history(memory_id)
    ]


def story(mg: MemoryGraph, scope: str = "demo") -> list[str]:
    """The before/after lines: store, evolve, retract (undo), restore (redo), revert."""
    out = []
    mg.remember(RUNBOOK, id="runbook", agent="ops", scope=scope)
    out.append(f"before: runbook {note(mg.get('runbook'))}")
    mg.remember(ARRIVAL, id="vault-howto", agent="eve", scope=scope)
    out.append(f"after vault-howto arrived: runbook {note(mg.get('runbook'))}")
    links = mg.store.edges(["vault-howto"], ["LINKED"], "out")
    for e in links:
        by, reason, weight = e.props["by"], e.props["reason"], e.props["weight"]
        out.append(f"  LINKED vault-howto -> {e.dst} ({by}): {reason!r}, weight {weight:.3f}")
    out.append("history('runbook'):")
    out += history(mg, "runbook")
    report = mg.retract("vault-howto", reason="eve's note was wrong")
    out.append(f"retract vault-howto: reverted_versions={report.reverted_versions}")
    out.append(f"  runbook {note(mg.get('runbook'))}")
    out += history(mg, "runbook")
    mg.restore(report.id)
    out.append(f"restore: runbook {note(mg.get('runbook'))}")
    reverted = mg.revert("runbook", 1, reason="curator prefers the original", by="curator")
    out.append(f"revert to version 1: runbook {note(reverted)}")
    out.append("history('runbook'):")
    out += history(mg, "runbook")
    return out


def open_graph(target: str, llm: Any = None) -> MemoryGraph:
    # one model call at a time, so the scripted model answers in order
    config = MemoryGraphConfig(notes=NotesConfig(adjudicate=False, llm_concurrency=1))
    return MemoryGraph.open(target, config=config, llm=llm)  # the default embedder, MiniLM


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else ":memory:"
    runs = [("offline (no LLM)", None), ("scripted model", MODEL_SCRIPT)]
    for title, script in runs:
        if target != ":memory:":
            from amem_graph.stores.factory import open_store

            store = open_store(target)
            getattr(store, "wipe")()  # noqa: B009 - only server stores have it
            store.close()
        model = None
        if script is not None:
            model = GenericFakeChatModel(messages=iter(json.dumps(s) for s in script))
        with open_graph(target, model) as mg:
            print(f"=== {title} on {mg.stats()['backend']}")
            print("\n".join(story(mg)))


if __name__ == "__main__":
    main()
