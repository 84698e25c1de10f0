"""textrobust: audit how robust an English text classifier is to word substitutions.

Importing the package is cheap and has no side effects: heavy modules (torch,
transformers, spaCy, NLTK, pandas) load only when a component that needs them is used.
"""

from __future__ import annotations

import importlib
from typing import Any

from textrobust.errors import (
    AssetMissingError,
    CapabilityError,
    ConfigError,
    DataError,
    MissingDependencyError,
    QueryBudgetExceeded,
    RegistryError,
    SettingsError,
    StoreError,
    TextRobustError,
    VictimError,
)
from textrobust.text import Text

__version__ = "0.1.0"

# Public names loaded on first access: name -> module that defines it.
_LAZY = {
    "Config": "textrobust.config",
    "Registry": "textrobust.registry",
    "Example": "textrobust.data.examples",
    "Dataset": "textrobust.data.examples",
    "load_dataset": "textrobust.data",
    "Capabilities": "textrobust.victims.protocol",
    "Victim": "textrobust.victims.protocol",
    "GradientVictim": "textrobust.victims.protocol",
    "QueryLayer": "textrobust.victims.query",
    "QueryStats": "textrobust.victims.query",
    "FunctionVictim": "textrobust.victims.function",
    "SklearnVictim": "textrobust.victims.sklearn",
    "HuggingFaceVictim": "textrobust.victims.huggingface",
    "TorchVictim": "textrobust.victims.torch",
    "load_victim": "textrobust.zoo",
    "train_victim": "textrobust.zoo",
    "RunStore": "textrobust.store",
    "ANALYSES": "textrobust.analyses",
    "Analysis": "textrobust.analyses.protocol",
    "audit": "textrobust.audit",  # the module itself: textrobust.audit.run(...)
}

__all__ = [
    "ANALYSES",
    "Analysis",
    "AssetMissingError",
    "Capabilities",
    "CapabilityError",
    "Config",
    "ConfigError",
    "DataError",
    "Dataset",
    "Example",
    "FunctionVictim",
    "GradientVictim",
    "HuggingFaceVictim",
    "MissingDependencyError",
    "QueryBudgetExceeded",
    "QueryLayer",
    "QueryStats",
    "Registry",
    "RegistryError",
    "RunStore",
    "SettingsError",
    "SklearnVictim",
    "StoreError",
    "Text",
    "TextRobustError",
    "TorchVictim",
    "Victim",
    "VictimError",
    "__version__",
    "audit",
    "load_dataset",
    "load_victim",
    "train_victim",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'textrobust' has no attribute {name!r}")
    imported = importlib.import_module(module)
    value = imported if module == f"textrobust.{name}" else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
