"""Fixed, seeded train/dev/test splits that are the same on every machine.

The rule (used for every bundled set, and for user files when a split is asked of a
file that has none):

1. Group the examples by label (the split is stratified).
2. Inside each label, order the examples by ``blake2b(f"{seed}\\x1f{text}")``, where
   ``text`` is the example's rendered text (the columns of a pair joined by ``\\x1f``).
   Ties, which need identical texts, keep the source order.
3. The first ``round(0.8 * n)`` of that order go to ``train``, the next
   ``round(0.1 * n)`` to ``dev``, the rest to ``test``.
4. Each split keeps the canonical order of the source (the order of the examples given).

Only the standard library is involved (no numpy random state), so the split cannot
change with a numpy or Python version. Because the order comes from a hash of the text
rather than from its row, reordering the source file does not move an example to another
split, and adding rows moves only a few others across a boundary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError

__all__ = [
    "SPLITS",
    "SPLIT_FRACTIONS",
    "SPLIT_SEED",
    "assign_splits",
    "example_key",
    "normalize_split",
    "split_dataset",
    "split_key",
]

#: The split names every bundled set offers; "all" means the whole set.
SPLITS: tuple[str, str, str] = ("train", "dev", "test")

#: The seed of the fixed splits (changing it changes every split; never do so silently).
SPLIT_SEED: int = 13

#: Fractions of train, dev and test.
SPLIT_FRACTIONS: tuple[float, float, float] = (0.8, 0.1, 0.1)

#: A one-line statement of the rule, stored in every split data set's ``meta``.
SPLIT_RULE = (
    "stratified by label; inside a label, order by blake2b(f'{seed}\\x1f{text}'); "
    "first round(0.8n) train, next round(0.1n) dev, rest test (textrobust.data.splits)"
)

_ALIASES = {"validation": "dev", "valid": "dev", "val": "dev"}


def normalize_split(split: str, *, allow_all: bool = True) -> str:
    """Return the canonical split name ("validation" -> "dev"), or raise ConfigError."""
    if not isinstance(split, str):
        raise ConfigError(
            f"The 'split' parameter must be a string. Got {type(split).__name__} instead."
        )
    name = _ALIASES.get(split.strip().lower(), split.strip().lower())
    accepted = (*SPLITS, "all") if allow_all else SPLITS
    if name not in accepted:
        raise ConfigError(
            f"The 'split' parameter must be one of {list(accepted)} "
            f"('validation' is accepted for 'dev'). Got {split!r} instead."
        )
    return name


def split_key(text: str, seed: int = SPLIT_SEED) -> str:
    """The sort key of a text inside its label group: a seeded blake2b hash (hex)."""
    return hashlib.blake2b(f"{seed}\x1f{text}".encode(), digest_size=16).hexdigest()


def example_key(example: Example) -> str:
    """The text an example's split is computed from: its columns joined by ``\x1f``."""
    return "\x1f".join(example.text.columns)


def _check_fractions(fractions: Sequence[float]) -> tuple[float, float, float]:
    if len(fractions) != 3 or any(not 0 <= f <= 1 for f in fractions):
        raise ConfigError(
            "The 'fractions' parameter must be three numbers in [0, 1] (train, dev, test). "
            f"Got {tuple(fractions)!r} instead."
        )
    if abs(sum(fractions) - 1.0) > 1e-9:
        raise ConfigError(
            f"The 'fractions' parameter must sum to 1. Got {tuple(fractions)!r} "
            f"(sum {sum(fractions)}) instead."
        )
    return float(fractions[0]), float(fractions[1]), float(fractions[2])


def assign_splits(
    keys: Sequence[str],
    labels: Sequence[int],
    *,
    seed: int = SPLIT_SEED,
    fractions: Sequence[float] = SPLIT_FRACTIONS,
) -> dict[str, tuple[int, ...]]:
    """Indices of each split (ascending) for rows with texts ``keys`` and ``labels``.

    This is the rule of the module docstring; ties (identical texts) keep source order.
    """
    if len(keys) != len(labels):
        raise ConfigError(
            f"assign_splits needs as many keys as labels. Got {len(keys)} and {len(labels)}."
        )
    train_f, dev_f, _ = _check_fractions(fractions)
    by_label: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        by_label.setdefault(label, []).append(index)
    chosen = [""] * len(keys)
    for label in sorted(by_label):
        ordered = sorted(by_label[label], key=lambda i: (split_key(keys[i], seed), i))
        n = len(ordered)
        n_train = round(train_f * n)
        n_dev = min(round(dev_f * n), n - n_train)
        for rank, index in enumerate(ordered):
            chosen[index] = (
                "train" if rank < n_train else "dev" if rank < n_train + n_dev else "test"
            )
    parts: dict[str, list[int]] = {name: [] for name in SPLITS}
    for index, name in enumerate(chosen):
        parts[name].append(index)
    return {name: tuple(indices) for name, indices in parts.items()}


def split_dataset(
    dataset: Dataset,
    split: str,
    *,
    seed: int = SPLIT_SEED,
    fractions: Sequence[float] = SPLIT_FRACTIONS,
) -> Dataset:
    """The ``split`` part of ``dataset`` (``"all"`` returns the whole set, relabelled).

    The returned set's ``meta`` gains ``split_seed``, ``split_fractions`` and
    ``split_sizes`` (the size of every split, so a report can show them).
    """
    name = normalize_split(split)
    parts = assign_splits(
        [example_key(e) for e in dataset.examples], dataset.labels, seed=seed, fractions=fractions
    )
    meta = dict(dataset.meta)
    meta.update(
        split_seed=seed,
        split_fractions=tuple(fractions),
        split_sizes={k: len(v) for k, v in parts.items()},
        split_rule=SPLIT_RULE,
    )
    indices = range(len(dataset)) if name == "all" else parts[name]
    return Dataset(
        dataset.name,
        tuple(dataset.examples[i] for i in indices),
        dataset.label_names,
        name,
        dataset.source,
        meta,
    )
