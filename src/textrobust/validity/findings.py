"""The labelled attack findings (issue 47, item 5): adversarial examples read blind by two readers.

The third labelled set of :mod:`textrobust.validity`, beside the in-context substitutions
(:mod:`~textrobust.validity.substitutions`) and the second-order findings
(:mod:`~textrobust.validity.second_order`). Each row is one distinct finding of the default
first-order attack (textfooler over the validated source): a test sentence of Rotten
Tomatoes or tweets and the text the attack changed it into, which flipped a victim. Two
different readers read each one blind (only the two texts, the changed words marked; no
victim, setting or probability) under the labelled set's rule adapted to whole findings:
valid when the changed text means the same as the original, stays grammatical, keeps the
sentiment and its strength, and every swap is acceptable. The finding counts as valid when
both readers say valid (``label``).

``probability`` is the judge's probability that the finding keeps the meaning
(:func:`~textrobust.attack.candidates.swap_validity.finding_validity`, swaps independent)
when the set was measured; ``found_by`` lists the ``victim@min_validity`` attacks that found
it (two attacks may find the same text). ``benchmarks/validity/findings_readings.py`` made
the set and measures the judge against it.

The set lives in ``textrobust/resources/findings/labelled.tsv`` (the rule and who read it in
its ``#`` lines at the top). :func:`load_findings` reads and checks it; a malformed file is a
:class:`~textrobust.errors.DataError` naming the line and the field.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from textrobust.errors import DataError

__all__ = ["COLUMNS", "CORPORA", "REASONS", "ReadFinding", "Swap", "default_path", "load_findings"]

#: The columns of labelled.tsv, in order.
COLUMNS = ("item", "corpus", "example_id", "found_by", "original", "changed", "swaps", "probability",
           "first_label", "first_reason", "second_label", "second_reason", "label", "reason", "note")
#: A reading's reasons: ``same`` for a valid finding, else the first failure that applies.
REASONS = ("same", "antonym", "sentiment", "sense", "related", "grammar", "name", "nonsense")
#: The corpora the findings come from.
CORPORA = ("rotten_tomatoes", "tweets")


@dataclass(frozen=True)
class Swap:
    """One changed word: its ``position`` (word index), the original ``word`` and the
    ``substitute``. Written ``position:word>substitute`` in the file."""

    position: int
    word: str
    substitute: str

    def __str__(self) -> str:
        return f"{self.position}:{self.word}>{self.substitute}"


@dataclass(frozen=True)
class ReadFinding:
    """One finding with both readings: each reader's ``*_label`` (True: valid) and
    ``*_reason``; ``label`` is True when both say valid, ``reason`` the first failure reason
    (``same`` when valid)."""

    item: str
    corpus: str
    example_id: str
    found_by: tuple[str, ...]
    original: str
    changed: str
    swaps: tuple[Swap, ...]
    probability: float
    first_label: bool
    first_reason: str
    second_label: bool
    second_reason: str
    label: bool
    reason: str
    note: str

    @property
    def agree(self) -> bool:
        """Both readers gave the same label."""
        return self.first_label == self.second_label

    @property
    def victims(self) -> tuple[str, ...]:
        """The victims whose attacks found it (from ``found_by``)."""
        return tuple(dict.fromkeys(f.partition("@")[0] for f in self.found_by))


def default_path() -> Path:
    """The shipped set."""
    from textrobust.assets.catalog import resource_path

    return resource_path("findings/labelled.tsv")


def load_findings(path: str | Path | None = None) -> tuple[ReadFinding, ...]:
    """Read and check the labelled findings (default: the shipped set). Raises
    :class:`~textrobust.errors.DataError` naming the line and field of the first bad row."""
    file = Path(path) if path is not None else default_path()
    if not file.is_file():
        raise DataError(f"The labelled findings file {file} does not exist; pass the path of a labelled.tsv "
                        "(benchmarks/validity/findings_readings.py writes one).")
    lines = file.read_text(encoding="utf-8").splitlines()
    body = [(n, line) for n, line in enumerate(lines, 1) if line and not line.startswith("#")]
    if not body:
        raise DataError(f"{file} holds no header line and no rows.")
    header = tuple(body[0][1].split("\t"))
    if header != COLUMNS:
        raise DataError(f"{file} line {body[0][0]}: the header must be the columns {', '.join(COLUMNS)} separated "
                        f"by tabs; got {', '.join(header)}.")
    out = []
    seen: set[str] = set()
    rows = csv.reader([line for _, line in body[1:]], delimiter="\t", quoting=csv.QUOTE_NONE)
    for (number, _), row in zip(body[1:], rows):
        if len(row) != len(COLUMNS):
            raise DataError(f"{file} line {number}: expected {len(COLUMNS)} tab-separated fields, got {len(row)}.")
        try:
            finding = _parse(dict(zip(COLUMNS, row)))
        except _Bad as bad:
            raise DataError(f"{file} line {number}: the field '{bad.field}' {bad.problem}; got {bad.value!r}.") from None
        if finding.item in seen:
            raise DataError(f"{file} line {number}: the field 'item' repeats {finding.item!r}; each finding is one row.")
        seen.add(finding.item)
        out.append(finding)
    return tuple(out)


class _Bad(Exception):
    def __init__(self, field: str, problem: str, value: str) -> None:
        super().__init__(field)
        self.field, self.problem, self.value = field, problem, value


def _label(row: dict[str, str], name: str) -> bool:
    if row[name] not in ("0", "1"):
        raise _Bad(name, "must be 1 (valid) or 0 (invalid)", row[name])
    return row[name] == "1"


def _reason(row: dict[str, str], name: str, label: bool) -> str:
    value = row[name]
    if value not in REASONS:
        raise _Bad(name, f"must be one of {', '.join(REASONS)}", value)
    if (value == "same") != label:
        raise _Bad(name, "must be 'same' exactly when its label is 1", value)
    return value


def _swaps(value: str) -> tuple[Swap, ...]:
    out = []
    for part in value.split(";"):
        position, colon, rest = part.partition(":")
        word, arrow, substitute = rest.partition(">")
        if not (colon and arrow and position.isdigit() and word and substitute):
            raise _Bad("swaps", "must be position:word>substitute entries separated by ';'", value)
        out.append(Swap(int(position), word, substitute))
    return tuple(out)


def _parse(row: dict[str, str]) -> ReadFinding:
    for name in ("item", "example_id", "original", "changed", "found_by"):
        if not row[name].strip():
            raise _Bad(name, "must not be empty", row[name])
    if row["corpus"] not in CORPORA:
        raise _Bad("corpus", f"must be one of {', '.join(CORPORA)}", row["corpus"])
    found_by = tuple(row["found_by"].split(","))
    for entry in found_by:
        victim, at, setting = entry.partition("@")
        try:
            ok = bool(victim) and bool(at) and 0.0 <= float(setting) <= 1.0
        except ValueError:
            ok = False
        if not ok:
            raise _Bad("found_by", "must be victim@min_validity entries separated by ','", row["found_by"])
    try:
        probability = float(row["probability"])
    except ValueError:
        probability = math.nan
    if not 0.0 <= probability <= 1.0:
        raise _Bad("probability", "must be a number in [0, 1]", row["probability"])
    first, second, label = _label(row, "first_label"), _label(row, "second_label"), _label(row, "label")
    if label != (first and second):
        raise _Bad("label", "must be 1 exactly when both readers' labels are 1", row["label"])
    if row["original"] == row["changed"]:
        raise _Bad("changed", "must differ from the original", row["changed"])
    return ReadFinding(item=row["item"], corpus=row["corpus"], example_id=row["example_id"], found_by=found_by,
                       original=row["original"], changed=row["changed"], swaps=_swaps(row["swaps"]),
                       probability=probability, first_label=first, first_reason=_reason(row, "first_reason", first),
                       second_label=second, second_reason=_reason(row, "second_reason", second), label=label,
                       reason=_reason(row, "reason", label), note=row["note"])
