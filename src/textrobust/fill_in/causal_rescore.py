"""Fill-in from a causal LM: propose from the left context, re-rank on the whole sentence.

A causal LM cannot see the words after a gap, so it fills the gap in two steps
(``ASSETS.md``, "The masked-LM gap", route 2):

1. **propose**: the next-token distribution after the text left of the word gives the
   ``proposals`` most likely whole-word tokens (a token that is one word by itself, with a
   leading space marker when a space precedes the word; see
   :mod:`textrobust.fill_in.whole_words`);
2. **rescore**: each proposal is put in the gap and the whole text is scored by the LM;
   candidates are ranked by that full-sentence log-probability, so the words after the gap
   count too.

**Score contract.** The score of ``(word, score)`` is ``log P(text with word) - log P(text)``
in nats (natural log), under the causal LM, with ``text`` the original. Since
``P(text with w) = P(w | rest of the text) * P(rest)``, differences between two candidates'
scores are log-ratios of their probabilities in context, as differences of masked-LM
logits are; Algorithm 1's ``L[0] - delta`` threshold of the double-perturbation paper
(Zhang et al. 2021) therefore keeps its meaning (delta in nats). The original word, when
proposed, scores exactly 0. Ask for ``k = kappa + 1`` to read ``L[kappa]``; ``k`` larger
than ``proposals`` raises the number of proposals to ``k``.

Departure from the paper, which fills masks with DistilBERT: words that the LM would
spell with several tokens can never be proposed (only the first token is seen), and
candidates come from the left context only, before rescoring.

The LM is :class:`textrobust.lm.CausalLM` (default: Gemma 3 270M, optional extra ``lm``).
Rescoring runs the model over each candidate text but applies the output head (262k
entries for Gemma, most of the cost) only from the first token where the candidates
depart from the original: the shared prefix cancels in every score, so this is exact.
Proposals are cached by left context.

With ``kv_cache=True`` (the default) the left context of a gap, shared by every
candidate, goes through the model once per request: its key/value cache is repeated over
the candidates and only the suffixes (the candidate word and the words after it) are run,
batched (issue 13; speed-up measured in ``benchmarks/results/fill_in.md``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.fill_in.lazy_lm import LazyCausalLM
from textrobust.fill_in.requests import check_fill_args
from textrobust.fill_in.whole_words import WholeWordVocab, whole_word_vocab
from textrobust.similarity.cache import LRUCache
from textrobust.text import Text

__all__ = ["CausalRescoreFillIn"]


class CausalRescoreFillIn(LazyCausalLM):
    """Propose-and-rescore fill-in over a :class:`~textrobust.lm.CausalLM`.

    ``lm`` None loads :meth:`CausalLM.default` (Gemma 3 270M) on first use, on
    ``placement`` (the run's device and float type; None: the CPU in float32); the tensors
    of every pass are created on the LM's device. ``proposals``
    next-token candidates are rescored per request (at least ``k``); ``batch_size`` left
    contexts go through the model at once for the proposals (the rescoring batches with
    the LM's own ``batch_size``).

    >>> fill_in = CausalRescoreFillIn()                                            # doctest: +SKIP
    >>> fill_in.fill([(Text.from_string("a deep and meaningful film ."), 4)], 5)  # doctest: +SKIP
    """

    def __init__(
        self,
        lm: Any | None = None,
        *,
        proposals: int = 20,
        batch_size: int = 16,
        cache_size: int | None = 20_000,
        kv_cache: bool = True,
        placement: Placement | None = None,
    ) -> None:
        for name, value in (("proposals", proposals), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"The '{name}' parameter of CausalRescoreFillIn must be an int >= 1. Got {value!r} instead."
                )
        self._lm = lm
        self._placement = placement
        self.proposals = proposals
        self.batch_size = batch_size
        self.kv_cache = bool(kv_cache)
        self._vocab: WholeWordVocab | None = None
        self._proposal_cache: LRUCache[tuple[str, bool], tuple[tuple[str, ...], int]] = LRUCache(cache_size)
        self.contexts_scored = 0  # left contexts run for proposals
        self.texts_rescored = 0  # candidate and original texts run for rescoring
        self.rescore_seconds = 0.0

    @classmethod
    def default(cls, path: str | Path | None = None, *, placement: Placement | None = None,
                **settings: Any) -> CausalRescoreFillIn:
        """Over the project's causal LM (Gemma 3 270M) from the asset cache or ``path``, on
        ``placement`` (None: the CPU in float32)."""
        from textrobust.lm import CausalLM

        return cls(CausalLM.default(path, placement=placement), placement=placement, **settings)

    @property
    def vocab(self) -> WholeWordVocab:
        if self._vocab is None:
            self._vocab = whole_word_vocab(self.lm.tokenizer)
        return self._vocab

    # ---- the protocol ----------------------------------------------------------------------
    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        """Per request, the top ``k`` whole words by full-sentence log-probability relative
        to the original text (nats), best first."""
        items = check_fill_args(requests, k, type(self).__name__)
        if not items:
            return []
        m = max(k, self.proposals)
        contexts = [_left_context(text, position) for text, position in items]
        proposed = self._propose(contexts, m)
        groups = [
            [str(text), *(str(text.replace(position, w)) for w in words)]
            for (text, position), words in zip(items, proposed)
        ]
        totals = self._rescore_kv(groups) if self.kv_cache else self._rescore(groups)
        out: list[list[tuple[str, float]]] = []
        for words, total in zip(proposed, totals):
            scores = total[1:] - total[0]
            order = np.argsort(-scores, kind="stable")[:k]
            out.append([(words[j], float(scores[j])) for j in order])
        return out

    # ---- rescoring --------------------------------------------------------------------------
    def _rescore(self, groups: list[list[str]]) -> list[np.ndarray]:
        """Per group (the original text, then its candidates), each text's summed token
        log-probability from the first token where any candidate departs from the original.

        Tokens before that point are shared by the whole group and have the same
        log-probabilities in every text (the LM is causal), so leaving them out changes no
        difference ``text - original`` and saves the output head (262k entries for Gemma)
        on the shared prefix, which is most of the cost.
        """
        import torch

        lm = self.lm
        encoded = [[self._encode_text(t) for t in group] for group in groups]
        jobs: list[tuple[int, int, list[int], int]] = []  # group, member, ids, first scored token
        for g, members in enumerate(encoded):
            first = min((_first_difference(members[0], m) for m in members[1:]), default=len(members[0]))
            first = max(first, 1)  # the first token has no context
            jobs.extend((g, i, m, first) for i, m in enumerate(members))
        totals = [np.zeros(len(members)) for members in encoded]
        head = lm.model.get_output_embeddings()
        device = head.weight.device
        cap = getattr(lm.model.config, "final_logit_softcapping", None)
        vocab_size = int(head.weight.shape[0])
        rows_per_chunk = max(1, int(getattr(lm, "max_logits_bytes", 128 * 2**20)) // (4 * vocab_size))
        order = sorted(range(len(jobs)), key=lambda j: len(jobs[j][2]))
        batch_size = int(getattr(lm, "batch_size", 16))
        start_time = time.perf_counter()
        for b in range(0, len(order), batch_size):
            chunk = [jobs[j] for j in order[b : b + batch_size]]
            width = max(len(job[2]) for job in chunk)
            ids_np = np.full((len(chunk), width), self._pad_id(), dtype=np.int64)
            mask_np = np.zeros((len(chunk), width), dtype=np.int64)
            for r, job in enumerate(chunk):
                ids_np[r, : len(job[2])] = job[2]
                mask_np[r, : len(job[2])] = 1
            ids, mask = torch.as_tensor(ids_np, device=device), torch.as_tensor(mask_np, device=device)
            rows = [r for r, job in enumerate(chunk) for _ in range(job[3], len(job[2]))]
            cols = [t for job in chunk for t in range(job[3], len(job[2]))]
            with torch.inference_mode():
                hidden = lm.model.base_model(input_ids=ids, attention_mask=mask, use_cache=False)[0]
                row_index = torch.as_tensor(rows, dtype=torch.long, device=device)
                col_index = torch.as_tensor(cols, dtype=torch.long, device=device)
                states = hidden[row_index, col_index - 1]
                targets = ids[row_index, col_index]
                picked = []
                for s in range(0, len(rows), rows_per_chunk):
                    logits = head(states[s : s + rows_per_chunk]).float()
                    if cap is not None:
                        logits = torch.tanh(logits / cap) * cap
                    picked.append(
                        logits.gather(1, targets[s : s + rows_per_chunk, None])[:, 0] - torch.logsumexp(logits, dim=1)
                    )
                values = torch.cat(picked).double().cpu().numpy() if picked else np.zeros(0)
            sums = np.zeros(len(chunk))
            np.add.at(sums, np.asarray(rows, dtype=np.int64), values)
            for r, job in enumerate(chunk):
                totals[job[0]][job[1]] = sums[r]
            self.texts_rescored += len(chunk)
        self.rescore_seconds += time.perf_counter() - start_time
        return totals

    def _rescore_kv(self, groups: list[list[str]]) -> list[np.ndarray]:
        """As :meth:`_rescore`, but the shared prefix of each group (the tokens before the
        first difference, i.e. the left context of the gap) goes through the model *once*:
        its key/value cache is repeated for every member of the group and only the
        suffixes are run, batched; the log-softmax at the first scored token (predicted
        from the prefix alone) is also computed once per group. Exact up to float
        rounding (tested against :meth:`_rescore`)."""
        import torch

        lm = self.lm
        model = lm.model
        head = model.get_output_embeddings()
        device = head.weight.device  # every tensor of the pass is created there
        cap = getattr(model.config, "final_logit_softcapping", None)
        vocab_size = int(head.weight.shape[0])
        rows_per_chunk = max(1, int(getattr(lm, "max_logits_bytes", 128 * 2**20)) // (4 * vocab_size))
        batch_size = int(getattr(lm, "batch_size", 16))
        pad = self._pad_id()
        start_time = time.perf_counter()

        def log_softmax_at(states: Any, targets: Any) -> Any:
            picked = []
            for s in range(0, states.shape[0], rows_per_chunk):
                logits = head(states[s : s + rows_per_chunk]).float()
                if cap is not None:
                    logits = torch.tanh(logits / cap) * cap
                picked.append(logits.gather(1, targets[s : s + rows_per_chunk, None])[:, 0] - torch.logsumexp(logits, dim=1))
            return torch.cat(picked) if picked else torch.zeros(0, device=device)

        totals: list[np.ndarray] = []
        from textrobust.assets.offline import quiet_transformers_notices

        quiet_transformers_notices()  # past_key_values= is the name transformers>=4.45 all accept
        for group in groups:
            members = [self._encode_text(t) for t in group]
            first = min((_first_difference(members[0], m) for m in members[1:]), default=len(members[0]))
            first = max(first, 1)
            total = np.zeros(len(members))
            with torch.inference_mode():
                prefix = torch.tensor([members[0][:first]], dtype=torch.long, device=device)
                out = model.base_model(input_ids=prefix, attention_mask=torch.ones_like(prefix), use_cache=True)
                last, cache = out[0][0, -1], out.past_key_values
                # the first scored token of every member is predicted from the prefix alone
                first_targets = torch.tensor(
                    [m[first] if len(m) > first else pad for m in members], dtype=torch.long, device=device
                )
                logits = head(last[None]).float()
                if cap is not None:
                    logits = torch.tanh(logits / cap) * cap
                first_lp = (logits[0] - torch.logsumexp(logits[0], dim=0))[first_targets].double().cpu().numpy()
                for i, m in enumerate(members):
                    if len(m) > first:
                        total[i] += first_lp[i]
                # the rest: suffixes, batched over members, on a copy of the prefix cache
                todo = [i for i, m in enumerate(members) if len(m) > first + 1]
                for b in range(0, len(todo), batch_size):
                    chunk = todo[b : b + batch_size]
                    width = max(len(members[i]) - first - 1 for i in chunk)
                    ids_np = np.full((len(chunk), width), pad, dtype=np.int64)
                    mask_np = np.zeros((len(chunk), first + width), dtype=np.int64)
                    mask_np[:, :first] = 1
                    for r, i in enumerate(chunk):
                        suffix = members[i][first:-1]  # inputs: the last token is only a target
                        ids_np[r, : len(suffix)] = suffix
                        mask_np[r, first : first + len(suffix)] = 1
                    ids = torch.as_tensor(ids_np, device=device)
                    mask = torch.as_tensor(mask_np, device=device)
                    past = _repeat_cache(cache, len(chunk))
                    hidden = model.base_model(
                        input_ids=ids, attention_mask=mask, past_key_values=past, use_cache=True
                    )[0]
                    rows = [r for r, i in enumerate(chunk) for _ in range(len(members[i]) - first - 1)]
                    cols = [c for i in chunk for c in range(len(members[i]) - first - 1)]
                    targets = torch.tensor(
                        [members[i][first + 1 + c] for i in chunk for c in range(len(members[i]) - first - 1)],
                        dtype=torch.long,
                        device=device,
                    )
                    states = hidden[torch.as_tensor(rows, dtype=torch.long, device=device),
                                    torch.as_tensor(cols, dtype=torch.long, device=device)]
                    values = log_softmax_at(states, targets).double().cpu().numpy()
                    sums = np.zeros(len(chunk))
                    np.add.at(sums, np.asarray(rows, dtype=np.int64), values)
                    for r, i in enumerate(chunk):
                        total[i] += sums[r]
            totals.append(total)
            self.texts_rescored += len(members)
        self.rescore_seconds += time.perf_counter() - start_time
        return totals

    def _encode_text(self, text: str) -> list[int]:
        """Token ids as :class:`~textrobust.lm.CausalLM` scores them (special tokens added, a
        beginning-of-sequence token prepended when the tokenizer has one but did not add it)."""
        lm = self.lm
        ids = [int(t) for t in lm.tokenizer(text, add_special_tokens=True)["input_ids"]]
        bos = getattr(lm.tokenizer, "bos_token_id", None)
        if bos is not None and (not ids or ids[0] != bos):
            ids = [int(bos), *ids]
        return ids[: lm.max_length]

    def _pad_id(self) -> int:
        pad = getattr(self.lm.tokenizer, "pad_token_id", None)
        return int(pad) if pad is not None else 0

    # ---- proposals -------------------------------------------------------------------------
    def _propose(self, contexts: list[tuple[str, bool]], m: int) -> list[tuple[str, ...]]:
        """The ``m`` likeliest whole-word next tokens after each (context, spaced)."""
        todo = []
        found: dict[tuple[str, bool], tuple[str, ...]] = {}
        for key in dict.fromkeys(contexts):
            cached = self._proposal_cache.get(key)
            if cached is None or (cached[1] < m and len(cached[0]) == cached[1]):
                todo.append(key)
            else:  # kept here: computing the others may evict it from the cache
                found[key] = cached[0]
        if todo:
            found.update(self._next_words(todo, m))
        return [found[key][:m] for key in contexts]

    def _next_words(self, contexts: list[tuple[str, bool]], m: int) -> dict[tuple[str, bool], tuple[str, ...]]:
        import torch

        lm = self.lm
        tokenizer = lm.tokenizer
        start = getattr(tokenizer, "bos_token_id", None)
        if start is None:
            start = getattr(tokenizer, "cls_token_id", None)
        encoded = tokenizer([c for c, _ in contexts], add_special_tokens=False)["input_ids"]
        rows = [([int(start)] if start is not None else []) + [int(t) for t in ids] for ids in encoded]
        rows = [r[-lm.max_length :] for r in rows]
        if any(not r for r in rows):
            raise ConfigError(
                "CausalRescoreFillIn cannot propose a first word: the tokenizer has no beginning-of-"
                "sequence token to condition on."
            )
        vocab = self.vocab
        head = lm.model.get_output_embeddings()
        device = head.weight.device
        cap = getattr(lm.model.config, "final_logit_softcapping", None)
        ids_of = {flag: torch.as_tensor(vocab.ids(flag), device=device) for flag in {spaced for _, spaced in contexts}}
        found: dict[tuple[str, bool], tuple[str, ...]] = {}
        for chunk, hidden, mask, _ in self._hidden_batches(rows, self.batch_size):
            with torch.inference_mode():
                last = hidden[torch.arange(len(chunk), device=hidden.device), mask.sum(1) - 1]
                logits = head(last).float()
                if cap is not None:
                    logits = torch.tanh(logits / cap) * cap
            self.contexts_scored += len(chunk)
            for r, i in enumerate(chunk):
                key = contexts[i]
                ids_ok = ids_of[key[1]]
                top = torch.topk(logits[r, ids_ok], min(m, len(ids_ok))).indices.cpu().numpy()
                words = vocab.words(key[1])
                found[key] = tuple(words[j] for j in top)
                self._proposal_cache.put(key, (found[key], m))
        return found

    def clear_cache(self) -> None:
        """Forget cached proposals."""
        self._proposal_cache.clear()

    def stats(self) -> dict[str, float]:
        """Left contexts run for proposals, texts rescored, and seconds spent rescoring."""
        return {
            "contexts_scored": float(self.contexts_scored),
            "texts_rescored": float(self.texts_rescored),
            "rescore_seconds": self.rescore_seconds,
        }

    def __repr__(self) -> str:
        lm = self._lm_repr()
        return f"CausalRescoreFillIn({lm}, proposals={self.proposals}, batch_size={self.batch_size})"


def _repeat_cache(cache: Any, n: int) -> Any:
    """A copy of a key/value cache of batch size 1 repeated to batch size ``n`` (the
    original is left as it is, for the next chunk)."""
    import copy

    past = copy.deepcopy(cache)
    if n > 1:
        past.batch_repeat_interleave(n)
    return past


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    """The first index where two token sequences differ (the shorter length if one is a
    prefix of the other)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _left_context(text: Text, position: int) -> tuple[str, bool]:
    """The rendered text before word ``position`` (trailing whitespace removed), and
    whether whitespace preceded the word (pairs are rendered with one space between)."""
    column, start, _ = text.word_spans()[position]
    before = " ".join(text.columns[:column]) + (" " if column else "") + text.columns[column][:start]
    stripped = before.rstrip()
    return stripped, len(stripped) < len(before)
