"""Keep Hugging Face libraries from reaching the hub: textrobust never downloads at run time."""

from __future__ import annotations

import logging
import os
import sys
import warnings

__all__ = ["hf_offline", "quiet_transformers_notices"]

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
    quiet_transformers_notices()


#: Deprecation notices of transformers about the names textrobust passes on purpose (its
#: supported range, transformers>=4.45, has only ``past_key_values``): the user cannot act
#: on them, so they are dropped. Matched by message and by transformers' own modules only.
_DEPRECATED_CACHE_WARNING = r"`(past_key_values|cache_params)` is deprecated"
_DEPRECATED_CACHE_LOG = "`past_key_values`/`cache_params` are deprecated"


class _DropMessage(logging.Filter):
    """Drops the log records whose message starts with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefix)


def quiet_transformers_notices() -> None:
    """Silence transformers' ``past_key_values`` deprecation (its FutureWarning and its
    logged notice) in this process; nothing else. Idempotent; called by :func:`hf_offline`,
    i.e. wherever transformers is about to be used, process-pool workers included."""
    warnings.filterwarnings("ignore", message=_DEPRECATED_CACHE_WARNING, category=FutureWarning,
                            module=r"transformers(\.|$)")
    logger = logging.getLogger("transformers.utils.generic")
    if not any(isinstance(f, _DropMessage) for f in logger.filters):
        logger.addFilter(_DropMessage(_DEPRECATED_CACHE_LOG))
