"""Join a pool (build_pool.py) with the labels read by hand into the shipped labelled set.

Labels are TSV files with the columns ``id``, ``label``, ``reason`` (a header line is
allowed; ``/work/labelwork/subs/INSTRUCTIONS.md`` for issue 39's readers). Items read twice
(``--double``: the second reads of a fifth of the items, by another reader) give the
agreement, Cohen's kappa on the valid/invalid label, and their disagreements are resolved
by a written rule, the labelled set's strictness: **an item one careful reader rejects is
invalid**, with the rejecting reader's reason (two rejecting reads: the first read's reason).

Rerun (issue 39): ``.venv/bin/python benchmarks/validity/merge_labels.py --pool pool3.tsv
--labels /work/labelwork/subs/labels_chunk_*.tsv --double /work/labelwork/subs/labels_double_*.tsv
--append-to src/textrobust/resources/substitutions/labelled.tsv``; the fourth pool with the third, so
that kappa is over every double read: ``--pool pool3.tsv pool4.tsv`` and every chunk's labels
(the third pool's rows come out as they were). Items without a label are
left out (and counted). ``--rubric RUBRIC.md --out FILE`` writes a new file with the rubric
as its header (how issue 28's set was made).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

REASONS = ("same", "antonym", "sentiment", "sense", "related", "grammar", "name", "nonsense")
COLUMNS = ("id", "split", "corpus", "sentence", "position", "word", "substitute", "sources", "label", "reason")


def read_labels(paths: list[Path]) -> dict[str, tuple[str, str]]:
    """``id -> (label, reason)`` from label files; malformed lines are reported and skipped."""
    labels: dict[str, tuple[str, str]] = {}
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            fields = [f.strip() for f in line.split("\t")]
            if not line.strip() or fields[0] == "id":
                continue
            if len(fields) < 3 or fields[1] not in ("0", "1") or fields[2] not in REASONS or \
                    (fields[2] == "same") != (fields[1] == "1"):
                print(f"skipped {path}:{number}: {line!r}")
                continue
            labels[fields[0]] = (fields[1], fields[2])
    return labels


def cohen_kappa(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa of two reads of the same items (labels "0"/"1")."""
    n = len(pairs)
    if n == 0:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / n
    p1 = sum(a == "1" for a, _ in pairs) / n
    p2 = sum(b == "1" for _, b in pairs) / n
    expected = p1 * p2 + (1 - p1) * (1 - p2)
    return (observed - expected) / (1 - expected) if expected < 1 else 1.0


def resolve(first: tuple[str, str], second: tuple[str, str] | None) -> tuple[str, str]:
    """The written rule: agreeing reads stand; when they disagree the item is invalid with
    the rejecting read's reason."""
    if second is None or first[0] == second[0]:
        return first
    return first if first[0] == "0" else second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, nargs="+", required=True,
                        help="one or more pools (several: their labels merged at once, kappa over all double reads)")
    parser.add_argument("--labels", type=Path, nargs="+", required=True)
    parser.add_argument("--double", type=Path, nargs="*", default=[])
    parser.add_argument("--rubric", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--append-to", type=Path, default=None, help="a labelled set to append the items to")
    parser.add_argument("--agreement", type=Path, default=None, help="write the double-read figures here (JSON)")
    args = parser.parse_args()
    first = read_labels(args.labels)
    second = read_labels(args.double) if args.double else {}
    pairs = [(first[i][0], second[i][0]) for i in second if i in first]
    agreement = {"double_read": len(pairs), "agree": sum(a == b for a, b in pairs),
                 "kappa": round(cohen_kappa(pairs), 3),
                 "valid_first": sum(a == "1" for a, _ in pairs), "valid_second": sum(b == "1" for _, b in pairs)}
    print("double reads:", agreement)
    if args.agreement is not None:
        args.agreement.write_text(json.dumps(agreement, indent=1), encoding="utf-8")
    rows = []
    for pool in args.pool:
        with pool.open(encoding="utf-8") as handle:
            rows += list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    out: list[str] = []
    missing = 0
    for row in rows:
        if row["id"] not in first and row["id"] not in second:
            missing += 1
            continue
        if row["id"] in first:
            label, reason = resolve(first[row["id"]], second.get(row["id"]))
        else:  # read once, by the second reader (its first read is not in yet)
            label, reason = second[row["id"]]
        out.append("\t".join([row["id"], row["split"], row["corpus"], row["sentence"], row["position"], row["word"],
                              row["substitute"], row["sources"], label, reason]))
    if args.append_to is not None:  # the pool's earlier rows are replaced: merging again is idempotent
        ids = {row["id"] for row in rows}
        existing = [line for line in args.append_to.read_text(encoding="utf-8").splitlines()
                    if line.startswith("#") or line.split("\t", 1)[0] not in ids]
        args.append_to.write_text("\n".join(existing + out) + "\n", encoding="utf-8")
        target = args.append_to
    else:
        if args.out is None or args.rubric is None:
            parser.error("give --append-to, or --out with --rubric")
        header = ["# " + line if line else "#" for line in args.rubric.read_text(encoding="utf-8").splitlines()]
        args.out.write_text("\n".join(header + ["\t".join(COLUMNS)] + out) + "\n", encoding="utf-8")
        target = args.out
    print(f"wrote {len(out)} labelled items to {target}; {missing} pool items without a label")


if __name__ == "__main__":
    main()
