"""In-context scores of a substitute from a masked LM that sees the target word (issue 39).

Masking the target (BAE, the fill-in) asks "what fits this slot?", which ignores what the
word *was*: the slot "Spielberg's ___ is smarter" takes "painting" as happily as "film".
The lexical-substitution literature keeps the target visible instead:

- Zhou et al. (2019), "BERT-based Lexical Substitution" (ACL): the substitute's
  probability at the position with the target still (partly) visible, and a *validation
  score*, how little the contextual representations of the sentence's other tokens move
  when the word is replaced;
- Arefyev et al. (2020), "A Comparative Study of Lexical Substitution Approaches based on
  Neural Language Models" (COLING): the unmasked target's distribution as a strong signal.

For a candidate ``s`` for the word ``w`` at position ``p``, :class:`VisibleScorer` gives:

- ``visible``: ``log p(s) - log p(w)`` at ``p`` of the original sentence, ``w`` visible;
- ``reverse``: ``log p(w) - log p(s)`` at ``p`` of the sentence with ``s`` in place, ``s``
  visible: does the model, reading the new sentence, still find the original word likely
  there (a collocation check: "crack a grin" does not call for "smile" as "crack a smile"
  calls for "grin"... and the reverse reading catches what the forward one misses);
- ``validation``: the mean cosine between the last-layer states of the sentence's other
  tokens before and after the swap (Zhou et al.'s validation score, unweighted);
- ``target``: the cosine between the target's own contextual states (mean of its
  sub-tokens) before and after.

One encoder pass for the original sentence (however many of its positions are asked about)
and one per candidate, batched per sentence.
The model is the project's tuned MiniLM (:mod:`textrobust.fill_in.minilm_tuned`), any
object with ``tokenizer``, ``encoder``, ``head``, ``layers`` and ``vocab`` as
:class:`~textrobust.fill_in.minilm_mlm.MiniLMFillIn`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from textrobust.text import Text

__all__ = ["ContextualScores", "VisibleScorer", "visible_log_probs"]


class ContextualScores(NamedTuple):
    """The four scores of one candidate (``visible``/``reverse`` None when the word or the
    substitute is not one whole-word vocabulary entry)."""

    visible: float | None
    reverse: float | None
    validation: float
    target: float


class VisibleScorer:
    """Target-visible scores from a MiniLM-style masked LM (``fill_in``)."""

    def __init__(self, fill_in: Any, *, batch_size: int = 32) -> None:
        self.fill_in = fill_in
        self.batch_size = batch_size
        self._index: dict[bool, dict[str, int]] = {}

    def visible(self, text: Text, positions: Sequence[int]) -> dict[int, tuple[bool, Any]]:
        """:func:`visible_log_probs` of this scorer's model."""
        return visible_log_probs(self.fill_in, text, positions)

    def word_index(self, spaced: bool) -> dict[str, int]:
        """Lower-case whole word -> its token id (for :meth:`visible`'s distributions)."""
        return self._word_index(spaced)

    def _word_index(self, spaced: bool) -> dict[str, int]:
        found = self._index.get(spaced)
        if found is None:
            vocab = self.fill_in.vocab
            words = vocab.words(spaced)
            ids = vocab.ids(spaced)
            found = {}
            for word, token in zip(words, ids):
                found.setdefault(word.lower(), int(token))
            self._index[spaced] = found
        return found

    def score(self, text: Text, items: Sequence[tuple[int, str]]) -> list[ContextualScores]:
        """The scores of each ``(position, substitute)`` of ``text``."""
        if not items:
            return []
        import torch
        import torch.nn.functional as F

        from textrobust.fill_in.minilm_mlm import head_logits

        spans = text.word_spans()
        rows: list[tuple[str, int, int]] = []  # (string of the word's column, word start, word end)
        for position, substitute in items:
            column, start, end = spans[position]
            rows.append((text.columns[column], start, end))
        # the sentence is encoded once, however many of its positions are asked about (its
        # states do not depend on which word is the target); each candidate once
        strings: list[str] = sorted({string for string, _, _ in rows})
        original_row = {string: r for r, string in enumerate(strings)}
        spans_of: dict[int, set[tuple[int, int]]] = {}
        for string, start, end in rows:
            spans_of.setdefault(original_row[string], set()).add((start, end))
        where: dict[int, tuple[int, int]] = {}  # char span of the substitute in each candidate row
        cand_row: list[int] = []
        for (position, substitute), (string, start, end) in zip(items, rows):
            cand_row.append(len(strings))
            where[len(strings)] = (start, start + len(substitute))
            strings.append(string[:start] + substitute + string[end:])
        tokenizer = self.fill_in.tokenizer
        encoded = tokenizer(strings, return_offsets_mapping=True, truncation=True,
                            max_length=getattr(self.fill_in, "max_length", 128), padding=True, return_tensors="pt")
        offsets = encoded.pop("offset_mapping").tolist()
        encoder = self.fill_in.encoder
        device = next(encoder.parameters()).device
        inputs = {k: v.to(device) for k, v in encoded.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        lasts: list[Any] = []
        # (row, the target's char span) -> its tokens and its row of logit_rows
        targets: dict[tuple[int, tuple[int, int]], list[int]] = {}
        logit_of: dict[tuple[int, tuple[int, int]], int] = {}
        logit_rows: list[Any] = []
        with torch.inference_mode():
            for lo in range(0, len(strings), self.batch_size):
                batch = {k: v[lo : lo + self.batch_size] for k, v in inputs.items()}
                out = encoder(**batch, output_hidden_states=True)
                hidden = out.hidden_states
                for b in range(batch["input_ids"].shape[0]):
                    r = lo + b
                    n = int(batch["attention_mask"][b].sum())
                    lasts.append(hidden[-1][b, :n].float())
                    for span in sorted(spans_of[r]) if r in spans_of else [where[r]]:
                        tokens = _target_tokens(offsets[r], span)
                        targets[(r, span)] = tokens
                        first = tokens[0] if tokens else 0
                        logit_of[(r, span)] = len(logit_rows)
                        logit_rows.append(torch.stack([hidden[x][b, first] for x in self.fill_in.layers]))
            embeddings = encoder.get_input_embeddings().weight
            logits = head_logits(self.fill_in.head, torch.stack(logit_rows), embeddings,
                                 eps=getattr(self.fill_in, "_eps", 1e-12)).float()
        out_scores: list[ContextualScores] = []
        words = text.words
        for (position, substitute), (string, start, end), c in zip(items, rows, cand_row):
            o = (original_row[string], (start, end))
            cand = (c, where[c])
            spaced = start == 0 or string[start - 1].isspace()
            index = self._word_index(spaced)
            w_id, s_id = index.get(words[position].lower()), index.get(substitute.lower())
            visible = reverse = None
            if w_id is not None and s_id is not None and targets[o] and targets[cand]:
                lp_o = torch.log_softmax(logits[logit_of[o]], dim=0)
                lp_c = torch.log_softmax(logits[logit_of[cand]], dim=0)
                visible = round(float(lp_o[s_id] - lp_o[w_id]), 4)
                reverse = round(float(lp_c[w_id] - lp_c[s_id]), 4)
            validation, target = _moved(lasts[o[0]], targets[o], lasts[c], targets[cand])
            out_scores.append(ContextualScores(visible, reverse, round(validation, 4), round(target, 4)))
        return out_scores


def _target_tokens(offsets: list[list[int]], span: tuple[int, int]) -> list[int]:
    """Token indices whose characters fall inside ``span`` (special tokens have (0, 0))."""
    start, end = span
    return [i for i, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]


def _moved(before: Any, t_before: list[int], after: Any, t_after: list[int]) -> tuple[float, float]:
    """(mean cosine of the other tokens' states, cosine of the target's mean state)."""
    import torch.nn.functional as F

    if not t_before or not t_after:
        return 0.0, 0.0
    head = t_before[0]  # tokens before the target line up; so do those after it
    tail_b = before.shape[0] - t_before[-1] - 1
    tail_a = after.shape[0] - t_after[-1] - 1
    tail = min(tail_b, tail_a)
    pairs_b = [*range(head), *range(before.shape[0] - tail, before.shape[0])]
    pairs_a = [*range(head), *range(after.shape[0] - tail, after.shape[0])]
    others = float(F.cosine_similarity(before[pairs_b], after[pairs_a], dim=-1).mean()) if pairs_b else 1.0
    target = float(F.cosine_similarity(before[t_before].mean(0), after[t_after].mean(0), dim=0))
    return others, target


def visible_log_probs(fill_in: Any, text: Text, positions: Sequence[int]) -> dict[int, tuple[bool, Any]]:
    """For each position, ``(spaced, log-probabilities over the model's token vocabulary)``
    at the word's first sub-token with the word itself visible (Zhou et al. 2019's target-
    visible distribution; Arefyev et al. 2020): one encoder pass for the whole sentence. A
    position whose word the tokeniser cut off (past ``max_length``) is left out."""
    if not positions:
        return {}
    import torch

    from textrobust.fill_in.minilm_mlm import head_logits

    spans = text.word_spans()
    by_column: dict[int, list[int]] = {}
    for position in positions:
        by_column.setdefault(spans[position][0], []).append(position)
    tokenizer, encoder = fill_in.tokenizer, fill_in.encoder
    device = next(encoder.parameters()).device
    out: dict[int, tuple[bool, Any]] = {}
    columns = sorted(by_column)
    encoded = tokenizer([text.columns[c] for c in columns], return_offsets_mapping=True, truncation=True,
                        max_length=getattr(fill_in, "max_length", 128), padding=True, return_tensors="pt")
    offsets = encoded.pop("offset_mapping").tolist()
    inputs = {k: v.to(device) for k, v in encoded.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    rows: list[Any] = []
    owners: list[tuple[int, bool]] = []
    with torch.inference_mode():
        hidden = encoder(**inputs, output_hidden_states=True).hidden_states
        for r, column in enumerate(columns):
            string = text.columns[column]
            for position in by_column[column]:
                _, start, end = spans[position]
                tokens = _target_tokens(offsets[r], (start, end))
                if not tokens:
                    continue
                rows.append(torch.stack([hidden[x][r, tokens[0]] for x in fill_in.layers]))
                owners.append((position, start == 0 or string[start - 1].isspace()))
        if not rows:
            return {}
        logits = head_logits(fill_in.head, torch.stack(rows), encoder.get_input_embeddings().weight,
                             eps=getattr(fill_in, "_eps", 1e-12)).float()
        logp = torch.log_softmax(logits, dim=-1).cpu()
    for (position, spaced), row in zip(owners, logp):
        out[position] = (spaced, row)
    return out
