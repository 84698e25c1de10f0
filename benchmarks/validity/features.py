"""Evidence of the validated source's checks for every labelled substitution, cached as JSON.

``ValidatedSynonyms.evidence(text, position, substitute)`` computes every check for the
item's substitute (whether or not the source would propose it); the tuning in
``measure.py`` re-judges this evidence under other settings without recomputing it.

The causal-LM check (Gemma's change of sentence log-probability) is computed for all items
in one batched pass (or read from ``--lm-deltas``, a JSON map id -> delta written by an
earlier run), not item by item.

Rerun: ``.venv/bin/python benchmarks/validity/features.py --out /tmp/validity/features.json``
(about 2 minutes for the checks and 5-10 for Gemma on 2 cores).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from textrobust.attack.candidates.labelled import labelled_substitutions
from textrobust.attack.candidates.validated import ValidatedSynonyms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=None, help="labelled TSV (default: the shipped set)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lm-deltas", type=Path, default=None, help="cached id -> Gemma delta JSON")
    args = parser.parse_args()
    items = labelled_substitutions(path=args.labels)
    source = ValidatedSynonyms(min_lm_delta=None)
    if args.lm_deltas is not None:
        deltas = json.loads(args.lm_deltas.read_text(encoding="utf-8"))
    else:
        from textrobust.lm.causal import CausalLM

        lm = CausalLM.default()
        originals = sorted({item.sentence for item in items})
        before = dict(zip(originals, lm.sentence_log_prob(originals)))
        after = lm.sentence_log_prob([str(item.text.replace(item.position, item.substitute)) for item in items])
        deltas = {item.id: float(a - before[item.sentence]) for item, a in zip(items, after)}
        (args.out.parent / "lm_deltas.json").write_text(json.dumps(deltas), encoding="utf-8")
    rows = []
    for i, item in enumerate(items):
        found = source.evidence(item.text, item.position, item.substitute)
        row = found[0].as_dict() if found else {"slot_fits": False}
        if found:
            row["lm_delta"] = round(deltas[item.id], 3)
        rows.append({"id": item.id, **row})
        if i % 100 == 0:
            print(i, flush=True)
    args.out.write_text(json.dumps(rows, indent=0), encoding="utf-8")
    print("wrote", len(rows), "rows to", args.out)


if __name__ == "__main__":
    main()
