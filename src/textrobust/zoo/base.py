"""What every zoo model shares: a word embedding, ``embed``, ``forward_embedded``, ``forward``.

A zoo model is a ``torch.nn.Module`` built as ``Model(config, vocab_size, num_labels)``.
``embed(ids)`` looks up word embeddings ``[B, T, D]``; ``forward_embedded(embeddings,
mask)`` maps them to logits ``[B, L]``; ``forward(ids, mask)`` is the composition. Bounds,
attributions and MSR work on ``forward_embedded``. Padding positions (``mask`` False)
never change the logits of a row, so a text's answer does not depend on its batch.

This module imports torch: import it only where torch is needed.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = ["ZooModule", "masked_mean"]


class ZooModule(nn.Module):
    """Base class of the zoo's models. Subclasses set ``self.embedding`` and implement
    :meth:`forward_embedded`."""

    #: True when ``forward_embedded(..., return_attention=True)`` is supported.
    has_attention: bool = False
    embedding: nn.Embedding

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Word embeddings ``[B, T, D]`` of token ids ``[B, T]``."""
        return self.embedding(ids)

    def forward_embedded(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.forward_embedded(self.embed(ids), mask)

    @torch.no_grad()
    def load_vectors(self, vectors: np.ndarray) -> None:
        """Copy ``vectors`` [vocab_size, D] into the embedding table (row 0, padding, stays 0)."""
        weight = self.embedding.weight
        if tuple(vectors.shape) != tuple(weight.shape):
            from textrobust.errors import ConfigError

            raise ConfigError(
                f"Initial vectors of shape {tuple(vectors.shape)} do not fit the embedding table "
                f"of shape {tuple(weight.shape)} (vocab size x embed_dim)."
            )
        weight.copy_(torch.from_numpy(np.asarray(vectors, dtype=np.float32)))
        weight[0].zero_()

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` [B, T, D] over the positions where ``mask`` [B, T] is True."""
    m = mask.unsqueeze(-1).to(x.dtype)
    return (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
