"""A one-layer (bidirectional) LSTM over word embeddings, max-pooled over time."""

from __future__ import annotations

import torch
from pydantic import Field
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from textrobust.config import Config
from textrobust.zoo.base import ZooModule

__all__ = ["LstmClassifier", "LstmConfig"]


class LstmConfig(Config):
    embed_dim: int = Field(50, ge=1)
    hidden: int = Field(100, ge=1)
    bidirectional: bool = True
    dropout: float = Field(0.3, ge=0.0, lt=1.0)


class LstmClassifier(ZooModule):
    """Packed sequences, so padding never enters the recurrence (in either direction);
    the outputs of real positions are max-pooled."""

    def __init__(self, config: LstmConfig, vocab_size: int, num_labels: int) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(vocab_size, config.embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(config.embed_dim, config.hidden, batch_first=True, bidirectional=config.bidirectional)
        self.dropout = nn.Dropout(config.dropout)
        self.out = nn.Linear(config.hidden * (2 if config.bidirectional else 1), num_labels)

    def forward_embedded(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = mask.sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.dropout(embeddings), lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        h, _ = pad_packed_sequence(output, batch_first=True, total_length=embeddings.shape[1])
        h = h.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)
        return self.out(self.dropout(h))
