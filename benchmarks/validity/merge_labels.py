"""Join the pool (build_pool.py) with the labels read by hand into the shipped labelled set.

Rerun: ``.venv/bin/python benchmarks/validity/merge_labels.py --pool pool.tsv --rubric RUBRIC.md
--labels labels0.tsv labels1.tsv labels2.tsv --out src/textrobust/resources/substitutions/labelled.tsv``.
Items without a label are left out (and counted).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, required=True)
    parser.add_argument("--rubric", type=Path, required=True)
    parser.add_argument("--labels", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    labels: dict[str, tuple[str, str]] = {}
    for path in args.labels:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item, label, reason = line.split("\t")[:3]
                labels[item.strip()] = (label.strip(), reason.strip())
    with args.pool.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    header = ["# " + line if line else "#" for line in args.rubric.read_text(encoding="utf-8").splitlines()]
    out = ["\t".join(["id", "split", "corpus", "sentence", "position", "word", "substitute", "sources", "label", "reason"])]
    missing = 0
    for row in rows:
        if row["id"] not in labels:
            missing += 1
            continue
        label, reason = labels[row["id"]]
        out.append("\t".join([row["id"], row["split"], row["corpus"], row["sentence"], row["position"], row["word"],
                              row["substitute"], row["sources"], label, reason]))
    args.out.write_text("\n".join(header + out) + "\n", encoding="utf-8")
    print(f"wrote {len(out) - 1} labelled items to {args.out}; {missing} pool items without a label")


if __name__ == "__main__":
    main()
