"""ACCS benchmark (issue 6): a Table-1-style comparison of constraint models, and the cost of
threshold sweeps with shared caches, without them, and with the monotone shortcut.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020, Table 1: ACCS per victim
and constraint model on Rotten Tomatoes. Here: the bundled Rotten Tomatoes test split, the
zoo's cnn and lstm victims, MiniLM cosine, BERTScore (MiniLM layer 4) and mean-GloVe cosine.

Run from the repository root (CPU threads pinned to 1: the machine is shared)::

    python benchmarks/accs.py table --n 40 --out runs/bench-accs-table
    python benchmarks/accs.py timing --n 4 --out runs/bench-accs-timing
    python benchmarks/accs.py reach --n 100 --out runs/bench-accs-reach

``table`` runs one audit per victim (the ``accs`` analysis, as ``textrobust accs --victim
<folder> --constraint ... --out <out>/<victim>``): each ``<out>/<victim>/`` holds its store,
summary.json, report.json/html and the curve SVGs; the second-order sweeps do not involve the
victim and are recomputed by every audit (same results: the searches are deterministic).
``timing`` prints and writes ``timing.json``: one victim (``--victim``, default cnn) and one
constraint model (MiniLM), the same examples, (a) the exact sweep with shared caches,
(b) the monotone shortcut with shared caches, (c) every threshold run on its own with
fresh caches (models are loaded once and shared by all three; only caches differ).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def _threads() -> None:
    import torch

    torch.set_num_threads(1)


def victim_folder(name: str) -> str:
    """``default``, a victim folder, or a zoo victim trained into the cache (``cnn``, ``lstm``:
    ``textrobust train cnn --out <cache>/victims/cnn``)."""
    from textrobust.assets import cache_dir
    from textrobust.zoo import ensure_default_victim, is_victim_folder

    if name == "default":
        return str(ensure_default_victim())
    if Path(name).expanduser().is_dir():
        return name
    cached = cache_dir() / "victims" / name
    if not is_victim_folder(cached):
        raise SystemExit(f"No victim '{name}': give a folder, or train it with "
                         f"`textrobust train {name} --out {cached}`.")
    return str(cached)


def table(args: argparse.Namespace) -> dict[str, Any]:
    """One audit per victim (the orchestrator gives an analysis one victim)."""
    from textrobust import audit
    from textrobust.records import encode

    settings = {"constraint": args.constraints, "n": args.n, "eps_start": args.eps_start, "eps_stop": 1.0,
                "eps_step": args.eps_step}
    out: dict[str, Any] = {}
    for name in args.victims:
        result = audit.run(victim_folder(name), "rotten_tomatoes", {"accs": settings}, Path(args.out) / Path(name).name,
                           resume=args.resume)
        summary = result["accs"].summary
        out[name] = {"table": encode(summary.rows), "bootstrap": encode(summary.bootstrap),
                     "shortcut": encode(summary.shortcut), "seconds": result.seconds,
                     "lm_warm_seconds_per_example": summary.lm_warm_seconds_per_example}
    print(json.dumps(out, indent=1, default=str))
    return out


def _fresh(settings: Any, victim: Any, encoder: Any, lm: Any) -> tuple[Any, Any, Any]:
    """Components, a similarity memo and a query layer with empty caches (shared models)."""
    from textrobust.analyses.accs import AccsComponents, SimilarityMemo
    from textrobust.similarity import EncoderCosine
    from textrobust.victims.query import QueryLayer

    return AccsComponents(settings, lm=lm), SimilarityMemo(EncoderCosine(encoder)), QueryLayer(victim)


def timing(args: argparse.Namespace) -> dict[str, Any]:
    from textrobust.analyses.accs import AccsAnalysisSettings, RobustnessCurve
    from textrobust.assets import sentence_encoder
    from textrobust.data import load_dataset
    from textrobust.lm import CausalLM
    from textrobust.zoo import load_victim

    grid = AccsAnalysisSettings(eps_start=args.eps_start, eps_stop=1.0, eps_step=args.eps_step).epsilons
    victim = load_victim(victim_folder(args.victim))
    encoder = sentence_encoder()
    lm = CausalLM.default()
    examples = load_dataset("rotten_tomatoes", split="test").take(args.n).examples
    # load spaCy, WordNet and the models before any clock starts
    warm_up = AccsComponents_warm(AccsAnalysisSettings(eps_start=args.eps_start, eps_step=args.eps_step), victim,
                                  encoder, lm, examples[0])
    out: dict[str, Any] = {"n": len(examples), "epsilons": list(grid), "load_seconds": warm_up}

    def curve(first: list[list[Any]], second: list[list[Any]]) -> RobustnessCurve:
        attacked = [row for row in first if not any(p.status == "skipped" for p in row)]
        rate = lambda rows, i: sum(r[i].success for r in rows) / max(len(rows), 1)
        return RobustnessCurve(grid, tuple(rate(attacked, i) for i in range(len(grid))),
                               tuple(rate(second, i) for i in range(len(grid))), len(attacked), len(second))

    results = {}
    for mode in ("exact", "monotone"):
        settings = AccsAnalysisSettings(eps_start=args.eps_start, eps_step=args.eps_step, sweep=mode)
        comp, memo, layer = _fresh(settings, victim, encoder, lm)
        began = time.perf_counter()
        first, second = [], []
        for example in examples:
            comp.warm(example.text)
            first.append(comp.sweep_first_order(layer, memo, example))
            second.append(comp.sweep_second_order(memo, example))
        seconds = time.perf_counter() - began
        c = curve(first, second)
        results[mode] = (first, second)
        out[mode] = {"seconds": seconds, "seconds_per_example": seconds / len(examples), "curve": c.to_dict(),
                     "runs": sum(p.ran for rows in (first, second) for row in rows for p in row),
                     "similarity_pairs_scored": memo.stats()["scored"], "victim_queries": layer.queries,
                     "lm_words_scored": comp.lm_constraint.scorer.stats()["words_scored"]}
        print(mode, json.dumps({k: v for k, v in out[mode].items() if k != "curve"}), flush=True)
    # (c) every threshold on its own, with fresh caches
    settings = AccsAnalysisSettings(eps_start=args.eps_start, eps_step=args.eps_step)
    began = time.perf_counter()
    first_i, second_i = [], []
    lm_words = pairs = queries = 0
    for example in examples:
        row_f, row_s = [], []
        for eps in grid:
            comp, memo, layer = _fresh(settings, victim, encoder, lm)  # LM scored lazily, as a lone run would
            row_f.append(comp.first_order_point(layer, memo, example, eps))
            row_s.append(comp.second_order_point(memo, example, eps))
            lm_words += comp.lm_constraint.scorer.stats()["words_scored"]
            pairs += memo.stats()["scored"]
            queries += layer.queries
        first_i.append(row_f)
        second_i.append(row_s)
        print("independent: example done", round(time.perf_counter() - began, 1), flush=True)
    seconds = time.perf_counter() - began
    exact_first, exact_second = results["exact"]
    same = all(
        (a.success, a.perturbed) == (b.success, b.perturbed)
        for rows_a, rows_b in ((exact_first, first_i), (exact_second, second_i))
        for ra, rb in zip(rows_a, rows_b)
        for a, b in zip(ra, rb)
    )
    out["independent"] = {"seconds": seconds, "seconds_per_example": seconds / len(examples),
                          "curve": curve(first_i, second_i).to_dict(), "same_as_exact": same,
                          "runs": 2 * len(grid) * len(examples), "similarity_pairs_scored": pairs,
                          "victim_queries": queries, "lm_words_scored": lm_words}
    print("independent", json.dumps({k: v for k, v in out["independent"].items() if k != "curve"}), flush=True)
    path = Path(args.out)
    path.mkdir(parents=True, exist_ok=True)
    (path / "timing.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def AccsComponents_warm(settings: Any, victim: Any, encoder: Any, lm: Any, example: Any) -> float:
    """Load every lazily loaded model once (spaCy, WordNet, lemminflect, Gemma, MiniLM)."""
    began = time.perf_counter()
    comp, memo, layer = _fresh(settings, victim, encoder, lm)
    comp.warm(example.text)
    comp.first_order_point(layer, memo, example, settings.epsilons[0])
    return time.perf_counter() - began


def reach(args: argparse.Namespace) -> dict[str, Any]:
    """How often the second-order attack can swap gamma antonyms at all: its success rate at
    epsilon = 0 with a cheap similarity model (mean GloVe, >= 0 on these texts), for each LM
    mode and antonym source. This is the ceiling of the second-order axis of every curve."""
    from textrobust.analyses.accs import (
        AccsAnalysisSettings,
        AccsComponents,
        SimilarityMemo,
        build_constraint_model,
    )
    from textrobust.data import load_dataset
    from textrobust.lm import CausalLM

    examples = load_dataset("rotten_tomatoes", split="test").take(args.n).examples
    lm = CausalLM.default()
    memo = SimilarityMemo(build_constraint_model("word_mean"))
    out: dict[str, Any] = {"n": len(examples), "gamma": 3, "epsilon": 0.0, "rows": []}
    for indirect in (False, True):
        for mode in ("none", "left_word", "window"):
            settings = AccsAnalysisSettings(lm_mode=mode, indirect_antonyms=indirect)  # epsilon 0.0 below
            comp = AccsComponents(settings, lm=lm)
            began = time.perf_counter()
            found = sum(comp.second_order_point(memo, e, 0.0).success for e in examples)
            row = {"lm_mode": mode, "indirect_antonyms": indirect, "successes": found,
                   "rate": found / len(examples), "seconds": time.perf_counter() - began}
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
    path = Path(args.out)
    path.mkdir(parents=True, exist_ok=True)
    (path / "reach.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="Table-1-style comparison")
    t.add_argument("--n", type=int, default=40)
    t.add_argument("--victims", nargs="+", default=["cnn", "lstm"])
    t.add_argument("--constraints", nargs="+", default=["minilm", "bertscore", "word_mean"])
    t.add_argument("--eps-start", type=float, default=0.75)
    t.add_argument("--eps-step", type=float, default=0.01)
    t.add_argument("--out", default="runs/bench-accs-table", help="one sub-folder per victim")
    t.add_argument("--resume", action="store_true")
    m = sub.add_parser("timing", help="exact vs shortcut vs independent runs")
    m.add_argument("--n", type=int, default=4)
    m.add_argument("--victim", default="cnn")
    m.add_argument("--eps-start", type=float, default=0.75)
    m.add_argument("--eps-step", type=float, default=0.01)
    m.add_argument("--out", default="runs/bench-accs-timing")
    r = sub.add_parser("reach", help="second-order success at epsilon 0 per LM mode and antonym source")
    r.add_argument("--n", type=int, default=100)
    r.add_argument("--out", default="runs/bench-accs-reach")
    args = parser.parse_args()
    _threads()
    {"table": table, "timing": timing, "reach": reach}[args.command](args)


if __name__ == "__main__":
    main()
