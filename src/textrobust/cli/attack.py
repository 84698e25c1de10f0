"""``textrobust attack``: attack a victim with a recipe, into the run store."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.cli import options as o
from textrobust.cli.running import run_analyses


def register(app: typer.Typer) -> None:
    app.command("attack")(attack_cmd)


@o.with_shared_options("runs/attack")
def attack_cmd(
    ctx: typer.Context,
    recipe: Annotated[str, typer.Option(help="Attack recipe (see `textrobust list`).")] = "textfooler",
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = 50,
    budget: Annotated[Optional[int], typer.Option(help="Query budget per example (default: none).")] = None,
    quality: Annotated[bool, typer.Option(help="Perplexity (Gemma) and similarity (MiniLM) of each success.")] = True,
    candidates: Annotated[str, typer.Option(
        help="Where substitutes come from: validated (synonyms checked in context, the default; its measured "
             "precision is in benchmarks/results/validity.md) or paper (the recipe's own source, to reproduce "
             "the paper).")] = "validated",
) -> None:
    """Attack a victim with a recipe; results go to the run store, a table and report.html."""
    run_analyses(ctx, {"attack": {"recipe": recipe, "n": n, "budget": budget, "quality": quality,
                                  "candidates": candidates}})
