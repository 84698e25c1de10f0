"""Bag of words: the mean of the word embeddings, then a linear layer (or a small MLP)."""

from __future__ import annotations

import torch
from pydantic import Field
from torch import nn

from textrobust.config import Config
from textrobust.zoo.base import ZooModule, masked_mean

__all__ = ["BowClassifier", "BowConfig"]


class BowConfig(Config):
    """``hidden=0``: mean embedding -> linear; ``hidden>0``: one ReLU hidden layer."""

    embed_dim: int = Field(50, ge=1)
    hidden: int = Field(0, ge=0)
    dropout: float = Field(0.3, ge=0.0, lt=1.0)


class BowClassifier(ZooModule):
    """Mean of word embeddings -> (dropout) -> [hidden ReLU layer] -> logits."""

    def __init__(self, config: BowConfig, vocab_size: int, num_labels: int) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(vocab_size, config.embed_dim, padding_idx=0)
        self.dropout = nn.Dropout(config.dropout)
        if config.hidden:
            self.head: nn.Module = nn.Sequential(
                nn.Linear(config.embed_dim, config.hidden), nn.ReLU(), nn.Linear(config.hidden, num_labels)
            )
        else:
            self.head = nn.Linear(config.embed_dim, num_labels)

    def forward_embedded(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.dropout(masked_mean(embeddings, mask)))
