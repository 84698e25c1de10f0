"""Keep Hugging Face libraries from reaching the hub: textrobust never downloads at run time."""

from __future__ import annotations

import os

__all__ = ["hf_offline"]

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def hf_offline() -> None:
    """Switch the Hugging Face libraries to offline mode for this process.

    Call it before importing ``transformers`` or ``sentence_transformers``; those read the
    variables at import time, so every loader also passes ``local_files_only=True``. A
    value the user set already is left alone.
    """
    for name in _OFFLINE_VARS:
        os.environ.setdefault(name, "1")
