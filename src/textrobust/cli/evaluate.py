"""``textrobust evaluate``: clean accuracy through the query layer, into the run store."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.cli import options as o
from textrobust.cli.running import run_analyses


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_cmd)


@o.with_shared_options("runs/evaluate")
def evaluate_cmd(
    ctx: typer.Context,
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples (default: all).")] = None,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass (and per stored unit).")] = 64,
) -> None:
    """Accuracy of a victim on a data set, through the query layer, into the run store."""
    run_analyses(ctx, {"evaluate": {"n": n, "batch_size": batch_size}})
