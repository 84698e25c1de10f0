"""A word CNN in the style of Kim (2014): parallel convolutions of widths 3/4/5 with ReLU,
max-pooled over time, then dropout and a linear layer.

Kim, "Convolutional Neural Networks for Sentence Classification", EMNLP 2014. Departures:
50-d GloVe instead of 300-d word2vec, and Adam instead of Adadelta.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field, PositiveInt
from torch import nn

from textrobust.config import Config
from textrobust.zoo.base import ZooModule
from textrobust.zoo.cnn_edits import edited_forward, grouped_edited_forward

__all__ = ["CnnClassifier", "CnnConfig"]


class CnnConfig(Config):
    embed_dim: int = Field(50, ge=1)
    widths: tuple[PositiveInt, ...] = Field((3, 4, 5), min_length=1)
    filters: int = Field(100, ge=1)
    dropout: float = Field(0.5, ge=0.0, lt=1.0)


class CnnClassifier(ZooModule):
    """Each window starts on a real word; windows run past the end over zero vectors, so
    a text's answer does not depend on how far its batch is padded.

    At inference, a batch whose rows are edits of one text (an attack's candidates, a
    leave-one-out ranking) is evaluated incrementally (:mod:`textrobust.zoo.cnn_edits`):
    same logits up to float32 rounding, 2-4x less time; so is a batch that joins several
    such runs (the lockstep executor's merged requests); ``incremental = False`` turns it
    off."""

    def __init__(self, config: CnnConfig, vocab_size: int, num_labels: int) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(vocab_size, config.embed_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(config.embed_dim, config.filters, w) for w in config.widths)
        self.dropout = nn.Dropout(config.dropout)
        self.out = nn.Linear(config.filters * len(config.widths), num_labels)

    #: Evaluate batches of edits of one text incrementally at inference (see
    #: :mod:`textrobust.zoo.cnn_edits`); False always runs the full convolution.
    incremental: bool = True

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.incremental and not self.training and not torch.is_grad_enabled():
            logits = edited_forward(self, ids, mask)
            if logits is None:  # several texts' edits in one batch (lockstep executor)?
                logits = grouped_edited_forward(self, ids, mask)
            if logits is not None:
                return logits
        return self.forward_embedded(self.embed(ids), mask)

    def forward_embedded(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = (embeddings * mask.unsqueeze(-1).to(embeddings.dtype)).transpose(1, 2)  # [B, D, T]
        blocked = ~mask.unsqueeze(1)  # [B, 1, T]: windows starting on padding
        pooled = []
        for conv, width in zip(self.convs, self.config.widths):
            h = F.relu(conv(F.pad(x, (0, width - 1))))  # [B, F, T]
            pooled.append(h.masked_fill(blocked, 0.0).amax(dim=2))  # ReLU >= 0, so 0 is neutral
        return self.out(self.dropout(torch.cat(pooled, dim=1)))
