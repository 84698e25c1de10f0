"""Benchmark of attribution robustness (Ivankay et al. 2022): TEA vs TEF, k and AUC_k.

    python benchmarks/attribution.py run --config cnn-rt-saliency --n 5      # one configuration
    python benchmarks/attribution.py run --all --n 5                         # every configuration
    python benchmarks/attribution.py grammar                                  # checkers on the pairs
    python benchmarks/attribution.py report                                   # markdown table of the results

Each configuration is (victim folder, data set, attribution method). Every example runs
TEA (the project's default fill-in, ``DEFAULT_FILL_IN``, recorded in each JSON's settings;
``results/attribution.md`` says which fill-in each row used) and TEF (counter-fitted neighbours) at
each rho_max of ``--rhos``; the per-example records and the summary go to
``benchmarks/results/attribution/<config>.json``. ``--no-batch-masking`` runs TEA without
batch masking (the runtime comparison). Text distances: MiniLM (Eq. 5), Gemma relative
perplexity (Eq. 6), link-grammar errors. Victim folders: ``--victims DIR/<arch>-<dataset>``
(trained with ``python -m textrobust.zoo train``), the default victim for ``cnn-rt``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results" / "attribution"

#: name -> (victim folder name under --victims, or "default"; data set; attribution method)
CONFIGS: dict[str, tuple[str, str, str]] = {
    "cnn-rt-saliency": ("default", "rotten_tomatoes", "saliency"),
    "cnn-rt-ig": ("default", "rotten_tomatoes", "integrated_gradients"),
    "lstm-rt-saliency": ("lstm-rotten_tomatoes", "rotten_tomatoes", "saliency"),
    "lstm-rt-ig": ("lstm-rotten_tomatoes", "rotten_tomatoes", "integrated_gradients"),
    "lstm_att-rt-saliency": ("lstm_att-rotten_tomatoes", "rotten_tomatoes", "saliency"),
    "lstm_att-rt-attention": ("lstm_att-rotten_tomatoes", "rotten_tomatoes", "attention"),
    "transformer-rt-attention": ("transformer-rotten_tomatoes", "rotten_tomatoes", "attention"),
    "minilm-rt-saliency": ("minilm-rotten_tomatoes", "rotten_tomatoes", "saliency"),
    "minilm-rt-ig": ("minilm-rotten_tomatoes", "rotten_tomatoes", "integrated_gradients"),
    "minilm-rt-attention": ("minilm-rotten_tomatoes", "rotten_tomatoes", "attention"),
    "cnn-bbc-saliency": ("cnn-bbc_news", "bbc_news", "saliency"),
}


def _victim(name: str, victims: Path) -> Any:
    from textrobust.zoo import ensure_default_victim
    from textrobust.zoo.io import load_victim

    return load_victim(ensure_default_victim() if name == "default" else victims / name)


def run(config: str, args: argparse.Namespace, shared: dict[str, Any]) -> dict[str, Any]:
    from textrobust.analyses.attribution.analysis import AttributionAnalysis, candidate_sources
    from textrobust.analyses.attribution.text_distances import TextDistances
    from textrobust.data import load_dataset
    from textrobust.victims import QueryLayer

    folder, dataset, method = CONFIGS[config]
    victim = _victim(folder, Path(args.victims))
    options = {"max_words": args.max_words} if dataset == "bbc_news" else {}
    data = load_dataset(dataset, "test", **options).take(args.n)
    settings = {"attribution": method, "rhos": tuple(args.rhos), "n": args.n, "batch_masking": args.batch_masking,
                "ig_steps": args.ig_steps, "attacks": tuple(args.attacks), "fill_in": args.fill_in}
    analysis = AttributionAnalysis(settings)
    if "distances" not in shared:
        shared["distances"] = TextDistances.default(perplexity=not args.no_perplexity)
    if "sources" not in shared:
        from textrobust.text import Text

        shared["sources"] = candidate_sources(analysis.settings)
        for source in shared["sources"].values():  # load the fill-in and the vectors before timing
            source.candidates(Text.from_string("a fine and moving film ."), [1, 4])
    layer = QueryLayer(victim)
    analyse = analysis.worker_with(layer, shared["sources"], shared["distances"])
    records, started = [], time.perf_counter()
    for i, example in enumerate(data):
        t0 = time.perf_counter()
        records.append(analyse(example))
        print(f"  {config} {i + 1}/{len(data)} {time.perf_counter() - t0:.1f}s", flush=True)
    seconds = time.perf_counter() - started
    summary = analysis.summarise(records, [])
    from textrobust.records import encode

    settings = {**settings, "fill_in": analysis.settings.fill_in}  # the fill-in TEA used, default resolved
    out = {"config": config, "victim": folder, "dataset": dataset, "method": method, "settings": settings,
           "examples": len(records), "seconds": seconds, "load": os.getloadavg(), "summary": summary.to_dict(),
           "absent": list(shared["distances"].absent), "records": [encode(r) for r in records]}
    RESULTS.mkdir(parents=True, exist_ok=True)
    suffix = ("" if args.batch_masking else "-no-batch-masking") + (f"-{args.fill_in}" if args.fill_in else "")
    (RESULTS / f"{config}{suffix}.json").write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    return out


def _summary(out: dict[str, Any]) -> dict[str, Any]:
    """The summary of a stored result, recomputed from its records with today's rules (a
    file written before issue 27 stored negative k_PP values; see robustness.py)."""
    from textrobust.analyses.attribution.analysis import summarise_records
    from textrobust.analyses.attribution.records import AttributionRecord
    from textrobust.analyses.attribution.settings import AttributionSettings
    from textrobust.records import decode

    fields = AttributionSettings.model_fields
    settings = AttributionSettings(**{k: tuple(v) if isinstance(v, list) else v
                                      for k, v in out["settings"].items() if k in fields})
    records = [decode(AttributionRecord, r) for r in out["records"]]
    return summarise_records(settings, records, []).to_dict()


def report(args: argparse.Namespace) -> None:
    """A markdown table of every stored result (means at the largest rho_max; AUC over the
    sweep; summaries recomputed from the records). ``fill-in``: TEA's, as stored (files
    written before it was stored used ``minilm_mlm``, the default then)."""
    import math

    def f(x: Any, digits: int = 2) -> str:
        return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"

    print("| config | fill-in | n | attack | PCC | STS | k_MiniLM | k_PP | no k_PP | GE+ | AUC_k MiniLM | AUC_k PP | "
          "increase MiniLM / PP | s per example | share in attribution | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(RESULTS.glob("*.json")):
        out = json.loads(path.read_text(encoding="utf-8"))
        s = _summary(out)
        fill_in = out["settings"].get("fill_in") or "minilm_mlm"
        top = max(p["rho_max"] for p in s["points"])
        for auc_row in s["aucs"]:
            attack = auc_row["attack"]
            p = [p for p in s["points"] if p["attack"] == attack and p["rho_max"] == top][0]
            runs = [run for r in out["records"] for run in r["runs"] if run["attack"] == attack]
            per_example = sum(run["seconds"] for run in runs) / max(out["examples"], 1)
            share = sum(run["attribution_seconds"] for run in runs) / max(sum(run["seconds"] for run in runs), 1e-9)
            increase = (f"{f(s['relative_increase_semantic'])} / {f(s['relative_increase_perplexity'])}"
                        if attack == "tea" else "")
            undefined = sum(q["k_perplexity_undefined"] for q in s["points"] if q["attack"] == attack)
            print(f"| {path.stem} | {fill_in if attack == 'tea' else '-'} | {out['examples']} | {attack.upper()} | "
                  f"{f(p['pcc_mean'])} | {f(p['similarity_mean'])} | {f(p['k_semantic_mean'])} | "
                  f"{f(p['k_perplexity_mean'])} | {undefined} | {f(p['grammar_increase_mean'])} | "
                  f"{f(auc_row['auc_k_semantic'], 3)} | "
                  f"{f(auc_row['auc_k_perplexity'], 3)} | {increase} | {per_example:.1f} | {share:.0%} | "
                  f"{out['load'][0]:.1f} |")


def grammar(args: argparse.Namespace) -> None:
    from textrobust.analyses.attribution.grammar import measure_checkers

    lm = None
    if not args.no_perplexity:
        from textrobust.lm import CausalLM

        lm = CausalLM.default()
    for score in measure_checkers(lm):
        print(score)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--config", action="append", default=[], choices=sorted(CONFIGS))
    r.add_argument("--all", action="store_true")
    r.add_argument("--n", type=int, default=5)
    r.add_argument("--rhos", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.4])
    r.add_argument("--attacks", nargs="+", default=["tea", "tef"])
    r.add_argument("--no-batch-masking", dest="batch_masking", action="store_false")
    r.add_argument("--fill-in", default=None, help="TEA's fill-in (default: the project's default, "
                   "DEFAULT_FILL_IN; attribution.md says which fill-in each row used)")
    r.add_argument("--ig-steps", type=int, default=20)
    r.add_argument("--max-words", type=int, default=60, help="BBC News: first words of each article")
    r.add_argument("--victims", default=str(Path.home() / ".cache" / "textrobust" / "victims"))
    r.add_argument("--no-perplexity", action="store_true")
    r.add_argument("--threads", type=int, default=1)
    sub.add_parser("report")
    g = sub.add_parser("grammar")
    g.add_argument("--no-perplexity", action="store_true")
    args = parser.parse_args()
    if args.command == "grammar":
        grammar(args)
        return
    if args.command == "report":
        report(args)
        return
    import torch

    torch.set_num_threads(args.threads)
    shared: dict[str, Any] = {}
    for config in (sorted(CONFIGS) if args.all else args.config):
        out = run(config, args, shared)
        s = out["summary"]
        print(config, f"{out['seconds'] / max(out['examples'], 1):.1f} s/example", "AUC", s["aucs"],
              "increase", s["relative_increase_semantic"], flush=True)


if __name__ == "__main__":
    main()
