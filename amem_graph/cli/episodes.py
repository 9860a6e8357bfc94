"""``amem outcome``: how an episode ended, so a shell user sees outcome credit.

Reads happen in ``amem search --episode ID``; this closes the loop from the command line.
"""

from __future__ import annotations

import click

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


COMMANDS: tuple[click.Command, ...] = (outcome,)
