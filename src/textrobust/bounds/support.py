"""Which models bound propagation covers, and the clear refusal for the rest."""

from __future__ import annotations

from typing import Any

from textrobust.errors import CapabilityError

__all__ = ["SUPPORTED", "UnsupportedArchitecture", "architecture_of", "supported"]

#: The zoo architectures with sound bounds: CNN and bag of words (CROWN and IBP), LSTM (forward-mode
#: linear relaxation, :mod:`textrobust.bounds.lstm_linear`, and IBP).
SUPPORTED = ("cnn", "bow", "lstm")


class UnsupportedArchitecture(CapabilityError):
    """Bound propagation does not cover this model (recorded as a status, never a number)."""


def architecture_of(model: Any) -> str:
    """``"cnn"``, ``"bow"`` or ``"lstm"`` for the zoo's word models; raises
    :class:`UnsupportedArchitecture` for anything else."""
    from textrobust.zoo.bow import BowClassifier
    from textrobust.zoo.cnn import CnnClassifier
    from textrobust.zoo.lstm import LstmClassifier

    if isinstance(model, CnnClassifier):
        return "cnn"
    if isinstance(model, BowClassifier):
        return "bow"
    if isinstance(model, LstmClassifier):
        return "lstm"
    raise UnsupportedArchitecture(
        f"Bound propagation is not supported for this architecture ({type(model).__name__}): it covers the "
        f"zoo's word models {', '.join(SUPPORTED)}. The MCTS upper bound still applies."
    )


def supported(model: Any) -> bool:
    try:
        architecture_of(model)
    except UnsupportedArchitecture:
        return False
    return True
