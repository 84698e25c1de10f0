"""Re-create Tables 2 and 3 and Figures 4-5 of Yang et al. (2022) on the project's victims,
and measure the prover's throughput against the victim's raw forward speed.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt).

    python benchmarks/radius.py --victims bow,cnn,lstm --n 150 --pr-n 150

For each victim (a folder under ~/.cache/textrobust/victims/ or a path) on the first
``n`` examples of the bundled Rotten Tomatoes test split:

- the radius analysis (PDP, TextFooler-style greedy, PSO on the same candidate sets and
  cap; the prover for r = 1..4 after PDP, with a time limit per example);
- PR_hat at r = 25% of the length with Hoeffding's N (eps 0.025, delta 0.005);
- the prover's pipeline throughput (enumeration, texts, query layer, forward pass) on
  the largest spaces, against the raw batched forward speed on the very same texts.

Run stores go to ``--out`` (default /tmp/textrobust-radius-bench; ``--resume`` continues
them); the note is written to ``benchmarks/results/radius.md`` with the figures beside it
in ``benchmarks/results/radius/``. Uses one torch thread (the machine is shared).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"


def _victim(name: str) -> tuple[Any, Path]:
    from textrobust.zoo import load_victim

    path = Path(name)
    if not path.exists():
        path = Path.home() / ".cache" / "textrobust" / "victims" / name
    return load_victim(path), path


def pipeline_throughput(victim: Any, spaces: list[Any], n_texts: int, batch: int, repeats: int) -> dict[str, Any]:
    """Prover pipeline speed (a goal that never succeeds, so nothing stops the
    enumeration) against the victim's raw speed on the same texts; best of ``repeats``
    alternating runs of each."""
    from textrobust.attack.goals import UntargetedClassification
    from textrobust.attack.problem import Evaluation
    from textrobust.analyses.radius import ExhaustiveProver
    from textrobust.victims.query import QueryLayer

    chosen, total = [], 0
    for space in spaces:  # whole spaces, so both sides check exactly the same texts
        if total >= n_texts:
            break
        chosen.append(space)
        total += space.size(3)
    texts = list(itertools.chain.from_iterable(s.ball(3) for s in chosen))
    victim.batch_size = batch
    raw_best = pipe_best = math.inf
    forward_share = math.nan
    checked = 0
    for _ in range(repeats):
        started = time.perf_counter()
        victim.probabilities(texts)
        raw_best = min(raw_best, time.perf_counter() - started)

        layer = QueryLayer(victim, batch_size=batch, cache_size=0)
        goal = UntargetedClassification(layer, 0)

        def never(batch_texts: Any, goal: Any = goal) -> Evaluation:
            found = goal.evaluate(batch_texts)
            return Evaluation(found.scores, np.zeros(len(batch_texts), dtype=bool), found.outputs)

        prover = ExhaustiveProver(batch_size=batch)
        started = time.perf_counter()
        checked = 0
        for space in chosen:
            checked += prover.prove_radii(space, never, 3)[-1].checked
        seconds = time.perf_counter() - started
        if seconds < pipe_best:
            pipe_best = seconds
            forward_share = layer.stats().forward_seconds / seconds
    mean_words = float(np.mean([len(t) for t in texts]))
    return {
        "texts_raw": len(texts),
        "texts_pipeline": checked,
        "mean_words": mean_words,
        "raw_texts_per_second": len(texts) / raw_best,
        "pipeline_texts_per_second": checked / pipe_best,
        "pipeline_forward_share": forward_share,
        "batch": batch,
    }


def run_victim(name: str, args: argparse.Namespace, source: Any) -> dict[str, Any]:
    from textrobust import audit
    from textrobust.analyses.radius.analysis import PRMetricAnalysis, RadiusBoundsAnalysis
    from textrobust.data import load_dataset
    from textrobust.analyses.radius.method import space_of

    victim, path = _victim(name)
    victim.batch_size = args.batch
    test = load_dataset("rotten_tomatoes", split="test")
    out = Path(args.out) / name
    card = getattr(victim, "card", None)
    result: dict[str, Any] = {"victim": name, "path": str(path), "accuracy": getattr(card, "test_accuracy", None)}

    # The library's own analyses, run by the audit orchestrator (one store per analysis
    # folder; --resume continues it) on this process with the victim object.
    radius = RadiusBoundsAnalysis({"time_limit": args.time_limit, "max_radius": 4, "batch_size": args.batch,
                                   "n": args.n}, source=source)
    started = time.perf_counter()
    run = audit.run(victim, test, [radius], out / "radius", seed=args.seed, resume=args.resume, report=False)
    records = [r.result for r in run["radius"].records]  # type: ignore[attr-defined]
    result["radius"] = run["radius"].summary
    result["radius_seconds"] = {"wall": time.perf_counter() - started,
                                "recorded": sum(r.seconds for r in run["radius"].records)}
    result["radius_records"] = records

    pr = PRMetricAnalysis({"samples": args.samples, "n": args.pr_n}, source=source)
    started = time.perf_counter()
    run = audit.run(victim, test, [pr], out / "pr", seed=args.seed, resume=args.resume, report=False)
    result["pr"] = run["pr"].summary
    result["pr_seconds"] = {"wall": time.perf_counter() - started,
                            "recorded": sum(r.seconds for r in run["pr"].records)}
    result["pr_values"] = [r.result.estimate.pr for r in run["pr"].records  # type: ignore[attr-defined]
                           if r.result.estimate is not None]  # type: ignore[attr-defined]

    spaces = sorted((space_of(r) for r in records if not r.skipped), key=lambda s: -s.size(3))
    result["throughput_bench"] = pipeline_throughput(victim, spaces, args.speed_texts, args.batch, 3)
    return result


def _f(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def write_note(results: list[dict[str, Any]], args: argparse.Namespace, seconds: float) -> Path:
    from textrobust.analyses.radius.plots import pr_violin, substitution_scatter, yield_plot
    from textrobust.records import encode

    figures = RESULTS / "radius"
    figures.mkdir(parents=True, exist_ok=True)
    pr_violin({r["victim"]: r["pr_values"] for r in results}, figures / "figure5_pr_violin.png",
              title="PR_hat on rotten_tomatoes/test, r = 25% of length")
    for r in results:
        yield_plot(r["radius"].curves, figures / f"figure4_{r['victim']}.png", title=f"{r['victim']}")
        substitution_scatter(r["radius_records"], figures / f"figure3_{r['victim']}.png", title=r["victim"])

    shown, skip = [], False
    for arg in sys.argv[1:]:  # the command to rerun from scratch: without --resume / --out
        if skip:
            skip = False
        elif arg == "--out":
            skip = True
        elif arg != "--resume" and not arg.startswith("--out="):
            shown.append(arg)
    cmd = " ".join(["python benchmarks/radius.py", *shown])
    recorded = sum(r["radius_seconds"]["recorded"] + r["pr_seconds"]["recorded"] for r in results)
    lines = [
        "# Robustness radius: PDP, prover, PR (Yang et al. 2022) on the project's victims",
        "",
        f"Command: `{cmd}`. Per-example compute recorded in the run stores: {recorded / 60:.0f} minutes in all "
        "(radius and PR; the throughput measurements add about a minute per victim), on the shared 2-core machine "
        "with one torch thread while other jobs ran, so times are noisy."
        + (" This note was regenerated with `--resume` from the stored runs." if args.resume else ""),
        "",
        "Per victim (minutes of recorded compute, radius + PR): " + ", ".join(
            f"{r['victim']} {r['radius_seconds']['recorded'] / 60:.1f} + {r['pr_seconds']['recorded'] / 60:.1f}"
            for r in results) + ".",
        "",
        f"Data: the first {args.n} examples of the bundled Rotten Tomatoes test split for Tables 2 and 3, the first "
        f"{args.pr_n} for PR; examples the victim misclassifies are skipped (as in the paper). Candidate sets: WordNet "
        "synonyms (HowNet is not available offline) cleaned by counter-fitted GloVe cosine (>= 0.5), top eta = 5, no "
        "stop words; every method uses the same sets and the cap floor(0.25 n) words.",
        "",
        "## Perturbation spaces",
        "",
        "| victim | attacked | mean words | mean m = abs(P) | median log10 abs(Omega) | max log10 abs(Omega) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        rows = [x for x in r["radius_records"] if not x.skipped and x.space is not None]
        logs = [x.space.log10_size for x in rows]
        lines.append(f"| {r['victim']} | {len(rows)} | {_f(float(np.mean([x.words for x in rows])), 1)} | "
                     f"{_f(float(np.mean([x.space.m for x in rows])), 1)} | {_f(float(np.median(logs)), 1)} | "
                     f"{_f(float(np.max(logs)), 1)} |")
    lines += [
        "",
        "## Table 2: attack results (upper bounds)",
        "",
        "#Succ: successful attacks (share of #Attacks); #Win: successes with strictly fewer substitutions than every "
        "other method (a failure counts as infinitely many); %S: mean share of substituted words over successes.",
        "",
        "| victim | #Attacks | PSO #Succ | #Win | %S | TextFooler (greedy) #Succ | #Win | %S | PDP #Succ | #Win | %S |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        t = {row.method: row for row in r["radius"].table2}
        cells = []
        for m in ("pso", "greedy", "pdp"):
            row = t[m]
            cells += [f"{row.succ} ({100 * row.succ_rate:.1f}%)", str(row.wins), _f(row.percent_substituted)]
        lines.append(f"| {r['victim']} | {r['radius'].attacked} | " + " | ".join(cells) + " |")
    lines += ["", "Mean queries and seconds per attacked example:", "",
              "| victim | PSO queries | PSO s | greedy queries | greedy s | PDP queries | PDP s |", "|---|---|---|---|---|---|---|"]
    for r in results:
        t = {row.method: row for row in r["radius"].table2}
        lines.append(f"| {r['victim']} | " + " | ".join(
            f"{_f(t[m].mean_queries, 0)} | {_f(t[m].mean_seconds, 3)}" for m in ("pso", "greedy", "pdp")) + " |")
    lines += [
        "",
        "## Table 3: found / certified per radius",
        "",
        f"PDP first, then the prover for r = 1 .. min(4, PDP's count - 1), sensitive positions first (gradient "
        f"order), batches of 512 texts, {args.time_limit:.0f} s per example; %U is the share the time limit left "
        "unknown (never counted as certified). T(s) is the mean time to the verdict, PDP's time included.",
        "",
        "| victim | r | %F | T(s) | %C | T(s) | %U |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for row in r["radius"].table3:
            lines.append(f"| {r['victim']} | {row.r} | {_f(row.found_pct)} | {_f(row.found_seconds, 3)} | "
                         f"{_f(row.certified_pct)} | {_f(row.certified_seconds, 3)} | {_f(row.unknown_pct)} |")
    lines += ["", "Bounds on the maximum robustness radius R per example:", "",
              "| victim | examples | mean lower | mean upper (where an adversarial example is known) | R exact | exact R = 0, 1, 2, ... | robust on all of Omega |",
              "|---|---|---|---|---|---|---|"]
    for r in results:
        b = r["radius"].bounds
        lines.append(f"| {r['victim']} | {b.examples} | {_f(b.mean_lower)} | {_f(b.mean_upper)} "
                     f"({b.with_upper}) | {100 * b.exact_share:.1f}% | {json.dumps(b.exact_radius_counts)} | "
                     f"{100 * b.robust_everywhere_share:.1f}% |")
    lines += ["", "Attack methods against the prover: *optimal* = successes using exactly the minimal number of words, "
              "among the successes on examples whose R is exact; *missed* = failures where an adversarial example "
              "within the cap is known (from another method or the prover); *violations* = successes with no more "
              "words than a certified radius (impossible for a sound prover; must be 0).", "",
              "| victim | method | optimal / exact | missed | violations |", "|---|---|---|---|---|"]
    for r in results:
        o = {row.method: row for row in r["radius"].optimality}
        for m in ("pso", "greedy", "pdp"):
            lines.append(f"| {r['victim']} | {m} | {o[m].optimal} / {o[m].exact} | {o[m].missed} | "
                         f"{o[m].violations} |")
    lines += [
        "",
        "## Figure 4: share of regions not yielding, per radius",
        "",
        "Percent of attacked examples whose Omega_r has no adversarial example found by each method (upper bounds on "
        "the truly robust share), and the share the prover certified (a lower bound).",
        "",
    ]
    for r in results:
        c = r["radius"].curves
        series = {**c.methods, **({"certified": c.certified} if c.certified is not None else {})}
        lines.append(f"- **{r['victim']}** (r = 0..{c.radii[-1]}): " + "; ".join(
            f"{m} " + ", ".join(f"{v:.0f}" for v in series[m]) for m in ("pso", "greedy", "pdp", "certified")
            if m in series)
            + f" ![figure 4](radius/figure4_{r['victim']}.png)")
    lines += [
        "",
        "## PR metric (Figure 5)",
        "",
        "r = floor(25% of the length); N = the smallest Hoeffding sample size for eps = 0.025, delta = 0.005 "
        "(4,794; the paper rounds to 5,000), drawn uniformly from Omega_r (exact big-integer unranking); spaces with "
        "abs(Omega_r) <= N are enumerated and PR computed exactly.",
        "",
        "| victim | scored | exact | PR > 0.9 | mean PR | median | min | mean r | s / example |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        p = r["pr"].pr
        lines.append(f"| {r['victim']} | {p.scored} | {p.exact} | {100 * p.share_above_threshold:.1f}% | "
                     f"{_f(p.mean_pr, 3)} | {_f(p.quantiles['median'], 3)} | {_f(p.quantiles['min'], 3)} | "
                     f"{_f(p.mean_radius, 1)} | {_f(p.mean_seconds, 2)} |")
    lines += ["", "![Figure 5](radius/figure5_pr_violin.png)", "",
              "## Prover throughput against the raw forward speed", "",
              "Pipeline: the prover enumerating layers 0..3 of the largest spaces (lazy combinations, Text building, "
              "query layer without cache, batches of 512) with a goal that never succeeds, so nothing stops it early. "
              "Raw: `victim.probabilities` on the very same texts, pre-built, no query layer (the physical limit). "
              "Best of 3 alternating runs. In-run: texts checked per second of prover time during Table 3 "
              "(small spaces, early stops, gradient ordering included).", "",
              "| victim | texts | mean words | raw texts/s | pipeline texts/s | pipeline / raw | forward share of pipeline | in-run prover texts/s |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results:
        t, th = r["throughput_bench"], r["radius"].throughput
        lines.append(f"| {r['victim']} | {t['texts_pipeline']:,} | {t['mean_words']:.1f} | {t['raw_texts_per_second']:,.0f} | "
                     f"{t['pipeline_texts_per_second']:,.0f} | {100 * t['pipeline_texts_per_second'] / t['raw_texts_per_second']:.0f}% | "
                     f"{100 * t['pipeline_forward_share']:.0f}% | {th.texts_per_second:,.0f} |")
    lines += ["", "Victims (the project's zoo, trained on the bundled data; accuracy on the whole test split): " + "; ".join(
        f"{r['victim']} {r['accuracy']:.3f}" if r.get("accuracy") is not None else r["victim"] for r in results), ""]
    note = RESULTS / "radius.md"
    note.write_text("\n".join(lines) + "\n")
    (RESULTS / "radius" / "numbers.json").write_text(json.dumps(
        [encode({k: v for k, v in r.items() if k != "radius_records"}) for r in results], indent=1))
    return note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--victims", default="bow,cnn,lstm")
    parser.add_argument("--n", type=int, default=150, help="examples for Tables 2 and 3")
    parser.add_argument("--pr-n", type=int, default=150, help="examples for PR")
    parser.add_argument("--samples", type=int, default=None, help="PR sample size (default: Hoeffding's minimum)")
    parser.add_argument("--time-limit", type=float, default=30.0, help="prover seconds per example")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--speed-texts", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="/tmp/textrobust-radius-bench")
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    started = time.perf_counter()
    from textrobust.analyses.radius import CleanedSynonyms

    source = CleanedSynonyms()  # one source: the same S(X, p) for every victim and both analyses
    results = [run_victim(v.strip(), args, source) for v in args.victims.split(",") if v.strip()]
    note = write_note(results, args, time.perf_counter() - started)
    print(f"wrote {note}")


if __name__ == "__main__":
    main()
