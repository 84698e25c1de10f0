"""The zoo's architectures: a registry of lightweight specs that import torch only when used.

Each :class:`Architecture` names the module holding its model and config classes, how
its token ids are made (``kind``: ``"word"`` for :class:`~textrobust.zoo.vocab.WordVocab`
models, ``"huggingface"`` for a fine-tuned Hugging Face encoder), whether its word
embeddings start from GloVe, and its training defaults (see
:class:`~textrobust.zoo.training.TrainingConfig`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.registry import Registry

__all__ = ["ZOO", "Architecture"]


@dataclass(frozen=True)
class Architecture:
    """How to build, configure and train one kind of zoo model."""

    name: str
    module: str
    model_class: str
    config_class: str
    kind: str = "word"
    training: Mapping[str, Any] = field(default_factory=dict)

    def _module(self) -> Any:
        return importlib.import_module(self.module)

    def config_type(self) -> type[Config]:
        return getattr(self._module(), self.config_class)

    def model_type(self) -> type:
        return getattr(self._module(), self.model_class)

    def make_config(self, config: Config | Mapping[str, Any] | None = None) -> Config:
        """The model config: defaults, a mapping of overrides, or a config of the right type."""
        kind = self.config_type()
        if config is None:
            return kind()
        if isinstance(config, kind):
            return config
        if isinstance(config, Config):
            raise ConfigError(
                f"The 'config' parameter for architecture '{self.name}' must be a {kind.__name__} "
                f"or a mapping. Got a {type(config).__name__} instead."
            )
        if not isinstance(config, Mapping):
            raise ConfigError(
                f"The 'config' parameter for architecture '{self.name}' must be a {kind.__name__} "
                f"or a mapping. Got {config!r} instead."
            )
        return kind(**dict(config))

    def build(self, config: Config, vocab_size: int, num_labels: int) -> Any:
        """A freshly initialised model (word architectures only)."""
        return self.model_type()(config, vocab_size, num_labels)


ZOO: Registry[Architecture] = Registry("victim architecture")

ZOO.add(
    "bow",
    Architecture("bow", "textrobust.zoo.bow", "BowClassifier", "BowConfig", training={"lr": 5e-3, "epochs": 20, "patience": 4}),
    "Bag of words: mean of GloVe-initialised word embeddings -> linear layer.",
)
ZOO.add(
    "cnn",
    Architecture("cnn", "textrobust.zoo.cnn", "CnnClassifier", "CnnConfig", training={"lr": 1e-3, "epochs": 10}),
    "Word CNN (Kim 2014): filter widths 3/4/5 x 100, max-pool over time; GloVe-initialised.",
)
ZOO.add(
    "lstm",
    Architecture("lstm", "textrobust.zoo.lstm", "LstmClassifier", "LstmConfig", training={"lr": 1e-3, "epochs": 10}),
    "One-layer biLSTM (100 per direction), max-pooled; GloVe-initialised.",
)
ZOO.add(
    "lstm_att",
    Architecture("lstm_att", "textrobust.zoo.lstm_att", "LstmAttClassifier", "LstmAttConfig", training={"lr": 1e-3, "epochs": 10}),
    "BiLSTM (100 per direction) with additive attention (Ivankay et al. 2022's LSTMAtt); returns attention.",
)
ZOO.add(
    "transformer",
    Architecture(
        "transformer", "textrobust.zoo.transformer", "TransformerClassifier", "TransformerConfig",
        training={"lr": 1e-3, "epochs": 15, "patience": 4},
    ),
    "Small Transformer encoder: 2 layers, 4 heads, d_model 64, learned positions; returns attention.",
)
ZOO.add(
    "minilm",
    Architecture(
        "minilm", "textrobust.zoo.minilm", "MiniLMClassifier", "MiniLMConfig", kind="huggingface",
        training={
            "lr": 1e-4, "epochs": 1, "batch_size": 32, "patience": 1, "weight_decay": 0.01,
            "warmup_ratio": 0.1, "linear_decay": True, "clip": 1.0,
        },
    ),
    "all-MiniLM-L6-v2 fine-tuned as a sequence classifier (slow to train; Hugging Face folder).",
)
