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
from pathlib import Path

from judge_features import read_items

from textrobust.text import Text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--chunk", type=int, default=256)
    args = parser.parse_args()
    from textrobust.lm.causal import CausalLM

    items = read_items(args.items)
    done: dict[str, float] = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    items = [i for i in items if i["id"] not in done]
    lm = CausalLM.default()
    originals = sorted({i["sentence"] for i in items})
    before = dict(zip(originals, (float(x) for x in lm.sentence_log_prob(originals))))
    for lo in range(0, len(items), args.chunk):
        group = items[lo : lo + args.chunk]
        texts = [str(Text.from_string(i["sentence"]).replace(int(i["position"]), i["substitute"])) for i in group]
        for item, after in zip(group, lm.sentence_log_prob(texts)):
            done[item["id"]] = round(float(after) - before[item["sentence"]], 3)
        args.out.write_text(json.dumps(done), encoding="utf-8")
        print(lo + len(group), len(items), flush=True)


if __name__ == "__main__":
    main()
