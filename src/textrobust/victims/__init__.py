"""Victims: the classifiers textrobust audits, and the query layer in front of them.

Importing this package imports neither torch nor transformers: the wrappers that need
them import them when used. ``TorchVictim`` (the project's own models) is loaded on first
access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textrobust.victims.function import FunctionVictim
from textrobust.victims.huggingface import HuggingFaceVictim
from textrobust.victims.protocol import Capabilities, EmbeddingVictim, GradientVictim, Victim
from textrobust.victims.query import QueryLayer, QueryStats
from textrobust.victims.sklearn import SklearnVictim

if TYPE_CHECKING:
    from textrobust.victims.torch import TorchVictim

__all__ = [
    "Capabilities",
    "EmbeddingVictim",
    "FunctionVictim",
    "GradientVictim",
    "HuggingFaceVictim",
    "QueryLayer",
    "QueryStats",
    "SklearnVictim",
    "TorchVictim",
    "Victim",
]


def __getattr__(name: str) -> Any:
    if name == "TorchVictim":
        from textrobust.victims.torch import TorchVictim

        return TorchVictim
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
