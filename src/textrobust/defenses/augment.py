"""Synonym augmentation: train on the texts plus copies with words swapped for synonyms.

Each training text gets, with probability ``share``, one copy in which every word that has
substitutes in the context-free table is swapped, with probability ``swap_prob``, for one
of them drawn uniformly (the case of the first letter, or of the whole word, is kept);
a copy that changed nothing is dropped. The table is
:meth:`~textrobust.attack.candidates.checked.CheckedSynonyms.table` over the training split's
words (WordNet's frequent senses x counter-fitted cosine x word frequency; stop words
and punctuation never change), the same sets certified training uses, so the two
defenses are compared on equal substitutions. The copies are added once, before training
(an easy data augmentation in the spirit of Wei and Zou 2019, "EDA", restricted to
checked synonyms); the vocabulary is built after augmentation. Deterministic for a seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.config import Config
from textrobust.data.examples import Example

__all__ = ["TABLE_CHUNKS", "AugmentSettings", "checked_table", "synonym_augmenter", "table_progress", "train_augmented"]


class AugmentSettings(Config):
    """Synonym augmentation (``--defense augment``)."""

    share: float = Field(default=0.5, gt=0.0, le=1.0,
                         description="share of the training texts that get one copy with synonyms swapped in")
    swap_prob: float = Field(default=0.3, gt=0.0, le=1.0,
                             description="probability that each word with synonyms is swapped in a copy")
    substitutes: int = Field(default=8, ge=1, description="synonyms kept per word in the checked table")
    neighbours: int = Field(default=10, ge=1,
                            description="counter-fitted neighbours of each word checked for the table")


#: Chunks the synonym table is built in, each reported to ``progress`` when done.
TABLE_CHUNKS = 20


def checked_table(words: Iterable[str], substitutes: int = 8, neighbours: int = 10,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, tuple[str, ...]]:
    """The context-free checked synonym table over ``words`` (stop words skipped), as the
    certified-training benchmark builds it. It takes 25-50 s over a data set's words (the
    neighbour search and the checks, about equally), so it is built in
    :data:`TABLE_CHUNKS` chunks of the words (lower-cased, sorted: the same table as one
    call) and ``progress(done, total)`` is called after each."""
    from textrobust.assets.loaders import stop_words
    from textrobust.attack.candidates.checked import CheckedSynonyms

    checker, skip = CheckedSynonyms(k=substitutes), stop_words()
    ordered = sorted({w.lower() for w in words})
    size = max(1, -(-len(ordered) // TABLE_CHUNKS))
    out: dict[str, tuple[str, ...]] = {}
    for start in range(0, len(ordered), size):
        out.update(checker.table(ordered[start:start + size], neighbours=neighbours, skip=skip))
        if progress is not None:
            progress(min(start + size, len(ordered)), len(ordered))
    return out


def table_progress(progress: Callable[[Any], None] | None, started: float) -> Callable[[int, int], None] | None:
    """``checked_table``'s ``progress`` as the training's: a "table" TrainingEvent (words
    checked of all), which :func:`~textrobust.zoo.training.rich_progress` shows."""
    if progress is None:
        return None
    from textrobust.zoo.training import TrainingEvent

    def report(done: int, total: int) -> None:
        progress(TrainingEvent("table", 0, 0, done, total, elapsed=time.perf_counter() - started))

    return report


def _cased(substitute: str, word: str) -> str:
    if len(word) > 1 and word.isupper():
        return substitute.upper()
    if word[:1].isupper():
        return substitute[:1].upper() + substitute[1:]
    return substitute


def synonym_augmenter(table: Mapping[str, Sequence[str]], settings: AugmentSettings,
                      seed: int = 0) -> Callable[[Example], list[Example]]:
    """The ``augment`` hook of :func:`~textrobust.zoo.train_victim`: ``[example]`` or
    ``[example, copy]`` (see the module docstring); one seeded generator, called in the
    order of the training examples."""
    rng = np.random.default_rng(seed)
    lookup = {k.lower(): tuple(v) for k, v in table.items() if v}

    def augment(example: Example) -> list[Example]:
        if rng.random() >= settings.share:
            return [example]
        text = example.text
        words = text.words
        changes = {}
        for position in text.modifiable:
            subs = lookup.get(words[position].lower())
            if subs and rng.random() < settings.swap_prob:
                changes[position] = _cased(subs[int(rng.integers(len(subs)))], words[position])
        if not changes:
            return [example]
        return [example, Example(f"{example.id}~aug", text.replace(changes), example.label)]

    augment.__qualname__ = f"synonym_augmenter(share={settings.share}, swap_prob={settings.swap_prob})"
    return augment


def train_augmented(arch: str, dataset: Any, *, settings: AugmentSettings, out: Any, seed: int = 0,
                    table: Mapping[str, Sequence[str]] | None = None, **train: Any) -> Any:
    """Train ``arch`` with synonym augmentation (``table``: the substitution table;
    default :func:`checked_table` over the training split's words)."""
    from textrobust.zoo import TrainingData, train_victim

    data = TrainingData.bundled(dataset) if isinstance(dataset, str) else dataset
    source = "CheckedSynonyms.table" if table is None else "given"
    if table is None:
        table = checked_table({w for e in data.train.examples for w in e.text.words}, settings.substitutes,
                              settings.neighbours, table_progress(train.get("progress"), time.perf_counter()))
    recorded = {**settings.to_dict(), "table": source, "table_words": len(table)}
    return train_victim(arch, data, out=out, seed=seed, augment=synonym_augmenter(table, settings, seed),
                        defense="augment", defense_settings=recorded, **train)
