"""The default fill-in's per-call cost (issue 41, item 2): does the first call after a
warm-up cost more than the next ones, and what do 4 calls of 5 rows cost against one call
of the same 20 rows?

    python benchmarks/fill_in_fixed_cost.py            # ~1 min on 2 cores

Fill-in ``minilm_gemma`` (tuned MiniLM x Gemma 3 270M, the library's default), on the CPU
in float32, with the command line's thread policy (``OMP_WAIT_POLICY=PASSIVE``, set here
before torch loads, and 1 torch thread unless ``--threads``). The warm-up asks for a gap
that ends its text, which needs no lookahead: before issue 41 that left the lookahead's
tables to the first real call. Every timed call starts from an empty answer cache.
Ratios are taken within one run; the load average before and after is printed beside
them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

SENTENCES = [
    "the plot is thin but the acting is superb throughout .",
    "an utterly charming and hilarious comedy for the whole family .",
    "this movie is a boring mess with no redeeming qualities at all .",
    "the director's vision is bold , strange and often beautiful .",
    "a slow , pretentious drama that goes nowhere in particular .",
    "one of the best thrillers of the year , tense and clever .",
    "the dialogue is clumsy and the characters are paper thin .",
    "a warm , funny and touching story about growing up .",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    before = os.getloadavg()
    import torch

    torch.set_num_threads(args.threads)
    from textrobust.fill_in import load_fill_in
    from textrobust.text import Text

    texts = [Text.from_string(s) for s in SENTENCES]
    started = time.perf_counter()
    fill_in = load_fill_in("minilm_gemma")
    built = time.perf_counter() - started

    def call(requests: list[tuple[Text, int]]) -> float:
        fill_in.clear_cache()
        t = time.perf_counter()
        fill_in.fill(requests, 21)
        return time.perf_counter() - t

    warm = call([(Text.from_string("what a film"), 2)])
    firsts = [call([(texts[s], p) for p in range(1, 6)]) for s in range(4)]
    split_runs, merged_runs = [], []
    for _ in range(args.repeats):
        split_runs.append(sum(call([(texts[4 + s], p) for p in range(1, 6)]) for s in range(4)))
        merged_runs.append(call([(texts[4 + s], p) for s in range(4) for p in range(1, 6)]))
    after = os.getloadavg()
    print(f"load average before {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}; "
          f"after {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}; torch threads {args.threads}")
    print(f"build (models load) {built:.2f} s; warm-up call (gap at the end, no lookahead) {warm:.2f} s")
    later = statistics.median(firsts[1:])
    print("calls of 5 rows after the warm-up: " + ", ".join(f"{t:.3f}" for t in firsts)
          + f" s; first / median of the next three = {firsts[0] / later:.2f}")
    print(f"4 calls of 5 rows: median {statistics.median(split_runs):.3f} s; one call of the same 20 rows: "
          f"median {statistics.median(merged_runs):.3f} s; ratio {statistics.median(split_runs) / statistics.median(merged_runs):.2f} "
          f"(runs: {[round(t, 3) for t in split_runs]} vs {[round(t, 3) for t in merged_runs]})")


if __name__ == "__main__":
    main()
