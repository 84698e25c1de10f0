"""``textrobust attribution``: how robust a victim's explanations are (TEA / TEF, k, AUC_k).

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt). Option parsing only: the
analysis is ``attribution`` of :mod:`textrobust.analyses.attribution`, run by
:func:`textrobust.cli.running.run_analyses`.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from textrobust.attack.candidates.choice import CANDIDATES_HELP
from textrobust.cli import options as o
from textrobust.cli.common import fail
from textrobust.cli.running import run_analyses
from textrobust.errors import ConfigError

__all__ = ["attribution_cmd", "register"]


def register(app: typer.Typer) -> None:
    """Add ``attribution`` to the ``textrobust`` app."""
    app.command("attribution")(attribution_cmd)


def _floats(value: str, option: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in value.split(",") if v.strip())
    except ValueError:
        fail(ConfigError(f"The '{option}' option must be comma-separated numbers such as 0.05,0.1,0.2. "
                         f"Got {value!r} instead."))


@o.with_shared_options("runs/attribution")
def attribution_cmd(
    ctx: typer.Context,
    n: Annotated[Optional[int], typer.Option(help="Only the first n examples (each runs every attack at every "
                                             "rho).")] = 20,
    attribution: Annotated[str, typer.Option(help="auto (saliency with gradients, else occlusion), saliency, "
                                             "integrated_gradients, attention, occlusion or kernel_shap.")] = "auto",
    distance: Annotated[str, typer.Option(help="Attribution distance: pcc (the paper), kendall, spearman, "
                                          "top_k.")] = "pcc",
    top_k: Annotated[int, typer.Option(help="k of the top_k distance.")] = 3,
    attacks: Annotated[str, typer.Option(help="Comma-separated attacks of: tea (masked-LM fill-in candidates), "
                                         "tef (counter-fitted neighbours).")] = "tea,tef",
    rhos: Annotated[str, typer.Option(help="The rho_max sweep, comma-separated (the paper: 0.01..0.4).")]
        = "0.05,0.1,0.2,0.3,0.4",
    per_word: Annotated[int, typer.Option(help="Candidates per word, |C| (the paper: 15).")] = 15,
    candidates: Annotated[str, typer.Option(help="TEF's substitutes: " + CANDIDATES_HELP.replace(
        "paper's own source", "paper's counter-fitted neighbours") + ".")] = "validated",
    content_candidates: Annotated[bool, typer.Option(help="Drop stop-word candidates (our fill-in over-proposes "
                                                     "them; the paper keeps its MLM's top 15).")] = True,
    fill_in: Annotated[Optional[str], typer.Option(help="TEA's fill-in: minilm_gemma (default), minilm_tuned "
                                                   "(without Gemma), causal_rescore (slow) or a local masked-LM folder.")] = None,
    batch_masking: Annotated[bool, typer.Option(help="TEA: one fill-in call per batch of words.")] = True,
    ig_steps: Annotated[int, typer.Option(help="Integrated Gradients steps.")] = 20,
    semantic: Annotated[bool, typer.Option(help="Semantic similarity of the attacked text (MiniLM).")] = True,
    perplexity: Annotated[bool, typer.Option(help="Relative perplexity (Gemma, the optional lm extra; absent "
                                             "if not installed).")] = True,
    grammar: Annotated[bool, typer.Option(help="Grammar errors (link-grammar).")] = True,
    budget: Annotated[Optional[int], typer.Option(help="Query budget per attack run.")] = None,
) -> None:
    """Attribution robustness: TEA and TEF move explanations while the prediction stays."""
    run_analyses(ctx, {"attribution": {
        "n": n, "attribution": attribution, "distance": distance, "top_k": top_k,
        "attacks": tuple(a.strip() for a in attacks.split(",") if a.strip()), "rhos": _floats(rhos, "--rhos"),
        "per_word": per_word, "candidates": candidates, "content_candidates": content_candidates, "fill_in": fill_in,
        "batch_masking": batch_masking, "ig_steps": ig_steps,
        "semantic": semantic, "perplexity": perplexity, "grammar": grammar, "budget": budget}})
