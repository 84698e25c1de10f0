"""Train the validated source's judge on the dev half and choose its operating point (issue 39).

Reads the labelled set and the features of ``judge_features.py``; everything is decided on
dev, the test half is only measured:

1. the judge (:mod:`textrobust.attack.candidates.judge`, a logistic regression over the
   evidence and the target-visible scores) is trained on the dev items that pass the
   source's hard checks (slot, antonym, part of speech in context, a WordNet synonym, the
   guards); its dev probabilities are out-of-fold (5 folds grouped by sentence);
2. a small grid of the hand checks' settings (senses, cosine, polarity, Zipf) times the
   judge's threshold is scored on dev: the operating point is the one with the highest dev
   recall at dev precision >= ``--precision`` (a margin above the issue's 85%);
3. the judge is refitted on the whole dev half and written to ``--judge-out``; the
   precision-recall curve of the chosen settings (dev out-of-fold and test), the ablations
   and the test figures go to ``--out`` (JSON).

Rerun: ``.venv/bin/python benchmarks/validity/tune_judge.py --features /tmp/h39/features_old.jsonl
/tmp/h39/features_new.jsonl --precision 0.70 --drop context context_missing --out
benchmarks/results/validity_judge.json --judge-out src/textrobust/resources/substitutions/judge.json``.

Routes measured without shipping them: ``--extra lm_delta=PATH`` (Gemma's change of the
sentence's log-probability, ``gemma_deltas.py``) and ``--extra null_gap=PATH`` (Link
Grammar's null count after minus before, ``grammar_gaps.py``) add judge features (id -> value
JSON); ``--two-stage`` also scores a judge that asks for the extra features only of the
candidates whose first-stage probability falls in a band around the threshold;
``--errors-out`` writes the test half's false positives at the operating point, to read.
"""

from __future__ import annotations

import argparse
import itertools
import json
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.attack.candidates.judge import FEATURES, BoostedJudge, TrainedJudge, feature_row
from textrobust.attack.candidates.labelled import LabelledSubstitution, labelled_substitutions
from textrobust.attack.candidates.tagging import SpacyTagger
from textrobust.attack.candidates.validated import (
    Evidence,
    ValidatedSynonymsConfig,
    failed_check,
    position_guard,
)
from textrobust.attack.candidates.wordnet import wordnet_pos

EVIDENCE_FIELDS = set(Evidence.__dataclass_fields__)
#: the hand checks' grid (the rest of the settings at their defaults)
GRID = {"max_senses": (2, 3, 5, 99), "min_cos": (0.0, 0.3, 0.5), "max_valence_change": (1.0, 1.5),
        "min_zipf": (2.5, 3.0), "allow_unscored": (False, True), "require_wordnet": (True, False)}
THRESHOLDS = tuple(round(float(t), 3) for t in np.arange(0.05, 0.96, 0.025))


def evidence_of(row: dict[str, Any]) -> Evidence | None:
    if not row.get("slot_fits") and "word" not in row:
        return None
    fields = {k: v for k, v in row.items() if k in EVIDENCE_FIELDS}
    fields["routes"] = tuple(fields.get("routes", ()))
    fields["valence"] = tuple(fields.get("valence", (None, None)))
    return Evidence(**fields)


def passes(e: Evidence | None, config: ValidatedSynonymsConfig) -> bool:
    return e is not None and failed_check(e, config) == ""


def scores(flags: Sequence[bool], items: Sequence[LabelledSubstitution]) -> dict[str, float]:
    accepted = int(sum(bool(f) for f in flags))
    tp = int(sum(bool(f) and i.valid for f, i in zip(flags, items)))
    positives = int(sum(i.valid for i in items))
    return {"accepted": accepted, "true_positives": tp, "positives": positives,
            "precision": tp / accepted if accepted else 0.0, "recall": tp / positives if positives else 0.0}


#: the judge's model: "logistic" (shipped), or "boosting" (measured only: does a non-linear
#: model over the same features rank better?)
MODEL = {"kind": "logistic"}


def fit(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if MODEL["kind"] == "boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        # c picks the regularisation here too: fewer leaves and more shrinkage for a small c
        return HistGradientBoostingClassifier(max_leaf_nodes=max(3, int(8 * c)), learning_rate=0.05,
                                              max_iter=200, l2_regularization=1.0, random_state=0).fit(x, y)
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000)).fit(x, y)


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: np.ndarray, c: float) -> np.ndarray:
    from sklearn.model_selection import GroupKFold

    p = np.zeros(len(y))
    for train, held in GroupKFold(n_splits=5).split(x, y, groups):
        p[held] = fit(x[train], y[train], c).predict_proba(x[held])[:, 1]
    return p


def staged(x: np.ndarray, y: np.ndarray, groups: np.ndarray, c: float, base: int, dropped: list[int],
           train: Sequence[LabelledSubstitution], rest: Sequence[LabelledSubstitution], matrix: Any,
           split: dict[str, list[LabelledSubstitution]], accept: Any, threshold: float) -> dict[str, Any]:
    """A two-stage judge: the first stage without the extra features (columns from
    ``base``), the second with them, asked only when the first stage's probability is in
    ``[lo, hi)``; above the band accepted, below rejected. Per band and second-stage
    threshold: dev and test scores, and the share of the candidates the judge sees that the
    second stage (the costly model) must score. (``threshold``, the chosen one-stage point,
    is recorded for comparison.)"""
    first_x = x.copy()
    first_x[:, base:] = 0.0
    ids = [i.id for i in train]
    p1 = dict(zip(ids, out_of_fold(first_x, y, groups, c)))
    p2 = dict(zip(ids, out_of_fold(x, y, groups, c)))
    rest_x = matrix(rest)
    first_rest = rest_x.copy()
    first_rest[:, base:] = 0.0
    p1.update(zip((i.id for i in rest), fit(first_x, y, c).predict_proba(first_rest)[:, 1]))
    p2.update(zip((i.id for i in rest), fit(x, y, c).predict_proba(rest_x)[:, 1]))
    out = []
    for lo, hi in ((0.3, 0.7), (0.35, 0.65), (0.4, 0.6), (0.2, 0.8)):
        for t in (0.4, 0.45, 0.5, 0.55, 0.6):
            prob = {k: (1.0 if v >= hi else 0.0 if v < lo else p2[k]) for k, v in p1.items()}
            row: dict[str, Any] = {"band": [lo, hi], "second_threshold": round(t, 3)}
            for name, group in split.items():
                seen = [i for i in group if accept([i], 0.0, {i.id: 1.0})[0]]
                asked = sum(lo <= p1.get(i.id, 0.0) < hi for i in seen)
                row[name] = {**scores(accept(group, t, prob), group),
                             "second_stage_share": round(asked / len(seen), 3) if seen else 0.0}
            out.append(row)
    return {"one_stage_threshold": threshold, "rows": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=Path, nargs="+", required=True)
    parser.add_argument("--labels", type=Path, default=None, help="labelled TSV (default: the shipped set)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--judge-out", type=Path, default=None)
    parser.add_argument("--precision", type=float, default=0.88, help="dev precision the operating point must reach")
    parser.add_argument("--drop", nargs="*", default=[], help="features left out (an ablation): set to 0")
    parser.add_argument("--lm-deltas", type=Path, default=None,
                        help="id -> Gemma delta JSON (gemma_deltas.py): the causal-LM check joins the grid")
    parser.add_argument("--extra", nargs="*", default=[], metavar="NAME=PATH",
                        help="extra judge features, each an id -> value JSON (lm_delta, null_gap)")
    parser.add_argument("--model", choices=["logistic", "boosting"], default="logistic",
                        help="the judge's model (only the logistic one can be written with --judge-out)")
    parser.add_argument("--fix", nargs="*", default=[], metavar="NAME=VALUE",
                        help="pin a hand check of the grid (e.g. max_senses=3 require_wordnet=true) to compare judges")
    parser.add_argument("--two-stage", action="store_true",
                        help="also score a two-stage judge: the extra features only near the threshold")
    parser.add_argument("--second-out", type=Path, default=None,
                        help="with --two-stage --model boosting --extra lm_delta=PATH: write the second judge "
                             "(second_judge.py) at the band and threshold with the highest dev recall at dev "
                             "precision >= --precision")
    parser.add_argument("--errors-out", type=Path, default=None,
                        help="write the test half's false positives (and missed valid items) at the operating point")
    args = parser.parse_args()
    MODEL["kind"] = args.model
    from wordfreq import zipf_frequency

    rows: dict[str, dict[str, Any]] = {}
    for path in args.features:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line:
                row = json.loads(line)
                rows[row["id"]] = row
    items = [i for i in labelled_substitutions(path=args.labels) if i.id in rows]
    extras: list[str] = []
    for spec in args.extra:
        name, _, where = spec.partition("=")
        values = json.loads(Path(where).read_text(encoding="utf-8"))
        items = [i for i in items if i.id in values]
        for i in items:
            rows[i.id][name] = values[i.id]
        extras.append(name)
    names = [*FEATURES, *extras]
    grid = dict(GRID)
    if args.lm_deltas is not None:
        deltas = json.loads(args.lm_deltas.read_text(encoding="utf-8"))
        items = [i for i in items if i.id in deltas]
        for i in items:
            rows[i.id]["lm_delta"] = deltas[i.id]
        grid["min_lm_delta"] = (None, -6.0, -4.0, -3.0, -2.0)
    for spec in args.fix:
        name, _, value = spec.partition("=")
        if name not in grid:
            raise SystemExit(f"--fix {spec}: {name} is not in the grid ({', '.join(grid)})")
        grid[name] = (json.loads(value),)
    tagger = SpacyTagger()
    evidence: dict[str, Evidence | None] = {}
    feats: dict[str, list[float]] = {}
    for item in items:
        tags = tagger(item.text)
        row = dict(rows[item.id])
        pos = wordnet_pos(tags[item.position])
        row["pos"] = pos or ""
        row["guard"] = position_guard(item.text.words, item.position, tags[item.position])
        evidence[item.id] = evidence_of(row)
        feats[item.id] = [*feature_row(row, float(zipf_frequency(item.word.lower(), "en"))),
                          *(float(row[name]) for name in extras)]
    dropped = [names.index(name) for name in args.drop]
    split = {s: [i for i in items if i.split == s] for s in ("dev", "test")}
    base = ValidatedSynonymsConfig(max_senses=99, min_cos=-1.0, max_valence_change=99.0, min_zipf=0.0,
                                   allow_unscored=True, require_wordnet=False, min_cos_vectors_only=-1.0,
                                   min_lm_delta=None, min_judge=None)

    def matrix(group: Sequence[LabelledSubstitution]) -> np.ndarray:
        x = np.array([feats[i.id] for i in group], dtype=float)
        x[:, dropped] = 0.0
        return x

    train = [i for i in split["dev"] if passes(evidence[i.id], base)]
    x, y = matrix(train), np.array([i.valid for i in train], dtype=int)
    # a stable sentence id (Python's str hash changes per process, and with it the folds)
    groups = np.array([zlib.crc32(i.sentence.encode("utf-8")) for i in train])
    best_c, best_auc = 1.0, -1.0
    from sklearn.metrics import roc_auc_score

    for c in (0.03, 0.1, 0.3, 1.0, 3.0):
        auc = roc_auc_score(y, out_of_fold(x, y, groups, c))
        print(f"C={c}: out-of-fold dev AUC {auc:.3f}", flush=True)
        if auc > best_auc:
            best_c, best_auc = c, auc
    oof = dict(zip((i.id for i in train), out_of_fold(x, y, groups, best_c)))
    model = fit(x, y, best_c)
    # every other item (test, and dev items outside the training set, e.g. guarded ones) is
    # scored by the model fitted on the whole training set, which never saw it
    rest = [i for i in items if i.id not in oof]
    prob = {**dict(zip((i.id for i in rest), model.predict_proba(matrix(rest))[:, 1])), **oof}
    per_feature_auc = {name: round(float(roc_auc_score(y, x[:, k])), 3) for k, name in enumerate(names)
                       if len(set(x[:, k])) > 1}

    def flags(group: Sequence[LabelledSubstitution], config: ValidatedSynonymsConfig, t: float | None) -> list[bool]:
        return [passes(evidence[i.id], config) and (t is None or prob.get(i.id, 0.0) >= t) for i in group]

    best: tuple[float, float, dict[str, Any], float] | None = None
    frontier: dict[str, float] = {}  # recall decile -> best dev precision (diagnostics)
    dev_p = np.array([prob.get(i.id, 0.0) for i in split["dev"]])
    for values in itertools.product(*grid.values()):
        setting = {"min_lm_delta": None, "min_judge": None, **dict(zip(grid, values))}
        config = ValidatedSynonymsConfig(**setting, min_cos_vectors_only=0.8)
        hard = np.array(flags(split["dev"], config, None))
        for t in THRESHOLDS:
            s = scores(list(hard & (dev_p >= t)), split["dev"])
            if s["accepted"] >= 30:
                bucket = f"{min(s['recall'], 0.999) // 0.1 / 10:.1f}"
                frontier[bucket] = max(frontier.get(bucket, 0.0), round(s["precision"], 3))
            if s["precision"] >= args.precision and s["accepted"] >= 30:
                key = (s["recall"], s["precision"])
                if best is None or key > best[:2]:
                    best = (*key, setting, float(t))
    if best is None:
        raise SystemExit(f"no setting reaches dev precision {args.precision} with 30 accepted; the best dev "
                         f"precision at each recall: {json.dumps(frontier)}")
    chosen, threshold = best[2], best[3]
    chosen["min_cos_vectors_only"] = 0.8
    config = ValidatedSynonymsConfig(**chosen)
    curve = [{"threshold": t, "dev": scores(flags(split["dev"], config, t), split["dev"]),
              "test": scores(flags(split["test"], config, t), split["test"])} for t in THRESHOLDS]
    ablations = {}
    for name, change in (("guards off", {"function_adverbs": False, "name_guard": False}),
                         ("function-adverb policy off", {"function_adverbs": False}),
                         ("name guard off", {"name_guard": False})):
        changed = ValidatedSynonymsConfig(**{**chosen, **change})
        ablations[name] = {s: scores(flags(split[s], changed, threshold), split[s]) for s in split}
    ablations["judge off (hand checks only)"] = {s: scores(flags(split[s], config, None), split[s]) for s in split}
    if chosen.get("min_lm_delta") is not None:
        no_lm = ValidatedSynonymsConfig(**{**chosen, "min_lm_delta": None})
        ablations["causal-LM (Gemma) check off"] = {s: scores(flags(split[s], no_lm, threshold), split[s])
                                                    for s in split}
    # how well the judge ranks what it sees under the chosen hand checks (less noisy than one point)
    auc_seen = {}
    for name, group in split.items():
        seen = [i for i in group if passes(evidence[i.id], config)]
        labels = [i.valid for i in seen]
        auc_seen[name] = round(float(roc_auc_score(labels, [prob.get(i.id, 0.0) for i in seen])), 3) \
            if 0 < sum(labels) < len(labels) else None
    two_stage = None
    if args.two_stage and extras:
        two_stage = staged(x, y, groups, best_c, len(FEATURES), dropped, train, rest, matrix, split,
                           lambda g, t, p: [passes(evidence[i.id], config) and p.get(i.id, 0.0) >= t for i in g],
                           threshold)
    if args.second_out is not None:
        if two_stage is None or extras != ["lm_delta"] or args.model != "boosting":
            raise SystemExit("--second-out needs --two-stage --model boosting --extra lm_delta=PATH")
        from textrobust.attack.candidates.second_judge import SecondJudge

        ok = [r for r in two_stage["rows"] if r["dev"]["precision"] >= args.precision and r["dev"]["accepted"] >= 30]
        if not ok:
            raise SystemExit(f"no band reaches dev precision {args.precision}")
        pick = max(ok, key=lambda r: (r["dev"]["recall"], r["dev"]["precision"]))
        second_model = fit(x, y, best_c)
        second = SecondJudge.from_sklearn(second_model, tuple(pick["band"]), pick["second_threshold"], {
            "trained_on": f"dev half of the labelled set, {len(train)} items with Gemma's delta passing the hard "
                          f"checks ({int(y.sum())} valid)", "C": best_c, "dropped": args.drop,
            "band": pick["band"], "second_threshold": pick["second_threshold"],
            "dev": pick["dev"], "test": pick["test"], "first_stage_settings": {**chosen, "min_judge": threshold}})
        gap = float(np.max(np.abs(second.probability(x) - second_model.predict_proba(x)[:, 1])))
        if gap > 1e-6:
            raise SystemExit(f"the written second judge differs from the fitted model by {gap}")
        args.second_out.write_text(json.dumps(second.to_dict(), indent=1) + "\n", encoding="utf-8")
        print("wrote", args.second_out, "band", pick["band"], "threshold", pick["second_threshold"],
              f"(largest difference from the fitted model {gap:.1e})")
    if args.errors_out is not None:
        accepted = flags(split["test"], config, threshold)
        wrong = [{"id": i.id, "sentence": i.sentence, "word": i.word, "substitute": i.substitute,
                  "reason": i.reason, "judge": round(float(prob.get(i.id, 0.0)), 3),
                  **{name: rows[i.id].get(name) for name in ("cosine", "sense_rank", "target", "validation",
                                                             "visible", "reverse", *extras)}}
                 for i, f in zip(split["test"], accepted) if f and not i.valid]
        missed = [{"id": i.id, "sentence": i.sentence, "word": i.word, "substitute": i.substitute,
                   "hand_checks": failed_check(evidence[i.id], ValidatedSynonymsConfig(**{**chosen, "min_judge": None}))
                   if evidence[i.id] is not None else "no evidence", "judge": round(float(prob.get(i.id, 0.0)), 3)}
                  for i, f in zip(split["test"], accepted) if i.valid and not f]
        args.errors_out.write_text(json.dumps({"false_positives": wrong, "missed": missed}, indent=1),
                                   encoding="utf-8")
    result = {
        "items": {s: len(v) for s, v in split.items()}, "judge_training_items": len(train),
        "extra_features": extras, "two_stage": two_stage, "auc_seen": auc_seen,
        "judge_positives": int(y.sum()), "C": best_c, "oof_auc": round(best_auc, 3),
        "feature_auc_dev": per_feature_auc, "dropped": args.drop,
        "settings": {**chosen, "min_judge": threshold},
        "judge_dropped_features": args.drop,
        "dev": scores(flags(split["dev"], config, threshold), split["dev"]),
        "test": scores(flags(split["test"], config, threshold), split["test"]),
        "curve": curve, "ablations": ablations, "dev_frontier": frontier,
    }
    print(json.dumps({k: result[k] for k in ("settings", "dev", "test", "oof_auc", "auc_seen")}, indent=1))
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.judge_out is not None:
        if extras:
            raise SystemExit("--judge-out: the shipped judge reads FEATURES only; drop --extra")
        record = {"trained_on": f"dev half of the labelled set, {len(train)} items passing the hard "
                                f"checks ({int(y.sum())} valid)", "model": args.model, "C": best_c,
                  "out_of_fold_auc": round(best_auc, 3), "dropped": args.drop,
                  "operating_point": result["settings"], "dev": result["dev"], "test": result["test"]}
        judge: TrainedJudge | BoostedJudge
        if args.model == "boosting":
            judge = BoostedJudge.from_sklearn(model, record)
        else:
            scaler, logistic = model.named_steps["standardscaler"], model.named_steps["logisticregression"]
            scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
            judge = TrainedJudge(tuple(float(v) for v in scaler.mean_), tuple(float(v) for v in scale),
                                 tuple(float(v) for v in logistic.coef_[0]), float(logistic.intercept_[0]), record)
        # the shipped form must give the fitted model's probabilities
        gap = float(np.max(np.abs(judge.probability(x) - model.predict_proba(x)[:, 1])))
        if gap > 1e-6:
            raise SystemExit(f"the written judge differs from the fitted model by {gap}")
        args.judge_out.write_text(json.dumps(judge.to_dict(), indent=1) + "\n", encoding="utf-8")
        print("wrote", args.judge_out, f"(largest difference from the fitted model {gap:.1e})")


if __name__ == "__main__":
    main()
