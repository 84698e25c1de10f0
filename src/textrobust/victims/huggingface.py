"""A Hugging Face sequence classifier, loaded from a local folder, as a victim.

Only local folders are read (``local_files_only=True``): nothing is downloaded, and a hub
id such as ``bert-base-uncased`` is refused. Only safetensors weights are loaded
(``use_safetensors=True``): a folder holding only pickled ``pytorch_model.bin`` weights is
refused, because unpickling can run arbitrary code.

``torch`` and ``transformers`` are imported inside the methods that need them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.devices import Placement, steady_attention
from textrobust.errors import CapabilityError, ConfigError, MissingDependencyError, VictimError
from textrobust.text import Text
from textrobust.victims.protocol import as_texts
from textrobust.victims.function import check_label_names, softmax
from textrobust.victims.protocol import Capabilities

__all__ = ["HuggingFaceVictim", "PaddingStats", "word_token_matrix"]

_PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json", "*.pt", "*.pth", "*.ckpt")

#: With bucketing, the query layer hands a Hugging Face victim up to this many batches'
#: worth of texts per call, so that it has enough texts to sort into similar lengths.
BUCKET_WINDOW_BATCHES = 32


@dataclass(frozen=True)
class PaddingStats:
    """Tokens a victim's forward passes have processed (see
    :attr:`HuggingFaceVictim.padding_stats`): ``real`` tokens of the texts and ``padded``
    positions added to fill each batch up to its longest text."""

    texts: int
    batches: int
    real: int
    padded: int

    @property
    def share(self) -> float:
        """The share of processed positions that are padding (0 when nothing ran)."""
        total = self.real + self.padded
        return self.padded / total if total else 0.0

    def minus(self, earlier: PaddingStats) -> PaddingStats:
        """Counters accumulated since ``earlier``."""
        return PaddingStats(self.texts - earlier.texts, self.batches - earlier.batches,
                            self.real - earlier.real, self.padded - earlier.padded)


def word_token_matrix(
    text: Text, offsets: np.ndarray, sequence_ids: Sequence[int | None]
) -> np.ndarray:
    """A 0/1 matrix [len(text), n_tokens]: entry (w, t) is 1 when token ``t`` covers part
    of word ``w``.

    ``offsets`` are the fast tokenizer's (start, end) character offsets of each token in
    its own column, ``sequence_ids`` the column of each token (None for special and
    padding tokens). A token overlaps a word when both sit in the same column and their
    character ranges intersect; empty tokens and special tokens cover nothing. Words that
    no token covers (cut by truncation) get an all-zero row.
    """
    spans = np.asarray(text.word_spans(), dtype=np.int64).reshape(-1, 3)
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    columns = np.array([-1 if s is None else s for s in sequence_ids], dtype=np.int64)
    start, end = offsets[:, 0], offsets[:, 1]
    real = (columns >= 0) & (end > start)
    covers = (
        (spans[:, 0:1] == columns[None, :])
        & (start[None, :] < spans[:, 2:3])
        & (end[None, :] > spans[:, 1:2])
        & real[None, :]
    )
    return covers.astype(np.float64)


class HuggingFaceVictim:
    """A ``transformers`` sequence-classification model and its tokenizer.

    Build it with :meth:`from_folder`, or pass an already built model and tokenizer
    (e.g. one the project fine-tuned). The model is put in eval mode; probabilities are
    computed under ``torch.no_grad`` in batches of ``batch_size``, each text truncated to
    ``max_length`` tokens. Label names come from ``config.id2label`` unless given.

    Pairs are tokenized as ``tokenizer(premise, hypothesis)``. Gradients need a fast
    tokenizer (for ``offset_mapping``); with a slow one ``capabilities.gradients`` is
    False.

    ``bucket`` (default True): the texts of one call are sorted by their token count
    before they are cut into batches, so that each batch, padded to its own longest
    text, holds texts of similar length and padding does not dominate the forward
    passes; results come back in the caller's order. The attention mask keeps padding
    out of every real token's computation, so bucketing changes probabilities only at
    floating-point noise level (different matrix shapes sum in a different order): at
    most 6e-7 in float32 on MiniLM and BERT-base (benchmarks/results/devices.md); a
    bfloat16 model's coarse rounding makes any change of batching move probabilities by
    up to about 4e-3. With it, :attr:`sort_window` asks the query layer for calls of up
    to ``BUCKET_WINDOW_BATCHES * batch_size`` texts; a lockstep batch of several
    examples (:class:`~textrobust.victims.gate.BatchingGate`) arrives as one call and is
    sorted across examples. ``bucket=False`` cuts batches in the caller's order.
    :attr:`padding_stats` counts real and padded tokens.

    ``placement``: the device and float type the model is moved to once, here (``None``:
    the model stays where it is, in its own float type); each batch's token ids go to the
    model's device, and results come back as float64 numpy arrays.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        label_names: Sequence[str] | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        name: str | None = None,
        bucket: bool = True,
        placement: Placement | None = None,
    ) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(
                f"The 'batch_size' parameter of HuggingFaceVictim must be an int >= 1. "
                f"Got {batch_size!r} instead."
            )
        if not isinstance(max_length, int) or max_length < 2:
            raise ConfigError(
                f"The 'max_length' parameter of HuggingFaceVictim must be an int >= 2. "
                f"Got {max_length!r} instead."
            )
        if not isinstance(bucket, bool):
            raise ConfigError(
                f"The 'bucket' parameter of HuggingFaceVictim must be True or False. Got {bucket!r} instead."
            )
        config = getattr(model, "config", None)
        num_labels = getattr(config, "num_labels", None)
        if not isinstance(num_labels, int) or num_labels < 1:
            raise VictimError(
                f"The model passed to HuggingFaceVictim ({type(model).__name__}) has no "
                f"config.num_labels; pass a sequence-classification model."
            )
        if label_names is None:
            id2label = dict(getattr(config, "id2label", None) or {})
            names = [id2label.get(i, id2label.get(str(i), f"LABEL_{i}")) for i in range(num_labels)]
            self._label_names = check_label_names([str(n) for n in names], "HuggingFaceVictim")
        else:
            self._label_names = check_label_names(label_names, "HuggingFaceVictim")
            if len(self._label_names) != num_labels:
                raise ConfigError(
                    f"The 'label_names' parameter of HuggingFaceVictim must have one name per "
                    f"output of the model ({num_labels}). Got {self._label_names!r} instead."
                )
        self.placement = placement
        self.model = (placement.place(model) if placement is not None else model).eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self.bucket = bucket
        self._padding = PaddingStats(0, 0, 0, 0)
        self.name = name if name is not None else type(model).__name__
        self.card: Any = None  # a zoo model card, when the zoo loaded this victim

    # ---- construction -----------------------------------------------------------------
    @classmethod
    def from_folder(
        cls,
        path: str | os.PathLike[str],
        *,
        label_names: Sequence[str] | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        bucket: bool = True,
        placement: Placement | None = None,
    ) -> HuggingFaceVictim:
        """Load ``AutoModelForSequenceClassification`` and ``AutoTokenizer`` from the local
        folder ``path`` (as written by ``save_pretrained``), safetensors weights only.
        ``bucket``: batches of similar token length (see the class); ``placement``: device
        and float type (``None``: the CPU in float32)."""
        if not isinstance(path, (str, os.PathLike)):
            raise ConfigError(
                f"The 'path' parameter of HuggingFaceVictim.from_folder must be a folder path. "
                f"Got {path!r} instead."
            )
        folder = Path(path).expanduser()
        if not folder.is_dir():
            what = "is a file, not a folder" if folder.exists() else "does not exist"
            raise VictimError(
                f"HuggingFaceVictim.from_folder needs a local folder, and {str(path)!r} {what}. "
                f"Hugging Face hub ids (such as 'bert-base-uncased') are not downloaded: on a "
                f"machine that has the model, run model.save_pretrained(folder) and "
                f"tokenizer.save_pretrained(folder), then pass that folder."
            )
        if not (folder / "config.json").is_file():
            raise VictimError(
                f"The folder {str(folder)!r} has no config.json, so it is not a saved "
                f"transformers model. Save one with model.save_pretrained(folder)."
            )
        if not any(folder.glob("*.safetensors")):
            pickles = sorted({p.name for pattern in _PICKLE_WEIGHTS for p in folder.glob(pattern)})
            if pickles:
                raise VictimError(
                    f"The folder {str(folder)!r} holds only pickled weights ({', '.join(pickles)}). "
                    f"textrobust loads safetensors weights only (use_safetensors=True), because "
                    f"unpickling can run arbitrary code. Convert once where you trust the file: "
                    f"load the model and call model.save_pretrained(folder), which writes "
                    f"model.safetensors."
                )
            raise VictimError(
                f"The folder {str(folder)!r} has no model weights (*.safetensors). Save the "
                f"model with model.save_pretrained(folder)."
            )
        from textrobust.assets.offline import hf_offline

        hf_offline()
        try:
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError:
            raise MissingDependencyError(
                "transformers", "HuggingFaceVictim", "pip install 'transformers>=4.45'"
            ) from None
        empty = sorted(p.name for p in folder.glob("*.safetensors") if p.stat().st_size == 0)
        if empty:
            raise VictimError(f"The weights {empty} in {str(folder)!r} are empty (0 bytes): the model was not "
                              "saved completely; save it again with save_pretrained.")
        from textrobust.loading import loading

        try:
            with loading(f"the victim {folder.name}"):
                tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
                model, info = AutoModelForSequenceClassification.from_pretrained(
                    str(folder), local_files_only=True, use_safetensors=True, output_loading_info=True
                )
        except Exception as error:  # noqa: BLE001 - transformers and safetensors raise many kinds
            if not isinstance(error, (OSError, ValueError, KeyError, RuntimeError)) and \
                    type(error).__name__ != "SafetensorError":
                raise
            raise VictimError(
                f"Could not load a sequence classifier and tokenizer from {str(folder)!r} "
                f"({type(error).__name__}): {error}"
            ) from None
        missing = sorted(info.get("missing_keys") or ())
        if missing:
            raise VictimError(
                f"The folder {str(folder)!r} has no trained weights for {', '.join(missing[:4])}"
                f"{' ...' if len(missing) > 4 else ''}: it holds an encoder, not a fine-tuned "
                f"classifier, and loading it would audit a randomly initialised head. Fine-tune "
                f"it first (e.g. the zoo's 'minilm' architecture) and pass the saved folder."
            )
        return cls(
            model,
            tokenizer,
            label_names=label_names,
            batch_size=batch_size,
            max_length=max_length,
            name=str(folder),
            bucket=bucket,
            placement=placement or Placement(),
        )

    # ---- the victim's face ------------------------------------------------------------
    @property
    def label_names(self) -> tuple[str, ...]:
        return self._label_names

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            gradients=bool(getattr(self.tokenizer, "is_fast", False)),
            embedding_layer=True,
            attention=True,
            pairs=True,
        )

    def __repr__(self) -> str:
        return (
            f"HuggingFaceVictim(name={self.name!r}, label_names={self._label_names!r}, "
            f"batch_size={self.batch_size}, max_length={self.max_length})"
        )

    def embedding_layer(self) -> Any:
        """The model's input (word) embedding module."""
        return self.model.get_input_embeddings()

    @property
    def sort_window(self) -> int | None:
        """How many texts the query layer should hand over per call when bucketing: enough
        batches to sort into similar lengths (None without bucketing: the query layer's
        own batch size)."""
        return self.batch_size * BUCKET_WINDOW_BATCHES if self.bucket else None

    @property
    def padding_stats(self) -> PaddingStats:
        """Texts, batches, real tokens and padding positions of every forward pass so far
        (probabilities, gradients and attentions alike); take differences with
        :meth:`PaddingStats.minus`."""
        return self._padding

    # ---- queries ----------------------------------------------------------------------
    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        """Probabilities [len(texts), len(label_names)] (float64, softmax of the logits)."""
        texts = as_texts(texts)
        return softmax(self.logits(texts))

    def logits(self, texts: Sequence[Text]) -> np.ndarray:
        """The model's logits [len(texts), len(label_names)] as float64."""
        torch = _torch()
        out = np.empty((len(texts), len(self._label_names)), dtype=np.float64)
        for indices in self._chunks(texts):
            enc = self._encode([texts[i] for i in indices])
            with torch.inference_mode(), steady_attention(self.model.device):
                logits = self.model(**enc).logits
            out[indices] = logits.detach().to(torch.float64).cpu().numpy()
        return out

    def word_gradients(self, texts: Sequence[Text], labels: Sequence[int]) -> list[np.ndarray]:
        """For each text, the gradient [len(text), hidden] of its cross-entropy loss for
        its label with respect to each word's input embedding.

        The model runs on ``inputs_embeds`` taken from its input embedding layer; each
        text's loss is differentiated separately (the batch loss is a sum, so a text's
        gradient does not depend on its neighbours). Sub-word pieces are summed into the
        word they cover (see :func:`word_token_matrix`); words without tokens get zeros.
        """
        if not self.capabilities.gradients:
            raise CapabilityError(
                f"{self!r} needs a fast tokenizer (offset_mapping) for word gradients; "
                f"{type(self.tokenizer).__name__} is not one."
            )
        label_array = self._check_labels(texts, labels)
        torch = _torch()
        embeddings = self.embedding_layer()
        results: list[np.ndarray] = [np.empty(0)] * len(texts)
        for indices in self._chunks(texts):
            chunk = [texts[i] for i in indices]
            enc = self._encode(chunk, offsets=True)
            offsets = enc.pop("offset_mapping").cpu().numpy()
            input_ids = enc.pop("input_ids")
            target = torch.as_tensor(label_array[indices], device=input_ids.device)
            with torch.enable_grad(), steady_attention(input_ids.device):
                inputs_embeds = embeddings(input_ids).detach().requires_grad_(True)
                logits = self.model(inputs_embeds=inputs_embeds, **enc).logits
                loss = torch.nn.functional.cross_entropy(logits.float(), target, reduction="sum")
                (grad,) = torch.autograd.grad(loss, inputs_embeds)
            grad_np = grad.detach().to(torch.float64).cpu().numpy()
            for b, i in enumerate(indices):
                matrix = word_token_matrix(texts[i], offsets[b], enc.sequence_ids(b))
                results[i] = matrix @ grad_np[b]
        return results

    def attentions(self, texts: Sequence[Text]) -> list[np.ndarray]:
        """For each text, word-to-word attention [layers, heads, len(text), len(text)]:
        a word's tokens' weights summed over keys and averaged over queries (the same
        reading as ``TorchVictim``); words without tokens get zeros."""
        results: list[np.ndarray] = []
        for text, (weights, offsets, sequence_ids) in zip(texts, self._attention_runs(texts)):
            matrix = word_token_matrix(text, offsets, sequence_ids)  # [W, T]
            counts = matrix.sum(axis=1, keepdims=True)
            queries = np.divide(matrix, counts, out=np.zeros_like(matrix), where=counts > 0)
            results.append(queries @ weights @ matrix.T)
        return results

    def token_attentions(self, texts: Sequence[Text]) -> list[np.ndarray]:
        """For each text, token-to-token attention [layers, heads, tokens, tokens] over its
        own tokens (special tokens kept, padding removed; see :meth:`tokens`)."""
        results: list[np.ndarray] = []
        for weights, offsets, sequence_ids in self._attention_runs(texts, keep_padding=False):
            results.append(weights)
        return results

    def _attention_runs(
        self, texts: Sequence[Text], *, keep_padding: bool = True
    ) -> list[tuple[np.ndarray, np.ndarray, list[int | None]]]:
        """Per text: attention [layers, heads, T, T], token offsets, sequence ids."""
        torch = _torch()
        previous = getattr(self.model.config, "_attn_implementation", None)
        switch = previous not in (None, "eager")
        if switch:
            if not hasattr(self.model, "set_attn_implementation"):
                raise CapabilityError(
                    f"{self!r} uses {previous!r} attention, which returns no weights, and this "
                    f"transformers version cannot switch it to 'eager'."
                )
            self.model.set_attn_implementation("eager")
        runs: list[Any] = [None] * len(texts)
        try:
            for indices in self._chunks(texts):
                enc = self._encode([texts[i] for i in indices], offsets=True)
                offsets = enc.pop("offset_mapping").cpu().numpy()
                with torch.no_grad():
                    out = self.model(**enc, output_attentions=True)
                if not out.attentions:
                    raise CapabilityError(f"{self!r}: the model returned no attention weights.")
                stacked = torch.stack(out.attentions, dim=1).to(torch.float64).cpu().numpy()
                mask = enc["attention_mask"].cpu().numpy().astype(bool)
                for b, i in enumerate(indices):
                    keep = np.ones_like(mask[b]) if keep_padding else mask[b]
                    sequence_ids = [s for s, k in zip(enc.sequence_ids(b), keep) if k]
                    runs[i] = (stacked[b][:, :, keep][:, :, :, keep], offsets[b][keep], sequence_ids)
        finally:
            if switch:
                self.model.set_attn_implementation(previous)
        return runs

    def tokens(self, texts: Sequence[Text]) -> list[list[str]]:
        """The tokens the model sees for each text (special tokens included, no padding)."""
        out: list[list[str]] = []
        for text in texts:
            ids = self.tokenizer(*self._columns([text]), truncation=True, max_length=self.max_length)[
                "input_ids"
            ][0]
            out.append(list(self.tokenizer.convert_ids_to_tokens(ids)))
        return out

    # ---- internals --------------------------------------------------------------------
    def _chunks(self, texts: Sequence[Text]) -> Iterator[list[int]]:
        """Index lists of at most batch_size texts, single texts and pairs kept apart;
        with ``bucket``, sorted by token count first (a stable sort: ties keep the
        caller's order)."""
        groups: dict[int, list[int]] = {}
        for i, text in enumerate(texts):
            n = len(text.columns)
            if n > 2:
                raise VictimError(
                    f"{self!r} classifies single texts and (premise, hypothesis) pairs; the "
                    f"text at position {i} has {n} columns."
                )
            groups.setdefault(n, []).append(i)
        for indices in groups.values():
            if self.bucket and len(indices) > self.batch_size:  # one batch pads to its longest anyway
                # results go back to their own rows, so the caller's order is kept
                lengths = self._token_counts([texts[i] for i in indices])
                indices = [indices[k] for k in sorted(range(len(indices)), key=lengths.__getitem__)]
            for start in range(0, len(indices), self.batch_size):
                yield indices[start : start + self.batch_size]

    def _token_counts(self, texts: Sequence[Text]) -> list[int]:
        """Each text's token count as the model will see it (special tokens included,
        truncated to ``max_length``): a second tokenization, cheap next to a transformer's
        forward pass (benchmarks/results/devices.md)."""
        ids = self.tokenizer(*self._columns(texts), truncation=True, max_length=self.max_length)["input_ids"]
        return [len(row) for row in ids]

    def _columns(self, texts: Sequence[Text]) -> tuple[list[str], ...]:
        if texts[0].is_pair:
            return [t.columns[0] for t in texts], [t.columns[1] for t in texts]
        return ([t.columns[0] for t in texts],)

    def _encode(self, texts: Sequence[Text], *, offsets: bool = False) -> Any:
        enc = self.tokenizer(
            *self._columns(texts),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
            return_offsets_mapping=offsets,
        )
        ids, mask = enc["input_ids"], enc.get("attention_mask")
        real = int(mask.sum()) if mask is not None else int(ids.numel())
        p = self._padding
        self._padding = PaddingStats(p.texts + len(texts), p.batches + 1, p.real + real,
                                     p.padded + int(ids.numel()) - real)
        device = getattr(self.model, "device", None)
        return enc.to(device) if device is not None else enc

    def _check_labels(self, texts: Sequence[Text], labels: Sequence[int]) -> np.ndarray:
        array = np.asarray(labels)
        n = len(self._label_names)
        if array.shape != (len(texts),) or not np.issubdtype(array.dtype, np.integer):
            raise ConfigError(
                f"The 'labels' parameter of word_gradients must hold one int label per text "
                f"({len(texts)}). Got {labels!r} instead."
            )
        if len(array) and (array.min() < 0 or array.max() >= n):
            raise ConfigError(
                f"The 'labels' parameter of word_gradients must hold label indices in "
                f"[0, {n}). Got {array.tolist()} instead."
            )
        return array.astype(np.int64)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingDependencyError("torch", "HuggingFaceVictim", "pip install torch==2.13.0") from None
    return torch
