"""Gemma's change of sentence log-probability for every item of labelled or pool TSVs (issue 39).

The causal-LM fluency check of the validated source, computed once per item (batched, one
pass over every original and substituted sentence) so that ``tune_judge.py`` can compare the
judge with and without it (``--lm-deltas``) without running Gemma again.

Rerun: ``.venv/bin/python benchmarks/validity/gemma_deltas.py --items labelled.tsv pool3.tsv
--out /tmp/h39/lm_deltas.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from judge_features import read_items

from textrobust.text import Text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--only", type=Path, default=None, help="a JSON list of the ids to score (default: all)")
    args = parser.parse_args()
    from textrobust.lm.causal import CausalLM

    items = read_items(args.items)
    done: dict[str, float] = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    items = [i for i in items if i["id"] not in done]
    if args.only is not None:
        wanted = set(json.loads(args.only.read_text(encoding="utf-8")))
        items = [i for i in items if i["id"] in wanted]
    items.sort(key=lambda i: i["sentence"])  # a sentence's items in one chunk: its original scored once
    lm = CausalLM.default()
    start = time.perf_counter()
    for lo in range(0, len(items), args.chunk):
        group = items[lo : lo + args.chunk]
        originals = sorted({i["sentence"] for i in group})
        texts = [str(Text.from_string(i["sentence"]).replace(int(i["position"]), i["substitute"])) for i in group]
        scored = [float(x) for x in lm.sentence_log_prob([*originals, *texts])]
        before = dict(zip(originals, scored))
        for item, after in zip(group, scored[len(originals):]):
            done[item["id"]] = round(after - before[item["sentence"]], 3)
        args.out.write_text(json.dumps(done), encoding="utf-8")
        print(lo + len(group), len(items), f"{time.perf_counter() - start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
