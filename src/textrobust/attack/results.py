"""Attack results: plain frozen records, stored as JSON payloads in the run store."""

from __future__ import annotations

from collections.abc import Mapping
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


def _text_from(columns: list[str] | tuple[str, ...], frozen: list[int] | None = None) -> Text:
    if len(columns) == 2:
        text = Text.from_pair(columns[0], columns[1], frozen_columns=())
    else:
        text = Text.from_string(columns[0])
    return text.freeze(frozen or ())


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

    def to_payload(self) -> dict[str, Any]:
        return {
            "example_id": self.example_id,
            "label": self.label,
            "status": self.status.value,
            "original": list(self.original.columns),
            "perturbed": list(self.perturbed.columns),
            "frozen": sorted(self.original.frozen),
            "original_prediction": self.original_prediction,
            "perturbed_prediction": self.perturbed_prediction,
            "original_probabilities": list(self.original_probabilities),
            "perturbed_probabilities": list(self.perturbed_probabilities),
            "changed_positions": list(self.changed_positions),
            "l0": self.l0,
            "words": self.words,
            "queries": self.queries,
            "seconds": self.seconds,
            "budget_exhausted": self.budget_exhausted,
            "extras": dict(self.extras),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> AttackResult:
        frozen = list(payload.get("frozen") or [])
        return cls(
            example_id=str(payload["example_id"]),
            label=int(payload["label"]),
            status=Status(payload["status"]),
            original=_text_from(payload["original"], frozen),
            perturbed=_text_from(payload["perturbed"], frozen),
            original_prediction=int(payload["original_prediction"]),
            perturbed_prediction=int(payload["perturbed_prediction"]),
            original_probabilities=tuple(payload["original_probabilities"]),
            perturbed_probabilities=tuple(payload["perturbed_probabilities"]),
            queries=int(payload["queries"]),
            seconds=float(payload["seconds"]),
            budget_exhausted=bool(payload.get("budget_exhausted", False)),
            extras=dict(payload.get("extras") or {}),
        )
