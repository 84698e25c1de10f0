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

from collections.abc import Mapping, Sequence
from dataclasses import replace

from textrobust.data.examples import Dataset
from textrobust.errors import ConfigError

__all__ = ["align_labels", "parse_label_map"]


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


def _problem(data: Sequence[str], victim: Sequence[str], detail: str) -> ConfigError:
    return ConfigError(
        f"The data's labels {list(data)} do not match the victim's classes {list(victim)}: {detail}. "
        f"Map them by name with --label-map (e.g. "
        f"{','.join(f'{d}={v}' for d, v in zip(data, victim))}), or match them by position with "
        f"--labels-by-position (Python: label_map=..., labels_by_position=True)."
    )


def align_labels(dataset: Dataset, victim_labels: Sequence[str], *, label_map: Mapping[str, str] | None = None,
                 by_position: bool = False) -> Dataset:
    """``dataset`` with labels re-indexed to ``victim_labels`` (see the module docstring)."""
    data_labels = list(dataset.label_names)
    victim_labels = list(victim_labels)
    if by_position:
        if len(data_labels) != len(victim_labels):
            raise _problem(data_labels, victim_labels,
                           f"by position needs as many labels as classes ({len(data_labels)} vs {len(victim_labels)})")
        return dataset if data_labels == victim_labels else replace(dataset, label_names=tuple(victim_labels))
    mapping = dict(label_map or {})
    unknown = sorted(set(mapping) - set(data_labels))
    if unknown:
        raise ConfigError(f"The '--label-map' names data labels {unknown} that the data does not have; "
                          f"its labels are {data_labels}.")
    lowered = {name.lower(): i for i, name in enumerate(victim_labels)}
    index: dict[int, int] = {}
    missing: list[str] = []
    for j, name in enumerate(data_labels):
        target = mapping.get(name, name)
        i = lowered.get(target.lower())
        if i is None:
            missing.append(name if name == target else f"{name}->{target}")
        else:
            index[j] = i
    if missing:
        raise _problem(data_labels, victim_labels, f"no class named {missing}")
    if len(set(index.values())) != len(index):
        raise _problem(data_labels, victim_labels, "two data labels map to one class")
    if all(index[j] == j for j in index) and len(data_labels) == len(victim_labels):
        return dataset if data_labels == victim_labels else replace(dataset, label_names=tuple(victim_labels))
    examples = tuple(replace(e, label=index[e.label]) for e in dataset.examples)
    return replace(dataset, examples=examples, label_names=tuple(victim_labels))
