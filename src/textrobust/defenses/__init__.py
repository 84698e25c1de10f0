"""Defenses: train a zoo victim hardened against word substitutions (issue 30, "From
diagnosis to cure"), then audit and compare it with the model it replaces.

Four choices, one :func:`harden` call (``textrobust train ARCH --defense NAME``):

- ``none``: normal training (:func:`textrobust.zoo.train_victim`).
- ``adversarial``: every epoch after the clean ones, a seeded share of the training
  examples is attacked with a recipe of the attack engine against the model as it is,
  and the successful adversarial texts join that epoch's data with their true labels
  (TextAttack's ``train --attack``; :mod:`textrobust.defenses.adversarial`).
- ``augment``: copies of training texts with content words swapped, each with a
  probability, for synonyms of the context-free checked table
  (:mod:`textrobust.defenses.augment`).
- ``certified``: interval-bound-propagation training on the hulls of the same table,
  starting from a normally trained model (:mod:`textrobust.defenses.certified`).

Every defended victim's card records ``defense`` and ``defense_settings``. Importing this
package is light (no torch): the defenses load their modules when called.
"""

from __future__ import annotations

from typing import Any

from textrobust.defenses.base import DEFENSES, Defense, harden, settings_type

__all__ = [
    "DEFENSES",
    "AdversarialSettings",
    "AugmentSettings",
    "CertifiedSettings",
    "Defense",
    "harden",
    "settings_type",
]

_LAZY = {
    "AdversarialSettings": "textrobust.defenses.adversarial",
    "AugmentSettings": "textrobust.defenses.augment",
    "CertifiedSettings": "textrobust.defenses.certified",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'textrobust.defenses' has no attribute {name!r}")
