"""The shared machinery of masked-LM fill-ins: mask a word, score the mask, keep whole words.

This is the ``LM.fillmask(x, i)`` step of Algorithm 1 of the double-perturbation paper
(Zhang et al. 2021, ``double-perturbation-second-order-robustness-and-bias.txt``): mask
the i-th word and return candidate tokens with their logits. Departures, each deliberate:

- the paper masks one *token*; textrobust works on words, so the whole word (however many
  sub-word tokens it spans) becomes a single mask token;
- only vocabulary entries that are whole words are returned (see
  :mod:`textrobust.fill_in.whole_words`); the paper's DistilBERT vocabulary is the same
  WordPiece vocabulary, whose ``##`` pieces the paper cannot use as replacements either.

**Score contract.** The score of each ``(word, score)`` pair is the model's *raw logit*
for that vocabulary entry at the mask (before softmax), so Algorithm 1's thresholds apply
directly: ``l_min = max(L[kappa], L[0] - delta)`` over the returned list, sorted by
decreasing logit. The original word is *not* removed (it may be ``L[0]``, as in the
paper); :class:`~textrobust.attack.candidates.fill_in.FillInSource` drops it. Ask for
``k = kappa + 1`` to read ``L[kappa]`` (0-based). Any ``k`` up to the number of
whole-word entries is served.

Subclasses fill one hook, :meth:`MaskedFillIn._mask_logits`. Requests are deduplicated,
sorted by length and batched; answers are cached (bounded LRU) by the masked input, so
asking again, or for a smaller ``k``, costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from textrobust.errors import ConfigError
from textrobust.fill_in.requests import Gap, check_fill_args, masked_columns
from textrobust.fill_in.whole_words import WholeWordVocab, whole_word_vocab
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["MaskedBatch", "MaskedFillIn"]


class MaskedBatch:
    """One padded batch handed to :meth:`MaskedFillIn._mask_logits` (torch tensors).

    ``input_ids``/``attention_mask``/``token_type_ids`` are ``[B, T]`` (``token_type_ids``
    is None when the tokenizer does not make them); ``mask_index`` is ``[B]``, the
    position of the mask token in each row.
    """

    __slots__ = ("attention_mask", "input_ids", "mask_index", "token_type_ids")

    def __init__(self, input_ids: Any, attention_mask: Any, token_type_ids: Any, mask_index: Any) -> None:
        self.input_ids = input_ids
        self.attention_mask = attention_mask
        self.token_type_ids = token_type_ids
        self.mask_index = mask_index


class MaskedFillIn:
    """Base class: whole-word candidates for masked words from a masked LM.

    ``tokenizer`` is a Hugging Face tokenizer with a mask token. ``batch_size`` masked
    inputs go through the model at once; inputs longer than ``max_length`` tokens are cut
    to a window around the mask (the special tokens at both ends are kept).
    ``cache_size`` bounds the answer cache (None: unbounded).
    """

    #: keep at least this many candidates per cached answer (later calls with a larger k
    #: than cached run the model again)
    cache_k = 64

    def __init__(
        self,
        tokenizer: Any,
        *,
        batch_size: int = 32,
        max_length: int = 128,
        cache_size: int | None = 20_000,
    ) -> None:
        owner = type(self).__name__
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"The 'batch_size' parameter of {owner} must be an int >= 1. Got {batch_size!r} instead.")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 3:
            raise ConfigError(f"The 'max_length' parameter of {owner} must be an int >= 3. Got {max_length!r} instead.")
        mask_token = getattr(tokenizer, "mask_token", None)
        mask_id = getattr(tokenizer, "mask_token_id", None)
        if not mask_token or mask_id is None:
            raise ConfigError(
                f"{owner} needs a tokenizer with a mask token (a masked LM's tokenizer). "
                f"{type(tokenizer).__name__} has none."
            )
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self._mask_token = str(mask_token)
        self._mask_id = int(mask_id)
        pad = getattr(tokenizer, "pad_token_id", None)
        self._pad_id = int(pad) if pad is not None else 0
        self._type_ids = "token_type_ids" in (getattr(tokenizer, "model_input_names", None) or ())
        self._vocab: WholeWordVocab | None = None
        self._cache: LRUCache[tuple[tuple[str, ...], bool], tuple[tuple[str, ...], np.ndarray]] = LRUCache(cache_size)
        self.masks_scored = 0  # masked inputs run through the model

    @property
    def vocab(self) -> WholeWordVocab:
        """The whole-word entries of the tokenizer's vocabulary (computed on first use)."""
        if self._vocab is None:
            self._vocab = whole_word_vocab(self.tokenizer)
            if len(self._vocab) == 0:
                raise ConfigError(
                    f"The tokenizer of {type(self).__name__} has no whole-word vocabulary entries, "
                    "so no candidate can be proposed."
                )
        return self._vocab

    # ---- the protocol ----------------------------------------------------------------------
    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        """Per request, the top ``k`` whole words for the masked word with their raw logits,
        best first (the original word included when it ranks)."""
        items = check_fill_args(requests, k, type(self).__name__)
        gaps = [masked_columns(text, position, self._mask_token) for text, position in items]
        keys = [(g.columns, g.spaced) for g in gaps]
        found: dict[tuple[tuple[str, ...], bool], tuple[tuple[str, ...], np.ndarray]] = {}
        todo: dict[tuple[tuple[str, ...], bool], Gap] = {}
        for key, gap in zip(keys, gaps):
            if key in found or key in todo:
                continue
            cached = self._cache.get(key)
            if cached is None or len(cached[0]) < min(k, len(self.vocab.ids(gap.spaced))):
                todo[key] = gap
            else:
                found[key] = cached
        if todo:
            found.update(self._score(list(todo.items()), max(k, self.cache_k)))
        return [[(w, float(s)) for w, s in zip(found[key][0][:k], found[key][1][:k])] for key in keys]

    def whole_word_logits(self, requests: Sequence[tuple[Text, int]]) -> list[tuple[bool, Any]]:
        """Per request, ``(spaced, logits)``: the raw logits (a float32 torch tensor) at the
        mask over every whole word of :attr:`vocab` that may fill it (``vocab.words(spaced)``,
        in that order). Not cached; for combining this model with another one
        (:mod:`textrobust.fill_in.product`)."""
        import torch

        items = check_fill_args(requests, 1, type(self).__name__)
        gaps = [masked_columns(text, position, self._mask_token) for text, position in items]
        ids_of = {flag: torch.as_tensor(self.vocab.ids(flag)) for flag in (True, False)}
        out: list[tuple[bool, Any] | None] = [None] * len(items)
        for chunk, logits in self._logit_batches(gaps):
            for r, i in enumerate(chunk):
                flag = gaps[i].spaced
                out[i] = (flag, logits[r, ids_of[flag]])
        return cast("list[tuple[bool, Any]]", out)  # every request is in one chunk: no None left

    def _logit_batches(self, gaps: Sequence[Gap]) -> Any:
        """Yields ``(indices into gaps, logits [B, V] at their masks)``, batches of similar
        length (sorted to limit padding)."""
        import torch

        encoded = self._encode(gaps)
        order = sorted(range(len(gaps)), key=lambda i: len(encoded[i][0]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            batch = self._pad([encoded[i] for i in chunk], torch)
            with torch.inference_mode():  # the model runs on its device; the answers come back to the CPU
                logits = self._mask_logits(batch).float().cpu()  # [B, V]
            self.masks_scored += len(chunk)
            yield chunk, logits

    # ---- the work -----------------------------------------------------------------------
    def _score(
        self, items: list[tuple[tuple[tuple[str, ...], bool], Gap]], k: int
    ) -> dict[tuple[tuple[str, ...], bool], tuple[tuple[str, ...], np.ndarray]]:
        """The top ``k`` (words, logits) of each masked input, also put in the cache."""
        import torch

        results: dict[tuple[tuple[str, ...], bool], tuple[tuple[str, ...], np.ndarray]] = {}
        vocab = self.vocab
        ids_of = {flag: torch.as_tensor(vocab.ids(flag)) for flag in (True, False)}
        for chunk, logits in self._logit_batches([gap for _, gap in items]):
            for flag in (True, False):
                rows = [r for r, i in enumerate(chunk) if items[i][1].spaced == flag]
                if not rows:
                    continue
                sub = logits[rows][:, ids_of[flag]]
                top = torch.topk(sub, min(k, sub.shape[1]), dim=1)
                values = top.values.double().numpy()
                indices = top.indices.numpy()
                words = vocab.words(flag)
                for r, row_values, row_indices in zip(rows, values, indices):
                    key = items[chunk[r]][0]
                    results[key] = (tuple(words[j] for j in row_indices), row_values)
                    self._cache.put(key, results[key])
        return results

    def _encode(self, gaps: Sequence[Gap]) -> list[tuple[list[int], list[int] | None, int]]:
        """Token ids, token type ids and the mask's index of each masked input."""
        out: list[tuple[list[int], list[int] | None, int] | None] = [None] * len(gaps)
        for n_columns in sorted({len(g.columns) for g in gaps}):
            picked = [i for i, g in enumerate(gaps) if len(g.columns) == n_columns]
            args = [[gaps[i].columns[c] for i in picked] for c in range(n_columns)]
            enc = self.tokenizer(*args[:2], add_special_tokens=True, truncation=False, padding=False)
            types = enc.get("token_type_ids") if self._type_ids else None
            for row, i in enumerate(picked):
                ids = [int(t) for t in enc["input_ids"][row]]
                type_ids = [int(t) for t in types[row]] if types is not None else None
                at = self._mask_position(ids, gaps[i])
                out[i] = self._crop(ids, type_ids, at)
        return cast("list[tuple[list[int], list[int] | None, int]]", out)  # every gap has a size: no None left

    def _mask_position(self, ids: list[int], gap: Gap) -> int:
        # The text itself may contain the mask string; ours is the n-th mask token, n being
        # the number of mask strings before it.
        earlier = sum(c.count(self._mask_token) for c in gap.columns[: gap.column]) + gap.before.count(self._mask_token)
        found = [j for j, t in enumerate(ids) if t == self._mask_id]
        if len(found) <= earlier:
            raise ConfigError(
                f"The tokenizer of {type(self).__name__} did not keep the mask token "
                f"{self._mask_token!r} in {gap.columns!r}; it cannot be used for fill-in."
            )
        return found[earlier]

    def _crop(self, ids: list[int], type_ids: list[int] | None, at: int) -> tuple[list[int], list[int] | None, int]:
        if len(ids) <= self.max_length:
            return ids, type_ids, at
        body = self.max_length - 2  # keep the first and the last (special) tokens
        start = min(max(1, at - body // 2), len(ids) - 1 - body)
        keep = [0, *range(start, start + body), len(ids) - 1]
        return [ids[j] for j in keep], [type_ids[j] for j in keep] if type_ids is not None else None, at - start + 1

    def _pad(self, rows: list[tuple[list[int], list[int] | None, int]], torch: Any) -> MaskedBatch:
        """The padded batch, its tensors created on the model's :attr:`device`."""
        width = max(len(r[0]) for r in rows)
        ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
        attention = np.zeros((len(rows), width), dtype=np.int64)
        types = np.zeros((len(rows), width), dtype=np.int64) if self._type_ids else None
        for i, (row, type_row, _) in enumerate(rows):
            ids[i, : len(row)] = row
            attention[i, : len(row)] = 1
            if types is not None and type_row is not None:
                types[i, : len(type_row)] = type_row
        device = self.device

        def tensor(array: np.ndarray) -> Any:
            return torch.as_tensor(array, device=device)

        return MaskedBatch(tensor(ids), tensor(attention), None if types is None else tensor(types),
                           tensor(np.asarray([r[2] for r in rows], dtype=np.int64)))

    @property
    def device(self) -> Any:
        """The ``torch.device`` of the model's weights (the CPU unless a subclass says
        otherwise): each batch's token ids are created there."""
        import torch

        return torch.device("cpu")

    def _mask_logits(self, batch: MaskedBatch) -> Any:
        """Logits over the whole vocabulary at each row's mask: a tensor ``[B, V]``."""
        raise NotImplementedError

    def stats(self) -> dict[str, float]:
        """Masked inputs run through the model, and answer cache hits and size."""
        return {
            "masks_scored": float(self.masks_scored),
            "cache_hits": float(self._cache.hits),
            "cache_size": float(len(self._cache)),
        }

    def clear_cache(self) -> None:
        self._cache.clear()
