"""Benchmark of the maximal-safe-radius work (La Malfa et al. 2020) on the project's victims.

    python benchmarks/msr.py bounds --victim default --dataset rotten_tomatoes --n 10
    python benchmarks/msr.py bounds --victim /tmp/msr_victims/lstm_rt --dataset rotten_tomatoes --n 10
    python benchmarks/msr.py bounds --victim /tmp/msr_victims/cnn_bbc --dataset bbc_news --n 6
    python benchmarks/msr.py bounds --victim /tmp/msr_victims/lstm_bbc --dataset bbc_news --n 6
    python benchmarks/msr.py tightness --victim default --dataset rotten_tomatoes --n 10
    python benchmarks/msr.py tightness --victim /tmp/msr_victims/lstm_rt --n 5 --positions 8
    python benchmarks/msr.py positions --victim /tmp/msr_victims/lstm_rt --n 20 --positions 5
    python benchmarks/msr.py positions --victim default --n 20 --positions 5
    python benchmarks/msr.py crosscheck --victim default --dataset rotten_tomatoes --n 40
    python benchmarks/msr.py certified --victim default --train 0 --test 150 --epochs 8 --substitutes 8
    python benchmarks/msr.py note        # writes benchmarks/results/msr.md from the parts

Victims: ``default`` (the default CNN on Rotten Tomatoes) or a victim folder trained with
``python -m textrobust.zoo train {cnn,lstm} --dataset {rotten_tomatoes,bbc_news}``. Each
part writes a JSON under ``--work`` (default /tmp/msr-bench); ``note`` turns them into the
markdown note. One torch thread (the machine is shared); the load average is recorded with
every timing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"


def _load(victim: str) -> tuple[Any, str]:
    from textrobust.zoo.default import ensure_default_victim
    from textrobust.zoo.io import load_victim

    path = ensure_default_victim() if victim == "default" else Path(victim)
    return load_victim(path, batch_size=256), Path(path).name if victim != "default" else "cnn_rt (default)"


def _load_average() -> float:
    return os.getloadavg()[0]


def _save(work: Path, name: str, data: dict[str, Any]) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{name}.json").write_text(json.dumps(data, indent=2, default=float))


def bounds(args: argparse.Namespace) -> None:
    """Tables 2-3 style bounds, the position effect, LIME agreement, time per bound."""
    from textrobust.analyses.msr.analysis import MsrAnalysis
    from textrobust.analyses.protocol import WorkerContext
    from textrobust.data import load_dataset
    from textrobust.victims import QueryLayer

    victim, name = _load(args.victim)
    data = load_dataset(args.dataset, split="test").take(args.n)
    settings = {"n": args.n, "max_set_size": 3, "positions": args.positions, "neighbours": args.neighbours,
                "simulations": args.simulations, "iterations": args.iterations, "multi_sets": args.multi_sets,
                "lime_samples": 100, "norm": args.norm}
    analysis = MsrAnalysis(settings)
    layer = QueryLayer(victim)
    analyse = analysis.worker(WorkerContext(layer, data.label_names))
    began, loads, records = time.perf_counter(), [], []
    for i, example in enumerate(data):
        records.append(analyse(example))
        loads.append(_load_average())
        print(f"{name}: {i + 1}/{len(data)} texts, {time.perf_counter() - began:.0f}s", file=sys.stderr)
    summary = analysis.summarise(records, [])
    _save(Path(args.work), f"bounds-{name.split(' ')[0]}-{args.norm}", {
        "victim": name, "dataset": args.dataset, "settings": settings, "summary": summary.to_dict(),
        "seconds": time.perf_counter() - began, "load_average": float(np.mean(loads)),
        "lengths": [len(r.text) for r in records]})


def tightness(args: argparse.Namespace) -> None:
    """The linear relaxation (CROWN for the CNN, forward-mode linear for the LSTM) against
    IBP on the same single-word balls: eps_l and time per bound."""
    from textrobust.bounds.certify import Verifier
    from textrobust.data import load_dataset

    victim, name = _load(args.victim)
    verifier = Verifier(victim.module)
    data = load_dataset(args.dataset, split="test").take(args.n)
    rows: dict[str, list[float]] = {"crown": [], "ibp": []}
    seconds = {"crown": 0.0, "ibp": 0.0}
    loads = []
    for example in data:
        ids_t, mask, _ = victim.encode([example.text])
        ids = ids_t[0][mask[0]].tolist()
        for p in range(min(len(ids), args.positions)):
            for method in ("crown", "ibp"):
                t0 = time.perf_counter()
                rows[method].append(verifier.lower_radius(ids, [p], method=method, norm=args.norm).normalised)
                seconds[method] += time.perf_counter() - t0
        loads.append(_load_average())
    crown, ibp = np.array(rows["crown"]), np.array(rows["ibp"])
    _save(Path(args.work), f"tightness-{name.split(' ')[0]}-{args.norm}", {
        "victim": name, "dataset": args.dataset, "relaxation": verifier.method_used("crown"), "texts": len(data),
        "positions": args.positions, "bounds": len(crown), "mean_crown": float(crown.mean()),
        "mean_ibp": float(ibp.mean()), "crown_tighter_share": float((crown > ibp + 1e-12).mean()),
        "crown_looser": int((crown < ibp - 2e-3).sum()),
        "ratio_median": float(np.median(crown[ibp > 0] / ibp[ibp > 0])) if (ibp > 0).any() else math.nan,
        "ibp_zero": int((ibp == 0).sum()), "crown_zero": int((crown == 0).sum()),
        "seconds_crown": seconds["crown"] / len(crown), "seconds_ibp": seconds["ibp"] / len(ibp),
        "load_average": float(np.mean(loads))})


def positions(args: argparse.Namespace) -> None:
    """Figure 6 with one relaxation family: the normalised single-word lower bound (linear
    relaxation: CROWN for the CNN, forward-mode linear for the LSTM) of the first and the
    last ``--positions`` words of each text, by position from the start and from the end."""
    from textrobust.bounds.certify import Verifier
    from textrobust.data import load_dataset

    victim, name = _load(args.victim)
    verifier = Verifier(victim.module)
    data = load_dataset(args.dataset, split="test").take(args.n)
    start: dict[int, list[float]] = {}
    end: dict[int, list[float]] = {}
    pgd_start: dict[int, list[float]] = {}
    pgd_end: dict[int, list[float]] = {}
    began, loads, count = time.perf_counter(), [], 0
    for i, example in enumerate(data):
        ids_t, mask, _ = victim.encode([example.text])
        ids = ids_t[0][mask[0]].tolist()
        chosen = sorted(set(range(min(len(ids), args.positions)))
                        | set(range(max(0, len(ids) - args.positions), len(ids))))
        for p in chosen:
            value = verifier.lower_radius(ids, [p], method="crown", norm=args.norm).normalised
            attacked = _pgd_radius(verifier, ids, p, args.norm)
            count += 1
            if p < args.positions:
                start.setdefault(p, []).append(value)
                pgd_start.setdefault(p, []).append(attacked)
            if len(ids) - 1 - p < args.positions:
                end.setdefault(len(ids) - 1 - p, []).append(value)
                pgd_end.setdefault(len(ids) - 1 - p, []).append(attacked)
        loads.append(_load_average())
        print(f"{name}: {i + 1}/{len(data)} texts, {time.perf_counter() - began:.0f}s", file=sys.stderr)
    _save(Path(args.work), f"positions-{name.split(' ')[0]}-{args.norm}", {
        "victim": name, "dataset": args.dataset, "norm": args.norm, "relaxation": verifier.method_used("crown"),
        "texts": len(data), "bounds": count, "seconds_per_bound": (time.perf_counter() - began) / max(count, 1),
        "load_average": float(np.mean(loads)),
        "from_start": {p: [float(np.mean(v)), len(v)] for p, v in sorted(start.items())},
        "from_end": {p: [float(np.mean(v)), len(v)] for p, v in sorted(end.items())},
        "pgd_from_start": {p: [float(np.mean(v)), len(v)] for p, v in sorted(pgd_start.items())},
        "pgd_from_end": {p: [float(np.mean(v)), len(v)] for p, v in sorted(pgd_end.items())}})


def _pgd_radius(verifier: Any, ids: list[int], position: int, norm: str, steps: int = 20, halvings: int = 12) -> float:
    """An empirical *upper* bound of the single-word MSR (normalised): the smallest radius,
    found by bisection over ``[0, d]``, at which projected gradient ascent on the best wrong
    logit (``steps`` steps, in the normalised embedding space, the Lp ball of
    Definition 1) changes the float64 model's class; ``1.0`` when it never does. A cross-check
    of the position trend that does not depend on any relaxation."""
    import torch

    from textrobust.bounds.region import Norm, diameter

    model, scale = verifier.model, verifier.scale
    center = verifier.embed(ids)
    label = int(verifier.logits(center).argmax())
    d = diameter(center, [position], Norm(norm), scale)
    z0 = scale.normalise(center)
    mask = torch.ones(1, len(ids), dtype=torch.bool)

    def flips(eps: float) -> bool:
        delta = torch.zeros(center.shape[1], dtype=torch.float64, requires_grad=True)
        for _ in range(steps + 1):
            z = z0.clone()
            z[position] = (z0[position] + delta).clamp(0.0, 1.0)
            logits = model.forward_embedded((scale.low + scale.span * z).unsqueeze(0), mask)[0]
            others = torch.cat([logits[:label], logits[label + 1:]])
            loss = others.max() - logits[label]
            if loss.item() > 0:
                return True
            (grad,) = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                if Norm(norm) is Norm.LINF:
                    delta += eps / 4 * grad.sign()
                    delta.clamp_(-eps, eps)
                else:
                    delta += eps / 4 * grad / (grad.norm() + 1e-12)
                    if delta.norm() > eps:
                        delta *= eps / delta.norm()
        return False

    if d <= 0 or not flips(d):
        return 1.0
    lo, hi = 0.0, d
    for _ in range(halvings):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if flips(mid) else (mid, hi)
    return hi / d


def crosscheck(args: argparse.Namespace) -> None:
    """Hull certificates against the exhaustive prover and two attacks: contradictions."""
    from textrobust.analyses.msr.crosscheck import cross_check
    from textrobust.attack.candidates.neighbours import EmbeddingSpace, L2Neighbours
    from textrobust.attack.searches import GreedySearch, MCTSSearch
    from textrobust.bounds.certify import Verifier
    from textrobust.data import load_dataset

    victim, name = _load(args.victim)
    verifier = Verifier(victim.module)
    source = L2Neighbours(EmbeddingSpace.of_victim(victim), n=args.neighbours)
    data = load_dataset(args.dataset, split="test").take(args.n)
    began, counts = time.perf_counter(), {"texts": 0, "certified": 0, "found": 0, "unknown": 0, "attack_found": 0,
                                          "contradictions": 0}
    for example in data:
        check = cross_check(victim, verifier, example.text, source, radius=args.radius,
                            attacks=(GreedySearch(), MCTSSearch(simulations=8, max_iterations=10)))
        counts["texts"] += 1
        counts["certified"] += check.certified
        counts["found"] += check.verdict == "found"
        counts["unknown"] += check.verdict == "unknown"
        counts["attack_found"] += check.attack_found
        counts["contradictions"] += check.contradiction
    _save(Path(args.work), f"crosscheck-{name.split(' ')[0]}-n{args.neighbours}", {
        "victim": name, "dataset": args.dataset, "neighbours": args.neighbours, "radius": args.radius, **counts,
        "seconds": time.perf_counter() - began, "load_average": _load_average()})


def embeddings(args: argparse.Namespace) -> None:
    """Train the CNN on Rotten Tomatoes with its own embedding (random init) and with
    counter-fitted GloVe (the project's counter-fitting), beside the default (GloVe)."""
    from textrobust.embeddings.counterfit import CounterFitSettings, counterfitted_vectors
    from textrobust.zoo.training import train_victim

    out = Path(args.victims)
    train_victim("cnn", "rotten_tomatoes", out=out / "cnn_rt_random", epochs=5, training={"vectors": "random"})
    vectors = counterfitted_vectors(CounterFitSettings())
    words = [""] * len(vectors.index)
    for word, row in vectors.index.items():
        words[row] = word
    train_victim("cnn", "rotten_tomatoes", out=out / "cnn_rt_counterfit", epochs=5, vectors=(words, vectors.matrix))


def certified(args: argparse.Namespace) -> None:
    """Normal against certified (IBP hull) training: clean, certified and attacked accuracy,
    and the share of each predicted class (a one-class model is flagged, issue 30)."""
    import copy

    import torch

    from textrobust.assets.loaders import stop_words
    from textrobust.attack.searches import GreedySearch
    from textrobust.attack.searches.search_testing import DictSource
    from textrobust.bounds.certified_training import (
        CertifiedTrainingConfig,
        certified_train,
        ibp_evaluate,
        substitution_table,
    )
    from textrobust.bounds.certify import Verifier
    from textrobust.data import load_dataset
    from textrobust.victims import QueryLayer
    from textrobust.victims.torch import TorchVictim
    from textrobust.zoo.cards import one_class_warning

    victim, name = _load(args.victim)
    vocab = victim.tokenizer
    train = load_dataset(args.dataset, split="train")
    rng = np.random.default_rng(0)
    size = len(train) if args.train <= 0 else min(args.train, len(train))
    picked = np.sort(rng.choice(len(train), size=size, replace=False))
    train_examples = [train.examples[int(i)] for i in picked]
    dev = load_dataset(args.dataset, split="dev")
    test = load_dataset(args.dataset, split="test")
    words = {w.lower() for e in [*train_examples, *dev.examples, *test.examples] for w in e.text.words}
    began = time.perf_counter()
    if args.sets == "checked":
        # WordNet's 2 most frequent senses x counter-fitted cosine >= 0.6 x Zipf >= 3, over each
        # word's 10 nearest counter-fitted neighbours; stop words and punctuation keep their word
        from textrobust.attack.candidates.checked import CheckedSynonyms

        table = {w: list(s) for w, s in CheckedSynonyms(k=args.substitutes).table(
            sorted(words), neighbours=10, skip=stop_words()).items() if w in vocab}
    else:  # the first run's sets: the nearest words (L2) in the victim's own embedding, every token
        from textrobust.attack.candidates.neighbours import EmbeddingSpace

        space = EmbeddingSpace.of_victim(victim)
        table = {w: [s for s, _ in space.nearest(w, args.substitutes)] for w in words if w in vocab}
    table_seconds = time.perf_counter() - began
    config = CertifiedTrainingConfig(epochs=args.epochs, ramp_epochs=args.ramp_epochs, kappa=args.kappa,
                                     embedding_lr=args.embedding_lr, max_substitutes=args.substitutes)
    ids_table = substitution_table(vocab, table, config.max_substitutes)
    labels = victim.label_names

    def evaluate(module: Any) -> dict[str, Any]:
        """On the whole test split: clean and IBP-certified accuracy, predicted shares. On its
        first ``--test`` texts: accuracy certified over the hull by CROWN (every word at once),
        accuracy under greedy and the exhaustive prover (radius 1) on the same sets, and the
        cross-check's contradictions (certified, yet attacked)."""
        from textrobust.analyses.msr.crosscheck import cross_check

        full = ibp_evaluate(module, vocab, test.texts, test.labels, ids_table)
        shares = {labels[i]: share for i, share in full.predicted_share.items()}
        v = TorchVictim(module, vocab, labels, batch_size=256)
        verifier = Verifier(module)
        layer = QueryLayer(v)
        clean = cert = robust = contradictions = 0
        few = test.take(args.test)
        for example in few:
            pred = int(layer.predict([example.text])[0])
            if pred != example.label:
                continue
            clean += 1
            check = cross_check(v, verifier, example.text, DictSource(table), radius=1, attacks=(GreedySearch(),))
            cert += check.certified
            robust += not (check.attack_found or check.verdict == "found")
            contradictions += check.contradiction
        n = len(few)
        return {"clean": clean / n, "certified": cert / n, "attacked": robust / n, "contradictions": contradictions,
                "test_texts": full.texts, "test_clean": full.clean, "test_certified_ibp": full.certified,
                "predicted_share": shares, "one_class": one_class_warning(shares)}

    normal = evaluate(victim.module)
    model = copy.deepcopy(victim.module)

    def report(log: Any) -> None:
        d = log.dev
        print(f"epoch {log.epoch}: eps {log.eps:.2f} kappa {log.kappa:.2f} clean CE {log.clean_loss:.3f} worst CE "
              f"{log.worst_loss:.3f} | dev clean {d.clean:.3f} IBP-certified {d.certified:.3f} predicted "
              f"{[round(x, 3) for x in d.predicted_share.values()]} ({log.seconds:.0f} s, load "
              f"{_load_average():.1f})", file=sys.stderr, flush=True)

    logs = certified_train(model, vocab, [e.text for e in train_examples], [e.label for e in train_examples], table,
                           config, progress=report, dev=(dev.texts, dev.labels))
    certified_row = evaluate(model)
    positions = sum(len(e.text.words) for e in test.examples)
    covered = sum(w.lower() in table for e in test.examples for w in e.text.words)
    _save(Path(args.work), f"certified-{name.split(' ')[0]}", {
        "victim": name, "dataset": args.dataset, "train_examples": len(train_examples), "test_examples": args.test,
        "substitutes": args.substitutes, "sets": args.sets, "epochs": args.epochs, "config": config.to_dict(),
        "table_words": len(table), "test_words_with_substitutes": covered / positions,
        "table_seconds": table_seconds, "normal": normal, "certified": certified_row,
        "dev_history": [{"epoch": l.epoch, "eps": l.eps, "kappa": l.kappa, "clean_loss": l.clean_loss,
                         "worst_loss": l.worst_loss, "dev_clean": l.dev.clean, "dev_certified_ibp": l.dev.certified,
                         "dev_predicted_share": l.dev.predicted_share, "seconds": l.seconds} for l in logs if l.dev],
        "train_seconds": sum(l.seconds for l in logs), "seconds": time.perf_counter() - began,
        "load_average": _load_average(), "threads": torch.get_num_threads()})


def main() -> None:
    import torch

    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=["bounds", "tightness", "positions", "crosscheck", "embeddings", "certified",
                                         "note"])
    parser.add_argument("--victims", default="/tmp/msr_victims", help="where 'embeddings' saves its victims")
    parser.add_argument("--victim", default="default")
    parser.add_argument("--dataset", default="rotten_tomatoes")
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--neighbours", type=int, default=50)
    parser.add_argument("--simulations", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--norm", default="l2")
    parser.add_argument("--multi-sets", type=int, default=5, help="random position sets per size 2..3 ('bounds')")
    parser.add_argument("--radius", type=int, default=2)
    parser.add_argument("--train", type=int, default=2000, help="'certified': training texts (0: the whole split)")
    parser.add_argument("--test", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--substitutes", type=int, default=5)
    parser.add_argument("--sets", choices=["checked", "victim-l2"], default="checked",
                        help="'certified': substitution sets (checked synonyms, or the first run's victim-embedding "
                             "L2 neighbours)")
    parser.add_argument("--ramp-epochs", type=int, default=6, help="'certified': epochs of the eps/kappa ramp")
    parser.add_argument("--kappa", type=float, default=0.8, help="'certified': final weight of the worst-case loss")
    parser.add_argument("--embedding-lr", type=float, default=1e-2, help="'certified': the embedding table's lr")
    parser.add_argument("--work", default="/tmp/msr-bench")
    args = parser.parse_args()
    {"bounds": bounds, "tightness": tightness, "positions": positions, "crosscheck": crosscheck, "embeddings": embeddings, "certified": certified,
     "note": write_note}[args.part](args)


def write_note(args: argparse.Namespace) -> None:
    """benchmarks/results/msr.md from the parts' JSON files (tables only; the prose around
    them is kept in the note's header, written by hand)."""
    work = Path(args.work)
    parts = {p.stem: json.loads(p.read_text()) for p in sorted(work.glob("*.json"))}
    out = ["<!-- tables generated by `python benchmarks/msr.py note` -->", ""]
    bounds_parts = [v for k, v in parts.items() if k.startswith("bounds-")]
    if bounds_parts:
        out += ["### Bounds, Tables 2-3 style, in both normalisations", "",
                "`/ d`: divided by Definition 1's d, the distance from the text to the farthest corner of the "
                "normalised cube over I (1.0 = safe against any substitution). `/ sqrt(D)`: divided by the "
                "embedding's diameter sqrt(D) (1 in L-infinity), the paper's convention (Table 4); compare "
                "with the paper's Tables 2-6 in this one only.", "",
                "| victim | data | norm | texts | \\|I\\| | sets | lower / d (mean ± sd) | lower / sqrt(D) (mean ± sd) "
                "| upper / d (none = 1.0) | upper / d (found) | upper / sqrt(D) (found) "
                "| % texts w/ success | % sets w/ success | % certified any | gap / d | s/lower bound | s/text MCTS | load |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for b in bounds_parts:
            s = b["summary"]
            paper = {row["size"]: row for row in s.get("sizes_embedding", [])}
            for row in s["sizes"]:
                e = paper.get(row["size"], {})
                out.append(f"| {b['victim']} | {b['dataset']} | {s['norm']} | {s['texts']} | {row['size']} | {row['sets']} "
                           f"| {_g(row['mean_lower'])} ± {_g(row['std_lower'])} "
                           f"| {_g(e.get('mean_lower'))} ± {_g(e.get('std_lower'))} | {_g(row['mean_upper'])} "
                           f"| {_g(row['mean_upper_found'])} | {_g(e.get('mean_upper_found'))} "
                           f"| {_p(row['found_per_text'])} | {_p(row['found_per_set'])} "
                           f"| {_p(row['certified_any'])} | {_g(row['mean_gap'])} | {_f(s['seconds_per_lower_bound'])} "
                           f"| {_f(s['seconds_per_text_upper'], 1)} | {b['load_average']:.1f} |")
        out += ["", "### Position effect (Figure 6): mean single-word lower bound / d by word position", "",
                "| victim | " + " | ".join(str(i) for i in range(10)) + " |", "|---|" + "---|" * 10]
        for b in bounds_parts:
            pos = {row["position"]: row["mean_lower"] for row in b["summary"]["by_position"]}
            out.append(f"| {b['victim']} ({b['summary']['norm']}) | "
                       + " | ".join(_g(pos.get(i, math.nan)) for i in range(10)) + " |")
        out += ["", "### LIME agreement (Spearman of |LIME weight| with -lower bound, mean over texts)", "",
                "| victim | texts | Spearman | contradictions (MCTS inside a certified ball) |", "|---|---|---|---|"]
        for b in bounds_parts:
            s = b["summary"]
            out.append(f"| {b['victim']} ({s['norm']}) | {s['lime_texts']} | {_f(s['lime_spearman'])} | {s['contradictions']} |")
    embeddings = {"cnn_rt (default)": "GloVe 50d, fine-tuned", "cnn_rt_random": "own (random init, trained)",
                  "cnn_rt_counterfit": "counter-fitted GloVe 50d, fine-tuned"}
    compared = [b for b in bounds_parts if b["victim"] in embeddings and b["summary"]["norm"] == "l2"]
    if len(compared) > 1:
        out += ["", "### Effect of the embedding (CNN, Rotten Tomatoes; lower bounds only)", "",
                "| victim | embedding | test acc | texts | lower \\|I\\|=1 | lower \\|I\\|=2 | lower \\|I\\|=3 |",
                "|---|---|---|---|---|---|---|"]
        for b in compared:
            lows = {row["size"]: row["mean_lower"] for row in b["summary"]["sizes"]}
            out.append(f"| {b['victim']} | {embeddings[b['victim']]} | {_p(_test_accuracy(b['victim']))} | "
                       f"{b['summary']['texts']} | {_g(lows.get(1))} | {_g(lows.get(2))} | {_g(lows.get(3))} |")
    placed = [v for k, v in parts.items() if k.startswith("positions-")]
    if placed:
        width = max(len(v["from_start"]) for v in placed)
        out += ["", "### Position effect, one relaxation family (Figure 6): mean normalised single-word bounds",
                "", "Linear relaxation on both architectures (CROWN for the CNN, forward-mode linear for the LSTM). "
                "Position from the start of the text (0 = first word), then from its end (0 = last word); "
                "in brackets the number of words averaged. \"PGD upper\": the smallest radius at which projected "
                "gradient ascent changed the class (1.0 = never), an empirical upper bound of the same words' MSR "
                "that depends on no relaxation.", "",
                "| victim | bound | from | " + " | ".join(str(i) for i in range(width)) + " | s/word | load |",
                "|---|---|---|" + "---|" * width + "---|---|"]
        for v in placed:
            for side in ("from_start", "from_end", "pgd_from_start", "pgd_from_end"):
                if side not in v:
                    continue
                cells = [f"{_g(v[side][str(i)][0])} ({v[side][str(i)][1]})" if str(i) in v[side] else "n/a"
                         for i in range(width)]
                kind = "PGD upper" if side.startswith("pgd") else v["relaxation"]
                out.append(f"| {v['victim']} ({v['norm']}, {v['texts']} texts) | {kind} | "
                           f"{side.split('_')[-1]} | " + " | ".join(cells)
                           + f" | {_f(v['seconds_per_bound'])} | {v['load_average']:.1f} |")
    tight = [v for k, v in parts.items() if k.startswith("tightness-")]
    if tight:
        out += ["", "### Linear relaxation against IBP (single-word L2 balls, same words)", "",
                "Linear: CROWN for the CNN, the forward-mode linear relaxation for the LSTM; each reported bound is "
                "already the larger of the linear and the IBP bound.", "",
                "| victim | linear | bounds | mean linear | mean IBP | linear tighter | median linear/IBP "
                "| IBP = 0 | linear = 0 | s/bound linear | s/bound IBP | load |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for t in tight:
            out.append(f"| {t['victim']} | {t.get('relaxation', 'crown')} | {t['bounds']} | {_g(t['mean_crown'])} | "
                       f"{_g(t['mean_ibp'])} | {_p(t['crown_tighter_share'])} | {_f(t['ratio_median'])} | "
                       f"{t.get('ibp_zero', 'n/a')} | {t.get('crown_zero', 'n/a')} | {_f(t['seconds_crown'])} | "
                       f"{_f(t['seconds_ibp'])} | {t['load_average']:.1f} |")
    cross = [v for k, v in parts.items() if k.startswith("crosscheck-")]
    if cross:
        out += ["", "### Cross-check: hull certificate against the exhaustive prover and attacks", "",
                "| victim | texts | substitutes/word | prover radius | certified | prover found | prover unknown "
                "| attack found | contradictions | s | load |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in cross:
            out.append(f"| {c['victim']} | {c['texts']} | {c['neighbours']} | {c['radius']} | {c['certified']} | "
                       f"{c['found']} | {c['unknown']} | {c['attack_found']} | **{c['contradictions']}** | "
                       f"{c['seconds']:.0f} | {c['load_average']:.1f} |")
    certs = [v for k, v in parts.items() if k.startswith("certified-")]
    if certs:
        out += ["", "### Normal against certified (IBP hull) training", "",
                "| victim | training | clean acc (all test) | IBP-certified acc (all test) | predicted per class "
                "(all test) | clean acc | certified acc (hull, CROWN) | attacked acc (greedy + prover r=1) "
                "| contradictions |", "|---|---|---|---|---|---|---|---|---|"]
        for c in certs:
            for kind in ("normal", "certified"):
                r = c[kind]
                shares = ", ".join(f"{k} {_p(v)}" for k, v in r["predicted_share"].items())
                flag = " **one-class**" if r.get("one_class") else ""
                out.append(f"| {c['victim']} | {kind} | {_p(r['test_clean'])} | {_p(r['test_certified_ibp'])} "
                           f"| {shares}{flag} | {_p(r['clean'])} | {_p(r['certified'])} | {_p(r['attacked'])} "
                           f"| **{r['contradictions']}** |")
            out.append("")
            cfg = c["config"]
            out.append(f"Sizes: {c['train_examples']} training texts, {c['epochs']} epochs of certified fine-tuning "
                       f"(eps and kappa ramped over {cfg['ramp_epochs']}, kappa {cfg['kappa']}, lr {cfg['lr']}, "
                       f"embedding lr {cfg['embedding_lr']}, batch {cfg['batch_size']}; {c['train_seconds']:.0f} s, "
                       f"load {c['load_average']:.1f}, {c['threads']} thread), {c['normal']['test_texts']} test texts "
                       f"(all) for the IBP columns and the first {c['test_examples']} for the CROWN / attack columns; "
                       f"substitution sets: {c['sets']}, at most {c['substitutes']} per word, "
                       f"{c['table_words']} words with substitutes, {_p(c['test_words_with_substitutes'])} of the "
                       f"test words.")
    header = (RESULTS / "msr_header.md").read_text() if (RESULTS / "msr_header.md").exists() else ""
    footer = (RESULTS / "msr_footer.md").read_text() if (RESULTS / "msr_footer.md").exists() else ""
    (RESULTS / "msr.md").write_text(header + "\n".join(out) + "\n" + ("\n" + footer if footer else ""))
    print(RESULTS / "msr.md")


def _test_accuracy(victim: str) -> float | None:
    folder = Path.home() / ".cache/textrobust/victims/default" if victim.startswith("cnn_rt (default)") \
        else Path("/tmp/msr_victims") / victim
    card = folder / "card.json"
    return json.loads(card.read_text()).get("test_accuracy") if card.is_file() else None


def _f(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _g(value: Any) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def _p(value: Any) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}%"


if __name__ == "__main__":
    main()
