"""A victim around a PyTorch classifier that reads token ids.

:class:`TorchVictim` wraps a ``torch.nn.Module`` whose ``forward(ids, mask)`` returns
logits ``[B, L]``, plus a tokenizer whose ``encode(texts)`` returns an :class:`Encoded`
batch. When the module also offers ``embed(ids)`` and ``forward_embedded(embeddings,
mask)`` (every model of :mod:`textrobust.zoo` does), the victim declares gradients and
its embedding layer; when the module can return attention weights (``has_attention``),
it declares attention too.

Inference runs in eval mode under ``torch.inference_mode`` on the victim's
:class:`~textrobust.devices.Placement` (the CPU in float32 unless told otherwise): the
module is moved once when the victim is built, input tensors are created on its device,
and probabilities come back as float numpy arrays whatever the device and float type. The
number of threads is left to the user (``torch.set_num_threads``). torch is imported only
when a victim is built, never when this module is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import CapabilityError, ConfigError, VictimError
from textrobust.text import Text
from textrobust.victims.protocol import as_texts
from textrobust.victims.protocol import Capabilities

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Encoded", "Tokenizer", "TorchVictim", "WordIdTokenizer"]


@dataclass(frozen=True)
class Encoded:
    """A padded batch of token ids (numpy arrays, all of shape ``[B, T]``).

    - ``ids``: int64 token ids, padding id 0 past the end of each row;
    - ``mask``: bool, True on real tokens;
    - ``word_index``: int64, for each token the position of the word of the
      :class:`~textrobust.text.Text` it comes from, or -1 (padding, special tokens).
    """

    ids: np.ndarray
    mask: np.ndarray
    word_index: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def lengths(self) -> np.ndarray:
        """Number of real tokens in each row."""
        return self.mask.sum(axis=1)


@runtime_checkable
class Tokenizer(Protocol):
    """Turns texts into an :class:`Encoded` batch."""

    def encode(self, texts: Sequence[Text]) -> Encoded: ...


class WordIdTokenizer(Tokenizer, Protocol):
    """A tokenizer that maps each word to exactly one id (as :class:`~textrobust.zoo.vocab.WordVocab`)."""

    max_length: int

    def word_ids(self, words: Sequence[str]) -> Sequence[int]: ...


class TorchVictim:
    """A :class:`~textrobust.victims.protocol.Victim` around a token-id PyTorch model.

    ``module.forward(ids, mask)`` takes a LongTensor ``[B, T]`` and a BoolTensor
    ``[B, T]`` and returns logits ``[B, len(label_names)]``. ``tokenizer.encode(texts)``
    returns an :class:`Encoded`. ``card`` is the model card of a trained victim (see
    :mod:`textrobust.zoo.cards`), kept as ``victim.card``. ``placement`` is where the
    module runs and in what float type (``None``: the CPU in float32); the module is moved
    there once, here.

    Texts are sorted by length before batching (less padding), and the results are put
    back in the original order. Models must therefore give the same answer for a text
    whatever else is in its batch, which masking makes true for every zoo model.
    """

    def __init__(
        self,
        module: Any,
        tokenizer: Tokenizer,
        label_names: Sequence[str],
        *,
        batch_size: int = 64,
        name: str | None = None,
        card: Any = None,
        placement: Placement | None = None,
    ) -> None:
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is a core dependency
            from textrobust.errors import MissingDependencyError

            raise MissingDependencyError("torch", "TorchVictim", "pip install torch==2.13.0") from None
        if not isinstance(module, torch.nn.Module):
            raise VictimError(
                f"The 'module' parameter of TorchVictim must be a torch.nn.Module. "
                f"Got {type(module).__name__} instead."
            )
        if not callable(getattr(tokenizer, "encode", None)):
            raise VictimError(
                f"The 'tokenizer' parameter of TorchVictim must have an encode(texts) method "
                f"returning Encoded. Got {type(tokenizer).__name__} instead."
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(
                f"The 'batch_size' parameter of TorchVictim must be an int >= 1. Got {batch_size!r} instead."
            )
        labels = tuple(str(x) for x in label_names)
        if len(labels) < 2:
            raise ConfigError(
                f"The 'label_names' parameter of TorchVictim needs at least two labels. Got {labels!r}."
            )
        self.placement = placement or Placement()
        self.module: Any = self.placement.place(module).eval()
        self._device = self.placement.torch_device()
        self._submodules = tuple(module.modules())
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.name = name or type(module).__name__
        self.card = card
        self._labels = labels
        embedded = callable(getattr(module, "forward_embedded", None)) and callable(
            getattr(module, "embed", None)
        )
        self._capabilities = Capabilities(
            gradients=embedded,
            embedding_layer=embedded,
            attention=embedded and bool(getattr(module, "has_attention", False)),
        )

    # ---- the Victim protocol ---------------------------------------------------------
    @property
    def label_names(self) -> tuple[str, ...]:
        return self._labels

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    def __repr__(self) -> str:
        return (
            f"TorchVictim(name={self.name!r}, label_names={self._labels!r}, "
            f"capabilities={self._capabilities.names()}, batch_size={self.batch_size})"
        )

    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        """Softmax probabilities ``[len(texts), num_labels]`` (float64)."""
        texts = as_texts(texts)
        return self._softmax(self.logits(texts))

    def logits(self, texts: Sequence[Text]) -> np.ndarray:
        """Raw logits ``[len(texts), num_labels]`` (float32)."""
        import torch

        self._check_texts(texts)
        out = np.empty((len(texts), len(self._labels)), dtype=np.float32)
        self._eval()
        with torch.inference_mode():
            for rows, encoded in self._batches(texts):
                ids, mask = self._tensors(encoded)
                logits = self.module(ids, mask)
                self._check_logits(logits, len(rows))
                out[rows] = logits.float().cpu().numpy()
        return out

    # ---- word ids (tokenizers that map each word to one id) ----------------------------
    @property
    def accepts_word_ids(self) -> bool:
        """Whether the tokenizer maps each word to exactly one id (``tokenizer.word_ids``,
        as :class:`~textrobust.zoo.vocab.WordVocab`): then texts can be sent as id rows,
        which the prover builds for a whole layer at once."""
        return callable(getattr(self.tokenizer, "word_ids", None)) and isinstance(
            getattr(self.tokenizer, "max_length", None), int)

    @property
    def max_words(self) -> int:
        """The number of words the model reads (the tokenizer's ``max_length``)."""
        return int(self._require_word_ids().max_length)

    def word_ids(self, words: Sequence[str]) -> np.ndarray:
        """The id of each word (no truncation), as ``encode`` would give it."""
        return np.asarray(self._require_word_ids().word_ids(words), dtype=np.int64)

    def probabilities_of_ids(self, ids: np.ndarray) -> np.ndarray:
        """Softmax probabilities ``[B, num_labels]`` of rows of word ids ``[B, T]`` in which
        every id is a real token (no padding): the texts of one perturbation space all have
        the same number of words. Equal to :meth:`probabilities` on the texts whose
        :meth:`word_ids` (truncated to :attr:`max_words`) the rows are."""
        import torch

        self._require_word_ids()
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.shape[1] < 1 or not np.issubdtype(ids.dtype, np.integer):
            raise ConfigError(f"probabilities_of_ids takes a 2-D integer array [B, T >= 1]. Got {ids.shape} "
                              f"of {ids.dtype}.")
        out = np.empty((len(ids), len(self._labels)), dtype=np.float32)
        self._eval()
        with torch.inference_mode():
            for start in range(0, len(ids), self.batch_size):
                chunk = torch.as_tensor(np.ascontiguousarray(ids[start:start + self.batch_size], dtype=np.int64),
                                        device=self._device)
                mask = torch.ones(chunk.shape, dtype=torch.bool, device=self._device)
                logits = self.module(chunk, mask)
                self._check_logits(logits, len(chunk))
                out[start:start + len(chunk)] = logits.float().cpu().numpy()
        return self._softmax(out)

    def _eval(self) -> None:
        """Every layer in inference mode (dropout off) before a query; ``module.eval()``
        walks the whole tree, so it runs only when some layer is in training mode."""
        if any(m.training for m in self._submodules):
            self.module.eval()

    def _require_word_ids(self) -> WordIdTokenizer:
        if not self.accepts_word_ids:
            raise CapabilityError(f"{self!r}: its tokenizer does not map each word to one id (no word_ids).")
        return cast(WordIdTokenizer, self.tokenizer)  # accepts_word_ids checked both members

    # ---- gradients -------------------------------------------------------------------
    def word_gradients(self, texts: Sequence[Text], labels: Sequence[int]) -> list[np.ndarray]:
        """For each text, float32 ``[len(text), dim]``: the gradient of the cross-entropy
        loss for ``labels`` with respect to each word's input embedding (sub-word tokens
        summed into their word; truncated words get zeros)."""
        import torch

        self._require("gradients", "word_gradients")
        self._check_texts(texts)
        if len(labels) != len(texts):
            raise ConfigError(
                f"word_gradients needs one label per text. Got {len(labels)} labels for {len(texts)} texts."
            )
        n_labels = len(self._labels)
        bad = [y for y in labels if not 0 <= int(y) < n_labels]
        if bad:
            raise ConfigError(f"Labels must be in [0, {n_labels}). Got {bad[:5]} instead.")
        results: list[np.ndarray] = [np.empty(0)] * len(texts)
        self._eval()
        for rows, encoded in self._batches(texts):
            ids, mask = self._tensors(encoded)
            target = torch.as_tensor([int(labels[i]) for i in rows], dtype=torch.long, device=self._device)
            with torch.enable_grad():
                emb = self.module.embed(ids).detach().requires_grad_(True)
                logits = self.module.forward_embedded(emb, mask)
                loss = torch.nn.functional.cross_entropy(logits.float(), target, reduction="sum")
                (grad,) = torch.autograd.grad(loss, emb)
            grad = grad.detach().float().cpu().numpy()
            for j, i in enumerate(rows):
                results[i] = _sum_into_words(grad[j], encoded.word_index[j], len(texts[i]))
        return results

    # ---- embeddings and attention ----------------------------------------------------
    @property
    def embedding(self) -> torch.nn.Embedding:
        """The module's input embedding layer (also :meth:`embedding_layer`)."""
        return self.embedding_layer()

    def embedding_layer(self) -> torch.nn.Embedding:
        """The module's input (word) embedding layer, as ``HuggingFaceVictim`` offers it."""
        self._require("embedding_layer", "embedding_layer")
        layer = getattr(self.module, "embedding", None)
        if layer is None:
            raise CapabilityError(f"{self!r} has forward_embedded but no .embedding attribute.")
        return layer

    def encode(self, texts: Sequence[Text]) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        """Token ids, mask (tensors) and word_index (numpy) for ``texts``, in order."""
        self._check_texts(texts)
        encoded = self.tokenizer.encode(texts)
        ids, mask = self._tensors(encoded)
        return ids, mask, encoded.word_index

    def attentions(self, texts: Sequence[Text]) -> list[np.ndarray]:
        """For each text, float32 ``[layers, heads, len(text), len(text)]``: attention from
        word to word (weights of a word's tokens summed over keys and averaged over
        queries; words the model never sees get zeros)."""
        import torch

        self._require("attention", "attentions")
        self._check_texts(texts)
        results: list[np.ndarray] = [np.empty(0)] * len(texts)
        self._eval()
        with torch.inference_mode():
            for rows, encoded in self._batches(texts):
                ids, mask = self._tensors(encoded)
                _, attn = self.module.forward_embedded(self.module.embed(ids), mask, return_attention=True)
                attn = attn.float().cpu().numpy()  # [B, layers, heads, T, T]
                for j, i in enumerate(rows):
                    results[i] = _word_attention(attn[j], encoded.word_index[j], len(texts[i]))
        return results

    # ---- internals -------------------------------------------------------------------
    def _require(self, capability: str, what: str) -> None:
        if not getattr(self._capabilities, capability):
            raise CapabilityError(
                f"{what} needs the '{capability}' capability, which {self!r} does not declare "
                f"(its module {type(self.module).__name__} lacks embed/forward_embedded"
                + (" or has_attention" if capability == "attention" else "")
                + ")."
            )

    @staticmethod
    def _check_texts(texts: Sequence[Text]) -> None:
        for t in texts:
            if not isinstance(t, Text):
                raise ConfigError(
                    f"TorchVictim expects a sequence of Text. Got an item of type {type(t).__name__}; "
                    f"build texts with Text.from_string(...)."
                )

    def _batches(self, texts: Sequence[Text]) -> Any:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            yield rows, self.tokenizer.encode([texts[i] for i in rows])

    def _tensors(self, encoded: Encoded) -> tuple[torch.Tensor, torch.Tensor]:
        """Ids and mask of ``encoded``, created on the victim's device."""
        import torch

        ids = torch.as_tensor(np.ascontiguousarray(encoded.ids, dtype=np.int64), device=self._device)
        mask = torch.as_tensor(np.ascontiguousarray(encoded.mask, dtype=bool), device=self._device)
        return ids, mask

    def _check_logits(self, logits: Any, n: int) -> None:
        expected = (n, len(self._labels))
        if tuple(logits.shape) != expected:
            raise VictimError(
                f"{type(self.module).__name__}.forward returned logits of shape {tuple(logits.shape)} "
                f"for {n} texts; expected {expected} (one column per label in {self._labels!r})."
            )

    @staticmethod
    def _softmax(logits: np.ndarray) -> np.ndarray:
        z = logits.astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
        return z


def _sum_into_words(grad: np.ndarray, word_index: np.ndarray, n_words: int) -> np.ndarray:
    """Sum token rows of ``grad`` [T, D] into word rows [n_words, D]."""
    out = np.zeros((n_words, grad.shape[-1]), dtype=np.float32)
    keep = (word_index >= 0) & (word_index < n_words)
    np.add.at(out, word_index[keep], grad[keep])
    return out


def _word_attention(attn: np.ndarray, word_index: np.ndarray, n_words: int) -> np.ndarray:
    """Aggregate token attention [layers, heads, T, T] into words [layers, heads, W, W]."""
    layers, heads = attn.shape[:2]
    keep = np.flatnonzero((word_index >= 0) & (word_index < n_words))
    out = np.zeros((layers, heads, n_words, n_words), dtype=np.float32)
    if keep.size == 0:
        return out
    words = word_index[keep]
    # one-hot token->word matrix [T_keep, W]
    onehot = np.zeros((keep.size, n_words), dtype=np.float32)
    onehot[np.arange(keep.size), words] = 1.0
    counts = onehot.sum(axis=0)
    sub = attn[:, :, keep][:, :, :, keep]  # [L, H, Tk, Tk]
    summed = np.einsum("lhqk,kw->lhqw", sub, onehot)  # keys summed into words
    averaged = np.einsum("lhqw,qv->lhvw", summed, onehot) / np.maximum(counts, 1.0)[None, None, :, None]
    return averaged.astype(np.float32)
