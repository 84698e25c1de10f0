"""Matching a data set's labels to a victim's classes, by name, before any work.

A victim's class i is ``victim.label_names[i]``; a data set's label j is
``dataset.label_names[j]``. They are matched by name (case-insensitive), or through a
user's map (``--label-map fresh=positive,rotten=negative``), or by position only when
asked (``--labels-by-position``). A mismatch is an error that shows both lists and the
options that fix it; a data set whose labels match under another order is re-indexed so
that ``example.label`` is the victim's class index.

>>> from textrobust.data.examples import Dataset, Example
>>> from textrobust.text import Text
>>> data = Dataset("d", (Example("a", Text.from_string("x"), 0),), ("pos", "neg"))
>>> align_labels(data, ("negative", "positive"), label_map={"pos": "positive", "neg": "negative"}).examples[0].label
1
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from textrobust.data.examples import Dataset
from textrobust.errors import BadRow, ConfigError, DataError, TextRobustError
from textrobust.text import Text

__all__ = ["align_labels", "load_aligned", "parse_label_map", "suggest_label_map"]


def parse_label_map(text: str | None) -> dict[str, str]:
    """``"fresh=positive,rotten=negative"`` -> ``{"fresh": "positive", "rotten": "negative"}``."""
    if not text:
        return {}
    out: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise ConfigError(
                f"The '--label-map' option takes DATA=VICTIM pairs separated by commas, e.g. "
                f"fresh=positive,rotten=negative. Got {item.strip()!r}."
            )
        source, target = (part.strip() for part in item.split("=", 1))
        if not source or not target:
            raise ConfigError(f"The '--label-map' option has an empty name in {item.strip()!r}.")
        out[source] = target
    return out


#: Rows per data label that the victim classifies to suggest a --label-map.
SUGGESTION_ROWS = 25


def _problem(dataset: Dataset, victim: Sequence[str], detail: str, *, mapped: bool, by_position: bool,
             predict: Callable[[Sequence[Text]], Any] | None) -> ConfigError:
    """The mismatch error: both lists, what is wrong, and the fixes not tried yet. A
    suggested map comes from the victim's own predictions on the data (never from the
    order of the names, which says nothing about their meaning)."""
    data, victim = list(dataset.label_names), list(victim)
    guess = suggest_label_map(dataset, victim, predict)
    example = ",".join(f"{d}={v}" for d, v in guess.items()) if guess else None
    why = " (for each label, the class the victim predicts for most of its rows: check it)"
    if mapped:
        fix = f"Correct --label-map: it must map data labels to the classes {victim}"
        fix += f", e.g. --label-map {example}{why}" if example else ""
    elif example:
        fix = f"Map them by name with --label-map {example}{why}"
    else:
        fix = f"Map them by name with --label-map DATA=CLASS pairs, each CLASS one of {', '.join(victim)}"
    if not by_position and len(data) == len(victim):
        fix += ", or match them by position with --labels-by-position"
    return ConfigError(f"The data's labels {data} do not match the victim's classes {victim}: {detail}. {fix} "
                       "(Python: label_map=..., labels_by_position=True).")


def suggest_label_map(dataset: Dataset, victim_labels: Sequence[str],
                      predict: Callable[[Sequence[Text]], Any] | None) -> dict[str, str] | None:
    """A one-to-one map from the data's labels to the victim's classes that agrees most
    with the victim's predictions on up to :data:`SUGGESTION_ROWS` rows of each label, or
    None when there is no ``predict``, a label has no rows, or some label's class is not the
    one the victim predicts most for its rows."""
    if predict is None:
        return None
    victim_labels = list(victim_labels)
    labels = range(len(dataset.label_names))
    rows = {j: [e.text for e in dataset.examples if e.label == j][:SUGGESTION_ROWS] for j in labels}
    if not all(rows.values()) or len(rows) > len(victim_labels):
        return None
    try:
        import numpy as np

        votes = {j: np.bincount(np.asarray(predict(texts)).argmax(axis=1), minlength=len(victim_labels))
                 for j, texts in rows.items()}
    except Exception:  # a suggestion only: the run itself reports a victim that fails
        return None
    if len(victim_labels) <= 8:
        best = max(itertools.permutations(range(len(victim_labels)), len(rows)),
                   key=lambda classes: sum(int(votes[j][i]) for j, i in zip(labels, classes)))
    else:  # too many orders to try: each label its most predicted class
        best = tuple(int(votes[j].argmax()) for j in labels)
    clear = all(votes[j][i] > other for j, i in zip(labels, best) for k, other in enumerate(votes[j]) if k != i)
    if len(set(best)) != len(best) or not clear:
        return None
    return {dataset.label_names[j]: victim_labels[i] for j, i in zip(labels, best)}


def align_labels(dataset: Dataset, victim_labels: Sequence[str], *, label_map: Mapping[str, str] | None = None,
                 by_position: bool = False, skip_unknown: bool = False,
                 predict: Callable[[Sequence[Text]], Any] | None = None) -> Dataset:
    """``dataset`` with labels re-indexed to ``victim_labels`` (see the module docstring).
    ``predict`` (the victim's ``probabilities``) lets a mismatch error suggest a map.

    When some of the data's labels match a class and others (that have rows) match none,
    the rows of those others are bad rows: with ``skip_unknown`` (``--skip-bad-rows``)
    they are dropped and added to ``meta["bad_rows"]`` by row number; without it they are
    a :class:`~textrobust.errors.ConfigError` listing them."""
    data_labels = list(dataset.label_names)
    victim_labels = list(victim_labels)

    def problem(detail: str) -> ConfigError:
        return _problem(dataset, victim_labels, detail, mapped=bool(label_map), by_position=by_position,
                        predict=predict)

    if by_position:
        if len(data_labels) != len(victim_labels):
            raise problem(f"--labels-by-position needs as many labels as classes ({len(data_labels)} vs "
                          f"{len(victim_labels)})")
        return dataset if data_labels == victim_labels else replace(dataset, label_names=tuple(victim_labels))
    mapping = dict(label_map or {})
    lowered = {name.lower(): i for i, name in enumerate(victim_labels)}
    wrong = _wrong_targets(mapping, victim_labels, lowered)
    if wrong is not None:  # a class misspelt in the map: named as such, with the map the predictions suggest
        raise problem(wrong)
    unknown = sorted(set(mapping) - set(data_labels))
    if unknown:
        raise ConfigError(f"The '--label-map' names data labels {unknown} that the data does not have; "
                          f"its labels are {data_labels}.")
    index: dict[int, int] = {}
    missing: list[str] = []
    for j, name in enumerate(data_labels):
        target = mapping.get(name, name)
        i = lowered.get(target.lower())
        if i is None:
            missing.append(name if name == target else f"{name}->{target}")
        else:
            index[j] = i
    present = {e.label for e in dataset.examples}
    if missing and (not index or not present & set(index)):
        raise problem(f"no class named {missing}")
    if missing and present - set(index):
        dataset = _unknown_label_rows(dataset, victim_labels, set(index), skip_unknown)
    if len(set(index.values())) != len(index):
        raise problem("two data labels map to one class")
    if all(index[j] == j for j in index) and len(data_labels) == len(victim_labels):
        return dataset if data_labels == victim_labels else replace(dataset, label_names=tuple(victim_labels))
    examples = tuple(replace(e, label=index[e.label]) for e in dataset.examples)
    return replace(dataset, examples=examples, label_names=tuple(victim_labels))


def _wrong_targets(mapping: Mapping[str, str], victim_labels: Sequence[str], lowered: Mapping[str, int]) -> str | None:
    """What is wrong when a class that ``--label-map`` maps to is none of the victim's (a
    typo, 'rotten=negativ'): the unknown class is named, not the data's label; else None."""
    import difflib

    wrong = [(source, target) for source, target in mapping.items() if target.lower() not in lowered]
    if not wrong:
        return None
    source, target = wrong[0]
    close = difflib.get_close_matches(target, list(victim_labels), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    also = f" (and {len(wrong) - 1} more: {', '.join(repr(t) for _, t in wrong[1:])})" if len(wrong) > 1 else ""
    return (f"--label-map maps {source!r} to the class {target!r}{also}, which is not one of the victim's classes "
            f"({', '.join(victim_labels)}){hint}")


def load_aligned(source: Any, victim_labels: Sequence[str], *, label_map: Mapping[str, str] | None = None,
                 by_position: bool = False, skip_bad_rows: bool = False,
                 predict: Callable[[Sequence[Text]], Any] | None = None) -> Dataset:
    """The data of ``source`` (a :class:`~textrobust.audit.sources.DataSource`) with its
    labels aligned to ``victim_labels`` (:func:`align_labels`). Without ``skip_bad_rows``,
    a file with bad rows is a DataError that lists every one of them in one round: the
    rows the file itself cannot give (no text, no label...) and, read again without those,
    the rows whose label is none of the victim's classes; fixing the first kind no longer
    reveals the second."""
    try:
        loaded = source.load()
    except DataError as exc:
        if skip_bad_rows or not exc.bad_rows or source.ref is None:
            raise
        try:  # the same file without its bad rows: which of the rest have a label the victim lacks?
            skipping = replace(source, options={**dict(source.options), "on_bad_rows": "skip"})
            aligned = align_labels(skipping.load(), victim_labels, label_map=label_map, by_position=by_position,
                                   skip_unknown=True)
        except TextRobustError as other:  # the labels fail too (a map to no class...): both in one message
            head = str(exc).split("\n", 1)[0]
            raise DataError(f"{other} Also, {head[:1].lower()}{head[1:]}", exc.bad_rows) from None
        every = tuple(cast("Sequence[BadRow]", aligned.meta.get("bad_rows") or ()))
        labelled = len(every) - len(exc.bad_rows)
        if labelled <= 0:
            raise
        raise DataError(f"{len(every):,} rows of {source.ref} cannot be used: {len(exc.bad_rows):,} that the file "
                        f"itself does not give (text, label, id...) and {labelled:,} whose label is not one of the "
                        f"victim's classes ({', '.join(victim_labels)}). Fix them (map a label to a class with "
                        "--label-map LABEL=CLASS), or pass on_bad_rows='skip' to skip them:", every) from None
    return align_labels(loaded, victim_labels, label_map=label_map, by_position=by_position,
                        skip_unknown=skip_bad_rows, predict=predict)


def _unknown_label_rows(dataset: Dataset, victim_labels: Sequence[str], known: set[int], skip: bool) -> Dataset:
    """``dataset`` without the rows whose label matches no class (``skip``), those rows
    added to ``meta["bad_rows"]``; or, without ``skip``, a ConfigError listing them."""
    rows = dataset.meta.get("rows")
    row_of = rows if isinstance(rows, Mapping) else {}
    classes = ", ".join(victim_labels)
    bad: list[BadRow] = []
    counts: dict[str, int] = {}
    for position, example in enumerate(dataset.examples, start=1):
        if example.label in known:
            continue
        name = dataset.label_names[example.label]
        counts[name] = counts.get(name, 0) + 1
        bad.append(BadRow(int(row_of.get(example.id, position)),
                          f"unknown label {name!r}: not one of the victim's classes ({classes})"))
    bad.sort(key=lambda b: b.row)
    labels = ", ".join(f"{name!r} ({n:,} row{'s' if n != 1 else ''})" for name, n in counts.items())
    if not skip:
        shown = "".join(f"\n  - {row}" for row in bad[:20]) + (f"\n  ... and {len(bad) - 20:,} more"
                                                                if len(bad) > 20 else "")
        raise ConfigError(
            f"{len(bad):,} row{'s' if len(bad) != 1 else ''} of {dataset.name} have a label that is not one of "
            f"the victim's classes ({classes}): {labels}. Map a label to a class with --label-map LABEL=CLASS, "
            f"or pass --skip-bad-rows to skip (and report) these rows:{shown}")
    kept = tuple(e for e in dataset.examples if e.label in known)  # not empty: the caller checked
    meta = dict(dataset.meta)
    earlier = tuple(cast("Sequence[BadRow]", meta.get("bad_rows") or ()))  # only BadRows are stored there
    meta["bad_rows"] = tuple(sorted((*earlier, *bad), key=lambda b: b.row))
    return replace(dataset, examples=kept, meta=meta)
