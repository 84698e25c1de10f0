"""A causal LM loaded on first use, for the fill-ins that need one, and its batched pass.

:class:`~textrobust.fill_in.causal_rescore.CausalRescoreFillIn` and
:class:`~textrobust.fill_in.product.ProductFillIn` take a :class:`~textrobust.lm.CausalLM`
or None; with None, Gemma 3 270M (:meth:`CausalLM.default`) is loaded the first time
:attr:`LazyCausalLM.lm` is read, on the fill-in's placement (the run's ``--device`` and
``--dtype``; None: the CPU in float32), so building the fill-in stays cheap.
"""

from __future__ import annotations

from typing import Any

from textrobust.devices import Placement

__all__ = ["LazyCausalLM"]


class LazyCausalLM:
    """Mixin: ``self._lm`` (a CausalLM or None) behind a loading :attr:`lm` property;
    ``self._placement`` is where a default LM loads (None: the CPU in float32)."""

    _lm: Any = None
    _placement: Placement | None = None

    @property
    def lm(self) -> Any:
        if self._lm is None:
            from textrobust.lm import CausalLM

            self._lm = CausalLM.default(placement=self._placement)
        return self._lm

    def _hidden_batches(self, rows: list[list[int]], batch_size: int, *, keep_cache: bool = False) -> Any:
        """Yields ``(indices into rows, last hidden states [B, T, H], attention mask [B, T],
        key/value cache or None)`` for right-padded batches of ``batch_size`` rows of token
        ids, sorted by length (the cache only with ``keep_cache``)."""
        import torch

        lm = self.lm
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        for b in range(0, len(order), batch_size):
            chunk = order[b : b + batch_size]
            ids, mask = lm.pad_rows([rows[i] for i in chunk])
            with torch.inference_mode():
                out = lm.model.base_model(input_ids=ids, attention_mask=mask, use_cache=keep_cache)
            yield chunk, out[0], mask, (out.past_key_values if keep_cache else None)

    def _lm_repr(self) -> str:
        """The LM for ``__repr__``, without loading it."""
        return repr(self._lm) if self._lm is not None else "CausalLM.default() (not loaded)"
