"""Batched, cached scoring of texts under a causal language model.

:class:`CausalLM` wraps any Hugging Face causal LM and its tokenizer (by default Gemma 3
270M from :func:`textrobust.assets.causal_lm`). Every text is scored once: its tokens, their
character offsets and the log-probability of each token given the tokens before it are
cached by string, and every other quantity (sentence log-probability, perplexity, the
log-probability of one word) is read from that record.

Gemma's vocabulary has 262,144 entries, so logits for a padded batch ``[B, T, V]`` would
take gigabytes. The model is run without its output head; the head is then applied only
to the real (non-padding) positions, a chunk of positions at a time, and only the
log-softmax at each next token is kept (see ``max_logits_bytes``).

Conventions:

- the tokenizer's special tokens are added (Gemma: ``<bos>``); when the tokenizer adds no
  beginning-of-sequence token but has one, it is prepended, so the first real token is
  scored too. Without any such token the first token cannot be scored;
- a text with no scored token has log-probability 0 and perplexity 1;
- texts longer than ``max_length`` tokens are truncated (their tail is not scored).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["CausalLM", "TokenScores"]


@dataclass(frozen=True, slots=True)
class TokenScores:
    """One scored text: token ids, their character spans, and per-token log-probabilities.

    ``log_probs[i]`` is ``log P(token i | tokens < i)`` (natural log); it is NaN for the
    first token, which has no context (the ``<bos>`` token when the tokenizer adds one).
    ``offsets`` is ``[n, 2]`` character spans in the text, ``(0, 0)`` for special tokens,
    or None when the tokenizer cannot give offsets (a slow tokenizer).
    """

    ids: np.ndarray
    offsets: np.ndarray | None
    log_probs: np.ndarray

    @property
    def scored(self) -> np.ndarray:
        """The log-probabilities of the scored tokens (all but the first)."""
        return self.log_probs[1:]

    @property
    def total(self) -> float:
        return float(self.scored.sum()) if len(self.scored) else 0.0


class CausalLM:
    """Log-probabilities and perplexities from a causal LM, batched and cached by string.

    ``model`` is a Hugging Face ``*ForCausalLM`` module (put in eval mode here), ``tokenizer``
    its tokenizer (a fast one for :meth:`word_log_prob`). ``batch_size`` texts go through
    the model at once, sorted by length to limit padding; ``max_logits_bytes`` bounds the
    memory of one chunk of output logits.

    >>> lm = CausalLM.default()                          # doctest: +SKIP
    >>> lm.perplexity(["The cat sat on the mat."])       # doctest: +SKIP
    array([...])
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        batch_size: int = 32,
        max_length: int = 512,
        max_logits_bytes: int = 128 * 2**20,
        cache_size: int | None = 100_000,
    ) -> None:
        for name, value, low in (("batch_size", batch_size, 1), ("max_length", max_length, 2)):
            if not isinstance(value, int) or value < low:
                raise ConfigError(f"The '{name}' parameter of CausalLM must be an int >= {low}. Got {value!r} instead.")
        if max_logits_bytes < 1:
            raise ConfigError(
                f"The 'max_logits_bytes' parameter of CausalLM must be >= 1. Got {max_logits_bytes} instead."
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.max_length = max_length
        self.max_logits_bytes = max_logits_bytes
        self._cache: LRUCache[str, TokenScores] = LRUCache(cache_size)
        self.texts_scored = 0  # texts sent through the model
        self.forward_seconds = 0.0
        self._bos = getattr(tokenizer, "bos_token_id", None)
        pad = getattr(tokenizer, "pad_token_id", None)
        self._pad = int(pad) if pad is not None else 0
        self._fast = bool(getattr(tokenizer, "is_fast", False))

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def default(cls, path: str | Path | None = None, *, placement: Placement | None = None,
                **settings: Any) -> CausalLM:
        """The project's causal LM (Gemma 3 270M), from the asset cache or ``path``, on
        ``placement`` (the run's ``--device`` and ``--dtype``; ``None``: the CPU in float32)."""
        from textrobust.assets import causal_lm

        model, tokenizer = causal_lm(path, placement)
        return cls(model, tokenizer, **settings)

    @property
    def device(self) -> Any:
        """The ``torch.device`` the model's weights are on: token ids are created there."""
        return next(self.model.parameters()).device

    @property
    def vocab_size(self) -> int:
        head = self.model.get_output_embeddings()
        return int(head.weight.shape[0]) if head is not None else int(self.model.config.vocab_size)

    def __repr__(self) -> str:
        kind = type(self.model).__name__
        path = getattr(self.model.config, "name_or_path", "") or ""
        model = f"{kind}({Path(str(path)).name!r})" if path else kind
        return f"CausalLM(model={model}, vocab={self.vocab_size}, batch_size={self.batch_size}, max_length={self.max_length})"

    # ---- public scores -----------------------------------------------------------------------
    def score(self, texts: Sequence[str]) -> list[TokenScores]:
        """The :class:`TokenScores` of each text (one model pass per distinct uncached text)."""
        texts = _as_strings(texts)
        todo = self._cache.missing(texts)
        if todo:
            self._run(todo)
        out: list[TokenScores] = []
        for text in texts:
            record = self._cache.get(text)
            if record is None:  # evicted by a tiny cache while running this very batch
                self._run([text])
                record = self._cache.get(text)
            out.append(cast(TokenScores, record))  # just put, and a cache keeps >= 1 entry
        return out

    def log_probs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, ``log P(token | earlier tokens)`` of each scored token (nats)."""
        return [r.scored.copy() for r in self.score(texts)]

    def sentence_log_prob(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, the summed log-probability of its scored tokens (nats), float64."""
        return np.array([r.total for r in self.score(texts)], dtype=np.float64)

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, ``exp(-mean token log-probability)``; 1.0 for a text with no scored token."""
        out = []
        for record in self.score(texts):
            n = len(record.scored)
            out.append(math.exp(-record.total / n) if n else 1.0)
        return np.array(out, dtype=np.float64)

    def word_log_prob(self, texts: Sequence[Text | str], positions: Sequence[int]) -> np.ndarray:
        """Per text, ``log P(word at position | everything before it)``.

        A word is the sum over every token overlapping its characters, so a word split into
        several tokens is scored whole. Strings are split into words like
        :meth:`Text.from_string`; positions count words across the whole text. NaN when the
        word lies beyond ``max_length`` tokens.
        """
        if len(texts) != len(positions):
            raise ConfigError(
                f"word_log_prob needs one position per text. Got {len(texts)} texts and {len(positions)} positions."
            )
        if not self._fast:
            raise ConfigError(
                "CausalLM.word_log_prob needs character offsets, which only a fast tokenizer gives "
                f"(got {type(self.tokenizer).__name__}). Load the tokenizer with use_fast=True."
            )
        objs = [t if isinstance(t, Text) else Text.from_string(t) for t in texts]
        strings = [str(t) for t in objs]
        records = self.score(strings)
        out = np.empty(len(objs), dtype=np.float64)
        for i, (text, position, record) in enumerate(zip(objs, positions, records)):
            start, end = _char_span(text, int(position))
            offsets = cast(np.ndarray, record.offsets)  # a fast tokenizer (checked above) gives them
            hit = (offsets[:, 0] < end) & (offsets[:, 1] > start)
            hit[:1] = False  # the first token is never scored
            if not hit.any() or np.isnan(record.log_probs[hit]).any():
                out[i] = np.nan
            else:
                out[i] = float(record.log_probs[hit].sum())
        return out

    def stats(self) -> dict[str, float]:
        """Texts run through the model, time spent there, cache hits and size."""
        return {
            "texts_scored": float(self.texts_scored),
            "forward_seconds": self.forward_seconds,
            "cache_hits": float(self._cache.hits),
            "cache_size": float(len(self._cache)),
        }

    def clear_cache(self) -> None:
        self._cache.clear()

    # ---- the model pass ------------------------------------------------------------------------
    def _encode(self, texts: list[str]) -> list[tuple[list[int], list[tuple[int, int]] | None]]:
        kwargs: dict[str, Any] = {"add_special_tokens": True, "truncation": True, "max_length": self.max_length}
        if self._fast:
            kwargs["return_offsets_mapping"] = True
        enc = self.tokenizer(texts, **kwargs)
        out = []
        for i in range(len(texts)):
            ids = list(enc["input_ids"][i])
            offsets = [tuple(o) for o in enc["offset_mapping"][i]] if self._fast else None
            if self._bos is not None and (not ids or ids[0] != self._bos):
                ids = [int(self._bos)] + ids[: self.max_length - 1]
                if offsets is not None:
                    offsets = [(0, 0)] + offsets[: self.max_length - 1]
            out.append((ids, offsets))
        return out

    def _run(self, texts: list[str]) -> None:
        import torch

        encoded = self._encode(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i][0]))
        start = time.perf_counter()
        for b in range(0, len(order), self.batch_size):
            chunk = order[b : b + self.batch_size]
            rows = [encoded[i][0] for i in chunk]
            scores = self._score_batch(rows, torch)
            for i, lp in zip(chunk, scores):
                ids, offsets = encoded[i]
                self._cache.put(
                    texts[i],
                    TokenScores(
                        np.asarray(ids, dtype=np.int64),
                        np.asarray(offsets, dtype=np.int64).reshape(-1, 2) if offsets is not None else None,
                        lp,
                    ),
                )
        self.forward_seconds += time.perf_counter() - start
        self.texts_scored += len(texts)

    def _score_batch(self, rows: list[list[int]], torch: Any) -> list[np.ndarray]:
        """Per-token log-probs for right-padded rows, computing logits only where needed."""
        lengths = [len(r) for r in rows]
        ids, mask = self.pad_rows(rows)
        width = ids.shape[1]
        out = [np.full(n, np.nan, dtype=np.float64) for n in lengths]
        if width < 2:
            return out
        with torch.inference_mode():
            hidden = self._hidden(ids, mask)  # [B, T, H]
            keep = mask[:, 1:].bool()  # positions t-1 that predict a real token t
            states = hidden[:, :-1][keep]  # [N, H]
            targets = ids[:, 1:][keep]  # [N]
            token_lp = self._gather_log_probs(states, targets, torch)
        values = token_lp.double().cpu().numpy()
        cursor = 0
        for i, n in enumerate(lengths):
            if n > 1:
                out[i][1:] = values[cursor : cursor + n - 1]
                cursor += n - 1
        return out

    def pad_rows(self, rows: Sequence[Sequence[int]]) -> tuple[Any, Any]:
        """Rows of token ids as a right-padded id tensor ``[B, T]`` (the tokenizer's pad id,
        else 0) and its attention mask (1 on real tokens); ``T`` is at least 1."""
        import torch

        width = max([len(r) for r in rows] + [1])
        ids = np.full((len(rows), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            if len(row):
                ids[i, : len(row)] = np.asarray(list(row), dtype=np.int64)
                mask[i, : len(row)] = 1
        device = self.device
        return torch.as_tensor(ids, device=device), torch.as_tensor(mask, device=device)

    def _hidden(self, ids: Any, mask: Any) -> Any:
        base = self.model.base_model
        if base is self.model:  # no separate body and head: nothing to apply the head to in chunks
            raise ConfigError(
                f"CausalLM needs a model with a separate output head (a *ForCausalLM). Got {type(self.model).__name__}."
            )
        output = base(input_ids=ids, attention_mask=mask, use_cache=False)
        return output[0]

    def _gather_log_probs(self, states: Any, targets: Any, torch: Any) -> Any:
        head = self.model.get_output_embeddings()
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        rows_per_chunk = max(1, self.max_logits_bytes // (4 * self.vocab_size))
        pieces = []
        for s in range(0, states.shape[0], rows_per_chunk):
            logits = head(states[s : s + rows_per_chunk]).float()
            if cap is not None:
                logits = torch.tanh(logits / cap) * cap
            picked = logits.gather(1, targets[s : s + rows_per_chunk, None])[:, 0]
            pieces.append(picked - torch.logsumexp(logits, dim=1))
        return torch.cat(pieces) if pieces else states.new_zeros(0)


def _as_strings(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ConfigError("CausalLM methods take a sequence of strings, not one string: wrap it in a list.")
    out = []
    for t in texts:
        if isinstance(t, Text):
            out.append(str(t))
        elif isinstance(t, str):
            out.append(t)
        else:
            raise ConfigError(f"CausalLM methods take strings or Text objects. Got {type(t).__name__}.")
    return out


def _char_span(text: Text, position: int) -> tuple[int, int]:
    """Character span of word ``position`` in ``str(text)`` (pairs are joined by one space)."""
    if not 0 <= position < len(text):
        raise ConfigError(f"Word positions must be in [0, {len(text)}). Got {position} instead.")
    column, start, end = text.word_spans()[position]
    base = sum(len(c) + 1 for c in text.columns[:column])
    return base + start, base + end
