"""LSTMAtt: a bidirectional LSTM with an additive attention layer (Bahdanau et al. 2014).

The attention model of Ivankay et al. (../shared/papers/attribution-robustness-tea.txt,
section 5.1, "an LSTM with an attention layer"): ``u_t = tanh(W h_t + b)``,
``alpha = softmax_t(v . u_t)`` over the real positions, ``c = sum_t alpha_t h_t``,
logits ``= Linear(c)``. The paper's appendix sizes are not in our copy of the paper; we use
the zoo LSTM's (50-d GloVe embeddings, 100 units per direction) and a 64-d attention layer.

``forward_embedded(..., return_attention=True)`` also returns the attention in the zoo's
shape ``[B, layers=1, heads=1, T, T]``: every query row holds the same vector ``alpha``,
so :meth:`~textrobust.victims.torch.TorchVictim.attentions` and the attention attribution
(mean over queries) read exactly ``alpha``.
"""

from __future__ import annotations

from typing import Literal, overload

import torch
from pydantic import Field
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from textrobust.config import Config
from textrobust.zoo.base import ZooModule

__all__ = ["LstmAttClassifier", "LstmAttConfig"]


class LstmAttConfig(Config):
    embed_dim: int = Field(50, ge=1)
    hidden: int = Field(100, ge=1)
    attention_dim: int = Field(64, ge=1)
    bidirectional: bool = True
    dropout: float = Field(0.3, ge=0.0, lt=1.0)


class LstmAttClassifier(ZooModule):
    """Packed BiLSTM -> additive attention over real positions -> linear."""

    has_attention = True

    def __init__(self, config: LstmAttConfig, vocab_size: int, num_labels: int) -> None:
        super().__init__()
        self.config = config
        width = config.hidden * (2 if config.bidirectional else 1)
        self.embedding = nn.Embedding(vocab_size, config.embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(config.embed_dim, config.hidden, batch_first=True, bidirectional=config.bidirectional)
        self.attention = nn.Linear(width, config.attention_dim)
        self.score = nn.Linear(config.attention_dim, 1, bias=False)
        self.dropout = nn.Dropout(config.dropout)
        self.out = nn.Linear(width, num_labels)

    @overload
    def forward_embedded(
        self, embeddings: torch.Tensor, mask: torch.Tensor, return_attention: Literal[False] = False
    ) -> torch.Tensor: ...

    @overload
    def forward_embedded(
        self, embeddings: torch.Tensor, mask: torch.Tensor, return_attention: Literal[True]
    ) -> tuple[torch.Tensor, torch.Tensor]: ...

    def forward_embedded(
        self, embeddings: torch.Tensor, mask: torch.Tensor, return_attention: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        t = embeddings.shape[1]
        lengths = mask.sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.dropout(embeddings), lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        h, _ = pad_packed_sequence(output, batch_first=True, total_length=t)  # [B, T, width]
        scores = self.score(torch.tanh(self.attention(h))).squeeze(-1)  # [B, T]
        alpha = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)
        alpha = torch.nan_to_num(alpha)  # a row without real positions attends to nothing
        context = (alpha.unsqueeze(-1) * h).sum(dim=1)
        logits = self.out(self.dropout(context))
        if return_attention:
            rows = alpha[:, None, None, None, :].expand(-1, 1, 1, t, t) * mask[:, None, None, :, None]
            return logits, rows
        return logits
