"""Fill-in from any Hugging Face masked LM in a local folder (e.g. distilbert-base-uncased).

This is the route of the double-perturbation paper (Zhang et al. 2021,
``double-perturbation-second-order-robustness-and-bias.txt``), which fills masks with
DistilBERT, and what users with internet access will use: download once, then
``model.save_pretrained(folder)`` and ``tokenizer.save_pretrained(folder)``, and pass the
folder. Nothing is downloaded here: only local folders are read (``local_files_only``),
and only safetensors weights (``use_safetensors``), because unpickling a
``pytorch_model.bin`` can run arbitrary code. A folder whose masked-LM head is missing (a
sentence-transformers folder, a bare encoder) is refused: its "predictions" would come
from a randomly initialised head.

Scores are the model's raw logits at the mask; see :mod:`textrobust.fill_in.masked` for
the score contract (Algorithm 1's kappa/delta thresholds apply to them directly).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textrobust.devices import Placement
from textrobust.errors import AssetMissingError, ConfigError, MissingDependencyError
from textrobust.fill_in.masked import MaskedBatch, MaskedFillIn

__all__ = ["HuggingFaceFillIn"]

_PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "*.pt", "*.pth", "*.ckpt")


class HuggingFaceFillIn(MaskedFillIn):
    """Whole-word candidates from a ``transformers`` masked LM (``*ForMaskedLM``).

    Build it with :meth:`from_folder`, or pass a loaded model and its tokenizer. Any
    WordPiece, byte-level BPE or SentencePiece vocabulary works (see
    :mod:`textrobust.fill_in.whole_words`). The model computes logits at every position
    (architectures differ in their heads), so batches are kept to at most
    ``max_logits_bytes`` of logits; only the mask's row is used.

    >>> fill_in = HuggingFaceFillIn.from_folder("~/models/distilbert-base-uncased")  # doctest: +SKIP
    >>> fill_in.fill([(Text.from_string("a deep and meaningful film ."), 4)], 5)       # doctest: +SKIP
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        batch_size: int = 32,
        max_length: int = 128,
        max_logits_bytes: int = 256 * 2**20,
        cache_size: int | None = 20_000,
        name: str | None = None,
    ) -> None:
        limit = int(getattr(getattr(model, "config", None), "max_position_embeddings", max_length) or max_length)
        super().__init__(tokenizer, batch_size=batch_size, max_length=min(max_length, limit), cache_size=cache_size)
        if isinstance(max_logits_bytes, bool) or not isinstance(max_logits_bytes, int) or max_logits_bytes < 1:
            raise ConfigError(
                f"The 'max_logits_bytes' parameter of HuggingFaceFillIn must be an int >= 1. Got {max_logits_bytes!r} instead."
            )
        self.model = model.eval()
        self.max_logits_bytes = max_logits_bytes
        self.name = name if name is not None else type(model).__name__
        self._accepts_types = "token_type_ids" in _forward_arguments(model)

    @classmethod
    def from_folder(cls, path: str | os.PathLike[str], **settings: Any) -> HuggingFaceFillIn:
        """Load ``AutoModelForMaskedLM`` and ``AutoTokenizer`` from the local folder ``path``
        (as written by ``save_pretrained``), safetensors weights only; ``settings`` go to
        the constructor."""
        if not isinstance(path, (str, os.PathLike)):
            raise ConfigError(
                f"The 'path' parameter of HuggingFaceFillIn.from_folder must be a folder path. Got {path!r} instead."
            )
        folder = Path(path).expanduser()
        save_hint = (
            "on a machine that has the model, run model.save_pretrained(folder) and "
            "tokenizer.save_pretrained(folder) (e.g. for distilbert-base-uncased), then pass that folder."
        )
        if not folder.is_dir():
            what = "is a file, not a folder" if folder.exists() else "does not exist"
            raise AssetMissingError(
                "masked LM folder",
                [str(folder)],
                f"{str(path)!r} {what}. Hugging Face hub ids are not downloaded: {save_hint}",
            )
        if not (folder / "config.json").is_file():
            raise AssetMissingError(
                "masked LM folder", [str(folder / "config.json")], f"the folder is not a saved transformers model: {save_hint}"
            )
        if not any(folder.glob("*.safetensors")):
            pickles = sorted({p.name for pattern in _PICKLE_WEIGHTS for p in folder.glob(pattern)})
            if pickles:
                raise AssetMissingError(
                    "masked LM weights (safetensors)",
                    [str(folder / "*.safetensors")],
                    f"the folder holds only pickled weights ({', '.join(pickles)}); textrobust loads "
                    f"safetensors only, because unpickling can run arbitrary code. Where you trust the "
                    f"file, load the model once and call model.save_pretrained(folder), which writes "
                    f"model.safetensors.",
                )
            raise AssetMissingError("masked LM weights (safetensors)", [str(folder / "*.safetensors")], save_hint)
        from textrobust.assets.offline import hf_offline

        hf_offline()
        try:
            from transformers import AutoModelForMaskedLM, AutoTokenizer
        except ImportError:
            raise MissingDependencyError("transformers", "HuggingFaceFillIn", "pip install 'transformers>=4.45'") from None
        from textrobust.loading import loading

        try:
            with loading(f"the masked LM {folder.name}"):
                tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
                model, info = AutoModelForMaskedLM.from_pretrained(
                    str(folder), local_files_only=True, use_safetensors=True, output_loading_info=True
                )
        except (OSError, ValueError, KeyError) as error:
            raise ConfigError(f"Could not load a masked LM and its tokenizer from {str(folder)!r}: {error}") from error
        missing = sorted(info.get("missing_keys") or ())
        if missing:
            raise AssetMissingError(
                "masked-LM head",
                [str(folder)],
                f"the folder has no trained weights for {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}: "
                f"it holds an encoder without its masked-LM head (a sentence-transformers folder, or a "
                f"model saved with AutoModel), so fill-in predictions would be noise. Save the "
                f"*ForMaskedLM model instead, or use the project's 'minilm_mlm' fill-in.",
            )
        return cls(model, tokenizer, name=str(folder), **settings)

    @property
    def device(self) -> Any:
        """The ``torch.device`` of the model's weights."""
        return next(self.model.parameters()).device

    def place(self, placement: Placement) -> HuggingFaceFillIn:
        """The model moved to ``placement``'s device and float type (in place, returned)."""
        self.model = placement.place(self.model).eval()
        return self

    def _mask_logits(self, batch: MaskedBatch) -> Any:
        import torch

        rows, width = batch.input_ids.shape
        vocab = int(self.model.get_output_embeddings().weight.shape[0]) if self.model.get_output_embeddings() is not None else int(self.model.config.vocab_size)
        step = max(1, self.max_logits_bytes // (4 * width * vocab))
        pieces = []
        for s in range(0, rows, step):
            kwargs: dict[str, Any] = {
                "input_ids": batch.input_ids[s : s + step],
                "attention_mask": batch.attention_mask[s : s + step],
            }
            if self._accepts_types and batch.token_type_ids is not None:
                kwargs["token_type_ids"] = batch.token_type_ids[s : s + step]
            logits = self.model(**kwargs).logits
            index = batch.mask_index[s : s + step]
            pieces.append(logits[torch.arange(logits.shape[0], device=logits.device), index])
        return torch.cat(pieces)

    def __repr__(self) -> str:
        return f"HuggingFaceFillIn({self.name!r}, batch_size={self.batch_size}, max_length={self.max_length})"


def _forward_arguments(model: Any) -> set[str]:
    import inspect

    try:
        return set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        return set()
