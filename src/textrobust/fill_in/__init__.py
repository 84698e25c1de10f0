"""Language-model fill-in: whole words that fit a gap in a text, with their scores.

Every fill-in follows :class:`~textrobust.attack.candidates.fill_in.FillIn`:
``fill(requests, k)`` takes many ``(Text, position)`` requests at once and returns, per
request, up to ``k`` ``(word, score)`` pairs, best first. Words are whole words (sub-word
pieces, punctuation and special tokens are dropped); the original word may be among them.

Scores, for Algorithm 1 of the double-perturbation paper (kappa/delta thresholds):

- masked LMs (:class:`HuggingFaceFillIn`, :class:`MiniLMFillIn`): the raw logit at the mask;
- :class:`CausalRescoreFillIn`: ``log P(text with word) - log P(text)`` in nats;
- :class:`ProductFillIn`: masked-LM logit + weight x causal next-word logit (unnormalised
  log-probability of the product distribution).

Differences of scores are log-probability ratios in both cases. Routes:

========================  ==========================================================
``huggingface``           a local HF masked-LM folder (e.g. distilbert-base-uncased)
``minilm_mlm``            MiniLM + the MLM head trained by the project (ships here)
``minilm_tuned``          MiniLM with top layers + head fine-tuned by the project (ships here;
                          the default, :data:`DEFAULT_FILL_IN`)
``minilm_gemma``          the tuned MiniLM's logits + Gemma 3 270M's next-word logits from
                          the left context (a product of experts; optional extra ``lm``)
``causal_rescore``        Gemma 3 270M: propose from the left, rescore the sentence
========================  ==========================================================

>>> from textrobust.fill_in import FILL_INS, default_fill_in
>>> FILL_INS.names()
['causal_rescore', 'huggingface', 'minilm_gemma', 'minilm_mlm', 'minilm_tuned']
>>> fill_in = default_fill_in()                                   # doctest: +SKIP
>>> fill_in.fill([(Text.from_string("a deep and moving film ."), 3)], 20)  # doctest: +SKIP

Nothing heavy is imported until a fill-in is built.
"""

from __future__ import annotations

from textrobust.attack.candidates.fill_in import FillIn, FillInSource
from textrobust.fill_in.causal_rescore import CausalRescoreFillIn
from textrobust.fill_in.evaluation import FillInScore, masked_word_probes, recall_at_k
from textrobust.fill_in.huggingface import HuggingFaceFillIn
from textrobust.fill_in.masked import MaskedFillIn
from textrobust.fill_in.minilm_mlm import MiniLMFillIn
from textrobust.fill_in.product import ProductFillIn
from textrobust.fill_in.registry import (
    DEFAULT_FILL_IN,
    FILL_INS,
    default_fill_in,
    load_fill_in,
)
from textrobust.fill_in.whole_words import WholeWordVocab, whole_word_vocab

__all__ = [
    "DEFAULT_FILL_IN",
    "FILL_INS",
    "CausalRescoreFillIn",
    "FillIn",
    "FillInScore",
    "FillInSource",
    "HuggingFaceFillIn",
    "MaskedFillIn",
    "MiniLMFillIn",
    "ProductFillIn",
    "WholeWordVocab",
    "default_fill_in",
    "load_fill_in",
    "masked_word_probes",
    "recall_at_k",
    "whole_word_vocab",
]
