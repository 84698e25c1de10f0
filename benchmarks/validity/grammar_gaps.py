"""Link Grammar's null count of each substituted sentence minus the original's (issue 39).

A grammar feature for the validated source's judge: CMU Link Grammar (the project's offline
grammar checker, :class:`~textrobust.analyses.attribution.grammar.LinkGrammarErrors`; Ivankay
et al.'s error count) counts the words it cannot link; a substitute that breaks the
sentence's grammar ("by letting you share" -> "by allowing you share") should raise it.
Computed once per item of labelled or pool TSVs so that ``tune_judge.py --extra null_gap``
measures it without parsing again.

Rerun: ``PYTHONPATH=benchmarks/validity .venv/bin/python benchmarks/validity/grammar_gaps.py
--items src/textrobust/resources/substitutions/labelled.tsv --out /tmp/h39c/null_gaps.json``.
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
    parser.add_argument("--max-parse-time", type=int, default=2)
    args = parser.parse_args()
    from textrobust.analyses.attribution.grammar import LinkGrammarErrors

    items = read_items(args.items)
    done: dict[str, float] = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    items = [i for i in items if i["id"] not in done]
    checker = LinkGrammarErrors(max_parse_time=args.max_parse_time)
    start = time.perf_counter()
    for n, item in enumerate(items):
        text = Text.from_string(item["sentence"])
        before, after = checker.errors([str(text), str(text.replace(int(item["position"]), item["substitute"]))])
        done[item["id"]] = float(after - before)
        if n % 500 == 0:
            args.out.write_text(json.dumps(done), encoding="utf-8")
            print(n, len(items), f"{time.perf_counter() - start:.0f}s", flush=True)
    args.out.write_text(json.dumps(done), encoding="utf-8")
    print("wrote", len(done), "gaps to", args.out, f"in {time.perf_counter() - start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
