"""``textrobust radius`` and ``textrobust pr``: robustness radius bounds and the PR metric.

Yang et al., "Quantifying Robustness to Adversarial Word Substitutions"
(../shared/papers/robustness-radius-pdp-prover-pr.txt). Option parsing only: the analyses
are ``radius`` and ``pr`` of :mod:`textrobust.analyses.radius.analysis`, run by
:func:`textrobust.cli.running.run_analyses`.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.attack.candidates.choice import CANDIDATES_HELP
from textrobust.cli import options as o
from textrobust.cli.running import run_analyses

__all__ = ["pr_cmd", "radius_cmd", "register"]


def register(app: typer.Typer) -> None:
    """Add ``radius`` and ``pr`` to the ``textrobust`` app."""
    app.command("radius")(radius_cmd)
    app.command("pr")(pr_cmd)


@o.with_shared_options("runs/radius")
def radius_cmd(
    ctx: typer.Context,
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples (each takes seconds; the "
                                             "prover up to --time-limit).")] = 50,
    eta: Annotated[int, typer.Option(help="Synonyms kept per position (S(X,p) has eta + 1 words).")] = 5,
    min_cos: Annotated[Optional[float], typer.Option(help="Cosine floor of a synonym (counter-fitted GloVe; "
                                                     "--candidates paper only).")] = 0.5,
    candidates: Annotated[str, typer.Option(help="S(X,p): " + CANDIDATES_HELP + ".")] = "validated",
    skip_stop_words: Annotated[bool, typer.Option(help="Stop words get no synonyms (as the engine's "
                                                  "recipes).")] = True,
    tau: Annotated[float, typer.Option(help="Maximum share of substituted words of an adversarial example.")] = 0.25,
    methods: Annotated[str, typer.Option(help="Comma-separated methods of: pdp, greedy, pso (PSO is the "
                                         "slowest; the prover needs pdp).")] = "pdp,greedy,pso",
    top_k: Annotated[int, typer.Option(help="PDP: texts kept per step (K).")] = 10,
    lookahead: Annotated[int, typer.Option(help="PDP: texts drawn for the look-ahead.")] = 4,
    prover: Annotated[bool, typer.Option(help="Certify radii with the exhaustive prover (lower bounds).")] = True,
    max_radius: Annotated[int, typer.Option(help="Largest radius r of Table 3 (each step costs about m * eta "
                                            "times more texts).")] = 4,
    time_limit: Annotated[float, typer.Option(help="Prover seconds per example, then 'unknown' (more: fewer "
                                              "unknowns, up to n times as many seconds).")] = 30.0,
    batch_size: Annotated[int, typer.Option(help="Texts per query-layer call of the attacks.")] = 256,
    prover_batch: Annotated[int, typer.Option(help="Texts per query-layer call of the prover.")] = 512,
    pso_pop: Annotated[int, typer.Option(help="PSO particles.")] = 60,
    pso_iters: Annotated[int, typer.Option(help="PSO iterations.")] = 20,
    order: Annotated[str, typer.Option(help="How the prover orders positions, most sensitive first: auto "
                                       "(gradient when the victim has one, else delete), gradient, delete or "
                                       "text (text order).")] = "auto",
) -> None:
    """Bounds on the robustness radius: PDP and baselines (upper), the prover (lower)."""
    run_analyses(ctx, {"radius": {
        "n": n, "eta": eta, "min_cos": min_cos, "candidates": candidates, "tau": tau,
        "methods": tuple(m.strip() for m in methods.split(",") if m.strip()), "top_k": top_k,
        "lookahead": lookahead, "prover": prover, "max_radius": max_radius, "time_limit": time_limit,
        "batch_size": batch_size, "prover_batch": prover_batch, "pso_pop": pso_pop, "pso_iters": pso_iters,
        "skip_stop_words": skip_stop_words, "order": order}})


@o.with_shared_options("runs/pr")
def pr_cmd(
    ctx: typer.Context,
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = 50,
    eta: Annotated[int, typer.Option(help="Synonyms kept per position.")] = 5,
    min_cos: Annotated[Optional[float], typer.Option(help="Cosine floor of a synonym (--candidates paper "
                                                     "only).")] = 0.5,
    candidates: Annotated[str, typer.Option(help="S(X,p): " + CANDIDATES_HELP + ".")] = "validated",
    skip_stop_words: Annotated[bool, typer.Option(help="Stop words get no synonyms (as the engine's "
                                                  "recipes).")] = True,
    epsilon: Annotated[float, typer.Option(help="Hoeffding: the error bound eps (smaller: N grows as "
                                           "1/eps^2).")] = 0.025,
    delta: Annotated[float, typer.Option(help="Hoeffding: the failure probability delta.")] = 0.005,
    samples: Annotated[Optional[int], typer.Option(help="N per example (default: the smallest N that "
                                                   "guarantees --epsilon, 4,794 by default; fewer is faster "
                                                   "and guarantees a larger eps, which is reported).")] = None,
    fraction: Annotated[float, typer.Option(help="r as a share of the text length.")] = 0.25,
    threshold: Annotated[float, typer.Option(help="Report the share of examples with PR above this.")] = 0.9,
    batch_size: Annotated[int, typer.Option(help="Texts per query-layer call.")] = 1024,
    exact_limit: Annotated[Optional[int], typer.Option(help="Enumerate Omega_r exactly when it holds at most "
                                                       "this many texts (default: N, the sample size).")] = None,
) -> None:
    """PR_hat, the share of Omega_r a victim still classifies right, with its guarantee."""
    run_analyses(ctx, {"pr": {
        "n": n, "eta": eta, "min_cos": min_cos, "candidates": candidates, "epsilon": epsilon, "delta": delta, "samples": samples,
        "fraction": fraction, "threshold": threshold, "batch_size": batch_size, "skip_stop_words": skip_stop_words,
        "exact_limit": exact_limit}})
