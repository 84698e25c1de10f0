"""Benchmarks of the double-perturbation work (Zhang et al. 2021): second-order attacks vs
first-order attacks, and counterfactual token bias of the base vs the debiased LSTM.

    python benchmarks/second_order.py attacks --n 30            # SO-Beam, random, genetic, BAE on cnn, lstm
    python benchmarks/second_order.py bias                      # B_{p,k}, base vs debiased LSTM (gender)
    python benchmarks/second_order.py report                    # benchmarks/results/{second_order,bias}.md
    python benchmarks/second_order.py patches --n 30            # patch pairs: old vs new synonym rule
    python benchmarks/second_order.py neighbours --n 30         # Neighbor_k quality per fill-in (Gemma PPL)

Runs go to ``<cache>/bench/second_order/`` (one run store per victim and method, resumable:
rerunning continues where it stopped; the bias runs are ``textrobust.audit`` runs of the
``bias`` analysis under ``bias-audit/<victim>``); the tables are rebuilt from the stores by
``report``. The debiased LSTM comes from ``benchmarks/train_debiased_lstm.py``.

``report`` rewrites ``results/second_order.md`` and (unless ``--no-bias``) ``results/bias.md`` but keeps the
hand-written blocks of the old files between ``<!-- kept: NAME -->`` and ``<!-- /kept -->``
(``changes``: after the introduction; any other, e.g. ``before``, the tables of an older
run: at the end), so a rerun does not erase the before/after comparison.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from pathlib import Path
from typing import Any

from textrobust.assets import cache_dir

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
VICTIMS = ("cnn", "lstm")
SO_METHODS = ("so-beam", "random", "so-enum")
FO_METHODS = ("genetic", "bae")


_BENCH_DIR: list[Path] = []


def bench_dir() -> Path:
    """Where the runs go: ``--bench-dir``, else ``<cache>/bench/second_order``."""
    return _BENCH_DIR[0] if _BENCH_DIR else cache_dir() / "bench" / "second_order"


def victim_path(name: str) -> Path:
    return cache_dir() / "victims" / name


# ---- attacks -------------------------------------------------------------------------------------
def run_attacks(args: argparse.Namespace) -> None:
    """One audit per (victim, method) into ``bench_dir()/victim/method``: SO-Beam, SO-Enum and
    the random baseline through the ``second-order`` analysis; the genetic attack and BAE
    through the ``attack`` analysis (perplexity scored). Resumes what a previous run stored.
    Each audit builds its own fill-in (the old loop shared one fill-in cache across victims:
    the same answers, some minutes more)."""
    import torch

    from textrobust import audit
    from textrobust.fill_in import DEFAULT_FILL_IN

    torch.set_num_threads(args.threads)
    max_k = {"so-beam": 6, "random": 6, "so-enum": 2}
    for victim_name in args.victims:
        for method in args.methods:
            out = bench_dir() / victim_name / method
            if method in SO_METHODS:
                name = "second-order"
                settings = {"method": method, "n": args.n, "budget": args.budget, "max_k": max_k[method],
                            "fill_in": args.fill_in or DEFAULT_FILL_IN}
            else:
                name = "attack"
                settings = {"recipe": "alzantot" if method == "genetic" else "bae", "n": args.n,
                            "budget": args.budget, "quality": True}
            started = time.perf_counter()
            result = audit.run(str(victim_path(victim_name)), "rotten_tomatoes", {name: settings}, out, seed=0,
                               resume=(out / "store.sqlite").is_file(), progress=False, report=False)
            summary = result[name].summary
            print(json.dumps({"victim": victim_name, "method": method, "seconds": round(time.perf_counter() - started, 1),
                              "success_rate": summary.success_rate, "examples": summary.units}), flush=True)


# ---- patch pairs ----------------------------------------------------------------------------------
def run_patches(args: argparse.Namespace) -> None:
    """The patch pair chosen for each of the first ``--n`` test sentences by the old rule
    (counter-fitted 8 nearest within L2 0.5) and by the default (WordNet senses checked by
    counter-fitted cosine), on one victim; precision of both rules on the held-out half of
    the labelled pair list. Victim queries only (single words), no fill-in."""
    import torch

    from textrobust.attack.candidates.embedding import embedding_neighbours
    from textrobust.data import load_dataset
    from textrobust.analyses.second_order.patch import PatchFinder, default_synonyms
    from textrobust.attack.candidates.checked import labelled_pairs, pair_precision
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo.io import load_victim

    torch.set_num_threads(args.threads)
    layer = QueryLayer(load_victim(args.victim))
    old_source = embedding_neighbours(k=8, l2_radius=0.5)
    new_source = default_synonyms()
    vectors = old_source.vectors

    def old_accepts(word: str, candidate: str) -> bool:
        return word in vectors and candidate in [w for w, _ in vectors.within([word], 0.5, limit=8)[0]]

    test = labelled_pairs("test")
    for name, accepts in (("old", old_accepts), ("new", new_source.accepts)):
        score = pair_precision(accepts, test)
        print(json.dumps({"rule": name, "pairs": score.n, "accepted": score.accepted,
                          "precision": round(score.precision, 3), "recall": round(score.recall, 3)}), flush=True)
    finders = {"old": PatchFinder(layer, old_source), "new": PatchFinder(layer, new_source)}
    texts = [e.text for e in load_dataset("rotten_tomatoes", split="test").examples[: args.n]]
    found = {"old": 0, "new": 0}
    for i, text in enumerate(texts):
        row = {"i": i}
        for name, finder in finders.items():
            patch = finder.choose(text)
            found[name] += patch is not None
            row[name] = None if patch is None else f"{patch.source}->{patch.target} ({patch.score:.2f})"
        print(json.dumps(row), flush=True)
    print(json.dumps({"sentences": len(texts), "with_patch": found}), flush=True)


# ---- neighbourhood quality -------------------------------------------------------------------------
def run_neighbours(args: argparse.Namespace) -> None:
    """Neighbourhood quality of each fill-in on the first ``--n`` test sentences: the size of
    Neighbor_1, and the Gemma 3 270M perplexity of ``--samples`` uniform draws from Neighbor_1
    and Neighbor_2 per sentence against the sentence's own (median of the per-draw ratio);
    the share of draws whose new words are all stop words; fill-in requests per second. Same
    sentences and seeds for every fill-in (kappa 20, delta 3, as the benchmarks)."""
    import numpy as np
    import torch

    from textrobust.assets import stop_words
    from textrobust.data import load_dataset
    from textrobust.fill_in import load_fill_in
    from textrobust.lm import CausalLM
    from textrobust.analyses.second_order import Neighbourhood

    torch.set_num_threads(args.threads)
    texts = [e.text for e in load_dataset("rotten_tomatoes", split="test").examples[: args.n]]
    lm = CausalLM.default()
    stops = {w.lower() for w in stop_words()}
    base = lm.perplexity([str(t) for t in texts])
    for name in args.fill_ins:
        hood = Neighbourhood(load_fill_in(name))
        rng = np.random.default_rng(0)
        sizes, ratios, stop_only, examples = [], {1: [], 2: []}, {1: 0, 2: 0}, []
        started = time.perf_counter()
        drawn_per_text = []
        for text in texts:
            first = hood.neighbours(text)
            sizes.append(len(first))
            drawn_per_text.append(hood.sample(text, 2, args.samples, rng, first_step=first) if first else [[], []])
        seconds = time.perf_counter() - started
        requests = hood.stats()["fill_requests"]
        for i, (text, drawn) in enumerate(zip(texts, drawn_per_text)):
            for j in (1, 2):
                if not drawn[j - 1]:
                    continue
                ppl = lm.perplexity([str(t) for t in drawn[j - 1]])
                ratios[j] += [float(v / base[i]) for v in ppl]
                for t in drawn[j - 1]:
                    new = [w for w, o in zip(t.words, text.words) if w != o]
                    stop_only[j] += bool(new) and all(w.lower() in stops for w in new)
                if j == 1 and len(examples) < 3:
                    examples.append(str(drawn[0][0]))
        print(json.dumps({
            "fill_in": name, "sentences": len(texts), "neighbor_1_median": statistics.median(sizes),
            "fill_requests": requests, "requests_per_s": round(requests / seconds, 1), "seconds": round(seconds, 1),
            "median_ppl_original": round(float(np.median(base)), 1),
            **{f"k{j}_median_ppl_ratio": round(statistics.median(ratios[j]), 3) for j in (1, 2) if ratios[j]},
            **{f"k{j}_ratio_q25_q75": [round(float(q), 3) for q in np.quantile(ratios[j], [0.25, 0.75])]
               for j in (1, 2) if ratios[j]},
            **{f"k{j}_stop_word_only": round(stop_only[j] / len(ratios[j]), 3) for j in (1, 2) if ratios[j]},
            "draws": {j: len(ratios[j]) for j in (1, 2)}, "examples": examples}), flush=True)


# ---- bias ------------------------------------------------------------------------------------------
def bias_run_dir(name: str) -> Path:
    """The audit folder of one victim's bias run (store.sqlite, report.json, figures)."""
    return bench_dir() / "bias-audit" / name


def run_bias_bench(args: argparse.Namespace) -> None:
    import torch

    from textrobust import audit
    from textrobust.analyses.bias import write_bias_report
    from textrobust.fill_in import DEFAULT_FILL_IN

    torch.set_num_threads(args.threads)
    settings = {"n": args.n, "group": tuple(args.groups), "max_k": 3, "exact_up_to": args.exact_up_to,
                "samples": args.samples, "fill_in": args.fill_in or DEFAULT_FILL_IN}
    for name in args.victims:
        started = time.perf_counter()
        out = bias_run_dir(name)
        # the neighbourhoods do not depend on the victim: both victims see the same sentences
        # (seed 0), each run asking the fill-in for them again
        result = audit.run(str(victim_path(name)), "rotten_tomatoes", {"bias": settings}, out, resume=True,
                           progress=False, seed=0)
        measures = [r.measure for r in result["bias"].records]  # type: ignore[attr-defined]
        write_bias_report(measures, out, max_k=3, title=f"B_(p,k) of {name} on rotten_tomatoes/test")
        print(json.dumps({"victim": name, "seconds": round(time.perf_counter() - started, 1),
                          "anchors": len(measures), "fill_requests": sum(m.fill_requests for m in measures)}),
              flush=True)


def _bias_run(name: str, keep: set[str] | None = None) -> dict[str, Any] | None:
    """The stored bias run of one victim: its anchor measures (only the anchors in ``keep``,
    if given), table and configuration; the figures are rewritten from these measures."""
    from textrobust.analyses.bias.analysis import BiasRecord
    from textrobust.analyses.bias import bias_table, write_bias_report
    from textrobust.records import decode
    from textrobust.store import RunStore

    path = bias_run_dir(name) / "store.sqlite"
    if not path.is_file():
        return None
    with RunStore(path) as store:
        run = store.latest_run("bias")
        if run is None:
            return None
        measures = [decode(BiasRecord, r.payload).measure for r in run.results() if not r.failed]
        config = run.config
    if keep is not None:
        measures = [m for m in measures if m.anchor in keep]
    if measures:
        write_bias_report(measures, bias_run_dir(name), max_k=3, title=f"B_(p,k) of {name} on rotten_tomatoes/test")
    label_names = config.get("label_names") or []
    soft = measures[0].soft_class if measures else len(label_names) - 1
    return {"measures": measures, "rows": bias_table(measures, max_k=3), "settings": config["settings"],
            "f_soft_label": label_names[soft] if 0 <= soft < len(label_names) else str(soft),
            "seconds": sum(m.seconds for m in measures), "fill_requests": sum(m.fill_requests for m in measures),
            "queries": sum(m.queries for m in measures),
            "files": {f"{stem}_{fmt}": str(bias_run_dir(name) / f"{stem}.{fmt}")
                      for stem in ("bias_vs_k", "histograms") for fmt in ("png", "svg")}}


# ---- report ----------------------------------------------------------------------------------------
def _f(value: Any, kind: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if kind == "%":
        return f"{100 * value:.1f}%"
    if kind == "b":
        return f"{value:+.4f}"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return f"{value:,}"


def _stored(path: Path, kind: str) -> list[Any] | None:
    """The typed results of the latest ``kind`` run in the store at ``path`` (error rows
    left out): AttackResult for ``attack``, SecondOrderResult for ``second-order``."""
    from textrobust.analyses import ANALYSES
    from textrobust.records import decode
    from textrobust.store import RunStore

    if not path.is_file():
        return None
    with RunStore(path) as store:
        run = store.latest_run(kind)
        if run is None:
            return None
        record_type = ANALYSES.get(kind).record_type
        return [decode(record_type, r.payload).result for r in run.results() if not r.failed]


_FIRST_N: list[set[str]] = []


def first_n_ids(n: int) -> set[str]:
    """The example ids of the first ``n`` Rotten Tomatoes test sentences."""
    from textrobust.data import load_dataset

    return {e.id for e in load_dataset("rotten_tomatoes", split="test").examples[:n]}


def _load(victim: str, method: str) -> list[Any] | None:
    """The results of one stored run (as engine results), only the first ``report --n``
    test sentences when that is given."""
    path = bench_dir() / victim / method / "store.sqlite"
    if method in SO_METHODS:
        stored = _stored(path, "second-order")
        results = None if stored is None else [r.as_attack_result() for r in stored]
    else:
        results = _stored(path, "attack")
    if results is not None and _FIRST_N:
        results = [r for r in results if r.example_id in _FIRST_N[0]]
    return results


def _row(results: list[Any]) -> dict[str, Any]:
    from textrobust.attack import metrics
    from textrobust.attack.results import Status

    attacked = [r for r in results if r.status is not Status.SKIPPED]
    s = metrics.summary(results)
    return {
        "n": len(results),
        "attacked": len(attacked),
        "success": s["success_rate"],
        "l0": s["l0"],
        "ppl_before": s["median_perplexity_before"],
        "ppl_after": s["median_perplexity_after"],
        "queries": s["queries_per_example"],
        "seconds": s["seconds_per_example"],
        "queries_median": statistics.median([r.queries for r in attacked]) if attacked else float("nan"),
    }


def kept_blocks(path: Path) -> dict[str, str]:
    """The hand-written blocks of an existing results file, by name: the text between
    ``<!-- kept: NAME -->`` and ``<!-- /kept -->``, markers included."""
    if not path.is_file():
        return {}
    found = re.findall(r"(<!-- kept: ([\w-]+) -->.*?<!-- /kept -->)", path.read_text(), flags=re.S)
    names = [name for _, name in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # a rewrite would keep only one of them and silently drop the other
        raise SystemExit(f"{path}: more than one kept block named {', '.join(twice)}; merge or rename them.")
    return {name: block for block, name in found}


def _with_kept(lines: list[str], kept: dict[str, str], after_intro: int) -> list[str]:
    """``lines`` with the ``changes`` block inserted at ``after_intro`` and the others at the end."""
    head, tail = lines[:after_intro], lines[after_intro:]
    middle = [kept["changes"], ""] if "changes" in kept else []
    end = [kept[name] + "\n" for name in kept if name != "changes"]
    return head + middle + tail + end


def report(args: argparse.Namespace) -> None:
    from textrobust.attack.results import Status

    lines = ["# Second-order vs first-order attacks (Zhang et al. 2021, Tables 2, 3, 6, 8)", ""]
    lines += [f"Command: `{args.command_line}`", ""]
    lines += ["Rotten Tomatoes test split, first n sentences; victims from the zoo cache. "
              "Success rate = successes / attacked. First-order attacks skip sentences the victim "
              "already gets wrong; second-order attacks skip sentences without an applicable "
              "synonym patch pair (the default patch rule, see below; the label plays no part). l0 and perplexities "
              "(median, Gemma 3 270M, before = the test sentence, after = the adversarial / vulnerable "
              "sentence) are over successes. Queries and seconds are means per attacked sentence "
              "(second-order: 2 victim queries per scored neighbour).", ""]
    after_intro = len(lines)
    header = ["victim", "method", "n", "attacked", "success", "l0", "PPL before", "PPL after",
              "queries/ex", "median queries", "s/ex"]
    all_rows: dict[tuple[str, str], list[Any]] = {}
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for victim in VICTIMS:
        for method in ("so-beam", "so-enum", "random", "genetic", "bae"):
            results = _load(victim, method)
            if not results:
                continue
            all_rows[(victim, method)] = results
            r = _row(results)
            table.append("| " + " | ".join([victim, method, str(r["n"]), str(r["attacked"]), _f(r["success"], "%"),
                                             _f(r["l0"]), _f(r["ppl_before"]), _f(r["ppl_after"]), _f(r["queries"]),
                                             _f(r["queries_median"]), _f(r["seconds"])]) + " |")
    lines += ["## All sentences", ""] + table + [""]
    # the same sentences for every method: attacked by all of them
    common_table = ["| " + " | ".join(["victim", "method", "sentences", "success", "l0", "PPL before", "PPL after",
                                        "queries/ex", "s/ex"]) + " |", "|" + "---|" * 9]
    for victim in VICTIMS:
        per = {m: rs for (v, m), rs in all_rows.items() if v == victim}
        if not per:
            continue
        largest = max(len(rs) for rs in per.values())  # runs over fewer sentences (SO-Enum) are left out
        per = {m: rs for m, rs in per.items() if len(rs) == largest}
        ids = set.intersection(*[{r.example_id for r in rs if r.status is not Status.SKIPPED} for rs in per.values()])
        for method, results in per.items():
            kept = [r for r in results if r.example_id in ids]
            r = _row(kept)
            common_table.append("| " + " | ".join([victim, method, str(len(kept)), _f(r["success"], "%"), _f(r["l0"]),
                                                    _f(r["ppl_before"]), _f(r["ppl_after"]), _f(r["queries"]),
                                                    _f(r["seconds"])]) + " |")
    lines += ["## The same sentences for every method (correctly classified and with a synonym patch; "
              "methods run on all n sentences)", ""]
    lines += common_table + [""]
    lines += _examples(all_rows)
    if args.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in args.notes] + [""]
    target = RESULTS / "second_order.md"
    target.write_text("\n".join(_with_kept(lines, kept_blocks(target), after_intro)))
    if not getattr(args, "no_bias", False):
        _bias_report(args)


def _examples(all_rows: dict[tuple[str, str], list[Any]]) -> list[str]:
    out = ["## Sample vulnerable examples (SO-Beam)", ""]
    for victim in VICTIMS:
        results = _stored(bench_dir() / victim / "so-beam" / "store.sqlite", "second-order")
        if results is None:
            continue
        shown = 0
        for r in results:
            if _FIRST_N and r.example_id not in _FIRST_N[0]:
                continue
            if r.status.value != "succeeded" or r.l0 == 0 or shown >= 3:
                continue
            p = r.patch
            out.append(f"- {victim}: `{r.original}` -> `{r.vulnerable}`; patch {p.source} -> {p.target}: "
                       f"P(pos) {r.vulnerable_probabilities[1]:.2f} -> {r.vulnerable_patched_probabilities[1]:.2f} "
                       f"(on x0: {r.original_probabilities[1]:.2f} -> {r.original_patched_probabilities[1]:.2f})")
            shown += 1
    return out + [""]


def _anchor_ids(name: str) -> set[str]:
    """The anchors stored (without error) in one victim's bias run."""
    from textrobust.store import RunStore

    path = bias_run_dir(name) / "store.sqlite"
    if not path.is_file():
        return set()
    with RunStore(path) as store:
        run = store.latest_run("bias")
        return set() if run is None else {r.example_id for r in run.results() if not r.failed}


def _bias_report(args: argparse.Namespace) -> None:
    names = ("lstm", "lstm-debiased")
    # --bias-common: only the anchors measured for both victims (runs stopped early)
    keep = set.intersection(*[_anchor_ids(n) for n in names]) if args.bias_common else None
    summaries = {}
    for name in names:
        found = _bias_run(name, keep)
        if found is not None:
            summaries[name] = found
    if not summaries:
        return
    lines = ["# Counterfactual token bias B_{p,k}, base vs debiased LSTM (Zhang et al. 2021, Table 5, Fig. 5-6)", ""]
    lines += [f"Command: `{args.command_line}`", ""]
    any_summary = next(iter(summaries.values()))
    cfg = any_summary["settings"]
    lines += [f"Rotten Tomatoes test split; gendered pairs (male, female) after Zhao et al. 2018; f_soft = "
              f"P({any_summary['f_soft_label']}); B > 0: the model prefers the female word. Neighbor_k enumerated "
              f"for k <= {cfg['exact_up_to']}, sampled above ({cfg['samples']} seeded uniform draws per "
              f"sentence and k: importance-weighted walks resampled by weight, deduplicated; same sentences "
              f"for both victims); eps = {cfg['eps']}. Debiased = the same LSTM "
              f"trained on the gender-swap-augmented train split.", ""]
    after_intro = len(lines)
    for subset, title in (("filter", "X_filter (|F_soft(x0)| < eps): bias invisible on the test sentences"),
                          ("test", "X_test: all test sentences holding the male word once")):
        lines += [f"## {title}", ""]
        head = ["pair", "victim", "# original", "# perturbed k=3", "B k=0", "B k=1", "B k=2", "B k=3"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        pairs: dict[str, dict[str, Any]] = {}
        for name, s in summaries.items():
            for row in s["rows"]:
                pairs.setdefault(row.pair, {})[name] = row
        order = sorted(pairs, key=lambda p: -max(r.originals["test"] for r in pairs[p].values()))
        for pair in order:
            for name, row in pairs[pair].items():
                b = row.b[subset]
                if row.originals[subset] == 0:
                    continue
                lines.append("| " + " | ".join([pair, name, str(row.originals[subset]),
                                                 f"{row.texts[subset].get(3, 0):,}"]
                                                + [_f(b.get(k), "b") for k in range(4)]) + " |")
        lines.append("")
    lines += ["## Runs", ""]
    for name, s in summaries.items():
        lines.append(f"- {name}: {len(s['measures'])} anchors, {s['seconds']:.0f} s, fill-in requests "
                     f"{s['fill_requests']:,}, victim queries {s['queries']:,}; figures: "
                     f"`{s['files'].get('bias_vs_k_png', '-')}`, `{s['files'].get('histograms_png', '-')}`")
    lines.append("")
    copies = RESULTS / "bias"
    copies.mkdir(parents=True, exist_ok=True)
    for name, s in summaries.items():
        for key in ("bias_vs_k_png", "bias_vs_k_svg", "histograms_png"):
            source = Path(s["files"].get(key, ""))
            if source.is_file():
                (copies / f"{name}_{source.name}").write_bytes(source.read_bytes())
    lines.append(f"Copies of the figures: `benchmarks/results/bias/` ({', '.join(sorted(p.name for p in copies.iterdir() if p.is_file()))}).")
    lines.append("")
    if args.bias_notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in args.bias_notes] + [""]
    target = RESULTS / "bias.md"
    target.write_text("\n".join(_with_kept(lines, kept_blocks(target), after_intro)))


def main() -> None:
    import sys

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="part", required=True)
    a = sub.add_parser("attacks")
    a.add_argument("--n", type=int, default=30)
    a.add_argument("--victims", nargs="+", default=list(VICTIMS))
    a.add_argument("--methods", nargs="+", default=["so-beam", "random", "genetic", "bae"])
    a.add_argument("--budget", type=int, default=20_000)
    a.add_argument("--fill-in", default=None)
    a.add_argument("--threads", type=int, default=1)
    b = sub.add_parser("bias")
    b.add_argument("--n", type=int, default=None)
    b.add_argument("--groups", nargs="+", default=["gender"])
    b.add_argument("--exact-up-to", type=int, default=1)
    b.add_argument("--samples", type=int, default=50,
                   help="seeded uniform draws per sentence and k above --exact-up-to (50: the published bias.md tables)")
    b.add_argument("--fill-in", default=None)
    b.add_argument("--victims", nargs="+", default=["lstm", "lstm-debiased"],
                   help="victims of the bias runs (separate processes may run one each, in parallel)")
    b.add_argument("--threads", type=int, default=1)
    pt = sub.add_parser("patches")
    pt.add_argument("--n", type=int, default=30)
    pt.add_argument("--victim", default=str(cache_dir() / "victims" / "default"))
    pt.add_argument("--threads", type=int, default=1)
    nb = sub.add_parser("neighbours")
    nb.add_argument("--n", type=int, default=30)
    nb.add_argument("--samples", type=int, default=5, help="uniform draws per sentence and distance")
    nb.add_argument("--fill-ins", nargs="+", default=["minilm_mlm", "minilm_tuned"])
    nb.add_argument("--threads", type=int, default=1)
    r = sub.add_parser("report")
    r.add_argument("--command-line", default="python benchmarks/second_order.py attacks --n 30 && "
                                             "python benchmarks/second_order.py bias && "
                                             "python benchmarks/second_order.py report")
    r.add_argument("--notes", nargs="*", default=[])
    r.add_argument("--n", type=int, default=None, help="tables over the first n test sentences of every run only")
    r.add_argument("--bias-common", action="store_true",
                   help="bias tables over the anchors measured for both victims only")
    r.add_argument("--bias-notes", nargs="*", default=[])
    r.add_argument("--no-bias", action="store_true",
                   help="rewrite second_order.md only; leave bias.md as it is (e.g. while a bias run is partial)")
    for p in (a, b, r, pt, nb):
        p.add_argument("--bench-dir", type=Path, default=None,
                       help="folder of the run stores (default <cache>/bench/second_order): a new folder "
                            "starts fresh instead of resuming older runs")
    args = parser.parse_args()
    args.argv = sys.argv
    if args.bench_dir is not None:
        _BENCH_DIR.append(args.bench_dir.expanduser())
    if args.part == "report" and args.n is not None:
        _FIRST_N.append(first_n_ids(args.n))
    {"attacks": run_attacks, "bias": run_bias_bench, "report": report, "patches": run_patches,
     "neighbours": run_neighbours}[args.part](args)


if __name__ == "__main__":
    main()
