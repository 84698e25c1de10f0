"""The default victim: trained once on Rotten Tomatoes, then loaded from the cache."""

from __future__ import annotations

from pathlib import Path

from textrobust.zoo.training import Progress

__all__ = ["DEFAULT_ARCH", "DEFAULT_DATASET", "cached_victim", "default_victim_dir", "ensure_default_victim",
           "zoo_victim_dir"]

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


def zoo_victim_dir(arch: str) -> Path:
    """``<cache>/victims/<arch>``: where ``textrobust train <arch>`` saves a zoo victim
    when no ``--out`` is given, and where ``--victim <arch>`` finds it."""
    from textrobust.assets import cache_dir

    return cache_dir() / "victims" / arch


def cached_victim(name: str) -> Path | None:
    """The cache folder of the zoo architecture ``name`` (``--victim lstm``), or ``None``
    when ``name`` is not a zoo architecture; a :class:`~textrobust.errors.VictimError`
    naming the command that trains it when it has not been trained into the cache."""
    from textrobust.errors import VictimError
    from textrobust.zoo.architectures import ZOO
    from textrobust.zoo.io import is_victim_folder

    if name not in ZOO:
        return None
    folder = zoo_victim_dir(name)
    if not is_victim_folder(folder):
        raise VictimError(f"The '--victim' option names the zoo architecture {name!r}, but no {name} victim has "
                          f"been trained into the cache ({folder}). Train it with `textrobust train {name}`, or "
                          "give a victim folder.")
    return folder
