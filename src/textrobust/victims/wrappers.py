"""The registry of victim wrappers: how a model of each kind becomes a Victim.

Factories are imported lazily so that listing them does not import torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from textrobust.registry import Registry

__all__ = ["VICTIM_WRAPPERS"]

VICTIM_WRAPPERS: Registry[Callable[..., Any]] = Registry("victim wrapper")


def _lazy(module: str, name: str) -> Callable[..., Any]:
    def build(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    build.__qualname__ = name
    return build


def _from_folder(*args: Any, **kwargs: Any) -> Any:
    from textrobust.victims.huggingface import HuggingFaceVictim

    return HuggingFaceVictim.from_folder(*args, **kwargs)


VICTIM_WRAPPERS.add("function", _lazy("textrobust.victims.function", "FunctionVictim"),
                    "a plain Python function texts -> probabilities (or logits)")
VICTIM_WRAPPERS.add("sklearn", _lazy("textrobust.victims.sklearn", "SklearnVictim"),
                    "a fitted scikit-learn pipeline with predict_proba on raw strings")
VICTIM_WRAPPERS.add("torch", _lazy("textrobust.victims.torch", "TorchVictim"),
                    "a PyTorch module + word-level tokenizer (the project's zoo)")
VICTIM_WRAPPERS.add("huggingface", _from_folder,
                    "a Hugging Face sequence classifier from a local folder (safetensors)")
