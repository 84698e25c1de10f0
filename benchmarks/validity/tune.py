"""Choose the validated source's thresholds on the dev half, from cached evidence.

Reads the evidence written by ``features.py`` and the labelled set, re-judges every dev item
under a grid of settings (:func:`textrobust.attack.candidates.validated.failed_check`), and
prints the settings with the highest dev recall among those with dev precision >= the
target, and the ablations (each check removed) at the chosen settings. Test items are never
read here.

Rerun: ``.venv/bin/python benchmarks/validity/tune.py --features /tmp/validity/features.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from textrobust.attack.candidates.labelled import labelled_substitutions
from textrobust.attack.candidates.validated import Evidence, ValidatedSynonymsConfig, failed_check


def load(features: Path, labels: Path | None, split: str) -> list[tuple[Evidence | None, bool]]:
    by_id = {row["id"]: row for row in json.loads(features.read_text(encoding="utf-8"))}
    out = []
    for item in labelled_substitutions(split, path=labels):
        row = by_id[item.id]
        if "word" not in row:
            out.append((None, item.valid))
            continue
        fields = {k: v for k, v in row.items() if k not in ("kept", "reason", "id")}
        fields["routes"] = tuple(fields["routes"])
        fields["valence"] = tuple(fields["valence"])
        out.append((Evidence(**fields), item.valid))
    return out


def score(rows: list[tuple[Evidence | None, bool]], config: ValidatedSynonymsConfig) -> tuple[int, int, int]:
    kept = [valid for e, valid in rows if e is not None and not failed_check(e, config)]
    return len(kept), sum(kept), sum(valid for _, valid in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--features", type=Path, required=True)
    parser.add_argument("--labels", type=Path, default=None)
    parser.add_argument("--target", type=float, default=0.92)
    args = parser.parse_args()
    dev = load(args.features, args.labels, "dev")
    grid = {
        "max_senses": [1, 2, 3, 99],
        "min_cos": [-1.0, 0.3, 0.5, 0.7],
        "min_context": [None, -5.0, -4.0, -3.0, -2.0],
        "max_valence_change": [0.5, 1.0, 9.0],
        "min_zipf": [0.0, 3.0],
        "require_wordnet": [True, False],
        "min_lm_delta": [None, -6.0, -5.0, -4.0, -3.0, -2.0],
        "allow_unscored": [False, True],
    }
    results = []
    for values in itertools.product(*grid.values()):
        config = ValidatedSynonymsConfig(**dict(zip(grid, values)))
        accepted, tp, positives = score(dev, config)
        if accepted >= 10:  # a precision over fewer items says little
            results.append((tp / accepted, tp / positives, accepted, config))
    ok = [r for r in results if r[0] >= args.target]
    ok.sort(key=lambda r: (-r[1], -r[0]))
    print(f"dev: {len(dev)} items, {sum(v for _, v in dev)} valid")
    for precision, recall, accepted, config in ok[:12]:
        print(f"P {precision:.3f} R {recall:.3f} n {accepted}  {config.model_dump()}")
    if not ok:
        return
    best = ok[0][3]
    print("\nablations at the best settings (dev):")
    for name, change in [("no polarity guard", {"max_valence_change": 99.0}), ("no masked-LM floor", {"min_context": None}), ("masked-LM vocabulary not required", {"allow_unscored": True}),
                         ("no cosine floor", {"min_cos": -1.0}), ("no frequency floor", {"min_zipf": 0.0}),
                         ("no causal-LM check", {"min_lm_delta": None}), ("every WordNet sense", {"max_senses": 99})]:
        accepted, tp, positives = score(dev, best.replace(**change))
        print(f"  {name}: P {tp / max(accepted, 1):.3f} R {tp / positives:.3f} n {accepted}")


if __name__ == "__main__":
    main()
