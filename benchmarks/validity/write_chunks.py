"""Blinded reading chunks of a pool (build_pool.py) for the readers who label it (issue 39).

Each chunk holds 300-400 items in a shuffled order, without the ``sources`` column (a
reader must not know which source proposed a substitute) and without the split: columns
``id``, ``sentence`` (the target word marked ``[[word]]``), ``position``, ``word``,
``substitute`` and ``substituted`` (the sentence with ``[[substitute]]`` in its place, to
read). A fifth of the items (seeded) is written again, shuffled otherwise, to ``double_NN``
chunks for a second, independent reader: their agreement (Cohen's kappa) is reported and
``merge_labels.py`` resolves their disagreements by a written rule.

Rerun: ``.venv/bin/python benchmarks/validity/write_chunks.py --pool pool3.tsv --out /work/labelwork/subs``
(the third pool); the fourth: ``--pool pool4.tsv --most 350 --first-chunk 8 --first-double 3``.
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

from textrobust.text import Text

COLUMNS = ("id", "sentence", "position", "word", "substitute", "substituted")


def marked(sentence: str, position: int, replacement: str) -> str:
    """``sentence`` with its word ``position`` replaced by ``[[replacement]]``."""
    text = Text.from_string(sentence)
    column, start, end = text.word_spans()[position]
    if len(text.columns) != 1 or column != 0:
        raise ValueError(f"one-column sentences only: {sentence!r}")
    return sentence[:start] + "[[" + replacement + "]]" + sentence[end:]


def chunk_sizes(n: int, most: int = 400) -> list[int]:
    """Sizes of the fewest chunks of at most ``most`` items that hold ``n``, as equal as possible."""
    parts = max(1, -(-n // most))
    return [n // parts + (i < n % parts) for i in range(parts)]


def write(rows: list[dict[str, str]], out: Path, stem: str, first: int = 1, most: int = 400) -> list[Path]:
    """``rows`` in chunks of at most ``most`` items, numbered from ``first`` (``stem_NN.tsv``)."""
    paths = []
    start = 0
    for number, size in enumerate(chunk_sizes(len(rows), most), first):
        path = out / f"{stem}_{number:02d}.tsv"
        if path.exists():
            raise FileExistsError(f"{path} exists (an earlier pool's chunk?): give --first-chunk / --first-double past it")
        with path.open("w", encoding="utf-8") as handle:
            handle.write("\t".join(COLUMNS) + "\n")
            for row in rows[start : start + size]:
                position = int(row["position"])
                fields = [row["id"], marked(row["sentence"], position, row["word"]), row["position"], row["word"],
                          row["substitute"], marked(row["sentence"], position, row["substitute"])]
                handle.write("\t".join(fields) + "\n")
        start += size
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--double", type=float, default=0.2, help="share of the items read twice")
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--most", type=int, default=400, help="most items in one chunk")
    parser.add_argument("--first-chunk", type=int, default=1, help="number of the first chunk_NN (issue 39's fourth pool: 8)")
    parser.add_argument("--first-double", type=int, default=1, help="number of the first double_NN (fourth pool: 3)")
    args = parser.parse_args()
    with args.pool.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    rng = random.Random(args.seed)
    order = rows[:]
    rng.shuffle(order)
    args.out.mkdir(parents=True, exist_ok=True)
    single = write(order, args.out, "chunk", args.first_chunk, args.most)
    twice = rng.sample(rows, round(len(rows) * args.double))
    rng.shuffle(twice)
    double = write(twice, args.out, "double", args.first_double, args.most)
    print(f"{len(rows)} items in {len(single)} chunks; {len(twice)} read twice in {len(double)} chunks")


if __name__ == "__main__":
    main()
