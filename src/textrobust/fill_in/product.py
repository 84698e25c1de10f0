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

**Lookahead: the words after the gap.** The causal LM's part sees only the left context,
so it tops gaps with words that fit the words before them but not the ones after
(``a ___ parade of talking heads``: good, little, nice). The ``rerank`` best words by the
product score (default :data:`DEFAULT_RERANK`) are therefore rescored with the causal
LM's probability of the first ``lookahead_tokens`` tokens after the gap, and the causal
LM's next-word score counts ``rerank_weight`` times among them instead of ``weight``::

    score(w) += lookahead_weight * log P_lm(tokens after the gap | left, w)
              + (rerank_weight - weight) * logit_lm(w | left)

Together these are the causal LM's joint probability of the word and the tokens after it,
which picks the best of a few good words better than the masked LM does; the masked LM's
share is kept lower there than over the whole vocabulary, where it finds the good words.

This is the first factor of the whole-sentence probability that ``causal_rescore`` uses,
at the cost of one causal token per candidate: the left contexts' key/value caches (kept
from the pass above) are repeated per candidate and only the candidate's tokens run,
pooled over many gaps into one pass (:attr:`ProductFillIn.lookahead_batch`). Each
candidate is spelled as its likeliest single-token case variant in the gap (or the
tokenised word). Every other word gets the lowest bonus of its gap's reranked words, so
the reranked words stay on top and differences stay log-ratios. The probability is
normalised over the ~57k head rows of English words and punctuation, not all 262k
(:meth:`ProductFillIn._normalizer_rows`; ``exact_lookahead=True`` uses all of them):
on dev probes the route ran at 351 instead of 284 candidates/s, at the same recall. Rows too long
for the LM's sliding attention window skip the lookahead (their ranking stays the
product's). Gain and cost: ``benchmarks/results/fill_in.md``.

**Shared prefixes.** A causal LM's state after token t depends only on tokens <= t, so
the positions of one text share one pass: each left context is tokenised, and when its
ids are a prefix of a longer context already run, the state is read from that row
(exact; counted in :meth:`stats`). A neighbourhood asking for 20 positions of one
sentence costs one causal pass, not 20.

**Tables built once.** The causal LM's tables for the masked LM's words (each word's case
variants among the causal LM's tokens, their output-head rows, and the lookahead's
normaliser rows) take seconds to build (Gemma's 262k-entry vocabulary is read and 90 MB of
head rows gathered). They are built together by the first call, whatever it asks for, and
kept per process for the pair of models (:func:`_shared_tables`): another
``ProductFillIn`` on the same causal LM and masked vocabulary (the next analysis of an
audit) builds none. Before (issue 41), each was built by the first call that needed it: a
warm-up whose gaps ended their texts (no lookahead) left the normaliser to the first real
call, which then took 1-11 s instead of under 1 s.

Departures from the double-perturbation paper, which fills masks with DistilBERT: this
is a different model (a product of two offline models, since no BERT-class masked LM
can be installed here), and its candidates are limited to the masked LM's whole-word
vocabulary.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.fill_in.causal_rescore import _left_context
from textrobust.fill_in.lazy_lm import LazyCausalLM
from textrobust.fill_in.masked import MaskedFillIn
from textrobust.fill_in.requests import check_fill_args
from textrobust.fill_in.whole_words import whole_word_vocab
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["DEFAULT_LOOKAHEAD_WEIGHT", "DEFAULT_RERANK", "DEFAULT_RERANK_WEIGHT", "DEFAULT_WEIGHT", "ProductFillIn"]

#: The causal LM's exponent, chosen on Rotten Tomatoes dev probes (3 x 300, seeds 0-2)
#: among 1, 1.5, 2: mean recall@20 35.6 / 34.2 / 33.3%, recall@1 9.9 / 10.0 / 10.1%
#: (``benchmarks/results/fill_in.md``, issue 13).
DEFAULT_WEIGHT = 1.0

#: How many of the best product candidates are re-ranked with the causal LM's view of the
#: words after the gap (0: none); see :meth:`ProductFillIn._add_lookahead`. Chosen on dev
#: probes (seeds 0-2): mean recall@1 9.9% -> 13.0% (3) / 13.2% (5), at 1 Gemma row per
#: reranked word (``benchmarks/results/fill_in.md``, issue 13).
DEFAULT_RERANK = 3

#: The exponent of that lookahead probability, and the causal LM's exponent among the
#: reranked words (``weight`` elsewhere). Chosen together on dev probes (seeds 0-2, 900
#: probes, 3 reranked words, 1 token): mean recall@1 13.0% at (1, 1), 14.1% at (1.5, 1.5),
#: a broad optimum (13.7-14.1% for both in 1.5-2; 12.6% at a rerank weight of 3). No
#: extra causal rows: only the order of the reranked words changes
#: (``benchmarks/results/fill_in.md``, issue 13, fourth session).
DEFAULT_LOOKAHEAD_WEIGHT = 1.5
DEFAULT_RERANK_WEIGHT = 1.5


class _Job(NamedTuple):
    """One lookahead row: a candidate of request ``request``, on row ``row`` of the cache
    of causal batch ``batch``, whose context ends at index ``last``; ``lm_score`` is the
    causal LM's next-word score of the candidate (for ``rerank_weight``)."""

    request: int
    batch: int
    row: int
    last: int
    inputs: list[int]  # the candidate's tokens, then all targets but the last
    targets: list[int]  # the first tokens after the gap
    lm_score: float = 0.0
    context: bytes = b""  # the context's token ids (int64 bytes): with inputs and targets, the job's key


@dataclass
class _Tables:
    """The causal LM's tables for one masked vocabulary (see "Tables built once" above):
    per spacing, the causal token ids of the words' case variants, the word of each and
    which words have any (:meth:`ProductFillIn._word_map`); per spacing, word -> positions
    of its variants; the lookahead normaliser's rows and membership; head rows gathered by
    name, with the stamp of the head weights they came from. ``built`` names each table
    in the order it was built (each once, unless the head's weights change)."""

    maps: dict[bool, tuple[Any, Any, Any]] = field(default_factory=dict)
    variants: dict[bool, dict[int, list[int]]] = field(default_factory=dict)
    normalizer: tuple[Any, Any] | None = None
    head_rows: dict[str, tuple[tuple[int, int], Any]] = field(default_factory=dict)
    built: list[str] = field(default_factory=list)


#: causal LM module -> (its tokenizer's id, the device, the masked words) -> tables; weak,
#: so the tables go with the model
_TABLES: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], _Tables]] = weakref.WeakKeyDictionary()


def _shared_tables(lm: Any, masked_words: tuple[tuple[str, ...], tuple[str, ...]]) -> _Tables:
    """The process's tables for causal LM ``lm`` (its model, tokenizer and head device)
    and the masked LM's words (both spacings): one object, shared by every fill-in of that
    pair. ``id(lm.tokenizer)`` is safe in the key: the tokenizer lives as long as the
    model it is loaded with (the asset loader keeps both)."""
    head = lm.model.get_output_embeddings()
    key = (id(lm.tokenizer), str(head.weight.device), masked_words)
    per_model = _TABLES.setdefault(lm.model, {})
    if key not in per_model:
        per_model[key] = _Tables()
    return per_model[key]


def _stack_caches(caches: list[Any], picks: list[tuple[int, int]]) -> tuple[Any, int]:
    """One key/value cache holding, in order, row ``row`` of ``caches[batch]`` for each
    pick, every layer right-padded with zeros to the widest cache (the padding is masked
    by the caller); and that width. One of the cache objects is reused (its tensors
    replaced): none may be used afterwards.

    Each layer's keys and values are written once into a zeroed tensor of the final shape
    (one gather per source batch), not gathered, padded, concatenated and reordered: the
    caches are tens of MB per pass and this copy was a fifth of the lookahead's time."""
    import torch

    by_batch: dict[int, list[int]] = {}
    for k, (b, _) in enumerate(picks):
        by_batch.setdefault(b, []).append(k)
    width = max(int(caches[b].get_seq_length()) for b in by_batch)
    merged = caches[min(by_batch)]
    device = merged.layers[0].keys.device if merged.layers else None
    plan = [
        (b, torch.tensor([picks[k][1] for k in ks], dtype=torch.long, device=device),
         torch.tensor(ks, dtype=torch.long, device=device))
        for b, ks in sorted(by_batch.items())
    ]
    for layer_index, layer in enumerate(merged.layers):
        for name in ("keys", "values"):
            first = getattr(caches[plan[0][0]].layers[layer_index], name)
            shape = (len(picks), *first.shape[1:-2], width, first.shape[-1])
            out = torch.zeros(shape, dtype=first.dtype, device=first.device)
            for b, rows, targets in plan:
                tensor = getattr(caches[b].layers[layer_index], name)
                out[targets, ..., : tensor.shape[-2], :] = tensor.index_select(0, rows)
            setattr(layer, name, out)
        if hasattr(layer, "cumulative_length"):
            layer.cumulative_length = width
    return merged, width


class ProductFillIn(LazyCausalLM):
    """Masked-LM logits plus ``weight`` times a causal LM's next-word logits.

    ``masked`` is a :class:`MaskedFillIn`; ``lm`` a :class:`~textrobust.lm.CausalLM`
    (None: Gemma 3 270M, loaded on first use on ``placement``, the run's device and float
    type; None: the CPU in float32). The causal part's tensors are created on the LM's
    device; the masked LM's logits (which it returns on the CPU) join them there.
    ``batch_size`` causal rows go through the model at once; answers are cached (bounded
    LRU) by text and position, and the lookahead's continuations (``lookahead_memo_size``,
    0: none) by their context, candidate and next tokens.

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
        rerank: int = DEFAULT_RERANK,
        lookahead_tokens: int = 1,
        lookahead_weight: float = DEFAULT_LOOKAHEAD_WEIGHT,
        rerank_weight: float = DEFAULT_RERANK_WEIGHT,
        exact_lookahead: bool = False,
        batch_size: int = 16,
        cache_size: int | None = 20_000,
        lookahead_memo_size: int | None = 200_000,
        placement: Placement | None = None,
    ) -> None:
        if not callable(getattr(masked, "whole_word_logits", None)):
            raise ConfigError(
                f"The 'masked' part of ProductFillIn must be a masked-LM fill-in (MaskedFillIn). "
                f"Got {type(masked).__name__}."
            )
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not np.isfinite(weight) or weight < 0:
            raise ConfigError(f"The 'weight' parameter of ProductFillIn must be a finite number >= 0. Got {weight!r} instead.")
        for name, value, least in (("batch_size", batch_size, 1), ("rerank", rerank, 0), ("lookahead_tokens", lookahead_tokens, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"The '{name}' parameter of ProductFillIn must be an int >= {least}. Got {value!r} instead.")
        for name, number in (("lookahead_weight", lookahead_weight), ("rerank_weight", rerank_weight)):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not np.isfinite(number) or number < 0:
                raise ConfigError(f"The '{name}' parameter of ProductFillIn must be a finite number >= 0. Got {number!r} instead.")
        self.masked = masked
        self._lm = lm
        self._placement = placement
        self.weight = float(weight)
        # the lookahead needs the causal LM, which weight 0 switches off
        self.rerank = rerank if self.weight and lookahead_weight else 0
        self.lookahead_tokens = lookahead_tokens
        self.lookahead_weight = float(lookahead_weight)
        self.rerank_weight = float(rerank_weight)
        self.exact_lookahead = bool(exact_lookahead)
        self._tables: _Tables | None = None
        self.batch_size = batch_size
        self._cache: LRUCache[tuple[tuple[str, ...], int], tuple[tuple[str, ...], np.ndarray]] = LRUCache(cache_size)
        self.contexts = 0  # distinct left contexts asked of the causal LM
        self.rows_run = 0  # causal rows run (a context that is a prefix of another is read from it)
        self.lookahead_rows = 0  # candidate continuations run for the lookahead
        self.lookahead_reused = 0  # continuations read back (the same context, candidate and tokens after)
        # a continuation's log-probability by its context, candidate and target tokens: the
        # same left context recurs across a beam's neighbours (they differ at one word)
        if lookahead_memo_size is not None and (isinstance(lookahead_memo_size, bool) or lookahead_memo_size < 0):
            raise ConfigError(f"The 'lookahead_memo_size' parameter of ProductFillIn must be an int >= 0 (0: no "
                              f"memo) or None (unbounded). Got {lookahead_memo_size!r} instead.")
        self._lookahead_memo: LRUCache[tuple[bytes, tuple[int, ...], tuple[int, ...]], float] | None = (
            LRUCache(lookahead_memo_size) if lookahead_memo_size != 0 else None)

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
        if self.weight:
            self.prepare()
        masked = self.masked.whole_word_logits(requests)
        totals = [mlm for _, mlm in masked] if self.weight == 0 else self._product(requests, masked)
        out = {}
        for (key, _), (spaced, _), total in zip(todo, masked, totals):
            top = torch.topk(total, min(k, total.shape[0]))
            words = self.vocab.words(spaced)
            answer = (tuple(words[j] for j in top.indices.tolist()), top.values.double().cpu().numpy())
            self._cache.put(key, answer)
            out[key] = answer
        return out

    def prepare(self) -> None:
        """Builds (or finds, see :func:`_shared_tables`) every table this fill-in's calls
        read, so no later call pays for one: the first call does it; a caller may do it
        before timing (it loads the causal LM). Nothing to do with ``weight`` 0."""
        if not self.weight:
            return
        for spaced in (True, False):
            self._variants(spaced)
            self._head_rows(f"words-{spaced}", self._word_map(spaced)[0])
        rows = self._normalizer_rows() if self.rerank else None
        if rows is not None:
            self._head_rows("normalizer", rows)
            self._in_normalizer()

    def _shared(self) -> _Tables:
        """This fill-in's tables (shared with every fill-in of the same pair of models)."""
        if self._tables is None:
            words = (tuple(self.vocab.words(True)), tuple(self.vocab.words(False)))
            self._tables = _shared_tables(self.lm, words)
        return self._tables

    #: lookahead rows run through the causal LM at once (a pass costs about the same for 50
    #: rows as for 250: the weights are read once per pass)
    lookahead_batch = 256

    def _product(self, requests: list[tuple[Text, int]], masked: list[tuple[bool, Any]]) -> list[Any]:
        """Per request, every masked-LM word's product score (plus the lookahead of the
        ``rerank`` best), one batch of causal rows at a time; the lookahead runs on the
        batches' key/value caches, pooled until :attr:`lookahead_batch` rows are waiting."""
        import torch

        contexts = [_left_context(text, position) for text, position in requests]
        rights = self._right_ids(requests) if self.rerank else None
        rows, where = self._rows(contexts)
        by_row: dict[int, list[int]] = {}
        for i, (r, _) in enumerate(where):
            by_row.setdefault(r, []).append(i)
        totals: list[Any] = [None] * len(requests)
        tops: dict[int, Any] = {}
        caches: list[Any] = []
        jobs: list[_Job] = []
        for chunk, hidden, _, cache in self._hidden_batches(rows, self.batch_size, keep_cache=self.rerank > 0):
            members = [(n, i) for n, r in enumerate(chunk) for i in by_row[r]]
            states = torch.stack([hidden[n, where[i][1]] for n, i in members]).float()
            lm_words, variant_logits = self._lm_word_logits(states, [contexts[i][1] for _, i in members])
            for (_, i), lm_row in zip(members, lm_words):
                totals[i] = masked[i][1].to(lm_row.device) + self.weight * lm_row
            if rights is None:
                continue
            caches.append(cache)
            for (n, i), logits, lm_row in zip(members, variant_logits, lm_words):
                tops[i] = torch.topk(totals[i], min(self.rerank, totals[i].shape[0])).indices
                if rights[i]:
                    spaced = contexts[i][1]
                    for j in tops[i].tolist():
                        inputs = self._candidate_ids(j, spaced, logits) + rights[i][:-1]
                        context = np.asarray(rows[chunk[n]][: where[i][1] + 1], dtype=np.int64).tobytes()
                        jobs.append(_Job(i, len(caches) - 1, n, where[i][1], inputs, rights[i], float(lm_row[j]),
                                         context))
            if len(jobs) >= self.lookahead_batch:
                self._add_lookahead(caches, jobs, tops, totals)
                caches, jobs = [], []
        if jobs:
            self._add_lookahead(caches, jobs, tops, totals)
        return totals

    def _lm_word_logits(self, states: Any, spacings: list[bool]) -> tuple[list[Any], list[Any]]:
        """Per state (one per context; ``spacings`` says whether a space precedes the gap):
        the causal LM's next-word logit of every masked-LM word (log-sum-exp over case
        variants; the row's minimum for words it lacks), and the logits of the variant
        tokens themselves (to pick a word's likeliest spelling)."""
        import torch

        head = self.lm.model.get_output_embeddings()
        cap = getattr(self.lm.model.config, "final_logit_softcapping", None)
        words_out: list[Any] = [None] * len(spacings)
        variants_out: list[Any] = [None] * len(spacings)
        for spaced in (True, False):
            picked = [i for i, s in enumerate(spacings) if s == spaced]
            if not picked:
                continue
            ids, owner, has = self._word_map(spaced)
            n_words = len(self.vocab.words(spaced))
            with torch.inference_mode():
                weight = self._head_rows(f"words-{spaced}", ids)  # [U, H]
                for b in range(0, len(picked), 256):
                    chunk = picked[b : b + 256]
                    logits = (states[chunk].to(weight.dtype) @ weight.T).float()  # [B, U], in the LM's float type
                    if cap is not None:
                        logits = torch.tanh(logits / cap) * cap
                    index = owner.expand(len(chunk), -1)
                    device = logits.device
                    peak = torch.full((len(chunk), n_words), float("-inf"), device=device).scatter_reduce(
                        1, index, logits, reduce="amax", include_self=True
                    )
                    zero = torch.zeros((), device=device)
                    safe = torch.where(has, peak, zero)
                    summed = torch.zeros((len(chunk), n_words), device=device).scatter_add(
                        1, index, torch.exp(logits - safe.gather(1, index))
                    )
                    word = torch.where(has, safe + torch.log(summed.clamp_min(1e-30)), zero)
                    floor = logits.min(dim=1, keepdim=True).values
                    word = torch.where(has, word, floor)
                    for r, i in enumerate(chunk):
                        words_out[i] = word[r]
                        variants_out[i] = logits[r]
        return words_out, variants_out

    # ---- lookahead: the words after the gap --------------------------------------------------
    def _right_ids(self, requests: list[tuple[Text, int]]) -> list[list[int]]:
        """Per request, the causal LM's first ``lookahead_tokens`` token ids of the text after
        the gap (empty when the gap ends the text)."""
        rendered = [_right_context(text, position) for text, position in requests]
        unique = [r for r in dict.fromkeys(rendered) if r]
        encoded = self.lm.tokenizer(unique, add_special_tokens=False)["input_ids"] if unique else []
        ids_of = {r: [int(t) for t in ids[: self.lookahead_tokens]] for r, ids in zip(unique, encoded)}
        return [ids_of.get(r, []) for r in rendered]

    def _candidate_ids(self, word_index: int, spaced: bool, variant_logits: Any) -> list[int]:
        """The causal LM's tokens for a masked-LM word in the gap: its likeliest single-token
        case variant there, or the tokenised lower-case word when it has none."""
        positions = self._variants(spaced).get(word_index)
        if positions:
            ids = self._word_map(spaced)[0]
            best = max(positions, key=lambda u: float(variant_logits[u]))
            return [int(ids[best])]
        word = self.vocab.words(spaced)[word_index]
        return [int(t) for t in self.lm.tokenizer((" " if spaced else "") + word, add_special_tokens=False)["input_ids"]]

    def _add_lookahead(self, caches: list[Any], jobs: list[_Job], tops: dict[int, Any], totals: list[Any]) -> None:
        """Adds ``lookahead_weight`` x log P(first tokens after the gap | left, candidate)
        plus ``rerank_weight - weight`` x the candidate's causal next-word score to each
        job's candidate (the ``rerank`` best of its request), in place, and the lowest of
        those bonuses to every other word of the request, so the reranked words stay above
        the rest and score differences stay log-ratios."""
        import torch

        reused = self.lookahead_reused
        values = self._continuation_logprobs(caches, jobs)
        self.lookahead_rows += sum(v is not None for v in values) - (self.lookahead_reused - reused)
        extra = self.rerank_weight - self.weight
        per_request: dict[int, list[float | None]] = {}
        for job, value in zip(jobs, values):
            per_request.setdefault(job.request, []).append(
                None if value is None else self.lookahead_weight * value + extra * job.lm_score
            )
        for i, scores in per_request.items():
            if any(v is None for v in scores):  # a context too long for the lookahead: none
                continue
            bonus = torch.tensor(scores, dtype=totals[i].dtype, device=totals[i].device)
            floor = bonus.min()
            totals[i] = totals[i] + floor
            totals[i][tops[i]] += bonus - floor

    def _continuation_logprobs(self, caches: list[Any], jobs: list[_Job]) -> list[float | None]:
        """Per job: the summed log-probability of its targets, each predicted after the
        job's context and the inputs before it, in one pass over the jobs' rows of the
        batches' caches (padded to one width). Cached positions after the context (a longer
        row sharing its prefix, or padding) are masked out. None for a job whose context is
        too long for the LM's sliding attention window."""
        import torch

        lm = self.lm
        head = lm.model.get_output_embeddings()
        cap = getattr(lm.model.config, "final_logit_softcapping", None)
        window = getattr(lm.model.config, "sliding_window", None)
        depth = max(len(job.inputs) for job in jobs)
        widths = [int(c.get_seq_length()) for c in caches]
        fits = [window is None or w + depth < int(window) - 1 for w in widths]
        fitting = [j for j, job in enumerate(jobs) if fits[job.batch]]
        memo = self._lookahead_memo
        out: list[float | None] = [None] * len(jobs)
        # each distinct continuation runs once; one already run (this call or before) is read back
        key_of = {j: (jobs[j].context, tuple(jobs[j].inputs), tuple(jobs[j].targets)) for j in fitting}
        leader: dict[tuple[bytes, tuple[int, ...], tuple[int, ...]], int] = {}
        kept: list[int] = []
        for j in fitting:
            known = memo.get(key_of[j]) if memo is not None and jobs[j].context else None
            if known is not None:
                out[j] = known
            elif key_of[j] not in leader or not jobs[j].context:
                leader.setdefault(key_of[j], j)
                kept.append(j)
        self.lookahead_reused += len(fitting) - len(kept)
        if not kept:
            return out
        pad = int(getattr(lm.tokenizer, "pad_token_id", None) or 0)
        device = head.weight.device
        if self.shared_rows:
            cache, ids, mask, positions, at = self._shared_row_inputs(caches, jobs, kept, pad)
        else:
            cache, ids, mask, positions, at = self._row_per_job_inputs(caches, jobs, kept, pad)
        rows: list[int] = []
        cols: list[int] = []
        targets: list[int] = []
        for r, j in enumerate(kept):
            job = jobs[j]
            first = len(job.inputs) - len(job.targets)  # the state after the candidate's last token
            count = len(job.targets)
            rows += [r] * count
            cols += range(at[r][1] + first, at[r][1] + first + count)
            targets += job.targets
        from textrobust.assets.offline import quiet_transformers_notices

        quiet_transformers_notices()  # past_key_values= is the name transformers>=4.45 all accept
        with torch.inference_mode():
            hidden = lm.model.base_model(
                input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache, use_cache=True
            )[0]
            states = hidden[torch.tensor([at[r][0] for r in rows], device=device), torch.tensor(cols, device=device)]
            wanted_ids = torch.tensor(targets, dtype=torch.long, device=device)
            rows_of = self._normalizer_rows()
            weight = head.weight if rows_of is None else self._head_rows("normalizer", rows_of)
            outside = None if rows_of is None else ~self._in_normalizer()[wanted_ids]
            picked = []
            step = max(1, int(getattr(lm, "max_logits_bytes", 128 * 2**20)) // (4 * int(weight.shape[0])))
            for s in range(0, len(rows), step):
                part = states[s : s + step]
                logits = (part @ weight.T).float()
                target = (part * head.weight[wanted_ids[s : s + step]]).sum(1).float()
                if cap is not None:
                    logits = torch.tanh(logits / cap) * cap
                    target = torch.tanh(target / cap) * cap
                norm = torch.logsumexp(logits, dim=1)
                if outside is not None:  # a target outside the normaliser's rows joins it
                    norm = torch.where(outside[s : s + step], torch.logaddexp(norm, target), norm)
                picked.append(target - norm)
            values = torch.cat(picked).double().cpu().numpy()
        sums = np.zeros(len(kept))
        np.add.at(sums, np.asarray(rows, dtype=np.int64), values)
        for r, j in enumerate(kept):
            out[j] = float(sums[r])
            if memo is not None and jobs[j].context:
                memo.put(key_of[j], float(sums[r]))
        for j in fitting:
            if out[j] is None:  # a repeat within this call
                out[j] = out[leader[key_of[j]]]
        return out

    #: the lookahead runs the candidates of one cached row as one sequence after a single
    #: copy of that row, each attending to the row's context and its own tokens only (a 4D
    #: mask); False: a copy of the row per candidate (the rerank best of every gap of a
    #: sentence share one row: 60 copies of tens of kB per layer for 20 positions)
    shared_rows = True
    #: at most this many tokens after one copy of a row (a longer share takes another copy):
    #: the rows of a pass are padded to the longest
    shared_row_tokens = 24

    def _row_per_job_inputs(self, caches: list[Any], jobs: list[_Job], kept: list[int],
                            pad: int) -> tuple[Any, Any, Any, Any, list[tuple[int, int]]]:
        """One lookahead row per job: its context's cache row (copied), its tokens, a 2D
        mask hiding the cached positions after its context; ``at[r]`` = (row, first column)
        of kept job ``r``'s tokens."""
        import torch

        cache, width = _stack_caches(caches, [(jobs[j].batch, jobs[j].row) for j in kept])
        depth = max(len(jobs[j].inputs) for j in kept)
        # the rows' arrays are built in NumPy and handed to torch once (per-row tensor
        # writes cost more than the arithmetic for a few hundred rows)
        n = len(kept)
        ids_np = np.full((n, depth), pad, dtype=np.int64)
        mask_np = np.zeros((n, width + depth), dtype=np.int64)
        lasts = np.array([jobs[j].last for j in kept], dtype=np.int64)
        sizes = np.array([len(jobs[j].inputs) for j in kept], dtype=np.int64)
        ids_np[np.arange(depth) < sizes[:, None]] = [t for j in kept for t in jobs[j].inputs]
        mask_np[:, :width] = np.arange(width) <= lasts[:, None]
        mask_np[:, width:] = np.arange(depth) < sizes[:, None]
        device = self.lm.model.get_output_embeddings().weight.device
        positions = torch.as_tensor(lasts[:, None] + 1 + np.arange(depth), device=device)
        return (cache, torch.as_tensor(ids_np, device=device), torch.as_tensor(mask_np, device=device), positions,
                [(r, 0) for r in range(n)])

    def _shared_row_inputs(self, caches: list[Any], jobs: list[_Job], kept: list[int],
                           pad: int) -> tuple[Any, Any, Any, Any, list[tuple[int, int]]]:
        """One lookahead row per distinct cached row: one copy of it, then the tokens of
        every job on it one after the other; a 4D mask lets each token see the cached
        positions up to its job's context end and its own job's tokens up to itself, and
        its position id continues its own context, so each job computes what it would
        alone (the key/value states of the other jobs' tokens are masked out). Padding
        tokens see the first position only (a row of no visible key is undefined)."""
        import torch

        open_row: dict[tuple[int, int], int] = {}  # the row still taking jobs of each cached row
        picks: list[tuple[int, int]] = []
        members: list[list[int]] = []
        filled: list[int] = []
        for j in kept:
            key = (jobs[j].batch, jobs[j].row)
            u = open_row.get(key)
            size = len(jobs[j].inputs)
            if u is None or filled[u] + size > self.shared_row_tokens:  # bounded: rows are padded to the longest
                u = open_row[key] = len(members)
                picks.append(key)
                members.append([])
                filled.append(0)
            members[u].append(j)
            filled[u] += size
        cache, width = _stack_caches(caches, picks)
        lengths = [sum(len(jobs[j].inputs) for j in group) for group in members]
        depth = max(lengths)
        n = len(members)
        ids_np = np.full((n, depth), pad, dtype=np.int64)
        positions_np = np.zeros((n, depth), dtype=np.int64)
        mask_np = np.zeros((n, 1, depth, width + depth), dtype=bool)
        mask_np[:, 0, :, 0] = True  # padding tokens (overwritten for real ones below)
        start: dict[int, tuple[int, int]] = {}
        for u, group in enumerate(members):
            offset = 0
            for j in group:
                job = jobs[j]
                size = len(job.inputs)
                span = slice(offset, offset + size)
                ids_np[u, span] = job.inputs
                positions_np[u, span] = job.last + 1 + np.arange(size)
                mask_np[u, 0, span, : job.last + 1] = True
                mask_np[u, 0, span, width + offset : width + offset + size] = np.tril(np.ones((size, size), dtype=bool))
                start[j] = (u, offset)
                offset += size
        device = self.lm.model.get_output_embeddings().weight.device
        return (cache, torch.as_tensor(ids_np, device=device), torch.as_tensor(mask_np, device=device),
                torch.as_tensor(positions_np, device=device), [start[j] for j in kept])

    def _normalizer_rows(self) -> Any:
        """The causal LM's vocabulary rows whose log-sum-exp normalises the lookahead
        probabilities: None (all rows) with ``exact_lookahead``, else the tokens of the
        masked LM's words (both spacings, every case variant) and ASCII punctuation.

        A departure for speed: Gemma's head has 262k rows, most of them for other
        languages and word pieces, and applying all of them to every candidate's state
        would cost more than the rest of this fill-in. The words that can follow an English
        word are nearly all in these ~56k rows; the mass left out makes every lookahead
        probability a little too high, by a similar amount for every candidate of a gap."""
        if self.exact_lookahead:
            return None
        tables = self._shared()
        if tables.normalizer is None:
            import string

            import torch

            tokenizer = self.lm.tokenizer
            pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
            allowed = set(string.punctuation) | {"▁", "Ġ", " "}
            punctuation = [i for i, t in enumerate(pieces) if t and set(t) <= allowed and set(t) & set(string.punctuation)]
            device = self._word_map(True)[0].device
            rows = torch.cat([self._word_map(True)[0], self._word_map(False)[0],
                              torch.tensor(punctuation, dtype=torch.long, device=device)])
            rows = torch.unique(rows)
            rows = rows[rows < int(self.lm.model.get_output_embeddings().weight.shape[0])]
            member = torch.zeros(int(self.lm.model.get_output_embeddings().weight.shape[0]), dtype=torch.bool,
                                 device=device)
            member[rows] = True
            tables.normalizer = (rows, member)
            tables.built.append("normalizer")
        return tables.normalizer[0]

    def _head_rows(self, name: str, ids: Any) -> Any:
        """The output head's rows ``ids``, gathered once and kept (tens of MB) while the
        head's weights stay the same tensor, unchanged."""
        weight = self.lm.model.get_output_embeddings().weight
        stamp = (weight.data_ptr(), weight._version)
        tables = self._shared()
        kept = tables.head_rows.get(name)
        if kept is None or kept[0] != stamp:
            import torch

            with torch.inference_mode():
                kept = (stamp, weight[ids].contiguous())
            tables.head_rows[name] = kept
            tables.built.append(f"head rows {name}")
        return kept[1]

    def _in_normalizer(self) -> Any:
        """Which rows are in the normaliser (built by :meth:`_normalizer_rows` if need be)."""
        normalizer = self._shared().normalizer
        if normalizer is None:
            self._normalizer_rows()
            normalizer = self._shared().normalizer
        if normalizer is None:  # exact_lookahead: every row is in it
            raise ConfigError("ProductFillIn has no normaliser rows with exact_lookahead=True.")
        return normalizer[1]

    def _word_map(self, spaced: bool) -> tuple[Any, Any, Any]:
        """For the masked LM's words with this spacing: the causal LM's token ids of their
        case variants, the word each id belongs to, and which words have any (on the
        LM's device)."""
        tables = self._shared()
        if not tables.maps:  # both spacings at once: the causal vocabulary is read once
            import torch

            device = self.lm.model.get_output_embeddings().weight.device
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
                tables.maps[flag] = (torch.tensor(ids, dtype=torch.long, device=device),
                                     torch.tensor(owner, dtype=torch.long, device=device), has.to(device))
            tables.built.append("word maps")
        return tables.maps[spaced]

    def _variants(self, spaced: bool) -> dict[int, list[int]]:
        """Masked-LM word index -> positions of its case variants in :meth:`_word_map`'s ids."""
        tables = self._shared()
        if spaced not in tables.variants:
            found: dict[int, list[int]] = {}
            for u, j in enumerate(self._word_map(spaced)[1].tolist()):
                found.setdefault(j, []).append(u)
            tables.variants[spaced] = found
            tables.built.append(f"variants {spaced}")
        return tables.variants[spaced]

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

    def stats(self) -> dict[str, float]:
        """Masked inputs scored, left contexts asked, causal rows run, answer cache size."""
        return {
            "masks_scored": float(self.masked.masks_scored),
            "contexts": float(self.contexts),
            "rows_run": float(self.rows_run),
            "lookahead_rows": float(self.lookahead_rows),
            "lookahead_reused": float(self.lookahead_reused),
            "cache_hits": float(self._cache.hits),
            "cache_size": float(len(self._cache)),
        }

    def clear_cache(self) -> None:
        self._cache.clear()
        if self._lookahead_memo is not None:
            self._lookahead_memo.clear()

    def __repr__(self) -> str:
        lm = self._lm_repr()
        return (
            f"ProductFillIn({type(self.masked).__name__}, {lm}, weight={self.weight}, rerank={self.rerank}, "
            f"lookahead_tokens={self.lookahead_tokens}, lookahead_weight={self.lookahead_weight}, "
            f"rerank_weight={self.rerank_weight})"
        )


def _right_context(text: Text, position: int) -> str:
    """The rendered text after word ``position`` (with its leading whitespace; columns are
    rendered with one space between, as in :func:`_left_context`)."""
    column, _, end = text.word_spans()[position]
    after = text.columns[column][end:]
    rest = text.columns[column + 1 :]
    return after + (" " + " ".join(rest) if rest else "")
