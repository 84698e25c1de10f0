"""Fit the judge's calibration on the labelled set's dev half (issue 47, item 1).

For every dev item of ``resources/substitutions/labelled.tsv`` the validated source (default
settings, no verdict cache) gives its evidence in context (``evidence_many``, one batch per
sentence); :func:`~textrobust.attack.candidates.swap_validity.raw_score` turns it into the
judge's raw score (0 when a hard check fails); :meth:`~textrobust.validity.calibration.
Calibration.fit` maps raw scores to the share people judged valid (isotonic, 200 bootstrap
refits, seed 0). The map is written to ``resources/substitutions/calibration.json``; the
evidence to ``--scores`` (JSON lines, reused on a rerun: only missing items are judged).

**Out of fold.** The shipped judge was trained on the dev half, so its own scores there are
in-sample and too confident (fitted on them, the map said 0.996 where the test half's
readers found 73% valid). The map is therefore fitted on out-of-fold scores: the judge's
model (``tune_judge.py``'s boosted trees, its ``C`` and dropped features as recorded in
``benchmarks/results/validity_judge.json``) refitted on 5 folds of the dev half grouped by
sentence, each item scored by the fold that did not see it (``--in-sample`` fits on the
shipped judge's own scores instead).

With ``--test`` the test half is scored too, and the reliability table and expected
calibration error of the shipped map on it are printed (never used to fit).

Rerun (about 4 minutes per 1,000 items on 2 quiet cores):
``PYTHONPATH=src .venv/bin/python benchmarks/validity/calibrate.py --scores /tmp/calibration_scores.jsonl [--test]``
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from textrobust.attack.candidates.labelled import labelled_substitutions
from textrobust.attack.candidates.swap_validity import raw_score
from textrobust.attack.candidates.validated import ValidatedSynonyms, default_calibration_path
from textrobust.validity.calibration import Calibration, expected_calibration_error, format_table, reliability_table


def score(items: list, out: Path) -> dict[str, float]:
    """id -> raw score, judging the items not yet in ``out``."""
    done: dict[str, float] = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            if line:
                row = json.loads(line)
                done[row["id"]] = row["raw"]
    todo = [i for i in items if i.id not in done]
    if todo:
        source = ValidatedSynonyms(verdict_cache=False)
        by_sentence = defaultdict(list)
        for item in todo:
            by_sentence[item.sentence].append(item)
        start = time.perf_counter()
        with out.open("a", encoding="utf-8") as handle:
            for n, group in enumerate(by_sentence.values()):
                evidence = source.evidence_many(group[0].text, [(i.position, i.substitute) for i in group])
                for item, e in zip(group, evidence):
                    done[item.id] = raw_score(e)
                    handle.write(json.dumps({"id": item.id, "raw": done[item.id], "evidence": e.as_dict()}) + "\n")
                handle.flush()
                if n % 50 == 0:
                    print(f"{n} of {len(by_sentence)} sentences, {time.perf_counter() - start:.0f} s", flush=True)
    return done


def out_of_fold(items: list, rows: dict[str, dict]) -> dict[str, float]:
    """id -> the raw score of each dev item under a judge that did not see it."""
    import sys
    import zlib
    from dataclasses import replace

    from wordfreq import zipf_frequency

    from textrobust.attack.candidates.judge import FEATURES, feature_row
    from textrobust.attack.candidates.validated import ValidatedSynonymsConfig

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import tune_judge  # the judge's own training code (its model and folds)

    record = json.loads((Path(__file__).resolve().parents[1] / "results" / "validity_judge.json").read_text())
    tune_judge.MODEL["kind"] = "boosting"
    base = ValidatedSynonymsConfig(max_senses=99, min_cos=-1.0, max_valence_change=99.0, min_zipf=0.0,
                                   allow_unscored=True, require_wordnet=False, min_cos_vectors_only=-1.0,
                                   min_lm_delta=None, min_judge=None)  # tune_judge.py's training set
    evidence = {i.id: tune_judge.evidence_of(rows[i.id]) for i in items}
    train = [i for i in items if tune_judge.passes(evidence[i.id], base)]
    x = np.array([feature_row(rows[i.id], float(zipf_frequency(i.word.lower(), "en"))) for i in train], dtype=float)
    x[:, [list(FEATURES).index(name) for name in record["judge_dropped_features"]]] = 0.0
    y = np.array([i.valid for i in train], dtype=int)
    groups = np.array([zlib.crc32(i.sentence.encode("utf-8")) for i in train])
    oof = dict(zip((i.id for i in train), tune_judge.out_of_fold(x, y, groups, float(record["C"]))))
    return {i.id: raw_score(replace(evidence[i.id], judge=float(oof[i.id]))) if i.id in oof and evidence[i.id]
            else 0.0 for i in items}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scores", type=Path, required=True, help="JSON lines of raw scores (read and extended)")
    parser.add_argument("--test", action="store_true", help="also report the map's reliability on the test half")
    parser.add_argument("--out", type=Path, default=None, help="where to write the map (default: the shipped one)")
    parser.add_argument("--in-sample", action="store_true", help="fit on the shipped judge's own dev scores")
    args = parser.parse_args()
    dev = labelled_substitutions("dev")
    raw = score(dev, args.scores)
    if not args.in_sample:
        rows = {}
        for line in args.scores.read_text(encoding="utf-8").splitlines():
            if line:
                row = json.loads(line)
                rows[row["id"]] = row["evidence"]
        fitted = out_of_fold(dev, rows)
        print(f"out-of-fold dev scores: {sum(v > 0 for v in fitted.values())} of {len(dev)} pass the hard checks")
    else:
        fitted = raw
    x = np.asarray([fitted[i.id] for i in dev])
    y = np.asarray([1.0 if i.valid else 0.0 for i in dev])
    calibration = Calibration.fit(x, y, method="isotonic", bootstrap=200, seed=0)
    out = args.out or default_calibration_path()
    out.write_text(json.dumps(calibration.to_dict(), separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"fitted on {len(dev)} dev items ({int(y.sum())} valid): {calibration!r} -> {out}")
    print(f"dev calibration error (the scores it was fitted on): "
          f"{expected_calibration_error(calibration.probability(x), y):.3f}")
    if args.test:
        test = labelled_substitutions("test")
        raw.update(score(test, args.scores))
        xt = np.asarray([raw[i.id] for i in test])
        yt = np.asarray([1.0 if i.valid else 0.0 for i in test])
        pt = calibration.probability(xt)
        print(f"test calibration error: {expected_calibration_error(pt, yt):.3f} ({len(test)} items)")
        print(format_table(reliability_table(pt, yt)))


if __name__ == "__main__":
    main()
