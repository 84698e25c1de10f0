"""The default victim: trained once on Rotten Tomatoes, then loaded from the cache."""

from __future__ import annotations

from pathlib import Path

from textrobust.zoo.training import Progress

__all__ = ["DEFAULT_ARCH", "DEFAULT_DATASET", "default_victim_dir", "ensure_default_victim"]

#: The architecture of the default victim: the word CNN trains to good accuracy in about
#: a minute on two cores (see benchmarks/results/zoo.md).
DEFAULT_ARCH = "cnn"
DEFAULT_DATASET = "rotten_tomatoes"


def default_victim_dir() -> Path:
    """``<cache>/victims/default``, where the cache is ``$TEXTROBUST_CACHE`` or
    ``~/.cache/textrobust``."""
    from textrobust.assets import cache_dir

    return cache_dir() / "victims" / "default"


def ensure_default_victim(progress: Progress | None = None) -> Path:
    """The default victim's folder: trained (:data:`DEFAULT_ARCH` on
    :data:`DEFAULT_DATASET`, seed 0) and saved there first if it is not present."""
    from textrobust.zoo.io import is_victim_folder
    from textrobust.zoo.training import train_victim

    folder = default_victim_dir()
    if is_victim_folder(folder):
        return folder
    train_victim(DEFAULT_ARCH, DEFAULT_DATASET, out=folder, seed=0, progress=progress)
    return folder
