"""Train the judge learned from people (issue 46) on SWORDS dev's tuning part (+ CoInCo).

Reads the rows of ``people_rows.py`` (every proposal of
:class:`~textrobust.attack.candidates.people.PeopleSubstitutes` and every substitute people
judged, with the first stage's features). Labels: a SWORDS row judged by people is positive
when acceptable (more than half said yes); unjudged SWORDS rows have no label and are not
trained on. A CoInCo row is positive when at least ``--coinco-min`` readers wrote it, and a
weak negative otherwise (weight ``--coinco-neg-weight``: CoInCo misses most acceptable
substitutes, so "not written" is only weak evidence).

Everything here is chosen by 5-fold cross-validation **grouped by context** on the tuning
part only; the held-out third of SWORDS dev is scored once, at the end, with the settings
chosen on tune (``--final``), by ``swords.py score people --part held_out``.

Steps:
  ``first``   cross-validate the first stage (AUC, and the end-to-end SWORDS figures on tune
              from out-of-fold scores at each threshold), then fit it on all tuning rows;
  ``second``  compute the second stage's features for each tuning target's ``stage_two``
              best proposals (by out-of-fold first-stage score) and its judged rows, cross-
              validate, calibrate out of fold (isotonic, bootstrap refits), pick the threshold
              and ship ``resources/substitutions/people_judge.json``.

Rerun: ``.venv/bin/python benchmarks/validity/tune_people.py --rows /work/labelwork/people/rows.jsonl``
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.validity.people_judge import FEATURES_ONE, FEATURES_TWO
from textrobust.validity.swords import SwordsTarget, load_swords, score, swords_part, wordnet_lemmatizer

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "swords"
ROOT = Path(__file__).resolve().parents[2]


def load_rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def label_and_weight(row: dict[str, Any], coinco_min: int, neg_weight: float) -> tuple[int, float] | None:
    if row["set"] == "swords":
        yes, no = row["yes"], row["no"]
        if yes + no == 0:
            return None
        return int(yes / (yes + no) > 0.5), 1.0
    if row["written"] >= coinco_min:
        return 1, 1.0
    return 0, neg_weight


def matrix(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> np.ndarray:
    return np.asarray([[r["features"].get(n, 0.0) for n in names] for r in rows], dtype=float)


def model(**kw: Any) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    params = {"max_iter": 300, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40,
              "l2_regularization": 1.0, "random_state": 0}
    params.update(kw)
    return HistGradientBoostingClassifier(**params)


def folds(groups: Sequence[str], k: int = 5) -> np.ndarray:
    """Fold of each row: by a hash of its group (context), so no context is split."""
    import hashlib

    return np.asarray([hashlib.sha256(("fold" + g).encode()).digest()[0] % k for g in groups])


def proposed(row: dict[str, Any], min_zipf: float) -> bool:
    """Would the source propose this row and let it past the cheap filters?"""
    f = row["features"]
    return bool(row["routes"]) and f["slot_fits"] == 1.0 and f["antonym"] == 0.0 and f["zipf"] >= min_zipf


def end_to_end(targets: Sequence[SwordsTarget], rows: Sequence[dict[str, Any]], scores: np.ndarray,
               threshold: float, lemma: Any, min_zipf: float, max_candidates: int = 10,
               keep: np.ndarray | None = None) -> dict[str, float]:
    """SWORDS figures of the source that keeps proposals scoring >= threshold."""
    by_target: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for i, row in enumerate(rows):
        if row["set"] != "swords" or not proposed(row, min_zipf) or scores[i] < threshold:
            continue
        if keep is not None and not keep[i]:
            continue
        by_target[row["target"]].append((float(scores[i]), row["form"]))
    proposals = {t: [f for _, f in sorted(v, key=lambda x: -x[0])[:max_candidates]] for t, v in by_target.items()}
    return score(targets, proposals, lemmatizer=lemma).as_dict()


def auc(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p)) if len(set(y)) > 1 else float("nan")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=Path, required=True)
    parser.add_argument("--swords", type=Path, default=SHARED / "swords-v1.1_dev.json.gz")
    parser.add_argument("--coinco-min", type=int, default=1)
    parser.add_argument("--coinco-neg-weight", type=float, default=0.3)
    parser.add_argument("--no-coinco", action="store_true")
    parser.add_argument("--min-zipf", type=float, default=2.0)
    parser.add_argument("--out", type=Path, default=None, help="write the CV report as JSON here")
    parser.add_argument("--stage2", type=Path, default=None, help="second-stage rows (made here when missing)")
    parser.add_argument("--stage2-top", type=int, default=24)
    parser.add_argument("--stage-two", type=int, default=8)
    args = parser.parse_args(argv)
    lemma = wordnet_lemmatizer()
    targets = [t for t in load_swords(args.swords) if swords_part(t.context_id) == "tune"]
    rows = [r for r in load_rows(args.rows) if r["part"] == "tune" and (r["set"] == "swords" or not args.no_coinco)]
    labelled = []
    for r in rows:
        lw = label_and_weight(r, args.coinco_min, args.coinco_neg_weight)
        if lw is not None:
            labelled.append((r, *lw))
    train_rows = [r for r, _, _ in labelled]
    y = np.asarray([lab for _, lab, _ in labelled])
    w = np.asarray([wt for _, _, wt in labelled])
    x = matrix(train_rows, FEATURES_ONE)
    fold = folds([r["group"] for r in train_rows])
    x_all = matrix(rows, FEATURES_ONE)
    fold_all = folds([r["group"] for r in rows])
    oof = np.zeros(len(rows))
    swords_mask = np.asarray([r["set"] == "swords" for r in train_rows])
    oof_l = np.zeros(len(train_rows))
    for k in range(5):
        m = model().fit(x[fold != k], y[fold != k], sample_weight=w[fold != k])
        oof[fold_all == k] = m.predict_proba(x_all[fold_all == k])[:, 1]
        oof_l[fold == k] = m.predict_proba(x[fold == k])[:, 1]
    print(f"first stage: {len(train_rows)} labelled rows ({int(swords_mask.sum())} SWORDS, {int(y.sum())} positive);"
          f" out-of-fold AUC on SWORDS rows {auc(y[swords_mask], oof_l[swords_mask]):.3f}")
    report: dict[str, Any] = {"first_auc": auc(y[swords_mask], oof_l[swords_mask]), "thresholds": {}}
    for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        d = end_to_end(targets, rows, oof, t, lemma, args.min_zipf)
        report["thresholds"][t] = d
        print(f"  >= {t:.2f}: per target {d['per_target']:.2f}, lenient P {d['lenient_precision']:.1%}, "
              f"recall {d['recall']:.1%}, first {d['first_proposal_acceptable']:.1%}, "
              f"F@10 lenient {100 * d['f10_lenient_acceptable']:.1f}", flush=True)
    if args.stage2:
        second_stage(args, targets, rows, oof, lemma, report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=float))
    return 0


def stage2_rows(path: Path, targets: Sequence[SwordsTarget], rows: Sequence[dict[str, Any]], oof: np.ndarray,
                top: int) -> list[dict[str, Any]]:
    """The second stage's rows of each tuning target: its ``top`` rows by out-of-fold first
    stage score (proposals or judged), with both stages' features (cached in ``path``)."""
    if path.exists():
        return load_rows(path)
    import torch

    from textrobust.attack.candidates.people import PeopleSubstitutes

    torch.set_num_threads(1)
    source = PeopleSubstitutes(verdict_cache=False, judge=_NoJudge())
    by_target: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r["set"] == "swords":
            by_target[r["target"]].append(i)
    out = []
    with path.open("w", encoding="utf-8") as handle:
        for n, target in enumerate(targets, 1):
            idx = sorted(by_target.get(target.id, []), key=lambda i: -oof[i])[:top]
            if not idx:
                continue
            text, position = target.in_sentence()
            verdicts = source.judge_pairs(text, [(position, rows[i]["form"]) for i in idx])
            for i, v in zip(idx, verdicts):
                row = {**rows[i], "features": {**rows[i]["features"], **{k: v.features[k] for k in FEATURES_TWO
                                                                         if k not in FEATURES_ONE}},
                       "first_oof": float(oof[i])}
                out.append(row)
                handle.write(json.dumps(row) + "\n")
            if n % 50 == 0:
                print(f"  second-stage features: {n}/{len(targets)} targets", flush=True)
    return out


def second_stage(args: Any, targets: Sequence[SwordsTarget], rows: Sequence[dict[str, Any]], oof: np.ndarray,
                 lemma: Any, report: dict[str, Any]) -> None:
    rows2 = stage2_rows(args.stage2, targets, rows, oof, args.stage2_top)
    lab = [(r, *label_and_weight(r, 1, 1.0)) for r in rows2 if label_and_weight(r, 1, 1.0) is not None]  # type: ignore[misc]
    tr = [r for r, _, _ in lab]
    y = np.asarray([v for _, v, _ in lab])
    x = matrix(tr, FEATURES_TWO)
    fold = folds([r["group"] for r in tr])
    x_all = matrix(rows2, FEATURES_TWO)
    fold_all = folds([r["group"] for r in rows2])
    oof2 = np.zeros(len(rows2))
    oof2_l = np.zeros(len(tr))
    for k in range(5):
        m = model().fit(x[fold != k], y[fold != k])
        oof2[fold_all == k] = m.predict_proba(x_all[fold_all == k])[:, 1]
        oof2_l[fold == k] = m.predict_proba(x[fold == k])[:, 1]
    print(f"second stage: {len(tr)} labelled rows ({int(y.sum())} positive); out-of-fold AUC {auc(y, oof2_l):.3f} "
          f"(first stage on the same rows {auc(y, np.asarray([r['first_oof'] for r in tr])):.3f})")
    # end to end: the stage_two best proposals by the first stage, then the second's score
    first = np.asarray([r["first_oof"] for r in rows2])
    by_target: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows2):
        if proposed(r, args.min_zipf):
            by_target[r["target"]].append(i)
    keep = np.zeros(len(rows2), dtype=bool)
    for idx in by_target.values():
        for i in sorted(idx, key=lambda i: -first[i])[: args.stage_two]:
            keep[i] = True
    report["second_auc"] = auc(y, oof2_l)
    report["second_thresholds"] = {}
    for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        d = end_to_end(targets, rows2, oof2, t, lemma, args.min_zipf, keep=keep)
        report["second_thresholds"][t] = d
        print(f"  >= {t:.2f}: per target {d['per_target']:.2f}, lenient P {d['lenient_precision']:.1%}, "
              f"recall {d['recall']:.1%}, first {d['first_proposal_acceptable']:.1%}, "
              f"F@10 lenient {100 * d['f10_lenient_acceptable']:.1f}", flush=True)


class _NoJudge:
    version = "none"

    def first(self, rows: Any) -> Any:
        return np.full(len(rows), 0.5)

    def probability(self, rows: Any) -> Any:
        return self.first(rows)


if __name__ == "__main__":
    sys.exit(main())
