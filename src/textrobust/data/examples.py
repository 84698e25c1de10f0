"""Labelled examples and data sets: the plain records every loader returns."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["Dataset", "Example"]


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled text. ``id`` is stable across runs (used by the run store to resume)."""

    id: str
    text: Text
    label: int


@dataclass(frozen=True)
class Dataset:
    """A named, immutable list of examples with the names of its labels.

    ``split`` says which part of a source this is ("train", "dev", "test" or "all").
    """

    name: str
    examples: tuple[Example, ...]
    label_names: tuple[str, ...]
    split: str = "all"
    source: str = ""
    meta: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        n = len(self.label_names)
        bad = [e.id for e in self.examples if not 0 <= e.label < n]
        if bad:
            raise ConfigError(
                f"Dataset '{self.name}' has examples with labels outside [0, {n}): {bad[:5]}."
            )

    def __len__(self) -> int:
        return len(self.examples)

    def __iter__(self) -> Iterator[Example]:
        return iter(self.examples)

    def __getitem__(self, index: int) -> Example:
        return self.examples[index]

    @property
    def texts(self) -> list[Text]:
        return [e.text for e in self.examples]

    @property
    def labels(self) -> list[int]:
        return [e.label for e in self.examples]

    @property
    def num_labels(self) -> int:
        return len(self.label_names)

    def take(self, n: int | None) -> Dataset:
        """The first ``n`` examples (all when ``n`` is None)."""
        if n is None or n >= len(self):
            return self
        if n < 0:
            raise ConfigError(f"The 'n' parameter must be >= 0. Got {n} instead.")
        return Dataset(self.name, self.examples[:n], self.label_names, self.split, self.source, self.meta)

    def subset(self, indices: Sequence[int], split: str | None = None) -> Dataset:
        return Dataset(
            self.name,
            tuple(self.examples[i] for i in indices),
            self.label_names,
            split or self.split,
            self.source,
            self.meta,
        )

    def label_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(self.label_names, 0)
        for e in self.examples:
            counts[self.label_names[e.label]] += 1
        return counts
