"""A robustness gate for CI: requirements on an audit's figures (issue 30, item 4).

A requirement reads ``ANALYSIS.FIGURE>=VALUE`` or ``ANALYSIS.FIGURE<=VALUE``. Its key names
a figure of the run's ``summary.json``: the analysis, then the figure's name in that
analysis's summary (``analyses.ANALYSIS.summary``), nested figures joined with dots
(``evaluate.accuracy_per_label.positive``, ``radius.bounds.certified_mean``). Figures are
the numbers of a summary (counts, shares, true/false as 1/0); text and lists are not.

The figures over the findings people confirmed (``textrobust review``) are keys too:
``attack.reviewed.accuracy_under_attack_low`` (:mod:`textrobust.report.reviewed`; written with
the summary, brought up to date with new judgements by ``textrobust review RUN --report``),
checked by ``textrobust gate`` on a finished run, and by ``textrobust audit --require``
(:func:`reviewed_figure_keys` are known before the run). At audit time nobody has reviewed
the findings yet, so the audit reads a reviewed figure named without its end (``..._low``,
``..._high``) at the end of its interval that is hardest to meet (``check(...,
reviewed_end=True)``): the low end for ``>=``, the high end for ``<=``; ``textrobust gate`` does
the same while any finding is unreviewed (the ends meet once all are). Before a review that
is the automatic figure (accuracy under attack with every flip real), so the audit's gate
on a reviewed figure is as strict as on the automatic one; ``textrobust gate`` after the
review reads the reviewed value itself.

A figure that is NaN or was not computed (``null`` in ``summary.json``: no example it could
be measured on, a part of the analysis that did not run) fails every requirement with a
message that says so; it never passes and never crashes the gate.

Which keys exist is known before a run from the analyses' summary types
(:func:`declared_figures`), except under a table keyed by the data (a label name): those
are checked against the summary once the run has written it (:func:`summary_keys`).

>>> req = parse_requirement("attack.accuracy_under_attack>=0.30")
>>> str(req)
'attack.accuracy_under_attack >= 0.30'
>>> [outcome] = check([req], {"attack.accuracy_under_attack": 0.12})
>>> outcome.passed, outcome.message
(False, 'attack.accuracy_under_attack = 0.12, required >= 0.30 (short by 0.18)')
>>> check([req], {"attack.accuracy_under_attack": None})[0].message
'attack.accuracy_under_attack is undefined (NaN or not computed), required >= 0.30'
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import json
import math
import os
import types
import typing
import xml.etree.ElementTree as ET
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from textrobust.errors import ConfigError, StoreError, TextRobustError

__all__ = ["JUNIT_SUITE", "Operator", "Outcome", "Requirement", "check", "check_junit_target", "check_keys",
           "check_reviews_counted",
           "declared_figures", "figures", "load_figures", "parse_requirement", "parse_requirements", "reviewed_figure_keys",
           "summary_keys", "write_junit"]

#: The name of the one ``<testsuite>`` of the JUnit file.
JUNIT_SUITE = "textrobust robustness gate"

_FORMAT = "ANALYSIS.FIGURE>=VALUE or ANALYSIS.FIGURE<=VALUE (e.g. 'attack.accuracy_under_attack>=0.30')"


class Operator(enum.Enum):
    """How a figure is compared with its threshold."""

    AT_LEAST = ">="
    AT_MOST = "<="


@dataclass(frozen=True)
class Requirement:
    """``key`` (``ANALYSIS.FIGURE``) must be ``operator`` ``threshold``."""

    key: str
    operator: Operator
    threshold: float

    def __post_init__(self) -> None:
        if not isinstance(self.operator, Operator):
            raise ConfigError(f"The operator of a requirement must be >= or <= (an Operator). "
                              f"Got {self.operator!r} instead.")
        if not _is_key(self.key):
            raise ConfigError(f"The key of a requirement must read ANALYSIS.FIGURE. Got {self.key!r} instead.")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)) \
                or not math.isfinite(self.threshold):
            raise ConfigError(f"The threshold of a requirement must be a finite number. "
                              f"Got {self.threshold!r} instead.")

    @property
    def analysis(self) -> str:
        return self.key.split(".", 1)[0]

    def __str__(self) -> str:
        return f"{self.key} {self.operator.value} {_number(self.threshold)}"


@dataclass(frozen=True)
class Outcome:
    """One requirement checked: the figure's ``value`` (None: undefined or absent),
    whether it ``passed``, and the ``message`` that says so with the margin."""

    requirement: Requirement
    value: float | None
    passed: bool
    message: str


def parse_requirement(text: str, subject: str = "The '--require' option") -> Requirement:
    """The requirement ``text`` (``ANALYSIS.FIGURE>=VALUE`` or ``<=VALUE``); a
    :class:`~textrobust.errors.ConfigError` beginning with ``subject`` when it is malformed."""
    raw = str(text)
    shown = f"Got {raw!r} instead."
    found = [(raw.find(op.value), op) for op in Operator if op.value in raw]
    if not found:
        lone = next((c for c in ("==", "!=", "=", ">", "<") if c in raw), None)
        why = (f"has the operator '{lone}'; only >= and <= are accepted" if lone is not None
               else "has no operator (>= or <=)")
        raise ConfigError(f"{subject} {why}: write {_FORMAT}. {shown}")
    at, operator = min(found, key=lambda pair: pair[0])
    key, value = raw[:at].strip(), raw[at + len(operator.value):].strip()
    if not _is_key(key):
        raise ConfigError(f"{subject} must name a figure as ANALYSIS.FIGURE before {operator.value}, "
                          f"e.g. 'attack.accuracy_under_attack>=0.30'. {shown}")
    if not value.isascii():  # int() and float() read full-width and other Unicode digits: a look-alike
        raise ConfigError(f"{subject} must compare with a number written in ASCII digits after {operator.value}, "
                          f"e.g. 'attack.accuracy_under_attack>=0.30'. {shown}")
    threshold: float
    try:
        threshold = int(value)  # kept whole: 'attack.errors<=0' reads "required <= 0"
    except ValueError:
        try:
            threshold = float(value)
        except ValueError:
            threshold = math.nan
    if not math.isfinite(threshold) or not value:
        raise ConfigError(f"{subject} must compare with a finite number after {operator.value}, "
                          f"e.g. 'attack.accuracy_under_attack>=0.30'. {shown}")
    return Requirement(key, operator, threshold)


def _is_key(key: str) -> bool:
    """``ANALYSIS.FIGURE[.PART...]``: at least two non-empty parts, no space or operator."""
    parts = key.split(".")
    return len(parts) >= 2 and all(parts) and not any(c.isspace() or c in "<>=!" for c in key)


def parse_requirements(texts: Iterable[str], subject: str = "The '--require' option") -> tuple[Requirement, ...]:
    """Each of ``texts`` parsed (:func:`parse_requirement`), in order."""
    return tuple(parse_requirement(text, subject) for text in texts)


# ---- which figures there are ---------------------------------------------------------------------
def figures(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """Every figure of a ``summary.json`` (as read with ``json``), ``ANALYSIS.FIGURE`` ->
    its value: a number (true/false as 1/0), or ``None`` for a figure that is NaN or was
    not computed (also for an absent nested part: its key stands for every figure in it)."""
    out: dict[str, float | None] = {}
    for name, entry in (summary.get("analyses") or {}).items():
        if isinstance(entry, Mapping):
            _flatten(entry.get("summary"), str(name), out)
            if isinstance(entry.get("reviewed"), Mapping):  # textrobust review's figures (issue 40)
                _flatten(entry["reviewed"], f"{name}.reviewed", out)
    return out


def _flatten(value: Any, key: str, out: dict[str, float | None]) -> None:
    if value is None:
        out[key] = None
    elif isinstance(value, bool):
        out[key] = int(value)
    elif isinstance(value, int):
        out[key] = value
    elif isinstance(value, float):
        out[key] = value if math.isfinite(value) else None
    elif isinstance(value, Mapping):
        for name, item in value.items():
            _flatten(item, f"{key}.{name}", out)
    # text, lists and tables of rows are not figures


def declared_figures(analyses: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The figure keys that the named analyses' summaries will have, read from their
    summary types before anything runs: ``(keys, open_prefixes)``; a key under an open
    prefix (a table keyed by the data, such as accuracy per label) is known only once the
    summary is written. An analysis whose summary type cannot be read is all open."""
    from textrobust.analyses import ANALYSES

    keys: set[str] = set()
    prefixes: set[str] = set()
    for name in analyses:
        mine: set[str] = set()
        try:
            _declare(typing.get_type_hints(ANALYSES.get(name).summarise)["return"], name, mine, prefixes)
        except (TextRobustError, NameError, KeyError, TypeError):  # not registered, or an unreadable
            prefixes.add(name)                                     # annotation: keys checked after the run
            continue
        keys |= mine
    return frozenset(keys), frozenset(prefixes)


def _declare(kind: Any, key: str, keys: set[str], prefixes: set[str]) -> None:
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        for option in typing.get_args(kind):
            if option is not type(None):
                _declare(option, key, keys, prefixes)
    elif kind in (int, float, bool):
        keys.add(key)
    elif isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        for field in dataclasses.fields(kind):
            _declare(hints[field.name], f"{key}.{field.name}", keys, prefixes)
    elif kind is Any or origin in (dict, Mapping, typing.Mapping):
        prefixes.add(key)
    # str, enums, tuples and lists hold no figure


def reviewed_figure_keys(analyses: Iterable[str]) -> frozenset[str]:
    """The keys of the reviewed blocks (``ANALYSIS.reviewed.KEY``) that the named analyses
    will write beside their summaries (:func:`textrobust.report.reviewed.reviewed_keys`;
    none for an analysis without findings)."""
    from textrobust.report.reviewed import reviewed_keys

    return frozenset(f"{name}.reviewed.{key}" for name in analyses for key in reviewed_keys(name))


def summary_keys(values: Mapping[str, float | None]) -> tuple[frozenset[str], frozenset[str]]:
    """The keys a requirement may name once a summary is written, ``values`` being its
    :func:`figures`: ``(keys, open_prefixes)`` as :func:`declared_figures` gives them for
    the analyses in it, with the keys that tables keyed by the data turned out to have; a
    table that is absent (``None``) stays open (a key under it is undefined, not unknown)."""
    keys, prefixes = declared_figures(sorted({key.split(".", 1)[0] for key in values}))
    found = {key for key in values if any(key.startswith(prefix + ".") for prefix in prefixes)}
    found |= {key for key in values if key.split(".")[1:2] == ["reviewed"]}  # textrobust review's figures
    absent = {prefix for prefix in prefixes if prefix in values and values[prefix] is None}
    return keys | found, frozenset(absent)


def check_keys(requirements: Sequence[Requirement], keys: Collection[str], prefixes: Collection[str] = (),
               *, where: str = "this audit", subject: str = "The '--require' option") -> None:
    """A :class:`~textrobust.errors.ConfigError` listing the valid keys when a requirement
    names a key that is neither in ``keys`` nor under one of ``prefixes``."""
    for requirement in requirements:
        key = requirement.key
        if key in keys or any(key.startswith(prefix + ".") for prefix in prefixes):
            continue
        valid = sorted(set(keys) | {f"{prefix}.<key>" for prefix in prefixes})
        close = difflib.get_close_matches(key, sorted(keys), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        listing = ", ".join(valid) if valid else "none (no analysis with figures)"
        raise ConfigError(f"{subject} names '{key}', which is not a figure of {where}.{hint} "
                          f"Valid keys: {listing}.")


# ---- checking ------------------------------------------------------------------------------------
def check(requirements: Iterable[Requirement], values: Mapping[str, float | None], *,
          reviewed_end: bool = False) -> tuple[Outcome, ...]:
    """Each requirement checked against ``values`` (:func:`figures`, or any mapping of
    key -> number). A value that is None or NaN, or a key absent from ``values``, fails.
    ``reviewed_end`` (``audit --require`` and ``gate``): a reviewed figure named without its
    end is read, while its interval is open (findings left unreviewed), at the end hardest
    to meet (``_low`` for ``>=``, ``_high`` for ``<=``); once every finding is reviewed the
    ends meet and it is the reviewed value. Without it the bare key is the value counting
    only confirmed findings, which passes an unreviewed run's ``>=`` gate on accuracy trivially."""
    return tuple(_check_one(requirement, values, reviewed_end) for requirement in requirements)


def _interval_end(requirement: Requirement, values: Mapping[str, float | None]) -> str | None:
    """The key of the end of a reviewed figure's interval that is hardest for ``requirement``
    to meet; None when its key is not a reviewed figure with an interval."""
    key = requirement.key
    if key.split(".")[1:2] != ["reviewed"] or f"{key}_low" not in values or f"{key}_high" not in values:
        return None
    return f"{key}_low" if requirement.operator is Operator.AT_LEAST else f"{key}_high"


def _check_one(requirement: Requirement, values: Mapping[str, float | None], reviewed_end: bool = False) -> Outcome:
    key, op, threshold = requirement.key, requirement.operator, requirement.threshold
    wanted = f"required {op.value} {_number(threshold)}"
    shown = key
    end = _interval_end(requirement, values) if reviewed_end else None
    if end is not None and values[f"{key}_low"] != values[f"{key}_high"]:  # findings left unreviewed
        shown = (f"{key} (at its interval's {end.rsplit('_', 1)[1]} end, {end}: not every finding it rests on is "
                 f"reviewed yet; review them with `textrobust review`, or name {key}_low or {key}_high)")
        key = end
    if key not in values:
        parents = [".".join(key.split(".")[:i]) for i in range(1, key.count(".") + 1)]
        if any(p in values and values[p] is None for p in parents):
            return Outcome(requirement, None, False, f"{key} is undefined (not computed), {wanted}")
        ran = any(k.startswith(requirement.analysis + ".") for k in values)
        why = f"{requirement.analysis} has no such figure" if ran else "its analysis did not run"
        return Outcome(requirement, None, False, f"{key} is not in the summary ({why}), {wanted}")
    value = values[key]
    if values.get(f"{requirement.analysis}.units") == 0:  # every figure of an analysis that ran on nothing
        return Outcome(requirement, None, False, f"{key} was computed over no examples ({requirement.analysis} ran "
                                                 f"on 0 units), {wanted}")
    if value is None or not math.isfinite(float(value)):
        return Outcome(requirement, None, False, f"{key} is undefined (NaN or not computed), {wanted}")
    margin = value - threshold if op is Operator.AT_LEAST else threshold - value
    passed = margin >= 0
    if passed:
        note = f"passed by {_number(margin)}" if margin > 0 else "met exactly"
    else:
        note = f"{'short' if op is Operator.AT_LEAST else 'over'} by {_number(-margin)}"
    return Outcome(requirement, value, passed, f"{shown} = {_number(value)}, {wanted} ({note})")


def _number(value: float) -> str:
    """A number for a message: an int (a count, a threshold written without a point) as
    such, a float with two to four decimals."""
    if isinstance(value, int):
        return str(value)
    if 0 < abs(value) < 0.001:
        return f"{value:.3g}"
    text = f"{value:.4f}".rstrip("0")
    return text + "0" * (2 - len(text.split(".")[1]))


# ---- files ---------------------------------------------------------------------------------------
def load_figures(folder: str | os.PathLike[str]) -> dict[str, float | None]:
    """The figures (:func:`figures`) of the ``summary.json`` in the run folder ``folder``."""
    path = Path(folder) / "summary.json"
    if Path(folder).is_file():
        raise ConfigError(f"The run folder {folder} is a file; give the --out folder of a finished run.")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"No summary.json in '{folder}' (expected {path}); give the --out folder of a "
                         "finished run.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreError(f"The summary {path} cannot be read: {exc}.") from None
    if not isinstance(summary, Mapping) or not isinstance(summary.get("analyses"), Mapping):
        raise StoreError(f"The summary {path} has no 'analyses' table; is it a textrobust summary.json?")
    check_reviews_counted(Path(folder), summary)
    return figures(summary)


def check_reviews_counted(folder: Path, summary: Mapping[str, Any]) -> None:
    """Refuse (:class:`StoreError`) a ``summary.json`` older than the newest judgement in the
    run store beside it (``reviews_through``, written with the summary, against
    :func:`~textrobust.validity.reviews.newest_judgement`): its reviewed figures and verdict
    would not count it, and a gate on them would pass or fail on stale numbers."""
    from textrobust.validity.reviews import newest_judgement

    newest = newest_judgement(folder / "store.sqlite")
    counted = summary.get("reviews_through")
    counted = counted if isinstance(counted, int) and not isinstance(counted, bool) else 0
    if newest > counted:
        raise StoreError(f"The summary {folder / 'summary.json'} is older than the judgements in its run store "
                         f"(judgement #{newest} came after it was written): its reviewed figures and verdict do not "
                         f"count them. Rebuild it with `textrobust review {folder} --report`, then run the gate "
                         "again.")


def check_junit_target(path: str | os.PathLike[str]) -> Path:
    """``path`` as a JUnit file target: its folder must exist (a ConfigError otherwise,
    naming it: create it first), and ``path`` must not be a folder."""
    target = Path(path).expanduser()
    folder = target.parent
    if not folder.is_dir():
        why = "is a file" if folder.exists() else "does not exist"
        raise ConfigError(f"The JUnit file {target} cannot be written: its folder {folder} {why}. Create the "
                          f"folder first (mkdir -p {folder}) or give a path in an existing one (--junit).")
    if target.is_dir():
        raise ConfigError(f"The JUnit file {target} is a folder; give a file path (--junit).")
    return target


def write_junit(outcomes: Sequence[Outcome], path: str | os.PathLike[str]) -> Path:
    """``outcomes`` as a JUnit XML file at ``path`` (in a folder that exists: a missing one
    is a ConfigError, not made silently, since a typo in it would hide the file): one
    ``<testsuite>`` named :data:`JUNIT_SUITE`, one ``<testcase>`` per requirement (class
    name: the analysis), with a ``<failure>`` when it failed."""
    failed = sum(not outcome.passed for outcome in outcomes)
    suite = ET.Element("testsuite", {"name": JUNIT_SUITE, "tests": str(len(outcomes)), "failures": str(failed),
                                     "errors": "0", "skipped": "0"})
    for outcome in outcomes:
        case = ET.SubElement(suite, "testcase", {"name": str(outcome.requirement),
                                                 "classname": f"textrobust.{outcome.requirement.analysis}"})
        if outcome.passed:
            ET.SubElement(case, "system-out").text = outcome.message
        else:
            ET.SubElement(case, "failure", {"message": outcome.message, "type": "RequirementNotMet"}).text = \
                outcome.message
    ET.indent(suite)
    target = Path(path)
    check_junit_target(target)
    try:
        target.write_bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True) + b"\n")
    except OSError as exc:
        raise ConfigError(f"The JUnit file {target} cannot be written: {exc.strerror or exc}.") from None
    return target
