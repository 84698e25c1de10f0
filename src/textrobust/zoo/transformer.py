"""A small Transformer encoder: learned positions, pre-LayerNorm blocks, mean pooling.

Two layers, four heads and d_model 64 by default. Word embeddings (50-d, GloVe-sized)
are projected to ``d_model`` when the sizes differ. ``forward_embedded(...,
return_attention=True)`` also returns the attention weights ``[B, layers, heads, T, T]``.
"""

from __future__ import annotations

import math
from typing import Literal, overload

import torch
import torch.nn.functional as F
from pydantic import Field, model_validator
from torch import nn

from textrobust.config import Config
from textrobust.zoo.base import ZooModule, masked_mean

__all__ = ["TransformerClassifier", "TransformerConfig"]


class TransformerConfig(Config):
    embed_dim: int = Field(50, ge=1)
    d_model: int = Field(64, ge=1)
    heads: int = Field(4, ge=1)
    layers: int = Field(2, ge=1)
    ff: int = Field(128, ge=1)
    max_positions: int = Field(128, ge=1)
    dropout: float = Field(0.1, ge=0.0, lt=1.0)

    @model_validator(mode="after")
    def _heads_divide(self) -> TransformerConfig:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        return self


class _Block(nn.Module):
    def __init__(self, d_model: int, heads: int, ff: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, ff), nn.GELU(), nn.Linear(ff, d_model))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads)  # [B, H, T, T]
        attn = F.softmax(scores.masked_fill(~mask[:, None, None, :], float("-inf")), dim=-1)
        mixed = (self.dropout(attn) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.dropout(self.proj(mixed))
        x = x + self.dropout(self.ff(self.ln2(x)))
        return x, attn


class TransformerClassifier(ZooModule):
    """Embeddings (+ projection) + learned positions -> blocks -> LayerNorm -> masked mean -> linear."""

    has_attention = True

    def __init__(self, config: TransformerConfig, vocab_size: int, num_labels: int) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(vocab_size, config.embed_dim, padding_idx=0)
        self.project: nn.Module = (
            nn.Identity() if config.embed_dim == config.d_model else nn.Linear(config.embed_dim, config.d_model)
        )
        self.positions = nn.Embedding(config.max_positions, config.d_model)
        self.blocks = nn.ModuleList(
            _Block(config.d_model, config.heads, config.ff, config.dropout) for _ in range(config.layers)
        )
        self.norm = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        self.out = nn.Linear(config.d_model, num_labels)

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
        if t > self.config.max_positions:
            from textrobust.errors import VictimError

            raise VictimError(
                f"TransformerClassifier got {t} tokens; it has {self.config.max_positions} positions "
                f"(max_positions). Encode with max_length <= max_positions."
            )
        x = self.project(embeddings) + self.positions.weight[:t].unsqueeze(0)
        x = self.dropout(x)
        attentions = []
        for block in self.blocks:
            x, attn = block(x, mask)
            attentions.append(attn)
        logits = self.out(self.dropout(masked_mean(self.norm(x), mask)))
        if return_attention:
            return logits, torch.stack(attentions, dim=1)
        return logits
