"""``amem outcome``: how an episode ended, so a shell user sees outcome credit; ``amem agent``:
the trust that credit gives an agent.

Reads happen in ``amem search --episode ID``; this closes the loop from the command line.
"""

from __future__ import annotations

import click

from amem_graph.cli import render
from amem_graph.cli.support import Settings, emit, graph, pass_settings


@click.command()
@click.argument("episode_id", metavar="EPISODE")
@click.option("--success/--failure", "success", default=None, help="How the episode ended.")
@click.option("--score", type=click.FloatRange(0, 1), help="A graded outcome in [0, 1].")
@click.option("--detail", default="", help="What happened, for the record.")
@pass_settings
def outcome(
    settings: Settings, episode_id: str, success: bool | None, score: float | None, detail: str
) -> None:
    """Record how EPISODE ended (once per episode) and credit the memories it read: success
    raises their confidence, failure lowers it."""
    if success is None:
        raise click.UsageError("say how it ended: --success or --failure")
    with graph(settings, existing=True, embeds=False) as mg:
        result = mg.record_outcome(episode_id, success=success, score=score, detail=detail)
    emit(
        settings,
        result.model_dump(mode="json"),
        lambda c: c.print(
            f"episode {episode_id}: {'success' if result.success else 'failure'} recorded; "
            "the memories it read were credited"
        ),
    )


@click.command()
@click.argument("agent_id", metavar="AGENT")
@click.option(
    "--scope",
    help="Only what it wrote in this scope: trust, counts and credit of other scopes are left out.",
)
@pass_settings
def agent(settings: Settings, agent_id: str, scope: str | None) -> None:
    """An agent's trust: the posterior over the outcome credit its memories received, over
    every scope (each listed) or only --scope."""
    with graph(settings, existing=True, embeds=False) as mg:
        found = mg.agent(agent_id, scope=scope)
    emit(settings, found.model_dump(mode="json"), lambda c: c.print(render.agent_table(found)))


COMMANDS: tuple[click.Command, ...] = (outcome, agent)
