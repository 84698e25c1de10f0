"""Fit the judge's calibration on the labelled set's dev half (issue 47, item 1).

For every dev item of ``resources/substitutions/labelled.tsv`` the validated source (default
settings, no verdict cache) gives its evidence in context (``evidence_many``, one batch per
sentence); :func:`~textrobust.attack.candidates.swap_validity.raw_score` turns it into the
judge's raw score (0 when a hard check fails); :meth:`~textrobust.validity.calibration.
Calibration.fit` maps raw scores to the share people judged valid (isotonic, 200 bootstrap
refits, seed 0). The map is written to ``resources/substitutions/calibration.json``; the raw
scores to ``--scores`` (JSON lines, reused on a rerun: only missing items are judged).

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scores", type=Path, required=True, help="JSON lines of raw scores (read and extended)")
    parser.add_argument("--test", action="store_true", help="also report the map's reliability on the test half")
    parser.add_argument("--out", type=Path, default=None, help="where to write the map (default: the shipped one)")
    args = parser.parse_args()
    dev = labelled_substitutions("dev")
    raw = score(dev, args.scores)
    x = np.asarray([raw[i.id] for i in dev])
    y = np.asarray([1.0 if i.valid else 0.0 for i in dev])
    calibration = Calibration.fit(x, y, method="isotonic", bootstrap=200, seed=0)
    out = args.out or default_calibration_path()
    out.write_text(json.dumps(calibration.to_dict(), separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"fitted on {len(dev)} dev items ({int(y.sum())} valid): {calibration!r} -> {out}")
    print(f"dev calibration error (in sample): {expected_calibration_error(calibration.probability(x), y):.3f}")
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
