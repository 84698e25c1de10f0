"""The registered fill-ins, and the default one.

:data:`FILL_INS` maps a name to a factory ``factory(**settings) -> FillIn``;
:func:`load_fill_in` also accepts a local Hugging Face masked-LM folder. The default
(:data:`DEFAULT_FILL_IN`) is ``minilm_gemma`` (issue 13): the project's fine-tuned MiniLM
(all 6 layers + head) times Gemma 3 270M's next-word distribution from the left context,
with its top 3 words re-ranked by Gemma's joint probability of the word and the token
after the gap. On the three test probe seeds of ``benchmarks/results/fill_in.md`` it has
recall@20 34.7-39.7% (mean 37.6%) and recall@1 11.0-14.7% (mean 12.3%) at 384-537
candidates/s on two cores (median ~400 over this session's runs, two of 14 under 300),
mostly above the speed bar of neighbourhoods (>= 300 candidates/s; a second-order
neighbourhood needs 100-900 requests per sentence, and the positions of one sentence
share one Gemma pass). It needs the optional extra ``lm`` (Gemma); without it, name
``minilm_tuned`` (the MiniLM part alone: recall@20 25.0-30.7%, ~2,500 candidates/s).
``causal_rescore`` (Gemma propose-and-rescore over whole sentences) ranks better at the
top (recall@1 17% on 100 probes) but takes ~2 candidates/s: minutes per example, so it is
chosen by name, never by default (issue 15). ``minilm_mlm`` (frozen encoder + head,
recall@20 6-10%) is kept by name.

>>> FILL_INS.names()
['causal_rescore', 'huggingface', 'minilm_gemma', 'minilm_mlm', 'minilm_tuned']
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textrobust.attack.candidates.fill_in import FillIn
from textrobust.devices import Placement
from textrobust.errors import AssetMissingError, ConfigError, MissingDependencyError
from textrobust.fill_in.causal_rescore import CausalRescoreFillIn
from textrobust.fill_in.huggingface import HuggingFaceFillIn
from textrobust.fill_in.minilm_mlm import MiniLMFillIn
from textrobust.fill_in.minilm_tuned import tuned_fill_in
from textrobust.fill_in.product import ProductFillIn
from textrobust.registry import Registry

__all__ = ["DEFAULT_FILL_IN", "FILL_INS", "FILL_IN_HELP", "default_fill_in", "load_fill_in"]

#: Registered fill-ins: name -> factory(**settings). Each built-in factory also takes
#: ``placement`` (a :class:`~textrobust.devices.Placement`: where its models run; None: the
#: CPU in float32), which :func:`load_fill_in` passes on.
FILL_INS: Registry[Callable[..., FillIn]] = Registry("fill-in")

#: The name of the default fill-in: the route with the best recall@20 that meets the speed
#: bar (>= 300 candidates/s on two cores; issue 13, benchmarks/results/fill_in.md).
DEFAULT_FILL_IN = "minilm_gemma"

#: The help of a neighbourhood ``fill_in`` setting (its field description, the CLI option's help).
FILL_IN_HELP = ("Fill-in model of the neighbourhoods: minilm_gemma (the default: tuned MiniLM x Gemma 3 270M's "
                "left context, recall@20 34-39%, ~450 candidates/s), minilm_tuned (the MiniLM part alone, no Gemma "
                "needed: 26%, ~2,000/s), minilm_mlm (weaker), causal_rescore (Gemma 3 270M propose-and-rescore: "
                "~2 candidates/s, minutes per example) or a local masked-LM folder.")


@FILL_INS.register("minilm_mlm", "MiniLM encoder + the project's trained MLM head (offline, fast; logits)")
def _minilm_mlm(encoder_path: str | Path | None = None, head_path: str | Path | None = None, *,
                placement: Placement | None = None, **settings: Any) -> FillIn:
    return _placed(MiniLMFillIn.default(encoder_path, head_path, **settings), placement)


@FILL_INS.register("minilm_tuned", "MiniLM with its top layers fine-tuned as a masked LM by the project (offline, fast; logits)")
def _minilm_tuned(encoder_path: str | Path | None = None, tuned_path: str | Path | None = None, *,
                  placement: Placement | None = None, **settings: Any) -> FillIn:
    return _placed(tuned_fill_in(encoder_path, tuned_path, **settings), placement)


@FILL_INS.register(
    "minilm_gemma",
    "tuned MiniLM logits + Gemma 3 270M next-word logits from the left context (product of experts; optional extra 'lm')",
)
def _minilm_gemma(
    encoder_path: str | Path | None = None,
    tuned_path: str | Path | None = None,
    lm_path: str | Path | None = None,
    *,
    weight: float | None = None,
    rerank: int | None = None,
    lookahead_tokens: int = 1,
    lookahead_weight: float | None = None,
    rerank_weight: float | None = None,
    batch_size: int = 16,
    cache_size: int | None = 20_000,
    placement: Placement | None = None,
    **settings: Any,
) -> FillIn:
    from textrobust.fill_in.product import DEFAULT_LOOKAHEAD_WEIGHT, DEFAULT_RERANK, DEFAULT_RERANK_WEIGHT, DEFAULT_WEIGHT
    from textrobust.lm import CausalLM

    masked = _placed(tuned_fill_in(encoder_path, tuned_path, **settings), placement)
    try:
        lm = CausalLM.default(lm_path, placement=placement)
    except AssetMissingError as error:
        raise AssetMissingError(
            "Gemma 3 270M (for the 'minilm_gemma' fill-in)", error.searched,
            f"{error.hint} Or choose the MiniLM part alone: fill_in='minilm_tuned' (--fill-in minilm_tuned).",
        ) from error
    except MissingDependencyError as error:
        raise MissingDependencyError(
            error.package, "The 'minilm_gemma' fill-in (Gemma 3 270M; or choose fill_in='minilm_tuned')",
            "pip install 'textrobust[lm]'",
        ) from error
    return ProductFillIn(
        masked,
        lm,
        weight=DEFAULT_WEIGHT if weight is None else weight,
        rerank=DEFAULT_RERANK if rerank is None else rerank,
        lookahead_tokens=lookahead_tokens,
        lookahead_weight=DEFAULT_LOOKAHEAD_WEIGHT if lookahead_weight is None else lookahead_weight,
        rerank_weight=DEFAULT_RERANK_WEIGHT if rerank_weight is None else rerank_weight,
        batch_size=batch_size,
        cache_size=cache_size,
        placement=placement,
    )


@FILL_INS.register("causal_rescore", "Gemma 3 270M: propose from the left context, rescore whole sentences (log-prob ratios)")
def _causal_rescore(path: str | Path | None = None, *, placement: Placement | None = None, **settings: Any) -> FillIn:
    return CausalRescoreFillIn.default(path, placement=placement, **settings)


@FILL_INS.register("huggingface", "a local Hugging Face masked-LM folder, e.g. distilbert-base-uncased (logits)")
def _huggingface(path: str | Path | None = None, *, placement: Placement | None = None, **settings: Any) -> FillIn:
    if path is None:
        raise ConfigError(
            "The 'huggingface' fill-in needs path=<local masked-LM folder> (e.g. a saved "
            "distilbert-base-uncased). Got none."
        )
    return _placed(HuggingFaceFillIn.from_folder(path, **settings), placement)


def _placed(fill_in: Any, placement: Placement | None) -> Any:
    """A masked-LM fill-in moved to ``placement`` (in place; None: left on the CPU in float32)."""
    return fill_in if placement is None else fill_in.place(placement)


def default_fill_in(**settings: Any) -> FillIn:
    """The default fill-in (:data:`DEFAULT_FILL_IN`), built with ``settings``."""
    return FILL_INS.get(DEFAULT_FILL_IN)(**settings)


def load_fill_in(spec: str | Path | None = None, *, placement: Placement | None = None, **settings: Any) -> FillIn:
    """A fill-in by registered name, or from a local masked-LM folder; None: the default.
    ``placement``: the device and float type of its models, passed to the factory (each
    built-in one places its masked LM and its causal LM there: ``minilm_gemma`` both,
    ``causal_rescore`` Gemma; their passes create their tensors on that device); None:
    the CPU in float32.

    >>> load_fill_in("minilm_mlm")                         # doctest: +SKIP
    >>> load_fill_in("~/models/distilbert-base-uncased")   # doctest: +SKIP
    """
    placed = {} if placement is None else {"placement": placement}  # a factory of one's own may not take it
    if spec is None:
        return default_fill_in(**placed, **settings)
    if isinstance(spec, str) and spec in FILL_INS:
        return FILL_INS.get(spec)(**placed, **settings)
    if isinstance(spec, (str, Path)) and (Path(spec).expanduser().exists() or "/" in str(spec) or "\\" in str(spec)):
        return _placed(HuggingFaceFillIn.from_folder(spec, **settings), placement)
    raise ConfigError(
        f"Unknown fill-in {spec!r}. Give one of {FILL_INS.names()} or the path of a local "
        f"Hugging Face masked-LM folder."
    )
