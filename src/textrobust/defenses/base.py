"""The defense registry and :func:`harden`, the one entry point (the CLI calls it)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.registry import Registry

__all__ = ["DEFENSES", "Defense", "harden", "settings_type"]

#: name -> (module, settings class name, train function name); the modules are imported
#: when a defense is used, so that the CLI can list the names without loading torch.
DEFENSES: Registry[tuple[str, str, str]] = Registry("defense")
DEFENSES.add("none", ("", "", ""), "normal training (textrobust.zoo.train_victim)")
DEFENSES.add("adversarial", ("textrobust.defenses.adversarial", "AdversarialSettings", "train_adversarial"),
             "adversarial training: each epoch, attack a share of the training texts and train on the successes")
DEFENSES.add("augment", ("textrobust.defenses.augment", "AugmentSettings", "train_augmented"),
             "augmentation: copies of training texts with words swapped for checked synonyms")
DEFENSES.add("certified", ("textrobust.defenses.certified", "CertifiedSettings", "train_certified"),
             "certified (IBP) training on the checked synonyms' hulls, from a normally trained model")


class Defense(str, Enum):
    """The closed choice of ``--defense``: one member per entry of :data:`DEFENSES`
    (checked when this module is imported)."""

    none = "none"
    adversarial = "adversarial"
    augment = "augment"
    certified = "certified"


if sorted(d.value for d in Defense) != DEFENSES.names():  # pragma: no cover - a registry entry without its member
    raise RuntimeError(f"textrobust.defenses.Defense {[d.value for d in Defense]} must list every registered "
                       f"defense {DEFENSES.names()}.")


def _name(defense: str | Enum) -> str:
    name = defense.value if isinstance(defense, Enum) else defense
    if name not in DEFENSES:
        raise ConfigError(f"The 'defense' parameter must be one of {', '.join(DEFENSES.names())}. "
                          f"Got {name!r} instead.")
    return str(name)


def settings_type(defense: str | Enum) -> type[Config] | None:
    """The settings class of ``defense`` (None for "none")."""
    module, settings, _ = DEFENSES.get(_name(defense))
    return getattr(importlib.import_module(module), settings) if module else None


def harden(
    arch: str,
    dataset: Any = "rotten_tomatoes",
    *,
    out: Path,
    defense: str | Enum = "none",
    settings: Config | Mapping[str, Any] | None = None,
    seed: int = 0,
    epochs: int | None = None,
    config: Config | Mapping[str, Any] | None = None,
    training: Any = None,
    vectors: Any = None,
    progress: Callable[[Any], None] | None = None,
    checkpoint: bool = False,
    resume: bool = False,
    device: str = "auto",
    **parts: Any,
) -> Any:
    """Train the zoo architecture ``arch`` on ``dataset`` with ``defense`` and save it at
    ``out``; returns the :class:`~textrobust.zoo.training.TrainedVictim`.

    ``settings``: the defense's settings (:func:`settings_type`) or a mapping of them;
    ``epochs``, ``config``, ``training``, ``vectors``, ``progress``, ``checkpoint``,
    ``resume`` and ``device`` are :func:`~textrobust.zoo.train_victim`'s (for "certified", those of the
    normal training it starts from). ``parts``: collaborators a defense accepts instead of
    building its own (``table`` for augment and certified, ``make_attack`` for
    adversarial), as tests and benchmarks pass them.
    """
    name = _name(defense)
    kwargs = dict(out=out, seed=seed, epochs=epochs, config=config, training=training, vectors=vectors,
                  progress=progress, checkpoint=checkpoint, resume=resume, device=device)
    if name == "none":
        if settings:
            raise ConfigError(f"The defense 'none' takes no settings. Got {dict(settings)!r} instead.")
        if parts:
            raise ConfigError(f"The defense 'none' takes no parts. Got {sorted(parts)} instead.")
        from textrobust.zoo import train_victim

        return train_victim(arch, dataset, **kwargs)
    module, settings_name, function = DEFENSES.get(name)
    loaded = importlib.import_module(module)
    kind: type[Config] = getattr(loaded, settings_name)
    if settings is None:
        chosen = kind()
    elif isinstance(settings, kind):
        chosen = settings
    elif isinstance(settings, Mapping):
        chosen = kind(**settings)
    else:
        raise ConfigError(f"The 'settings' parameter of harden for '{name}' must be a {kind.__name__} or a mapping. "
                          f"Got {type(settings).__name__} instead.")
    return getattr(loaded, function)(arch, dataset, settings=chosen, **kwargs, **parts)
