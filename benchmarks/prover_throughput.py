"""Prover throughput against the raw forward speed, text path and word-id path (issue 14).

    python benchmarks/prover_throughput.py --victims default,bow --n 60 --texts 20000

For each victim: the perturbation spaces of the first ``--n`` Rotten Tomatoes test
examples (the radius analysis's cleaned WordNet synonyms, eta 5), largest first, until
``--texts`` texts of Omega_3; then, best of ``--repeats`` alternating runs:

- raw: ``victim.probabilities`` on the very same texts, pre-built (no enumeration, no
  query layer: the physical limit of the text interface), one space at a time as the
  prover sends them (so the zoo CNN's incremental pass over edits of one text,
  ``zoo/cnn_edits.py``, serves the raw path as it serves the prover);
- text path: the prover enumerating layers 0..3 as :class:`~textrobust.text.Text`
  objects through the query layer (no cache), with a goal that never succeeds;
- id path: the same, layers built as word-id rows (:class:`WordIdPath`), for victims
  that read one id per word (the zoo's word models).

Prints one Markdown table (texts/s and the ratio to raw). One torch thread. Run it alone
on a quiet machine; it prints the load average.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np


def _victim(name: str) -> Any:
    from textrobust.zoo import load_victim

    path = Path(name)
    if not path.exists():
        path = Path.home() / ".cache" / "textrobust" / "victims" / name
    return load_victim(path)


def _spaces(victim: Any, n: int, texts: int) -> list[Any]:
    from textrobust.attack.space import build_space
    from textrobust.data import load_dataset
    from textrobust.analyses.radius import CleanedSynonyms

    source = CleanedSynonyms()
    test = load_dataset("rotten_tomatoes", split="test")
    spaces = [build_space(e.text, source) for e in list(test)[:n]]
    spaces = sorted((s for s in spaces if s.m >= 3), key=lambda s: -s.size(3))
    chosen, total = [], 0
    for space in spaces:
        if total >= texts:
            break
        chosen.append(space)
        total += space.size(3)
    return chosen


def measure(victim: Any, spaces: list[Any], batch: int, repeats: int) -> dict[str, float]:
    from textrobust.attack.goals import UntargetedClassification
    from textrobust.attack.problem import Evaluation
    from textrobust.attack.searches.exhaustive import ExhaustiveProver, WordIdPath
    from textrobust.victims.query import QueryLayer

    by_space = [list(s.ball(3)) for s in spaces]
    texts = list(itertools.chain.from_iterable(by_space))
    victim.batch_size = batch
    best = {"raw": math.inf, "text": math.inf, "ids": math.inf}
    checked = {"text": 0, "ids": 0}
    for _ in range(repeats):
        started = time.perf_counter()
        for space_texts in by_space:  # one space at a time, as the prover sends them
            victim.probabilities(space_texts)
        best["raw"] = min(best["raw"], time.perf_counter() - started)
        for path in ("text", "ids"):
            layer = QueryLayer(victim, batch_size=batch, cache_size=0)
            goal = UntargetedClassification(layer, 0)

            def never(probs: Any, goal: Any = goal) -> Evaluation:
                found = goal.judge(probs)
                return Evaluation(found.scores, np.zeros(len(probs), dtype=bool), found.outputs)

            def never_texts(batch_texts: Any, layer: Any = layer) -> Evaluation:
                return never(layer.probabilities(batch_texts))

            ids = WordIdPath(layer, never) if path == "ids" and layer.accepts_word_ids else None
            if path == "ids" and ids is None:
                continue
            prover = ExhaustiveProver(batch_size=batch)
            started = time.perf_counter()
            total = sum(prover.prove_radii(s, never_texts, 3, ids=ids)[-1].checked for s in spaces)
            best[path] = min(best[path], time.perf_counter() - started)
            checked[path] = total
    out = {"texts": len(texts), "mean_words": float(np.mean([len(t) for t in texts])),
           "raw": len(texts) / best["raw"]}
    for path in ("text", "ids"):
        out[path] = checked[path] / best[path] if checked[path] else math.nan
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--victims", default="default")
    parser.add_argument("--n", type=int, default=60, help="examples whose spaces are candidates")
    parser.add_argument("--texts", type=int, default=20000, help="texts of Omega_3 to check per victim")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch threads 1; batch {args.batch}; "
          f"best of {args.repeats}")
    print("| victim | texts | mean words | raw texts/s | text path texts/s | text / raw | id path texts/s | id / raw |")
    print("|---|---|---|---|---|---|---|---|")
    for name in [v.strip() for v in args.victims.split(",") if v.strip()]:
        victim = _victim(name)
        m = measure(victim, _spaces(victim, args.n, args.texts), args.batch, args.repeats)
        print(f"| {name} | {m['texts']:,} | {m['mean_words']:.1f} | {m['raw']:,.0f} | {m['text']:,.0f} | "
              f"{m['text'] / m['raw']:.0%} | {m['ids']:,.0f} | {m['ids'] / m['raw']:.0%} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
