"""Build the CoInCo pair prior (textrobust.validity.pair_prior) shipped with the package.

Counts, per (lemma, part of speech), the CoInCo dev-portion tokens and how many readers
wrote each substitute, over the sentences that are NOT SWORDS dev contexts (so neither the
judge's tuning on SWORDS dev nor its held-out measure sees its own sentence's counts).
CoInCo: Kremer, Erk, Padó and Thater, EACL 2014 (CC-BY-3.0-US).

Rerun: ``.venv/bin/python benchmarks/validity/build_pair_prior.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

from textrobust.validity.coinco import load_coinco
from textrobust.validity.pair_prior import PairPrior, default_pair_prior_path
from textrobust.validity.swords import load_swords

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "swords"


def main() -> int:
    swords = load_swords(SHARED / "swords-v1.1_dev.json.gz")
    excluded = {i for t in swords for i in t.coinco_ids}
    tokens = [t for t in load_coinco(SHARED / "coinco_dev_portion.xml.gz")
              if t.pos is not None and t.sentence_id not in excluded]
    prior = PairPrior.count(((t.lemma, t.pos, t.substitutes) for t in tokens if t.pos),
                            {"source": "CoInCo dev portion (Kremer et al. 2014), CC-BY-3.0-US",
                             "sentences": len({t.sentence_id for t in tokens}), "tokens": len(tokens),
                             "excluded": "every sentence of a SWORDS v1.1 dev context"})
    path = default_pair_prior_path()
    prior.save(path)
    print(f"{len(prior.entries)} lemmas from {len(tokens)} tokens -> {path} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
