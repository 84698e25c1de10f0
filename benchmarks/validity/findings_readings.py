"""Attack findings read by two readers each, against their probabilities (issue 47, item 5).

Six steps, each a subcommand (``--work``: the folder outside the repository that holds the
runs, the findings, the reader chunks and the labels; default /work/labelwork/findings47)::

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/validity/findings_readings.py generate \\
        --victim cnn=default --victim minilm=/work/labelwork/so48/minilm --setting 0.2=75 --setting 0.5 \\
        --target 45 --max-batch 100 --stop-at 16:35 --final
    PYTHONPATH=src .venv/bin/python benchmarks/validity/findings_readings.py chunks --final
    PYTHONPATH=src .venv/bin/python benchmarks/validity/findings_readings.py merge
    PYTHONPATH=src .venv/bin/python benchmarks/validity/findings_readings.py measure \\
        --append benchmarks/results/validity.md
    PYTHONPATH=src .venv/bin/python benchmarks/validity/findings_readings.py export
    PYTHONPATH=src .venv/bin/python benchmarks/validity/findings_readings.py ship

**generate**: the default attack (``textrobust attack``, textfooler, the validated source, no
query budget, quality off) at each ``--setting`` of ``min_validity`` on each victim and corpus
(a *cell*), over TEST-split sentences (``attack_runs.py`` draws them; never the dev sentences
``min_validity.py`` tunes on), round after round until a cell has ``--target`` findings
(``--setting 0.2=75``: that setting's own target), or after ``--max-rounds`` rounds, or at
``--stop-at``. A cell's first run takes ``--batch`` sentences, a later one as many as its
yield so far says its missing findings need (at most ``--max-batch``); a cell's runs take
consecutive sentences of one seeded shuffle of the pool, so every cell starts from the same
sentences. Every flip is re-judged by the current judge and appended to ``findings.jsonl``
(victim, corpus, setting, example id, original, changed, swaps, probability, draws); every
run's attacked count to ``runs.jsonl``. Resumable: a run already in ``runs.jsonl`` is not
redone. After each run the new findings are cut into chunks (``chunks``).

**chunks**: every finding not yet in a chunk, blinded: one *item* per distinct (original,
changed) pair (two cells that found the same flip share its reading), an opaque id, the
columns ``item``, ``original``, ``changed`` (changed words marked ``[[like this]]``), nothing
else. Items are cut into chunks of ~``--size``, each written twice with its own shuffle,
``chunk_NN.tsv`` and ``second_NN.tsv``, for two different readers; ``key.json`` maps items to
findings; ``READY`` lists the chunks written so far. A remainder under ``--size`` waits for
more findings unless ``--final``.

**merge**: the readers' ``labels_chunk_NN.tsv`` and ``labels_second_NN.tsv`` joined by item:
a finding is valid when both readers say valid; agreement and Cohen's kappa;
``merged.tsv``.

**measure**: with the judge current now (every finding re-judged, its swaps multiplied), for
two ways of combining swaps, the shipped measured combination
(:mod:`textrobust.validity.combination`, **cross-fitted**: 5 folds by sentence, each item's
probability from a map fitted on the other folds) and the independent product: the
reliability table against the merged readings (10 equal-width bins), its expected calibration
error, the Brier score, and per victim, per corpus and per cell whether the readers' valid
success rate (findings both readers call valid / examples attacked) falls inside the 95%
interval of the expected valid success rate (:func:`textrobust.validity.estimate.estimate`
over the same findings and attacked count). ``--append FILE`` appends the section to FILE.

**ship**: fits the measured combination on every read item and writes the shipped
``src/textrobust/resources/findings/combination.json`` (rerun when the judge changes: a
combination fitted on another judge is not used).

**export**: the merged readings as the package's third labelled set,
``src/textrobust/resources/findings/labelled.tsv`` (:mod:`textrobust.validity.findings`
loads it): one row per item, the rule and the readers in its header.
"""

from __future__ import annotations

import argparse
import dataclasses
import csv
import hashlib
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from attack_runs import CORPORA, SHORT, attack, draw, flips  # noqa: E402

WORK = Path(os.environ.get("FINDINGS47", "/work/labelwork/findings47"))
CHUNK_COLUMNS = ("item", "original", "changed")
LABEL_COLUMNS = ("item", "label", "reason", "note")
REASONS = ("same", "antonym", "sentiment", "sense", "related", "grammar", "name", "nonsense")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_findings(work: Path) -> list[dict[str, Any]]:
    """``findings.jsonl``, each finding once (a run redone after a crash appends it again)."""
    out: dict[str, dict[str, Any]] = {}
    for f in _jsonl(work / "findings.jsonl"):
        out.setdefault(finding_key(f), f)
    return list(out.values())


def _append(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with path.open("a") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


# ---- generate -------------------------------------------------------------------------------------
def cell_name(victim: str, corpus: str, setting: float) -> str:
    return f"{victim}_{SHORT[corpus]}_{setting:.1f}"


def generate(args: argparse.Namespace) -> None:
    work: Path = args.work
    (work / "runs").mkdir(parents=True, exist_ok=True)
    (work / "data").mkdir(parents=True, exist_ok=True)
    victims = [spec.partition("=")[::2] for spec in args.victim]
    settings = [(float(spec.partition("=")[0]), int(spec.partition("=")[2] or args.target)) for spec in args.setting]
    targets = {}
    cells = []
    for setting, target in settings:  # in the order given: the first setting's cells run first in a round
        for name, path in victims:
            for corpus in args.corpus:
                cells.append((name, path, corpus, setting))
                targets[cell_name(name, corpus, setting)] = target
    for batch in range(args.max_rounds):
        found = load_findings(work)
        needed = [c for c in cells if sum(1 for f in found if f["cell"] == cell_name(c[0], c[2], c[3]))
                  < targets[cell_name(c[0], c[2], c[3])]]
        if not needed:
            break
        for name, victim, corpus, setting in needed:
            cell = cell_name(name, corpus, setting)
            if args.stop_at and time.strftime("%H:%M", time.gmtime()) >= args.stop_at:
                print(f"{args.stop_at} UTC reached: no new run", flush=True)
                make_chunks(work, args.size, final=args.final)
                return
            if any(r["cell"] == cell and r["batch"] == batch for r in _jsonl(work / "runs.jsonl")):
                continue
            mine = [r for r in _jsonl(work / "runs.jsonl") if r["cell"] == cell]
            used = sum(r["examples"] for r in mine)
            size = args.batch
            if mine:  # enough sentences for the findings still missing, at the cell's yield so far
                have = sum(1 for f in found if f["cell"] == cell)
                rate = max(have / max(used, 1), 0.04)
                size = int(min(args.max_batch, max(20, math.ceil((targets[cell] - have) / rate * 1.1))))
            data = work / "data" / f"{cell}_b{batch:02d}.jsonl"
            if not data.exists():
                draw(corpus, "test", size, data, skip=used)
            out = work / "runs" / f"{cell}_b{batch:02d}"
            started = time.perf_counter()
            summary = attack(victim, data, setting, out, log=work / "runs.log", resume=True)
            attacked, flipped = flips(out)
            block = summary["analyses"]["attack"]["summary"]
            _append(work / "findings.jsonl", [
                {"cell": cell, "victim": name, "victim_path": victim, "corpus": corpus, "min_validity": setting,
                 "batch": batch, **f} for f in flipped])
            row = {"cell": cell, "victim": name, "corpus": corpus, "min_validity": setting, "batch": batch,
                   "skip": used, "examples": block["examples"], "attacked": attacked, "flips": len(flipped),
                   "queries_per_example": block["queries_per_example"],
                   "seconds_per_example": block["seconds_per_example"],
                   "wall_seconds": round(time.perf_counter() - started, 1)}
            _append(work / "runs.jsonl", [row])
            print(json.dumps(row), flush=True)
            make_chunks(work, args.size, final=False)
    make_chunks(work, args.size, final=args.final)


# ---- chunks ----------------------------------------------------------------------------------------
def mark(original: str, changed: str) -> str:
    """``changed`` with each word that differs from ``original`` wrapped in [[ ]] (runs of
    adjacent changed words are marked one by one)."""
    from textrobust.text import Text

    before, after = Text.from_string(original), Text.from_string(changed)
    positions = set(before.diff(after))
    out, last = [], 0
    for index, (_, start, end) in enumerate(after.word_spans()):
        if index in positions:
            out.append(changed[last:start] + "[[" + changed[start:end] + "]]")
            last = end
    return "".join(out) + changed[last:]


def finding_key(f: dict[str, Any]) -> str:
    return f"{f['cell']}/{f['example_id']}"


def item_of(original: str, changed: str) -> str:
    return "f" + hashlib.sha1(f"issue47|{original}|{changed}".encode()).hexdigest()[:9]


def make_chunks(work: Path, size: int, *, final: bool) -> list[str]:
    """Cut the findings not yet chunked into blinded chunks (module docstring)."""
    key_path = work / "key.json"
    key: dict[str, Any] = json.loads(key_path.read_text()) if key_path.exists() else {}
    chunked_items = {item for item, entry in key.items() if entry.get("chunk")}
    new: dict[str, dict[str, Any]] = {}
    for f in load_findings(work):
        item = item_of(f["original"], f["changed"])
        entry = key.setdefault(item, {"original": f["original"], "changed": f["changed"], "findings": [],
                                      "chunk": None})
        if finding_key(f) not in entry["findings"]:
            entry["findings"].append(finding_key(f))
        if item not in chunked_items:
            new[item] = entry
    written = []
    items = sorted(new)
    random.Random(f"issue47-chunks-{len(chunked_items)}").shuffle(items)
    number = 1 + max([int(e["chunk"]) for e in key.values() if e.get("chunk")] or [0])
    while len(items) >= size or (final and items):
        take = items[:size] if len(items) >= 2 * size or not final else items
        items = items[len(take):]
        rows = [{"item": i, "original": key[i]["original"], "changed": mark(key[i]["original"], key[i]["changed"])}
                for i in take]
        rng = random.Random(f"issue47-chunk-{number}")
        first, second = rows[:], rows[:]
        rng.shuffle(first)
        rng.shuffle(second)
        _write_chunk(work / f"chunk_{number:02d}.tsv", first)
        _write_chunk(work / f"second_{number:02d}.tsv", second)
        for i in take:
            key[i]["chunk"] = f"{number:02d}"
        written.append(f"{number:02d}")
        number += 1
    key_path.write_text(json.dumps(key, indent=1))
    if written:
        chunks = sorted({e["chunk"] for e in key.values() if e.get("chunk")})
        lines = [f"chunk_{c}.tsv second_{c}.tsv ({sum(1 for e in key.values() if e.get('chunk') == c)} items)"
                 for c in chunks]
        (work / "READY").write_text(
            "Chunks ready for readers (each chunk_NN and its second_NN go to two DIFFERENT readers; "
            "instructions: INSTRUCTIONS.md; output labels_<chunk>.tsv beside them):\n" + "\n".join(lines) + "\n")
        print("chunks written:", ", ".join(written), flush=True)
    return written


def _write_chunk(path: Path, rows: list[dict[str, str]]) -> None:
    lines = ["\t".join(CHUNK_COLUMNS)] + ["\t".join(" ".join(r[k].split()) for k in CHUNK_COLUMNS) for r in rows]
    path.write_text("\n".join(lines) + "\n")


def chunks(args: argparse.Namespace) -> None:
    make_chunks(args.work, args.size, final=args.final)


# ---- merge -------------------------------------------------------------------------------------------
def read_labels(path: Path) -> dict[str, dict[str, str]]:
    """A reader's label file: item -> {label, reason, note}; a bad row is dropped with a message."""
    out: dict[str, dict[str, str]] = {}
    with path.open(newline="") as f:
        for raw in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            row = {k: (raw.get(k) or "").strip() for k in LABEL_COLUMNS}
            row["reason"] = row["reason"].lower()
            if row["label"] not in ("0", "1") or row["reason"] not in REASONS or not row["item"]:
                print(f"{path.name}: dropped a bad row {raw}")
                continue
            out[row["item"]] = row
    return out


def kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's kappa of two raters' 0/1 labels of the same items."""
    n = len(a)
    if not n:
        return math.nan
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return math.nan if expected == 1 else (observed - expected) / (1 - expected)


def merge(args: argparse.Namespace) -> dict[str, Any]:
    """Both readings of each item -> merged.tsv; agreement and kappa."""
    work: Path = args.work
    key = json.loads((work / "key.json").read_text())
    first: dict[str, dict[str, str]] = {}
    second: dict[str, dict[str, str]] = {}
    for path in sorted(work.glob("labels_chunk_*.tsv")):
        first.update(read_labels(path))
    for path in sorted(work.glob("labels_second_*.tsv")):
        second.update(read_labels(path))
    rows = []
    for item in sorted(set(first) & set(second)):
        if item not in key:
            print(f"item {item} is not in key.json; skipped")
            continue
        a, b = first[item], second[item]
        valid = int(a["label"] == "1" and b["label"] == "1")
        reason = "same" if valid else (a["reason"] if a["label"] == "0" else b["reason"])
        rows.append({"item": item, "original": key[item]["original"], "changed": key[item]["changed"],
                     "label": valid, "reason": reason, "first": a["label"], "second": b["label"],
                     "first_reason": a["reason"], "second_reason": b["reason"],
                     "findings": ",".join(key[item]["findings"]),
                     "note": " | ".join(n for n in (a["note"], b["note"]) if n)})
    with (work / "merged.tsv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["item"], delimiter="\t",
                                lineterminator="\n", quoting=csv.QUOTE_NONE, escapechar="\\")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: " ".join(str(v).replace("\t", " ").split()) for k, v in r.items()})
    a = [int(r["first"]) for r in rows]
    b = [int(r["second"]) for r in rows]
    stats = {"items": len(rows), "read once only": len(set(first) ^ set(second)),
             "agreement": sum(x == y for x, y in zip(a, b)) / len(rows) if rows else math.nan,
             "kappa": kappa(a, b), "valid by both": sum(r["label"] for r in rows),
             "valid by one": sum(x != y for x, y in zip(a, b)), "first valid": sum(a), "second valid": sum(b)}
    print(json.dumps(stats, indent=1))
    return stats


# ---- measure -----------------------------------------------------------------------------------------
def judge_sha() -> str:
    """The first 12 hex digits of the shipped judge file's sha1 (which judge measured)."""
    path = Path(__file__).resolve().parents[2] / "src" / "textrobust" / "resources" / "substitutions" / "people_judge.json"
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


def judge_items(work: Path, key: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every item re-judged by the current judge, kept in ``judged_<judge sha1>.json`` (a
    judge's verdicts on an item never change, so a rerun reads them back)."""
    from attack_runs import rejudge

    path = work / f"judged_{judge_sha()}.json"
    judged: dict[str, dict[str, Any]] = json.loads(path.read_text()) if path.exists() else {}
    for n, (item, entry) in enumerate(key.items()):
        if item not in judged:
            judged[item] = rejudge(entry["original"], entry["changed"])
            if n % 50 == 0:
                path.write_text(json.dumps(judged))
    path.write_text(json.dumps(judged))
    return judged


def judge_items_step(args: argparse.Namespace) -> None:
    judged = judge_items(args.work, json.loads((args.work / "key.json").read_text()))
    print(f"{len(judged)} items judged by {judge_sha()}")


FOLDS = 5


def sentence_fold(original: str, folds: int = FOLDS) -> int:
    """A finding's cross-fitting fold, by its sentence (every finding of one sentence, from
    any victim or setting, falls in one fold)."""
    return int(hashlib.sha1(original.encode()).hexdigest(), 16) % folds


def _product(entry: dict[str, Any]) -> tuple[float, np.ndarray]:
    """An item's independent product (the point) and its per-draw products, from the judged
    swaps (the cache holds them combined independently)."""
    return float(entry["probability"]), np.asarray(entry["draws"], dtype=float)


def cross_fitted(judged: dict[str, dict[str, Any]], labels: dict[str, int], key: dict[str, Any],
                 *, bootstrap: int = 200) -> dict[str, tuple[float, np.ndarray]]:
    """Every item's measured-combination probability and per-draw values from a combination
    fitted on the OTHER folds' sentences (out of fold): what the shipped combination would
    say of findings it never saw."""
    from textrobust.validity.combination import MeasuredCombination

    items = sorted(judged)
    fold = {i: sentence_fold(key[i]["original"]) for i in items}
    out: dict[str, tuple[float, np.ndarray]] = {}
    for f in range(FOLDS):
        train = [i for i in items if fold[i] != f]
        fitted = MeasuredCombination.fit([judged[i]["probability"] for i in train], [labels[i] for i in train],
                                         judge=judge_sha(), bootstrap=bootstrap, seed=f)
        for i in items:
            if fold[i] == f:
                point, draws = _product(judged[i])
                out[i] = (float(fitted.calibration.probability([point])[0]),
                          fitted.per_draw(draws.reshape(-1, 1)))
    return out


def evaluate(probabilities: dict[str, tuple[float, np.ndarray]], labels: dict[str, int], key: dict[str, Any],
             findings: list[dict[str, Any]], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The reliability table and ECE of ``probabilities`` against the readings, and per victim,
    corpus and cell whether the readers' valid success rate falls inside the 95% interval."""
    from textrobust.validity.calibration import expected_calibration_error, reliability_table
    from textrobust.validity.estimate import Unit, estimate

    items = sorted(probabilities)
    points = [probabilities[i][0] for i in items]
    outcomes = [labels[i] for i in items]
    item_by_finding = {fk: item for item, entry in key.items() for fk in entry["findings"]}
    # a run counts only when every one of its findings has both readings (its attacked count
    # and its findings then match); runs with a finding still unread are left out
    unread_runs = {(f["cell"], f["batch"]) for f in findings
                   if item_by_finding.get(finding_key(f)) not in probabilities}

    def check(select: Any) -> dict[str, Any]:
        cell_runs = [r for r in runs if select(r) and (r["cell"], r["batch"]) not in unread_runs]
        attacked = sum(r["attacked"] for r in cell_runs)
        units, valid = [], 0
        cells_batches = {(r["cell"], r["batch"]) for r in cell_runs}
        for f in findings:
            if (f["cell"], f["batch"]) not in cells_batches:
                continue
            item = item_by_finding[finding_key(f)]
            point, draws = probabilities[item]
            units.append(Unit(finding_key(f), f"{f['cell']}/{f['example_id']}", point,
                              tuple(float(v) for v in draws)))
            valid += labels[item]
        found = estimate(units, attacked) if attacked else None
        rate = valid / attacked if attacked else math.nan
        inside = found is not None and found.low - 1e-12 <= rate <= found.high + 1e-12
        return {"attacked": attacked, "findings": len(units), "valid": valid, "rate": rate,
                "point": found.point if found else math.nan, "low": found.low if found else math.nan,
                "high": found.high if found else math.nan, "inside": inside}

    return {
        "table": reliability_table(points, outcomes, bins=10),
        "ece": expected_calibration_error(points, outcomes, bins=10),
        "brier": float(np.mean((np.asarray(points) - np.asarray(outcomes)) ** 2)),
        "victims": {v: check(lambda r, v=v: r["victim"] == v) for v in dict.fromkeys(r["victim"] for r in runs)},
        "corpora": {c: check(lambda r, c=c: r["corpus"] == c) for c in dict.fromkeys(r["corpus"] for r in runs)},
        "cells": {c: check(lambda r, c=c: r["cell"] == c) for c in dict.fromkeys(r["cell"] for r in runs)},
        "runs": (len(runs) - len(unread_runs), len(runs)),
    }


def _read(work: Path, args: argparse.Namespace) -> tuple[Any, ...]:
    stats = merge(args)
    merged = {r["item"]: r for r in csv.DictReader((work / "merged.tsv").open(newline=""), delimiter="\t",
                                                   quoting=csv.QUOTE_NONE, escapechar="\\")}
    key = json.loads((work / "key.json").read_text())
    judged = {item: j for item, j in judge_items(work, key).items() if item in merged}
    labels = {i: int(merged[i]["label"]) for i in judged}
    return stats, key, judged, labels


def _rates_table(found: dict[str, Any]) -> list[str]:
    lines = ["| group | attacked | findings | valid by readers | readers' rate | expected rate | 95% interval "
             "| inside |", "|---|---:|---:|---:|---:|---:|---|---|"]
    for label, group in (("victim", found["victims"]), ("corpus", found["corpora"]), ("cell", found["cells"])):
        for name, c in group.items():
            lines.append(f"| {label} {name} | {c['attacked']} | {c['findings']} | {c['valid']} | {c['rate']:.1%} | "
                         f"{c['point']:.1%} | {c['low']:.1%} .. {c['high']:.1%} | {'yes' if c['inside'] else 'no'} |")
    return lines


def measure(args: argparse.Namespace) -> str:
    """The section of validity.md: the shipped way of combining (the measured combination,
    cross-fitted by sentence) and the independent product beside it."""
    from textrobust.validity.calibration import format_table

    work: Path = args.work
    stats, key, judged, labels = _read(work, args)
    findings = load_findings(work)
    runs = _jsonl(work / "runs.jsonl")
    independent = {i: _product(j) for i, j in judged.items()}
    measured = cross_fitted(judged, labels, key)
    found = {"independent": evaluate(independent, labels, key, findings, runs),
             "measured": evaluate(measured, labels, key, findings, runs)}
    ship = found["measured"]
    inside = sum(1 for v in ship["victims"].values() if v["inside"])
    settings = ", ".join(sorted({f"{r['min_validity']:.1f}" for r in runs}))
    entered, all_runs = ship["runs"]
    lines = ["", "## Attack findings read by people-like readers (issue 47, item 5)", "",
             f"{len(findings)} successful attack findings (adversarial examples) of the default attack (textfooler, "
             "validated source, no query budget) on TEST-split sentences of Rotten Tomatoes and tweets "
             f"(non-neutral), victims {', '.join(found['measured']['victims'])}, at min_validity "
             f"{settings}: {len(judged)} distinct (original, changed) items, {sum(labels.values())} read valid, each "
             "read blind by two different LLM reader agents under the labelled set's rule adapted to whole "
             "findings (valid = means the same, grammatical, same sentiment and strength, every swap acceptable). "
             f"A finding is valid when both readers say valid. Agreement {stats['agreement']:.1%}, Cohen's kappa "
             f"{stats['kappa']:.2f}; {stats['valid by one']} items one reader called valid count as invalid. Swap "
             f"probabilities from the judge current when measured (people_judge.json sha1 {judge_sha()}). "
             "**How swaps combine** (textrobust.validity.combination): the shipped way is the *measured "
             "combination*, a monotone (Platt) map of the product of the swaps' probabilities fitted on these "
             f"readings; its figures below are **cross-fitted**: {FOLDS} folds by sentence, each item's "
             "probability from a map fitted on the other folds' sentences, each draw through a bootstrap refit "
             "of that map. The independent product (the default before) is beside it. Rerun: "
             f"benchmarks/validity/findings_readings.py measure. {entered} of {all_runs} attack runs enter the "
             "success-rate tables (a run enters when every finding it made has both readings, so its attacked "
             "count and its findings match).", "",
             f"finding probability calibration error: {ship['ece']:.3f}",
             f"reader valid success rate inside the interval: {inside} of {len(ship['victims'])} victims", "",
             "| how swaps combine | calibration error (10 bins) | Brier score | victims inside the interval |",
             "|---|---:|---:|---:|"]
    for name, what in (("measured", "measured combination, cross-fitted (shipped)"),
                       ("independent", "independent product (before)")):
        f = found[name]
        lines.append(f"| {what} | {f['ece']:.3f} | {f['brier']:.4f} | "
                     f"{sum(1 for v in f['victims'].values() if v['inside'])} of {len(f['victims'])} |")
    for name, what in (("measured", "Measured combination, cross-fitted"), ("independent", "Independent product")):
        lines += ["", f"{what}: reliability of the findings' probabilities against the readings:", "",
                  format_table(found[name]["table"]), "",
                  f"{what}: readers' valid success rate (findings both read valid / examples attacked) against "
                  "the expected valid success rate and its 95% interval (textrobust.validity.estimate) over the "
                  "same findings:", ""]
        lines += _rates_table(found[name])
    text = "\n".join(lines) + "\n"
    (work / "measure.json").write_text(json.dumps(
        {name: {**{k: v for k, v in f.items() if k != "table"}, "table": [dataclasses.asdict(r) for r in f["table"]]}
         for name, f in found.items()} | {"merge": stats}, indent=1, default=str))
    print(text)
    if args.append:
        with args.append.open("a") as f:
            f.write(text)
    return text


def ship(args: argparse.Namespace) -> None:
    """Fit the measured combination on every read item and write the shipped file."""
    from textrobust.validity.combination import MeasuredCombination, default_combination_path

    work: Path = args.work
    stats, key, judged, labels = _read(work, args)
    items = sorted(judged)
    record = {"fitted_on": "the third labelled set (resources/findings/labelled.tsv): attack findings of the "
                           "default attack read by two LLM reader agents each",
              "items": len(items), "valid": int(sum(labels[i] for i in items)),
              "kappa": round(float(stats["kappa"]), 3), "date": time.strftime("%Y-%m-%d", time.gmtime()),
              "refit": "benchmarks/validity/findings_readings.py ship"}
    fitted = MeasuredCombination.fit([judged[i]["probability"] for i in items], [labels[i] for i in items],
                                     judge=judge_sha(), record=record)
    fitted.save(default_combination_path())
    grid = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    print(f"{len(items)} items -> {default_combination_path()}")
    print("product -> probability: " + ", ".join(f"{g}: {float(fitted.calibration.probability([g])[0]):.3f}"
                                                  for g in grid))


# ---- export ------------------------------------------------------------------------------------------
LABELLED = Path(__file__).resolve().parents[2] / "src" / "textrobust" / "resources" / "findings" / "labelled.tsv"
HEADER = """\
# # Labelled attack findings (textrobust, issue 47, item 5)
#
# Each row: one distinct finding of the default first-order attack (textfooler over the
# validated source, no query budget) that flipped a victim (found_by: victim@min_validity,
# victims: cnn = the default word CNN, minilm = a MiniLM fine-tuned on Rotten Tomatoes) on a
# TEST-split sentence of Rotten Tomatoes or tweets (non-neutral tweets), and the text the
# attack changed it into. swaps: position:word>substitute (word positions as
# textrobust.text.Text splits the sentence). probability: the judge's probability that the
# finding keeps the meaning (swap_validity.finding_validity, swaps independent) with the
# judge of {judge} (people_judge.json sha1 {sha}).
#
# Read by: LLM reader agents, two different readers per finding, blind (each saw only the
# original and the changed text with the changed words marked; no victim, setting or
# probability), in chunks of about 60, each chunk read by two different readers in its own
# order. first_* / second_*: each reader's label and reason.
#
# The rule (the labelled substitution set's rule, adapted to whole findings):
# valid (label 1): the changed sentence means the same as the original in this context, a
#   careful reader would accept it as a paraphrase, AND it stays grammatical, AND the
#   sentiment and its strength stay the same, AND the topic stays the same, AND this holds
#   for EVERY changed word. Reason: `same`.
# invalid (label 0), with the first reason that applies to the worst word: `antonym`,
#   `sentiment` (sentiment or its strength changes), `sense` (a synonym of another sense),
#   `related` (related but a different meaning), `grammar`, `name` (a proper name changed),
#   `nonsense`. Strict: a noticeable change of meaning is invalid; register or spelling
#   variants that keep meaning and grammar are valid.
# label: 1 when BOTH readers say valid (a disagreement counts as invalid); reason: `same`
# when valid, else the first reader's reason if that reader said invalid, else the second's.
"""


def export(args: argparse.Namespace) -> None:
    """merged.tsv and the findings -> the package's labelled.tsv (one row per item)."""
    import datetime

    work: Path = args.work
    merged = list(csv.DictReader((work / "merged.tsv").open(newline=""), delimiter="\t", quoting=csv.QUOTE_NONE,
                                 escapechar="\\"))
    by_key = {finding_key(f): f for f in load_findings(work)}
    every = judge_items(work, json.loads((work / "key.json").read_text()))
    sha = judge_sha()
    rows = []
    for m in merged:
        found = [by_key[k] for k in m["findings"].split(",") if k in by_key]
        if not found:
            continue
        judged = every[m["item"]]
        swaps = ";".join(f"{s['position']}:{s['word']}>{s['substitute']}" for s in judged["swaps"])
        rows.append({"item": m["item"], "corpus": found[0]["corpus"], "example_id": found[0]["example_id"],
                     "found_by": ",".join(dict.fromkeys(f"{f['victim']}@{f['min_validity']:.1f}" for f in found)),
                     "original": m["original"], "changed": m["changed"], "swaps": swaps,
                     "probability": f"{judged['probability']:.4f}", "first_label": m["first"],
                     "first_reason": m["first_reason"], "second_label": m["second"],
                     "second_reason": m["second_reason"], "label": m["label"], "reason": m["reason"],
                     "note": m["note"]})
    from textrobust.validity.findings import COLUMNS

    LABELLED.parent.mkdir(parents=True, exist_ok=True)
    with LABELLED.open("w", newline="") as f:
        f.write(HEADER.format(judge=datetime.date.today().isoformat(), sha=sha))
        f.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            f.write("\t".join(" ".join(str(r[c]).replace("\t", " ").split()) for c in COLUMNS) + "\n")
    print(f"{len(rows)} findings -> {LABELLED}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=WORK)
    sub = parser.add_subparsers(dest="step", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--victim", action="append", required=True, help="NAME=VICTIM ('default' or a folder)")
    g.add_argument("--setting", action="append", required=True,
                   help="a min_validity, optionally with its cells' own target: 0.2=75")
    g.add_argument("--corpus", nargs="+", default=list(CORPORA))
    g.add_argument("--batch", type=int, default=40, help="test sentences of a cell's first run")
    g.add_argument("--max-batch", type=int, default=120, help="test sentences of a later run, at most")
    g.add_argument("--target", type=int, default=45, help="findings per cell")
    g.add_argument("--max-rounds", type=int, default=8)
    g.add_argument("--size", type=int, default=60, help="items per chunk")
    g.add_argument("--final", action="store_true", help="chunk the remainder at the end")
    g.add_argument("--stop-at", help="HH:MM (UTC): start no run after this time")
    c = sub.add_parser("chunks")
    c.add_argument("--size", type=int, default=60)
    c.add_argument("--final", action="store_true")
    sub.add_parser("merge")
    m = sub.add_parser("measure")
    m.add_argument("--append", type=Path)
    sub.add_parser("export")
    sub.add_parser("ship", help="fit the measured combination on every read item and write the shipped file")
    sub.add_parser("judge", help="re-judge every item with the current judge (cached; measure does it too)")
    args = parser.parse_args()
    {"generate": generate, "chunks": chunks, "merge": merge, "measure": measure, "export": export, "ship": ship,
     "judge": judge_items_step}[args.step](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
