"""Fill-in as a product of experts: a masked LM's word scores times a causal LM's next-word
scores from the left context (the ``minilm_gemma`` route, issue 13).

The masked LM (:class:`~textrobust.fill_in.masked.MaskedFillIn`, by default the project's
fine-tuned MiniLM) sees both sides of the gap but knows little English; the causal LM
(:class:`~textrobust.lm.CausalLM`, Gemma 3 270M) knows much more but sees only the words
before the gap. Rescoring whole sentences with the causal LM adds the right context
(:mod:`textrobust.fill_in.causal_rescore`) but costs one pass per candidate, ~2
candidates/s here. This route takes one pass per *left context* instead and multiplies
the two distributions::

    score(w) = logit_mlm(w) + weight * logit_lm(w | words before the gap)

over the masked LM's whole-word vocabulary. ``weight`` (default :data:`DEFAULT_WEIGHT`)
was chosen on Rotten Tomatoes *dev* probes (``benchmarks/results/fill_in.md``); the test
probes never chose anything.

**Score contract.** Scores are unnormalised log-probabilities of the product
distribution ``p_mlm(w) * p_lm(w | left)^weight`` (natural log): differences between two
candidates of one gap are log-ratios, as for masked-LM logits, so Algorithm 1's
``L[0] - delta`` threshold (Zhang et al. 2021) keeps its meaning. Both softmax
normalisers are per-gap constants and are left out, which is why the causal LM's output
head is applied only to the rows of the words the masked LM can return (34,148 of
Gemma's 262k entries, the case variants of 90% of MiniLM's 23,502 whole words: 7.7x less
head work).

**Words and case.** The causal LM is cased and the masked LM (WordPiece, uncased) is not:
a word's LM score is the log of the summed probabilities of its case variants that are
single whole-word tokens (``▁film``, ``▁Film``, ...) with the gap's spacing. A word the
causal LM would spell with several tokens gets the gap's lowest LM score (it is ranked by
the masked LM among such words only).

**Shared prefixes.** A causal LM's state after token t depends only on tokens <= t, so
the positions of one text share one pass: each left context is tokenised, and when its
ids are a prefix of a longer context already run, the state is read from that row
(exact; counted in :meth:`stats`). A neighbourhood asking for 20 positions of one
sentence costs one causal pass, not 20.

Departures from the double-perturbation paper, which fills masks with DistilBERT: this
is a different model (a product of two offline models, since no BERT-class masked LM
can be installed here), and its candidates are limited to the masked LM's whole-word
vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from textrobust.errors import ConfigError
from textrobust.fill_in.causal_rescore import _left_context
from textrobust.fill_in.lazy_lm import LazyCausalLM
from textrobust.fill_in.masked import MaskedFillIn
from textrobust.fill_in.requests import check_fill_args
from textrobust.fill_in.whole_words import whole_word_vocab
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["DEFAULT_WEIGHT", "ProductFillIn"]

#: The causal LM's exponent, chosen on Rotten Tomatoes dev probes (3 x 300, seeds 0-2)
#: among 1, 1.5, 2: mean recall@20 35.6 / 34.2 / 33.3%, recall@1 9.9 / 10.0 / 10.1%
#: (``benchmarks/results/fill_in.md``, issue 13).
DEFAULT_WEIGHT = 1.0


class ProductFillIn(LazyCausalLM):
    """Masked-LM logits plus ``weight`` times a causal LM's next-word logits.

    ``masked`` is a :class:`MaskedFillIn`; ``lm`` a :class:`~textrobust.lm.CausalLM`
    (None: Gemma 3 270M, loaded on first use). ``batch_size`` causal rows go through the
    model at once; answers are cached (bounded LRU) by text and position.

    >>> from textrobust.fill_in import load_fill_in
    >>> fill_in = load_fill_in("minilm_gemma")                                   # doctest: +SKIP
    >>> fill_in.fill([(Text.from_string("a deep and meaningful film ."), 4)], 5)  # doctest: +SKIP
    """

    #: keep at least this many candidates per cached answer
    cache_k = 64

    def __init__(
        self,
        masked: MaskedFillIn,
        lm: Any | None = None,
        *,
        weight: float = DEFAULT_WEIGHT,
        batch_size: int = 16,
        cache_size: int | None = 20_000,
    ) -> None:
        if not callable(getattr(masked, "whole_word_logits", None)):
            raise ConfigError(
                f"The 'masked' part of ProductFillIn must be a masked-LM fill-in (MaskedFillIn). "
                f"Got {type(masked).__name__}."
            )
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not np.isfinite(weight) or weight < 0:
            raise ConfigError(f"The 'weight' parameter of ProductFillIn must be a finite number >= 0. Got {weight!r} instead.")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"The 'batch_size' parameter of ProductFillIn must be an int >= 1. Got {batch_size!r} instead.")
        self.masked = masked
        self._lm = lm
        self.weight = float(weight)
        self.batch_size = batch_size
        self._maps: dict[bool, tuple[Any, Any, Any]] = {}
        self._cache: LRUCache[tuple[tuple[str, ...], int], tuple[tuple[str, ...], np.ndarray]] = LRUCache(cache_size)
        self.contexts = 0  # distinct left contexts asked of the causal LM
        self.rows_run = 0  # causal rows run (a context that is a prefix of another is read from it)

    @property
    def vocab(self) -> Any:
        """The candidate words: the masked LM's whole-word vocabulary."""
        return self.masked.vocab

    # ---- the protocol ----------------------------------------------------------------------
    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        """Per request, the top ``k`` whole words by the product score, best first (the
        original word included when it ranks)."""
        items = check_fill_args(requests, k, type(self).__name__)
        keys = [(text.columns, position) for text, position in items]
        found: dict[tuple[tuple[str, ...], int], tuple[tuple[str, ...], np.ndarray]] = {}
        todo: dict[tuple[tuple[str, ...], int], tuple[Text, int]] = {}
        for key, item in zip(keys, items):
            if key in found or key in todo:
                continue
            cached = self._cache.get(key)
            if cached is None or len(cached[0]) < min(k, len(self.vocab)):
                todo[key] = item
            else:
                found[key] = cached
        if todo:
            found.update(self._score(list(todo.items()), max(k, self.cache_k)))
        return [[(w, float(s)) for w, s in zip(found[key][0][:k], found[key][1][:k])] for key in keys]

    # ---- the work ---------------------------------------------------------------------------
    def _score(
        self, todo: list[tuple[tuple[tuple[str, ...], int], tuple[Text, int]]], k: int
    ) -> dict[tuple[tuple[str, ...], int], tuple[tuple[str, ...], np.ndarray]]:
        import torch

        requests = [item for _, item in todo]
        masked = self.masked.whole_word_logits(requests)
        contexts = [_left_context(text, position) for text, position in requests]
        lm_scores = self._lm_word_logits(contexts)
        out = {}
        for (key, _), (spaced, mlm), lm_row in zip(todo, masked, lm_scores):
            total = mlm + self.weight * lm_row if self.weight else mlm
            top = torch.topk(total, min(k, total.shape[0]))
            words = self.vocab.words(spaced)
            answer = (tuple(words[j] for j in top.indices.tolist()), top.values.double().numpy())
            self._cache.put(key, answer)
            out[key] = answer
        return out

    def _word_map(self, spaced: bool) -> tuple[Any, Any, Any]:
        """For the masked LM's words with this spacing: the causal LM's token ids of their
        case variants, the word each id belongs to, and which words have any."""
        if not self._maps:  # both spacings at once: the causal vocabulary is read once
            import torch

            lm_vocab = whole_word_vocab(self.lm.tokenizer)
            for flag in (True, False):
                words = self.vocab.words(flag)
                index: dict[str, list[int]] = {}
                for j, w in enumerate(words):  # a cased masked LM may have "Film" and "film"
                    index.setdefault(w.lower(), []).append(j)
                ids, owner = [], []
                for token_id, w in zip(lm_vocab.ids(flag), lm_vocab.words(flag)):
                    for j in index.get(w.lower(), ()):
                        ids.append(int(token_id))
                        owner.append(j)
                has = torch.zeros(len(words), dtype=torch.bool)
                has[owner] = True
                self._maps[flag] = (torch.tensor(ids, dtype=torch.long), torch.tensor(owner, dtype=torch.long), has)
        return self._maps[spaced]

    def _lm_word_logits(self, contexts: list[tuple[str, bool]]) -> list[Any]:
        """Per (left context, spaced): the causal LM's next-word logit of every masked-LM
        word (log-sum-exp over case variants; the row's minimum for words it lacks)."""
        import torch

        if self.weight == 0:
            return [torch.zeros(len(self.vocab.words(spaced))) for _, spaced in contexts]
        rows, where = self._rows(contexts)
        states = self._states(rows, where)  # [n_contexts, H]
        lm = self.lm
        head = lm.model.get_output_embeddings()
        cap = getattr(lm.model.config, "final_logit_softcapping", None)
        out: list[Any] = [None] * len(contexts)
        for spaced in (True, False):
            picked = [i for i, (_, s) in enumerate(contexts) if s == spaced]
            if not picked:
                continue
            ids, owner, has = self._word_map(spaced)
            n_words = len(self.vocab.words(spaced))
            with torch.inference_mode():
                weight = head.weight[ids]  # [U, H]
                for b in range(0, len(picked), 256):
                    chunk = picked[b : b + 256]
                    logits = (states[chunk] @ weight.T).float()  # [B, U]
                    if cap is not None:
                        logits = torch.tanh(logits / cap) * cap
                    index = owner.expand(len(chunk), -1)
                    peak = torch.full((len(chunk), n_words), float("-inf")).scatter_reduce(
                        1, index, logits, reduce="amax", include_self=True
                    )
                    safe = torch.where(has, peak, torch.zeros(()))
                    summed = torch.zeros((len(chunk), n_words)).scatter_add(1, index, torch.exp(logits - safe.gather(1, index)))
                    word = torch.where(has, safe + torch.log(summed.clamp_min(1e-30)), torch.zeros(()))
                    floor = logits.min(dim=1, keepdim=True).values
                    word = torch.where(has, word, floor)
                    for r, i in enumerate(chunk):
                        out[i] = word[r]
        return out

    def _rows(self, contexts: list[tuple[str, bool]]) -> tuple[list[list[int]], list[tuple[int, int]]]:
        """The causal rows to run, and for each context (row, index of the state that
        predicts the gap). A context whose ids are a prefix of a longer row is read from it."""
        lm = self.lm
        tokenizer = lm.tokenizer
        start = getattr(tokenizer, "bos_token_id", None)
        if start is None:
            start = getattr(tokenizer, "cls_token_id", None)
        if start is None:
            raise ConfigError(
                "ProductFillIn needs a causal LM whose tokenizer has a beginning-of-sequence token "
                "(to predict the first word of a text)."
            )
        unique = list(dict.fromkeys(c for c, _ in contexts))
        encoded = tokenizer(unique, add_special_tokens=False)["input_ids"]
        ids_of = {c: tuple([int(start), *(int(t) for t in ids)][-lm.max_length :]) for c, ids in zip(unique, encoded)}
        self.contexts += len(unique)
        rows: list[list[int]] = []
        prefix_at: dict[tuple[int, ...], tuple[int, int]] = {}
        for c in sorted(unique, key=lambda c: -len(ids_of[c])):
            ids = ids_of[c]
            if ids in prefix_at:
                continue
            r = len(rows)
            rows.append(list(ids))
            for j in range(1, len(ids) + 1):
                prefix_at.setdefault(ids[:j], (r, j - 1))
        self.rows_run += len(rows)
        return rows, [prefix_at[ids_of[c]] for c, _ in contexts]

    def _states(self, rows: list[list[int]], where: list[tuple[int, int]]) -> Any:
        """The last hidden state at each (row, index), rows batched by length."""
        import torch

        by_row: dict[int, list[int]] = {}
        for i, (r, _) in enumerate(where):
            by_row.setdefault(r, []).append(i)
        hidden_size = int(self.lm.model.get_output_embeddings().weight.shape[1])
        states = torch.empty((len(where), hidden_size))
        for chunk, hidden, _ in self._hidden_batches(rows, self.batch_size):
            for n, r in enumerate(chunk):
                for i in by_row[r]:
                    states[i] = hidden[n, where[i][1]].float()
        return states

    def stats(self) -> dict[str, float]:
        """Masked inputs scored, left contexts asked, causal rows run, answer cache size."""
        return {
            "masks_scored": float(self.masked.masks_scored),
            "contexts": float(self.contexts),
            "rows_run": float(self.rows_run),
            "cache_hits": float(self._cache.hits),
            "cache_size": float(len(self._cache)),
        }

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        lm = self._lm_repr()
        return f"ProductFillIn({type(self.masked).__name__}, {lm}, weight={self.weight})"
