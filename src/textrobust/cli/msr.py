"""``textrobust msr``: the maximal safe radius, an MCTS upper bound and a certified lower bound.

La Malfa et al., "Assessing Robustness of Text Classification through Maximal Safe Radius
Computation" (../shared/papers/maximal-safe-radius-mcts-lirpa.txt). Option parsing only:
the analysis is ``msr`` of :mod:`textrobust.analyses.msr`, run by
:func:`textrobust.cli.running.run_analyses`.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.attack.candidates.choice import CANDIDATES_HELP
from textrobust.cli import options as o
from textrobust.cli.running import run_analyses

__all__ = ["msr_cmd", "register"]


def register(app: typer.Typer) -> None:
    """Add ``msr`` to the ``textrobust`` app."""
    app.command("msr")(msr_cmd)


@o.with_shared_options("runs/msr")
def msr_cmd(
    ctx: typer.Context,
    n: Annotated[Optional[int], typer.Option(help="Only the first n texts.")] = 10,
    max_set_size: Annotated[int, typer.Option(help="Largest number of words perturbed together (|I|); the "
                                              "text-length limit is --max-words.")] = 3,
    positions: Annotated[int, typer.Option(help="Words considered per text (the first ones).")] = 25,
    norm: Annotated[str, typer.Option(help="Norm of the ball: l2 or linf.")] = "l2",
    method: Annotated[str, typer.Option(help="Lower bound: crown (linear relaxation: CROWN for the CNN and bag of "
                                          "words, forward-mode linear for the LSTM) or ibp.")] = "crown",
    tolerance: Annotated[float, typer.Option(help="Bisection stops when the bracket is this share of its "
                                            "upper end.")] = 1e-3,
    multi_sets: Annotated[int, typer.Option(help="Random word sets per size 2..max-set-size.")] = 5,
    neighbours: Annotated[int, typer.Option(help="MCTS candidates with --candidates paper: the n closest words "
                                            "in L2 (the paper: 1000).")] = 100,
    candidates: Annotated[str, typer.Option(help="MCTS's substitutes: " + CANDIDATES_HELP + ".")] = "validated",
    pos_filter: Annotated[bool, typer.Option(help="Keep candidates with the same part of speech in context.")] = True,
    pos_window: Annotated[int, typer.Option(help="Words tagged each side of a substitution (--pos-filter).")] = 3,
    simulations: Annotated[int, typer.Option(help="MCTS simulations per vertex (the paper: 1000).")] = 32,
    exploration: Annotated[float, typer.Option(help="MCTS: the UCT exploration constant.")] = 0.5,
    iterations: Annotated[int, typer.Option(help="MCTS expansions per text.")] = 30,
    budget: Annotated[Optional[int], typer.Option(help="MCTS queries per text.")] = 20_000,
    lime: Annotated[bool, typer.Option(help="Compare the bounds' word ranking with LIME's (zoo victims).")] = True,
    lime_samples: Annotated[int, typer.Option(help="LIME samples per text.")] = 200,
    glove_vocab: Annotated[int, typer.Option(help="Victims without a word embedding: the most frequent GloVe "
                                             "words that form the space.")] = 50_000,
) -> None:
    """Maximal safe radius: MCTS upper bound, linear-relaxation (or IBP) lower bound, per word.
    Radii are shown divided by d (Definition 1: the distance to the farthest corner of the
    normalised embedding cube) and by sqrt(D) (the embedding's diameter, the paper's tables)."""
    run_analyses(ctx, {"msr": {
        "n": n, "max_set_size": max_set_size, "positions": positions, "norm": norm, "method": method,
        "tolerance": tolerance, "multi_sets": multi_sets, "neighbours": neighbours, "pos_filter": pos_filter,
        "simulations": simulations, "iterations": iterations, "budget": budget, "lime": lime,
        "lime_samples": lime_samples, "candidates": candidates, "pos_window": pos_window,
        "exploration": exploration, "glove_vocab": glove_vocab}})
