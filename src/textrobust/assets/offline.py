"""Keep Hugging Face libraries from reaching the hub: textrobust never downloads at run time."""

from __future__ import annotations

import os
import sys

__all__ = ["hf_offline"]

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def hf_offline() -> None:
    """Switch the Hugging Face libraries to offline mode for this process.

    Call it before importing ``transformers`` or ``sentence_transformers``; those read the
    variables at import time, so every loader also passes ``local_files_only=True``. A
    value the user set already is left alone. Their progress bars are switched off too
    (``HF_HUB_DISABLE_PROGRESS_BARS=0`` keeps them).
    """
    for name in _OFFLINE_VARS:
        os.environ.setdefault(name, "1")
    # Their model-loading progress bars would interleave with ours: off, unless asked for.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "transformers" in sys.modules and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1":
        sys.modules["transformers"].utils.logging.disable_progress_bar()
