"""Every feature the validated source's judges can use, for every item of a TSV (issue 39).

Per item (a sentence, a position, a substitute): the validated source's evidence with no
check relaxed away (slot, antonym, cosine, masked-LM context score, valences, Zipf, sense
rank, re-tagged part of speech), the target-visible scores of
:class:`~textrobust.attack.candidates.contextual.VisibleScorer` (visible, reverse,
validation, target), and, with ``--gemma``, Gemma's change of sentence log-probability.
Items are read from the labelled set or from a pool (same columns, no labels); the output
is JSON lines keyed by id, so the judge is trained and tuned (``tune_judge.py``) without
running a model again.

Rerun: ``.venv/bin/python benchmarks/validity/judge_features.py --items labelled.tsv pool3.tsv
--out /tmp/h39/features.jsonl [--gemma]`` (about 4 minutes per 1,000 items on 2 quiet cores;
Gemma adds about as much).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import defaultdict
from pathlib import Path

from textrobust.attack.candidates.contextual import VisibleScorer
from textrobust.attack.candidates.validated import ValidatedSynonyms
from textrobust.text import Text


def read_items(paths: list[Path]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for path in paths:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
        rows += list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=Path, nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gemma", action="store_true", help="add Gemma's sentence log-probability change")
    args = parser.parse_args()
    items = read_items(args.items)
    done: set[str] = set()
    if args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text(encoding="utf-8").splitlines() if line}
    items = [i for i in items if i["id"] not in done]
    source = ValidatedSynonyms(min_lm_delta=None, verdict_cache=False)
    scorer = VisibleScorer(source.fill_in)
    lm = None
    if args.gemma:
        from textrobust.lm.causal import CausalLM

        lm = CausalLM.default()
    by_sentence: dict[str, list[dict[str, str]]] = defaultdict(list)
    for item in items:
        by_sentence[item["sentence"]].append(item)
    start = time.perf_counter()
    with args.out.open("a", encoding="utf-8") as handle:
        for n, (sentence, group) in enumerate(by_sentence.items()):
            text = Text.from_string(sentence)
            scores = scorer.score(text, [(int(i["position"]), i["substitute"]) for i in group])
            deltas: list[float | None] = [None] * len(group)
            if lm is not None:
                got = lm.sentence_log_prob([sentence, *(str(text.replace(int(i["position"]), i["substitute"]))
                                                        for i in group)])
                deltas = [round(float(g - got[0]), 3) for g in got[1:]]
            verdicts = source.evidence_many(text, [(int(i["position"]), i["substitute"]) for i in group])
            for item, score, delta, verdict in zip(group, scores, deltas, verdicts):
                row = verdict.as_dict()
                row.update(id=item["id"], visible=score.visible, reverse=score.reverse,
                           validation=score.validation, target=score.target, lm_delta=delta)
                handle.write(json.dumps(row) + "\n")
            handle.flush()
            if n % 50 == 0:
                print(n, len(by_sentence), f"{time.perf_counter() - start:.0f}s", flush=True)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
