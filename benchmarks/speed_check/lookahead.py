"""The default fill-in's lookahead, one cached row per candidate (before) against one row
shared by a sentence's candidates (``ProductFillIn.shared_rows``, issue 38 item 5): the
same answers, and the seconds of each, alternated in one process on the same load.

Requests: every position of the first ``--sentences`` test sentences of the second-order
plan (``benchmarks/second_order_labels/sentences.tsv``), as a neighbourhood asks them.

    python benchmarks/speed_check/lookahead.py --sentences 8 --repeats 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    sys.path.insert(0, str(HERE.parent / "second_order_labels"))
    from generate import _plan  # type: ignore[import-not-found]

    from textrobust.fill_in import load_fill_in
    from textrobust.text import Text

    torch.set_num_threads(args.threads)
    texts = [Text.from_string(r["text"]) for r in _plan("test", args.sentences)]
    requests = [(t, p) for t in texts for p in range(len(t))]
    from textrobust.fill_in.product import ProductFillIn

    fill_in = load_fill_in("minilm_gemma")
    if not isinstance(fill_in, ProductFillIn):
        raise SystemExit(f"minilm_gemma is a {type(fill_in).__name__} here, not a ProductFillIn")
    fill_in.fill([(Text.from_string("a warm-up film about a quiet town ."), 2)], 20)  # tables, first calls
    answers: dict[bool, list[list[tuple[str, float]]]] = {}
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.repeats):
        for shared in (False, True):
            fill_in.clear_cache()
            fill_in.masked.clear_cache()
            fill_in.shared_rows = shared
            start = time.perf_counter()
            answers[shared] = fill_in.fill(requests, 20)
            seconds[shared].append(time.perf_counter() - start)
    worst, order = 0.0, 0
    for a, b in zip(answers[False], answers[True]):
        order += [w for w, _ in a] != [w for w, _ in b]
        worst = max([worst, *(abs(x - y) for (_, x), (_, y) in zip(a, b))])
    print(f"{len(requests)} requests of {len(texts)} sentences; load average {os.getloadavg()}")
    print(f"row per candidate: {[round(s, 2) for s in seconds[False]]} s; shared rows: "
          f"{[round(s, 2) for s in seconds[True]]} s")
    print(f"answers with another word order: {order}; largest score difference {worst:.2e}")


if __name__ == "__main__":
    main()
