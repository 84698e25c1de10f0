"""The labelled second-order findings (issue 38): SO-Beam findings read blind by LLM reader agents.

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 3.3.3 and Appendix A.2: people score the
naturalness (1-5, "how likely is this an original sentence", by grammar and natural wording)
of the test sentence ``x0`` and of the vulnerable example ``x~0``, and the sentiment of each
with and without the synonym patch; the patch keeps the meaning "if and only if they are both
positive or negative". Their Table 4: naturalness 3.87 (x0) and 3.63 (x~0), patch keeps the
sentiment of 85% (x0) and 71% (x~0).

The set lives in ``textrobust/resources/second_order/labelled.tsv`` (the protocol at its
top, ``#`` lines). One row per (finding, reader): a quarter of the findings were read by two
readers (``reader`` 1 and 2). :func:`load_labelled` reads and checks it; :func:`table4`
computes the paper's figures over any subset (reader 1 only, so every finding counts once).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from textrobust.errors import DataError

__all__ = ["COLUMNS", "SENTIMENTS", "LabelledFinding", "Table4", "cohen_kappa", "default_path", "load_labelled", "table4"]

#: The columns of labelled.tsv, in order.
COLUMNS = ("item", "phase", "half", "corpus", "victim", "settings", "example_id", "x0", "x0_patched", "neighbour",
           "neighbour_patched", "patch_source", "patch_target", "patch_position", "l0", "p_x0", "p_x0_patched",
           "p_neighbour", "p_neighbour_patched", "ppl_x0", "ppl_neighbour", "reader", "nat_x0", "nat_neighbour",
           "sent_x0", "sent_x0_patched", "sent_neighbour", "sent_neighbour_patched", "patch_ok", "note")
SENTIMENTS = ("pos", "neg", "neu")


@dataclass(frozen=True)
class LabelledFinding:
    """One reader's reading of one SO-Beam finding. ``p_*`` are the victim's P(positive) of
    x0, x0 (+) p, x~0 and x~0 (+) p; ``ppl_*`` Gemma perplexities (NaN when not measured);
    ``nat_*`` 1-5; ``sent_*`` pos / neg / neu; ``patch_ok``: the reader calls the swap a
    synonym in the neighbour's context."""

    item: str
    phase: int
    half: str
    corpus: str
    victim: str
    settings: str
    example_id: str
    x0: str
    x0_patched: str
    neighbour: str
    neighbour_patched: str
    patch_source: str
    patch_target: str
    patch_position: int
    l0: int
    p_x0: float
    p_x0_patched: float
    p_neighbour: float
    p_neighbour_patched: float
    ppl_x0: float
    ppl_neighbour: float
    reader: int
    nat_x0: int
    nat_neighbour: int
    sent_x0: str
    sent_x0_patched: str
    sent_neighbour: str
    sent_neighbour_patched: str
    patch_ok: bool
    note: str

    @property
    def naturalness_drop(self) -> int:
        return self.nat_x0 - self.nat_neighbour

    @property
    def keeps_x0(self) -> bool:
        """The patch keeps x0's sentiment (the paper's rule: both pos or both neg)."""
        return _same(self.sent_x0, self.sent_x0_patched)

    @property
    def keeps_neighbour(self) -> bool:
        """The patch keeps the vulnerable example's sentiment (both pos or both neg)."""
        return _same(self.sent_neighbour, self.sent_neighbour_patched)

    @property
    def margin(self) -> float:
        """The smaller distance of x~0 and x~0 (+) p from the decision boundary (0.5)."""
        return min(abs(self.p_neighbour - 0.5), abs(self.p_neighbour_patched - 0.5))


def _same(a: str, b: str) -> bool:
    return a == b and a in ("pos", "neg")


def default_path() -> Path:
    from textrobust.assets.catalog import resource_path

    return resource_path("second_order/labelled.tsv")


def load_labelled(path: str | Path | None = None) -> tuple[LabelledFinding, ...]:
    """Read and check the labelled set (default: the shipped one). Raises
    :class:`~textrobust.errors.DataError` naming the line of the first bad row."""
    file = Path(path) if path is not None else default_path()
    if not file.is_file():
        raise DataError(f"The labelled second-order set {file} does not exist.")
    lines = file.read_text(encoding="utf-8").splitlines()
    body = [(n, line) for n, line in enumerate(lines, 1) if line and not line.startswith("#")]
    if not body:
        raise DataError(f"{file} holds no header line and no rows.")
    header = body[0][1].split("\t")
    if tuple(header) != COLUMNS:
        raise DataError(f"{file} line {body[0][0]}: the header must be the columns {COLUMNS} separated by tabs; "
                        f"got {header!r}.")
    out = []
    seen: set[tuple[str, int]] = set()
    for number, row in zip((n for n, _ in body[1:]), csv.reader([line for _, line in body[1:]], delimiter="\t",
                                                                quoting=csv.QUOTE_NONE)):
        try:
            finding = _parse(dict(zip(COLUMNS, row)), len(row))
        except (ValueError, KeyError) as exc:
            raise DataError(f"{file} line {number}: {exc}") from None
        key = (finding.item, finding.reader)
        if key in seen:
            raise DataError(f"{file} line {number}: item {finding.item} reader {finding.reader} appears twice.")
        seen.add(key)
        out.append(finding)
    return tuple(out)


def _float(value: str) -> float:
    return math.nan if value in ("", "nan") else float(value)


def _parse(row: dict[str, str], width: int) -> LabelledFinding:
    if width != len(COLUMNS):
        raise ValueError(f"expected {len(COLUMNS)} tab-separated fields, got {width}")
    for name in ("nat_x0", "nat_neighbour"):
        if row[name] not in ("1", "2", "3", "4", "5"):
            raise ValueError(f"{name} must be 1-5, got {row[name]!r}")
    for name in ("sent_x0", "sent_x0_patched", "sent_neighbour", "sent_neighbour_patched"):
        if row[name] not in SENTIMENTS:
            raise ValueError(f"{name} must be one of {SENTIMENTS}, got {row[name]!r}")
    if row["patch_ok"] not in ("yes", "no"):
        raise ValueError(f"patch_ok must be yes or no, got {row['patch_ok']!r}")
    if row["half"] not in ("dev", "test"):
        raise ValueError(f"half must be dev or test, got {row['half']!r}")
    if row["reader"] not in ("1", "2"):
        raise ValueError(f"reader must be 1 or 2, got {row['reader']!r}")
    probabilities = [float(row[k]) for k in ("p_x0", "p_x0_patched", "p_neighbour", "p_neighbour_patched")]
    if not all(0.0 <= p <= 1.0 for p in probabilities):
        raise ValueError(f"probabilities must be in [0, 1], got {probabilities}")
    return LabelledFinding(
        item=row["item"], phase=int(row["phase"]), half=row["half"], corpus=row["corpus"], victim=row["victim"],
        settings=row["settings"], example_id=row["example_id"], x0=row["x0"], x0_patched=row["x0_patched"],
        neighbour=row["neighbour"], neighbour_patched=row["neighbour_patched"], patch_source=row["patch_source"],
        patch_target=row["patch_target"], patch_position=int(row["patch_position"]), l0=int(row["l0"]),
        p_x0=probabilities[0], p_x0_patched=probabilities[1], p_neighbour=probabilities[2],
        p_neighbour_patched=probabilities[3], ppl_x0=_float(row["ppl_x0"]), ppl_neighbour=_float(row["ppl_neighbour"]),
        reader=int(row["reader"]), nat_x0=int(row["nat_x0"]), nat_neighbour=int(row["nat_neighbour"]),
        sent_x0=row["sent_x0"], sent_x0_patched=row["sent_x0_patched"], sent_neighbour=row["sent_neighbour"],
        sent_neighbour_patched=row["sent_neighbour_patched"], patch_ok=row["patch_ok"] == "yes", note=row["note"])


@dataclass(frozen=True)
class Table4:
    """The paper's Table 4 over some findings (first reader only): mean naturalness of x0
    and of the vulnerable examples, their difference, and the share whose sentiment the
    patch keeps, for x0 and for the vulnerable examples; plus the share of patches the
    reader called synonyms in context."""

    findings: int
    naturalness_x0: float
    naturalness_neighbour: float
    naturalness_drop: float
    keeps_x0: float
    keeps_neighbour: float
    patch_ok: float

    @property
    def naturalness_ratio(self) -> float:
        """The neighbours' mean naturalness over the test sentences' (issue 48's target:
        the paper's 3.63 / 3.87 = 0.94); NaN without findings."""
        if not self.findings or not self.naturalness_x0:
            return math.nan
        return self.naturalness_neighbour / self.naturalness_x0


def table4(findings: Iterable[LabelledFinding]) -> Table4:
    """Table 4 over ``findings`` (reader 1's rows; NaN figures when there are none)."""
    rows = [f for f in findings if f.reader == 1]
    n = len(rows)

    def mean(values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else math.nan

    nat_x0 = mean([f.nat_x0 for f in rows])
    nat_nb = mean([f.nat_neighbour for f in rows])
    return Table4(n, nat_x0, nat_nb, nat_x0 - nat_nb, mean([f.keeps_x0 for f in rows]),
                  mean([f.keeps_neighbour for f in rows]), mean([f.patch_ok for f in rows]))


def cohen_kappa(pairs: Sequence[tuple[object, object]], weights: Sequence[object] | None = None) -> float:
    """Cohen's kappa of two readers' labels (``pairs``); with ``weights`` (the ordered
    categories, e.g. 1-5) the linearly weighted kappa. NaN when there are no pairs or the
    expected agreement is 1."""
    if not pairs:
        return math.nan
    categories = list(weights) if weights is not None else sorted({str(x) for p in pairs for x in p})
    index = {str(c): i for i, c in enumerate(categories)}
    k = len(categories)
    n = len(pairs)

    def distance(i: int, j: int) -> float:
        if weights is None:
            return 0.0 if i == j else 1.0
        return abs(i - j) / max(k - 1, 1)

    first = [0] * k
    second = [0] * k
    observed = 0.0
    for a, b in pairs:
        i, j = index[str(a)], index[str(b)]
        first[i] += 1
        second[j] += 1
        observed += distance(i, j)
    expected = sum(first[i] * second[j] * distance(i, j) for i in range(k) for j in range(k)) / n
    if expected == 0:
        return math.nan
    return 1.0 - observed / expected
