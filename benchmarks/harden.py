"""Harden, audit, compare (issue 30): the normal zoo CNN against its adversarially trained
and certified (IBP) versions on Rotten Tomatoes (``benchmarks/results/harden.md``).

Rerun (one torch thread each; the machine is shared; the load average is recorded)::

    export TEXTROBUST_THREADS=1 W=/tmp/harden
    textrobust train cnn --defense adversarial --epochs 4 --out $W/cnn-adversarial
    textrobust train cnn --defense certified --base default --out $W/cnn-certified
    for m in normal adversarial certified; do      # normal = the default victim
      v=$([ $m = normal ] && echo default || echo $W/cnn-$m)
      textrobust audit --victim $v --analyses evaluate,attack,second-order --n 30 --out $W/audit-$m
      textrobust attack --victim $v --candidates paper --n 30 --no-quality --out $W/paper-$m
    done
    textrobust compare $W/audit-normal $W/audit-adversarial --out $W/compare-adversarial
    textrobust compare $W/audit-normal $W/audit-certified --out $W/compare-certified
    textrobust compare $W/paper-normal $W/paper-adversarial $W/paper-certified --out $W/compare-paper
    python benchmarks/harden.py ibp --work $W        # IBP-certified accuracy of the three
    python benchmarks/harden.py note --work $W       # the table of benchmarks/results/harden.md
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
MODELS = ("normal", "adversarial", "certified")


def _victim(work: Path, model: str) -> Path:
    from textrobust.zoo.default import ensure_default_victim

    return Path(ensure_default_victim()) if model == "normal" else work / f"cnn-{model}"


def ibp(args: argparse.Namespace) -> None:
    """Clean and IBP-certified accuracy on the whole test split, over the hulls of the
    checked synonym table (the sets the certified defense trains on), per model."""
    import torch

    from textrobust.bounds.certified_training import ibp_evaluate, substitution_table
    from textrobust.defenses.augment import checked_table
    from textrobust.zoo import TrainingData
    from textrobust.zoo.io import load_victim

    torch.set_num_threads(1)
    work = Path(args.work)
    data = TrainingData.bundled("rotten_tomatoes")
    words = sorted({w.lower() for s in (data.train, data.dev, data.test) for e in s.examples for w in e.text.words})
    began = time.perf_counter()
    table = checked_table(words, 8, 10)
    table_seconds = time.perf_counter() - began
    for model in MODELS:
        victim = load_victim(_victim(work, model))
        vocab = victim.tokenizer
        sets = {w: s for w, s in table.items() if w in vocab}
        began = time.perf_counter()
        result = ibp_evaluate(victim.module, vocab, data.test.texts, data.test.labels, substitution_table(vocab, sets, 8))
        (work / f"ibp-{model}.json").write_text(json.dumps({
            "model": model, "texts": result.texts, "clean": result.clean, "certified": result.certified,
            "predicted_share": {victim.label_names[i]: s for i, s in result.predicted_share.items()},
            "table_words": len(sets), "table_seconds": table_seconds, "seconds": time.perf_counter() - began,
            "load_average": os.getloadavg()[0]}, indent=2))
        print(model, result)


def _read(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.is_file() else None


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def note(args: argparse.Namespace) -> None:
    work = Path(args.work)
    rows, details = [], []
    for model in MODELS:
        audit = _read(work / f"audit-{model}" / "summary.json") or {}
        paper = _read(work / f"paper-{model}" / "summary.json") or {}
        certified = _read(work / f"ibp-{model}.json") or {}
        analyses = audit.get("analyses", {})
        evaluate = analyses.get("evaluate", {}).get("summary", {})
        attack = analyses.get("attack", {}).get("summary", {})
        second = analyses.get("second-order", {}).get("summary", {})
        paper_attack = paper.get("analyses", {}).get("attack", {}).get("summary", {})
        card = audit.get("victim", {}).get("card", {})
        shares = certified.get("predicted_share", {})
        rows.append(
            f"| {model} | {card.get('defense', 'n/a')} | {_pct(certified.get('clean'))} | "
            f"{_pct(evaluate.get('accuracy'))} | {_pct(attack.get('accuracy_under_attack'))} "
            f"({_pct(attack.get('original_accuracy'))}) | {_pct(paper_attack.get('accuracy_under_attack'))} "
            f"({_pct(paper_attack.get('original_accuracy'))}) | {_pct(second.get('success_rate'))} | "
            f"{_pct(certified.get('certified'))} | "
            + ", ".join(f"{k} {_pct(v)}" for k, v in shares.items()) + " |")
        details.append({"model": model, "audit_seconds": audit.get("run", {}).get("seconds"),
                        "paper_seconds": paper.get("run", {}).get("seconds"), "card": card,
                        "evaluate": evaluate, "attack": attack, "second_order": second, "paper_attack": paper_attack,
                        "ibp": certified})
    header = ("| model | defense | clean acc (all 1,276 test) | clean acc (audit n) | acc under attack, validated "
              "(clean) | acc under attack, paper candidates (clean) | second-order success | IBP-certified acc "
              "(all test) | predicted per class (all test) |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    out = work / "harden-table.md"  # the table of benchmarks/results/harden.md, and the figures behind it
    out.write_text("\n".join([header, *rows]) + "\n\n```json\n" + json.dumps(details, indent=1, default=str) + "\n```\n")
    print(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="part", required=True)
    for name, function in (("ibp", ibp), ("note", note)):
        p = sub.add_parser(name)
        p.add_argument("--work", default="/tmp/harden")
        p.set_defaults(function=function)
    args = parser.parse_args()
    args.function(args)


if __name__ == "__main__":
    main()
