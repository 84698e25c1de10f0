"""``textrobust accs``: constraint robustness curves and ACCS (Morris, BlackboxNLP 2020)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.cli import options as o
from textrobust.cli.running import run_analyses


def register(app: typer.Typer) -> None:
    app.command("accs")(accs_cmd)


@o.with_shared_options("runs/accs")
def accs_cmd(
    ctx: typer.Context,
    constraint: Annotated[Optional[list[str]], typer.Option(
        help="Constraint model: minilm (default), bertscore, word_mean, mpnet:<folder>, encoder:<folder>. Repeat "
             "for several (each adds the cost of its own sweeps: bertscore about as much as minilm).")] = None,
    n: Annotated[Optional[int], typer.Option(
        help="Only the first n sentences (the paper: 100 per data set; more gives tighter intervals). Measured "
             "with minilm on 2 cores shared with other jobs: n=2 in 2.5 min, n=20 in 11 min, model loading "
             "included (long sentences cost up to a minute each, mostly the LM constraint).")] = 20,
    eps_start: Annotated[float, typer.Option(help="Lowest threshold.")] = 0.75,
    eps_stop: Annotated[float, typer.Option(help="Highest threshold.")] = 1.0,
    eps_step: Annotated[float, typer.Option(
        help="Threshold step (paper: 0.01; 0.02 from 0.5 for short texts). Time grows with the number of "
             "thresholds; ACCS depends on how finely the grid resolves each model's scale: word_mean needs "
             "0.95..1.0 by 0.002.")] = 0.01,
    gamma: Annotated[int, typer.Option(help="Antonyms the second-order attack must swap (paper: 3).")] = 3,
    beam_width: Annotated[int, typer.Option(
        help="Beam width of the second-order attack (paper: 2; wider finds more, slower).")] = 2,
    max_drop: Annotated[float, typer.Option(
        help="Largest LM log-probability drop of a swap, in nats (paper: 2.0).")] = 2.0,
    lm_mode: Annotated[str, typer.Option(
        help="LM constraint: left_word (GPT-2 style, default), window (5 words each side, ~5x slower) or "
             "none.")] = "left_word",
    indirect_antonyms: Annotated[bool, typer.Option(
        help="Also antonyms of adjective satellites through their head synsets.")] = True,
    sweep: Annotated[str, typer.Option(
        help="exact (every threshold) or monotone (a few thresholds per sentence, the rest inferred: faster, "
             "not exact; the exact sweep reports how far it is).")] = "exact",
    budget: Annotated[Optional[int], typer.Option(
        help="Victim queries per first-order attack (default: unlimited, as the paper).")] = None,
) -> None:
    """Constraint robustness (Morris 2020): attack the victim under a similarity threshold,
    attack the similarity model itself, sweep the threshold, report the curve and ACCS."""
    run_analyses(ctx, {"accs": {
        "constraint": constraint or ["minilm"], "n": n, "eps_start": eps_start, "eps_stop": eps_stop,
        "eps_step": eps_step, "gamma": gamma, "beam_width": beam_width, "max_drop": max_drop, "lm_mode": lm_mode,
        "indirect_antonyms": indirect_antonyms, "sweep": sweep, "budget": budget}})
