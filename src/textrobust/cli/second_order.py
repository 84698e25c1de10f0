"""``textrobust second-order`` and ``textrobust bias``: the double-perturbation analyses.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt). Each command parses its own options and runs its
analysis (:class:`~textrobust.analyses.second_order.analysis.SecondOrderAnalysis`,
:class:`~textrobust.analyses.bias.analysis.BiasAnalysis`) through
:func:`textrobust.cli.running.run_analyses`: one store, report.json and report.html in
``--out`` (the bias tables and figures are sections of the report).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.attack.candidates.choice import CANDIDATES_HELP
from textrobust.cli import options as o
from textrobust.cli.running import run_analyses
from textrobust.fill_in.registry import DEFAULT_FILL_IN

__all__ = ["register"]

_FILL_IN_HELP = ("Fill-in model of the neighbourhoods: minilm_gemma (the default: tuned MiniLM x Gemma 3 270M's "
                 "left context, recall@20 34-39%, ~450 candidates/s), minilm_tuned (the MiniLM part alone, no Gemma "
                 "needed: 26%, ~2,000/s), minilm_mlm (weaker), causal_rescore (Gemma 3 270M propose-and-rescore: "
                 "~2 candidates/s, minutes per example) or a local masked-LM folder.")


def register(app: typer.Typer) -> None:
    """Add ``second-order`` and ``bias`` to the ``textrobust`` app."""
    app.command("second-order")(second_order_cmd)
    app.command("bias")(bias_cmd)


@o.with_shared_options("runs/second-order")
def second_order_cmd(
    ctx: typer.Context,
    method: Annotated[str, typer.Option(help="so-beam (Algorithm 2), so-enum (exhaustive, k <= 2; slower) or "
                                        "random (the baseline).")] = "so-beam",
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples.")] = 20,
    budget: Annotated[Optional[int], typer.Option(help="Victim queries per example (each neighbour costs "
                                                  "2).")] = 50_000,
    fill_in: Annotated[str, typer.Option(help=_FILL_IN_HELP)] = DEFAULT_FILL_IN,
    beam_width: Annotated[int, typer.Option(help="SO-Beam: texts kept per step.")] = 20,
    max_k: Annotated[Optional[int], typer.Option(help="Most words changed (default: 6, SO-Enum 2).")] = None,
    kappa: Annotated[int, typer.Option(help="Neighbourhood: at most kappa words per position.")] = 20,
    delta: Annotated[float, typer.Option(help="Neighbourhood: keep words within delta of the best score.")] = 3.0,
    min_gap: Annotated[float, typer.Option(help="Also require this total-variation gap (0 = the paper).")] = 0.0,
    quality: Annotated[bool, typer.Option(help="Perplexity (Gemma) of x0 and of the vulnerable example; "
                                          "--no-quality is faster.")] = True,
    candidates: Annotated[str, typer.Option(help="The patch pairs: " + CANDIDATES_HELP + ".")] = "validated",
) -> None:
    """Second-order attack (Zhang et al. 2021): find a natural neighbour of each test
    sentence whose label a single synonym swap flips."""
    run_analyses(ctx, {"second-order": {
        "method": method, "n": n, "budget": budget, "fill_in": fill_in, "beam_width": beam_width, "max_k": max_k,
        "kappa": kappa, "delta": delta, "min_gap": min_gap, "quality": quality, "candidates": candidates}})


@o.with_shared_options("runs/bias")
def bias_cmd(
    ctx: typer.Context,
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples (about 10 gender anchors per 50 "
                                             "Rotten Tomatoes sentences, 10-20 s each).")] = 50,
    group: Annotated[Optional[list[str]], typer.Option(help="Protected group(s): gender, nationality, religion, "
                                                       "sexual_orientation or all (repeatable; default gender).")] = None,
    max_k: Annotated[int, typer.Option(help="Largest neighbourhood distance k (the paper: 3).")] = 3,
    exact_up_to: Annotated[int, typer.Option(help="Enumerate Neighbor_k in full up to this k, sample above. "
                                             "The paper's 2 enumerates Neighbor_2: 3-8 minutes per anchor "
                                             "instead of ~10 s.")] = 1,
    samples: Annotated[int, typer.Option(help="Random walks per test sentence for a sampled k.")] = 200,
    eps: Annotated[float, typer.Option(help="X_filter: |F_soft(x0)| below this.")] = 0.005,
    label: Annotated[Optional[int], typer.Option(help="Class index of f_soft (default: the last label).")] = None,
    both_directions: Annotated[bool, typer.Option(help="Also use sentences holding the second word.")] = False,
    fill_in: Annotated[str, typer.Option(help=_FILL_IN_HELP)] = DEFAULT_FILL_IN,
    kappa: Annotated[int, typer.Option(help="Neighbourhood: at most kappa words per position.")] = 20,
    delta: Annotated[float, typer.Option(help="Neighbourhood: keep words within delta of the best score.")] = 3.0,
) -> None:
    """Counterfactual token bias B_(p,k) (Zhang et al. 2021) over the neighbourhoods of
    the test sentences holding a protected word; --seed seeds the sampled k."""
    run_analyses(ctx, {"bias": {
        "n": n, "group": tuple(group) if group else ("gender",), "max_k": max_k, "exact_up_to": exact_up_to,
        "samples": samples, "eps": eps, "label": label, "both_directions": both_directions, "fill_in": fill_in,
        "kappa": kappa, "delta": delta}})
