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


#: Weight of every CoInCo row (set by --coinco-weight): CoInCo's rows outnumber SWORDS's 20
#: to 1, and "written by a reader" is not "acceptable to most".
COINCO_WEIGHT = [1.0]


def label_and_weight(row: dict[str, Any], coinco_min: int, neg_weight: float) -> tuple[int, float] | None:
    if row["set"] == "swords":
        yes, no = row["yes"], row["no"]
        if yes + no == 0:
            return None
        return int(yes / (yes + no) > 0.5), 1.0
    if row["written"] >= coinco_min:
        return 1, COINCO_WEIGHT[0]
    return 0, neg_weight * COINCO_WEIGHT[0]


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
    parser.add_argument("--coinco-weight", type=float, default=1.0, help="weight of every CoInCo row")
    parser.add_argument("--min-zipf", type=float, default=2.0)
    parser.add_argument("--out", type=Path, default=None, help="write the CV report as JSON here")
    parser.add_argument("--stage2", type=Path, default=None, help="second-stage rows (made here when missing)")
    parser.add_argument("--stage2-top", type=int, default=24)
    parser.add_argument("--stage-two", type=int, default=8)
    parser.add_argument("--target-precision", type=float, default=0.60)
    parser.add_argument("--require-tag", action="store_true", help="a candidate the tagger reads with another "
                        "part of speech is dropped (a hard check after the second stage)")
    parser.add_argument("--ship", action="store_true", help="fit on all tuning rows and write the shipped judge")
    args = parser.parse_args(argv)
    COINCO_WEIGHT[0] = args.coinco_weight
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
    swords_mask = np.asarray([r["set"] == "swords" for r in train_rows])
    cache = args.rows.with_suffix(f".oof_{'nococo' if args.no_coinco else 'coinco'}_{args.coinco_min}_"
                                  f"{args.coinco_neg_weight}_{args.coinco_weight}.npz")
    if cache.exists() and cache.stat().st_mtime > args.rows.stat().st_mtime:
        stored = np.load(cache)
        oof, oof_l = stored["oof"], stored["oof_l"]
    else:
        oof = np.zeros(len(rows))
        oof_l = np.zeros(len(train_rows))
        for k in range(5):
            m = model().fit(x[fold != k], y[fold != k], sample_weight=w[fold != k])
            oof[fold_all == k] = m.predict_proba(x_all[fold_all == k])[:, 1]
            oof_l[fold == k] = m.predict_proba(x[fold == k])[:, 1]
        np.savez(cache, oof=oof, oof_l=oof_l)
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

    from textrobust.attack.candidates.inflection import is_word
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
            idx = sorted((i for i in by_target.get(target.id, []) if is_word(rows[i]["form"])),
                         key=lambda i: -oof[i])[:top]
            if not idx:
                continue
            text, position = target.in_sentence()
            items = [(position, rows[i]["form"]) for i in idx]
            scores = source.scorer.score(text, items)
            from textrobust.attack.candidates.tagging import tags_kept

            kept = tags_kept(source.tagger, text, source._tags(text), items)
            for i, sc, tag_kept in zip(idx, scores, kept):
                extra = {"reverse": -20.0 if sc.reverse is None else float(sc.reverse),
                         "reverse_missing": float(sc.reverse is None), "validation": float(sc.validation),
                         "target_cos": float(sc.target), "tag_kept": float(tag_kept)}
                row = {**rows[i], "features": {**rows[i]["features"], **extra}, "first_oof": float(oof[i])}
                out.append(row)
                handle.write(json.dumps(row) + "\n")
            if n % 50 == 0:
                print(f"  second-stage features: {n}/{len(targets)} targets", flush=True)
    return out


def _first_labelled(rows: Sequence[dict[str, Any]], args: Any) -> list[tuple[dict[str, Any], int, float]]:
    out = []
    for r in rows:
        lw = label_and_weight(r, args.coinco_min, args.coinco_neg_weight)
        if lw is not None:
            out.append((r, *lw))
    return out


def x_first_all(rows: Sequence[dict[str, Any]], args: Any) -> np.ndarray:
    return matrix([r for r, _, _ in _first_labelled(rows, args)], FEATURES_ONE)


def y_first_all(rows: Sequence[dict[str, Any]], args: Any) -> np.ndarray:
    return np.asarray([v for _, v, _ in _first_labelled(rows, args)])


def w_first_all(rows: Sequence[dict[str, Any]], args: Any) -> np.ndarray:
    return np.asarray([w for _, _, w in _first_labelled(rows, args)])


def second_inputs(rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """The second stage's inputs: the first stage's out-of-fold log-odds and the pass features."""
    from textrobust.validity.people_judge import PASS_FEATURES

    p = np.clip(np.asarray([r["first_oof"] for r in rows], dtype=float), 1e-6, 1 - 1e-6)
    return np.column_stack([np.log(p / (1 - p)), matrix(rows, PASS_FEATURES)])


def fit_second(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale, LogisticRegression(C=1.0, max_iter=2000).fit((x - mean) / scale, y)


def second_stage(args: Any, targets: Sequence[SwordsTarget], rows: Sequence[dict[str, Any]], oof: np.ndarray,
                 lemma: Any, report: dict[str, Any]) -> None:
    rows2 = stage2_rows(args.stage2, targets, rows, oof, args.stage2_top)
    lab = [(r, *label_and_weight(r, 1, 1.0)) for r in rows2 if label_and_weight(r, 1, 1.0) is not None]  # type: ignore[misc]
    tr = [r for r, _, _ in lab]
    y = np.asarray([v for _, v, _ in lab])
    x = second_inputs(tr)
    fold = folds([r["group"] for r in tr])
    x_all = second_inputs(rows2)
    fold_all = folds([r["group"] for r in rows2])
    oof2 = np.zeros(len(rows2))
    oof2_l = np.zeros(len(tr))
    for k in range(5):
        mean, scale, m = fit_second(x[fold != k], y[fold != k])
        oof2[fold_all == k] = m.predict_proba((x_all[fold_all == k] - mean) / scale)[:, 1]
        oof2_l[fold == k] = m.predict_proba((x[fold == k] - mean) / scale)[:, 1]
    print(f"second stage (logistic, stacked on the first): {len(tr)} labelled rows ({int(y.sum())} positive); "
          f"out-of-fold AUC {auc(y, oof2_l):.3f} (first stage on the same rows "
          f"{auc(y, np.asarray([r['first_oof'] for r in tr])):.3f})")
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
    if args.require_tag:  # the tagger must read the substitute with the word's part of speech
        keep &= np.asarray([r["features"]["tag_kept"] == 1.0 for r in rows2])
    report["second_auc"] = auc(y, oof2_l)
    # calibration: out-of-fold scores of the candidates the source would judge (the first
    # stage's best per target) that people judged, against acceptable
    judged = np.asarray([label_and_weight(r, 1, 1.0) is not None for r in rows2])
    cal_mask = keep & judged
    cal_y = np.asarray([label_and_weight(r, 1, 1.0)[0] for r, k in zip(rows2, cal_mask) if k])  # type: ignore[index]
    from textrobust.validity.calibration import Calibration, expected_calibration_error, format_table, \
        reliability_table

    calibration = Calibration.fit(oof2[cal_mask], cal_y, method="isotonic", bootstrap=200, seed=46)
    # how well calibrated out of fold: fit on 4 folds' scores, apply to the fifth
    cal_fold = fold_all[cal_mask]
    held = np.zeros(int(cal_mask.sum()))
    for k in range(5):
        c = Calibration.fit(oof2[cal_mask][cal_fold != k], cal_y[cal_fold != k], bootstrap=1)
        held[cal_fold == k] = c.probability(oof2[cal_mask][cal_fold == k])
    ece = expected_calibration_error(held, cal_y)
    print(f"calibration on {int(cal_mask.sum())} judged candidates ({int(cal_y.sum())} acceptable); "
          f"cross-fitted ECE {ece:.3f}")
    print(format_table(reliability_table(held, cal_y)))
    report["tune_ece"] = ece
    report["second_thresholds"] = {}
    calibrated = calibration.probability(oof2)
    best = None
    for t in np.round(np.arange(0.20, 0.86, 0.05), 2):
        d = end_to_end(targets, rows2, calibrated, float(t), lemma, args.min_zipf, keep=keep)
        report["second_thresholds"][float(t)] = d
        print(f"  p >= {t:.2f}: per target {d['per_target']:.2f}, lenient P {d['lenient_precision']:.1%}, "
              f"recall {d['recall']:.1%}, first {d['first_proposal_acceptable']:.1%}, "
              f"F@10 lenient {100 * d['f10_lenient_acceptable']:.1f}", flush=True)
        if d["lenient_precision"] >= args.target_precision and (best is None or d["recall"] > best[1]["recall"]):
            best = (float(t), d)
    if best is None:
        best = max(((float(t), d) for t, d in report["second_thresholds"].items()),
                   key=lambda pair: pair[1]["lenient_precision"])
    print(f"operating point (highest tune recall at tune lenient precision >= {args.target_precision:.0%}): "
          f"min_probability {best[0]}")
    report["min_probability"] = best[0]
    if args.ship:
        from textrobust.validity.people_judge import PeopleJudge, default_people_judge_path

        first = model().fit(x_first_all(rows, args), y_first_all(rows, args), sample_weight=w_first_all(rows, args))
        mean, scale, second = fit_second(x, y)
        record = {"trained_on": "SWORDS v1.1 dev, tuning part (two thirds of the contexts by hash; Lee et al. 2021)"
                  + ("" if args.no_coinco else " + CoInCo dev portion tokens outside SWORDS dev contexts "
                     "(Kremer et al. 2014)"),
                  "rows_first": int(len(y_first_all(rows, args))), "rows_second": int(len(y)),
                  "cv_auc_first": report["first_auc"], "cv_auc_second": report["second_auc"], "tune_ece": ece,
                  "min_probability": best[0], "tune_at_operating_point": best[1],
                  "rerun": "benchmarks/validity/people_rows.py, then tune_people.py --ship"}
        judge = PeopleJudge.from_models(first, mean, scale, second, calibration, record)
        judge.save(default_people_judge_path())
        print(f"shipped {default_people_judge_path()} (version {judge.version})")


class _NoJudge:
    version = "none"

    def first(self, rows: Any) -> Any:
        return np.full(len(rows), 0.5)

    def probability(self, rows: Any) -> Any:
        return self.first(rows)


if __name__ == "__main__":
    sys.exit(main())
