"""MiniLM with its encoder layers fine-tuned as a masked LM (the ``minilm_tuned`` fill-in).

The frozen-encoder head of :mod:`textrobust.fill_in.minilm_mlm` is weak (recall@20 of a
masked content word 6-10%): the top layers of the sentence encoder all-MiniLM-L6-v2 were
trained to pool a sentence, not to predict a word. ``scripts/train_fill_in.py`` fine-tunes
the transformer layers of that encoder (the top 4, then all 6) together with the head (same head function,
:func:`~textrobust.fill_in.minilm_mlm.head_logits`; decoder tied to MiniLM's frozen word
embeddings) with the masked-LM objective on the bundled training text. Only the tuned
layers and the head ship, in float16 (``resources/minilm_tuned``); the rest of the
encoder and the word embeddings come from the installed MiniLM package, checked by a
fingerprint of the embeddings.

Departure from the double-perturbation paper (Zhang et al. 2021), which uses DistilBERT
pretrained on billions of words: a 6-layer sentence encoder tuned in four stages on the
bundled training text (stages 1-3: the top 4 layers, 6,254 steps of 32 sentences, 88
minutes on 2 shared cores then 54 on a quiet machine; stage 4: all 6 layers, 2,800 more
steps at 0.52 s each when alone on the machine; records in ``resources/minilm_tuned``). Measured
(``benchmarks/results/fill_in.md``): recall@20 of a masked content word 25.0-30.7%, recall@1
6.3-8.7%, ~2,500-3,200 candidates/s; better than the frozen-encoder head (6-10% / 1-2%),
short of the issue's target (35% / 12%) on its own; the default route (``minilm_gemma``,
:mod:`textrobust.fill_in.product`) multiplies it with Gemma's left context and reaches
recall@20 34.7-39.7% and recall@1 11.0-14.7%. Shipped: float16, 21.7 MB. Scores are raw
logits (the score contract of :mod:`textrobust.fill_in.masked`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError
from textrobust.fill_in.minilm_mlm import MiniLMFillIn, load_minilm, read_weights_folder

__all__ = ["TUNED_CONFIG", "TUNED_FORMAT", "TUNED_WEIGHTS", "load_tuned", "tuned_folder", "tuned_state"]

TUNED_WEIGHTS = "tuned.safetensors"
TUNED_CONFIG = "config.json"
TUNED_FORMAT = "textrobust-minilm-tuned"
_HEAD_KEYS = {"input.mean", "input.std", "mix", "dense.weight", "dense.bias", "norm.weight", "norm.bias", "bias"}


def tuned_folder() -> Path:
    """The folder of the tuned layers shipped with textrobust (``resources/minilm_tuned``)."""
    return Path(str(resources.files("textrobust").joinpath("resources", "minilm_tuned")))


def tuned_state(encoder: Any, first: int) -> dict[str, Any]:
    """The parameters of the encoder's transformer layers ``first..`` (detached), by name."""
    return {
        f"encoder.{name}": tensor.detach()
        for name, tensor in encoder.named_parameters()
        if name.startswith("encoder.layer.") and int(name.split(".")[2]) >= first
    }


def load_tuned(folder: str | Path | None = None) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(encoder tensors, head tensors, config)`` from a tuned folder (default: shipped), float32."""
    root = Path(folder).expanduser() if folder is not None else tuned_folder()
    weights = root / TUNED_WEIGHTS
    tensors, config = read_weights_folder(
        root, TUNED_WEIGHTS, TUNED_CONFIG, TUNED_FORMAT, "tuned MiniLM fill-in",
        "reinstall textrobust (the weights ship in textrobust/resources/minilm_tuned), or train them "
        "with `python scripts/train_fill_in.py --out <folder>` and pass that folder.", "tuned MiniLM")
    head = {name[len("head.") :]: t for name, t in tensors.items() if name.startswith("head.")}
    encoder_state = {name[len("encoder.") :]: t for name, t in tensors.items() if name.startswith("encoder.")}
    if set(head) != _HEAD_KEYS or not encoder_state:
        raise ConfigError(f"{weights} lacks the head tensors {sorted(_HEAD_KEYS)} or the encoder layers.")
    return encoder_state, head, config


def tuned_fill_in(encoder_path: str | Path | None = None, tuned_path: str | Path | None = None, **settings: Any) -> MiniLMFillIn:
    """The installed MiniLM (or ``encoder_path``) with the shipped tuned layers and head (or
    those of ``tuned_path``); ``settings`` go to :class:`MiniLMFillIn`."""
    encoder_state, head, config = load_tuned(tuned_path)
    encoder, tokenizer = load_minilm(encoder_path)
    own = dict(encoder.named_parameters())
    unknown = sorted(set(encoder_state) - set(own))
    if unknown:
        raise ConfigError(f"The tuned weights name encoder tensors this encoder lacks: {unknown[:3]}...")
    mismatched = [n for n, t in encoder_state.items() if tuple(t.shape) != tuple(own[n].shape)]
    if mismatched:
        raise ConfigError(f"The tuned weights do not fit this encoder (shapes differ for {mismatched[:3]}).")
    head_config = {
        "format": config["format"],
        "encoder": config.get("encoder"),
        "embedding_fingerprint": config.get("embedding_fingerprint"),
        "layers": config["head_layers"],
        "layer_norm_eps": config.get("layer_norm_eps", 1e-12),
        "training": config.get("training", {}),
    }
    # the fingerprint is checked (by MiniLMFillIn) before the layers are trusted
    fill_in = MiniLMFillIn(encoder, tokenizer, head, head_config, **settings)
    encoder.load_state_dict(encoder_state, strict=False)
    return fill_in
