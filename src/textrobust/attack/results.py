"""Attack results: plain frozen records, stored in the run store through the records codec
(:mod:`textrobust.records`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from textrobust.text import Text

__all__ = ["Status", "AttackResult"]


class Status(str, Enum):
    """How an attack on one example ended."""

    SUCCEEDED = "succeeded"  # an adversarial text was found
    FAILED = "failed"  # the search ended (or the budget ran out) without one
    SKIPPED = "skipped"  # the victim already misclassified the original


@dataclass(frozen=True)
class AttackResult:
    """One attacked example."""

    example_id: str
    label: int
    status: Status
    original: Text
    perturbed: Text
    original_prediction: int
    perturbed_prediction: int
    original_probabilities: tuple[float, ...]
    perturbed_probabilities: tuple[float, ...]
    queries: int
    seconds: float
    budget_exhausted: bool = False
    extras: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def changed_positions(self) -> tuple[int, ...]:
        return self.original.diff(self.perturbed)

    @property
    def l0(self) -> int:
        return len(self.changed_positions)

    @property
    def words(self) -> int:
        """Words that could be changed (the modifiable ones)."""
        return len(self.original.modifiable)

    @property
    def perturbed_fraction(self) -> float:
        return self.l0 / self.words if self.words else 0.0
