"""Which entries of a sub-word vocabulary are whole words, and where a word may start.

A language model predicts *tokens*; the fill-in interface returns *words*. Following the
double-perturbation paper (Zhang et al. 2021, ``double-perturbation-second-order-robustness-
and-bias.txt``, Algorithm 1), which fills a mask with single tokens of the masked LM, a
candidate is a vocabulary entry that is one whole word by itself; sub-word pieces
("##ing"), punctuation, numbers-with-symbols and special tokens ("[CLS]", "<unused3>") are
dropped.

Three tokenizer conventions are recognised:

- WordPiece (BERT, DistilBERT, MiniLM): continuation pieces start with ``##``; every other
  entry may start a word, after a space or not;
- byte-level BPE (GPT-2, RoBERTa): a word after a space is spelled ``Ġword``; an entry
  without ``Ġ`` continues a word or starts one with no space before it (start of the text,
  after "(");
- SentencePiece (Gemma, ALBERT, XLM-R, T5): as BPE with ``▁`` instead of ``Ġ``.

:class:`WholeWordVocab` keeps, for each convention, the entries that may follow a space
(``spaced``) and those that may follow no space (``unspaced``), as id arrays and their
words. It never imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.attack.candidates.inflection import is_word

__all__ = ["WholeWordVocab", "whole_word_vocab"]

_MARKERS = ("Ġ", "▁")


@dataclass(frozen=True)
class WholeWordVocab:
    """The whole-word entries of a vocabulary.

    ``spaced_ids``/``spaced_words``: entries that can be a whole word after a space;
    ``unspaced_ids``/``unspaced_words``: entries that can be a whole word with no space
    before it. For WordPiece both are the same. ``convention`` is ``"wordpiece"``,
    ``"bpe"`` (``Ġ``) or ``"sentencepiece"`` (``▁``).
    """

    convention: str
    spaced_ids: np.ndarray
    spaced_words: tuple[str, ...]
    unspaced_ids: np.ndarray
    unspaced_words: tuple[str, ...]

    def ids(self, spaced: bool) -> np.ndarray:
        return self.spaced_ids if spaced else self.unspaced_ids

    def words(self, spaced: bool) -> tuple[str, ...]:
        return self.spaced_words if spaced else self.unspaced_words

    def __len__(self) -> int:
        return len(self.spaced_ids)

    def __repr__(self) -> str:
        return (
            f"WholeWordVocab({self.convention}, spaced={len(self.spaced_ids)}, "
            f"unspaced={len(self.unspaced_ids)})"
        )


def whole_word_vocab(tokenizer: Any) -> WholeWordVocab:
    """The :class:`WholeWordVocab` of a Hugging Face tokenizer (from its raw token strings)."""
    size = len(tokenizer)
    tokens = tokenizer.convert_ids_to_tokens(list(range(size)))
    special = {int(i) for i in (getattr(tokenizer, "all_special_ids", None) or ())}
    return vocab_from_tokens(tokens, special)


def vocab_from_tokens(tokens: Sequence[str | None], special: set[int] | frozenset[int] = frozenset()) -> WholeWordVocab:
    """The :class:`WholeWordVocab` of raw token strings (index = token id)."""
    strings = [t if isinstance(t, str) else "" for t in tokens]
    convention = _convention(strings)
    spaced: list[tuple[int, str]] = []
    unspaced: list[tuple[int, str]] = []
    for i, token in enumerate(strings):
        if i in special or not token:
            continue
        if convention == "wordpiece":
            if not token.startswith("##") and is_word(token):
                spaced.append((i, token))
                unspaced.append((i, token))
            continue
        marker = "Ġ" if convention == "bpe" else "▁"
        if token.startswith(marker):
            word = token[len(marker):]
            if is_word(word):
                spaced.append((i, word))
        elif is_word(token):
            unspaced.append((i, token))
    return WholeWordVocab(
        convention,
        np.array([i for i, _ in spaced], dtype=np.int64),
        tuple(w for _, w in spaced),
        np.array([i for i, _ in unspaced], dtype=np.int64),
        tuple(w for _, w in unspaced),
    )


def _convention(tokens: Sequence[str]) -> str:
    counts = {m: sum(1 for t in tokens if t.startswith(m)) for m in (*_MARKERS, "##")}
    if counts["##"] >= max(counts["Ġ"], counts["▁"]) and counts["##"] > 0:
        return "wordpiece"
    if counts["Ġ"] > counts["▁"]:
        return "bpe"
    if counts["▁"] > 0:
        return "sentencepiece"
    return "wordpiece"  # no markers at all: every entry is a word on its own
