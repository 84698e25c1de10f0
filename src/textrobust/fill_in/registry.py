"""The registered fill-ins, and the default one.

:data:`FILL_INS` maps a name to a factory ``factory(**settings) -> FillIn``;
:func:`load_fill_in` also accepts a local Hugging Face masked-LM folder. The default
(:data:`DEFAULT_FILL_IN`) is ``minilm_tuned`` (issue 13: MiniLM's top 4 layers and the
MLM head fine-tuned by the project): recall@20 17-21% on the three probe seeds of
``benchmarks/results/fill_in.md`` at 411-637 candidates/s on two shared cores, so it
meets the speed bar of neighbourhoods (>= 300 candidates/s; a second-order neighbourhood
needs 100-900 requests per sentence). It misses the 35% recall@20 target of issue 13 but
is strictly better than ``minilm_mlm`` (recall@20 5.7-10%, the default before issue 13,
kept by name). ``causal_rescore`` (Gemma 3 270M) has the best recall (31% recall@20) but
proposes ~2 candidates/s: minutes per example, so it is chosen by name, never by default
(issue 15).

>>> FILL_INS.names()
['causal_rescore', 'huggingface', 'minilm_mlm', 'minilm_tuned']
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textrobust.attack.candidates.fill_in import FillIn
from textrobust.errors import ConfigError
from textrobust.fill_in.causal_rescore import CausalRescoreFillIn
from textrobust.fill_in.huggingface import HuggingFaceFillIn
from textrobust.fill_in.minilm_mlm import MiniLMFillIn
from textrobust.fill_in.minilm_tuned import tuned_fill_in
from textrobust.registry import Registry

__all__ = ["DEFAULT_FILL_IN", "FILL_INS", "default_fill_in", "load_fill_in"]

#: Registered fill-ins: name -> factory(**settings).
FILL_INS: Registry[Callable[..., FillIn]] = Registry("fill-in")

#: The name of the default fill-in: the best route that meets the speed bar (>= 300
#: candidates/s on two cores; issue 13). ``causal_rescore`` has better recall@20 on held-out
#: Rotten Tomatoes sentences (31% vs 17-21%, benchmarks/results/fill_in.md) but takes
#: minutes per sentence; ``minilm_mlm`` is as fast and weaker (5.7-10%).
DEFAULT_FILL_IN = "minilm_tuned"


@FILL_INS.register("minilm_mlm", "MiniLM encoder + the project's trained MLM head (offline, fast; logits)")
def _minilm_mlm(encoder_path: str | Path | None = None, head_path: str | Path | None = None, **settings: Any) -> FillIn:
    return MiniLMFillIn.default(encoder_path, head_path, **settings)


@FILL_INS.register("minilm_tuned", "MiniLM with its top layers fine-tuned as a masked LM by the project (offline, fast; logits)")
def _minilm_tuned(encoder_path: str | Path | None = None, tuned_path: str | Path | None = None, **settings: Any) -> FillIn:
    return tuned_fill_in(encoder_path, tuned_path, **settings)


@FILL_INS.register("causal_rescore", "Gemma 3 270M: propose from the left context, rescore whole sentences (log-prob ratios)")
def _causal_rescore(path: str | Path | None = None, **settings: Any) -> FillIn:
    return CausalRescoreFillIn.default(path, **settings)


@FILL_INS.register("huggingface", "a local Hugging Face masked-LM folder, e.g. distilbert-base-uncased (logits)")
def _huggingface(path: str | Path | None = None, **settings: Any) -> FillIn:
    if path is None:
        raise ConfigError(
            "The 'huggingface' fill-in needs path=<local masked-LM folder> (e.g. a saved "
            "distilbert-base-uncased). Got none."
        )
    return HuggingFaceFillIn.from_folder(path, **settings)


def default_fill_in(**settings: Any) -> FillIn:
    """The default fill-in (:data:`DEFAULT_FILL_IN`), built with ``settings``."""
    return FILL_INS.get(DEFAULT_FILL_IN)(**settings)


def load_fill_in(spec: str | Path | None = None, **settings: Any) -> FillIn:
    """A fill-in by registered name, or from a local masked-LM folder; None: the default.

    >>> load_fill_in("minilm_mlm")                         # doctest: +SKIP
    >>> load_fill_in("~/models/distilbert-base-uncased")   # doctest: +SKIP
    """
    if spec is None:
        return default_fill_in(**settings)
    if isinstance(spec, str) and spec in FILL_INS:
        return FILL_INS.get(spec)(**settings)
    if isinstance(spec, (str, Path)) and (Path(spec).expanduser().exists() or "/" in str(spec) or "\\" in str(spec)):
        return HuggingFaceFillIn.from_folder(spec, **settings)
    raise ConfigError(
        f"Unknown fill-in {spec!r}. Give one of {FILL_INS.names()} or the path of a local "
        f"Hugging Face masked-LM folder."
    )
