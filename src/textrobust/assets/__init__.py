"""Offline assets: one place that finds every model, lexicon and data file textrobust uses.

Resolution order: explicit argument, environment variable, installed package, project cache
(``~/.cache/textrobust`` or ``$TEXTROBUST_CACHE``), files bundled with textrobust. Nothing
downloads at run time; a missing asset raises
:class:`~textrobust.errors.AssetMissingError` naming what to install or which option or
environment variable to set. ``prepare()`` does the install-time work once.

>>> from textrobust.assets import ASSETS, resolve
>>> "glove" in ASSETS
True
>>> resolve("stop_words").name
'stopwords.txt'
"""

from __future__ import annotations

from textrobust.assets.catalog import (
    ASSETS,
    CACHE_ENV,
    cache_dir,
    locate,
    resolve,
    status,
)
from textrobust.assets.loaders import (
    causal_lm,
    load_glove,
    sentence_encoder,
    spacy_pipeline,
    stop_words,
    wordnet,
)
from textrobust.assets.preparation import prepare
from textrobust.assets.spec import AssetSpec, AssetStatus

__all__ = [
    "ASSETS",
    "CACHE_ENV",
    "AssetSpec",
    "AssetStatus",
    "cache_dir",
    "causal_lm",
    "load_glove",
    "locate",
    "prepare",
    "resolve",
    "sentence_encoder",
    "spacy_pipeline",
    "status",
    "stop_words",
    "wordnet",
]
