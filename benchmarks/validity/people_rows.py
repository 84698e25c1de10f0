"""Training and evaluation rows for the judge learned from people (issue 46).

For each SWORDS dev target (its sentence, :meth:`~textrobust.validity.swords.SwordsTarget.
in_sentence`) and each sampled CoInCo dev-portion token, every proposal of
:class:`~textrobust.attack.candidates.people.PeopleSubstitutes` and every single-word
substitute people judged (SWORDS) or wrote (CoInCo), inflected to the word's tag, with both
stages' features (:meth:`PeopleSubstitutes.training_rows`), written as JSON lines:
``{"set", "part", "group", "target", "word", "form", "lemma", "routes", "yes", "no",
"written", "features"}``. ``lemma`` is the SWORDS scorer's lemma (WordNet's lemmatiser under
the target's part of speech); ``yes``/``no`` SWORDS votes (0/0: not judged); ``written``
how many CoInCo readers wrote it. CoInCo sentences that belong to SWORDS dev's held-out
contexts are skipped (never trained on).

Rerun: ``.venv/bin/python benchmarks/validity/people_rows.py --out /work/labelwork/people/rows.jsonl
--coinco 1500`` (SWORDS dev: about 6 minutes quiet; CoInCo: about 0.6 s a token).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from textrobust.attack.candidates.inflection import inflect
from textrobust.attack.candidates.people import PeopleSubstitutes
from textrobust.errors import DataError
from textrobust.text import Text
from textrobust.validity.coinco import load_coinco
from textrobust.validity.swords import HELD_OUT, load_swords, sentence_around, swords_part, wordnet_lemmatizer

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "swords"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--swords", type=Path, default=SHARED / "swords-v1.1_dev.json.gz")
    parser.add_argument("--coinco-file", type=Path, default=SHARED / "coinco_dev_portion.xml.gz")
    parser.add_argument("--coinco", type=int, default=0, help="CoInCo tokens to sample (seed 46)")
    parser.add_argument("--skip-swords", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    source = PeopleSubstitutes(verdict_cache=False, judge=_NoJudge())
    lemma = wordnet_lemmatizer()
    targets = load_swords(args.swords)
    held_sentences = {i for t in targets if swords_part(t.context_id) == HELD_OUT for i in t.coinco_ids}
    start = time.perf_counter()
    with args.out.open("a", encoding="utf-8") as out:
        if not args.skip_swords:
            for n, target in enumerate(targets, 1):
                try:
                    text, position = target.in_sentence()
                except DataError:
                    continue
                tag = source._tags(text)[position]
                votes = {}
                for sub in target.substitutes:
                    if " " in sub.substitute:
                        continue
                    key = lemma(sub.substitute, target.wordnet_pos)
                    y, no = votes.get(key, (0, 0))
                    votes[key] = (y + sub.yes, no + sub.no)
                forms = [inflect(s.substitute, tag.tag) or s.substitute for s in target.substitutes
                         if " " not in s.substitute]
                for v in source.training_rows(text, position, forms, second=False):
                    key = lemma(v.substitute.lower(), target.wordnet_pos)
                    yes, no = votes.get(key, (0, 0))
                    out.write(json.dumps({"set": "swords", "part": swords_part(target.context_id),
                                          "group": target.context_id, "target": target.id, "word": target.target,
                                          "pos": target.wordnet_pos, "form": v.substitute.lower(), "lemma": key,
                                          "routes": list(v.routes), "yes": yes, "no": no, "written": 0,
                                          "features": v.features}) + "\n")
                if n % 25 == 0:
                    print(f"swords {n}/{len(targets)} {time.perf_counter() - start:.0f} s", flush=True)
        if args.coinco:
            tokens = [t for t in load_coinco(args.coinco_file) if t.pos and t.sentence_id not in held_sentences]
            random.Random(46).shuffle(tokens)
            for n, token in enumerate(tokens[: args.coinco], 1):
                try:
                    text, position = sentence_around(token.sentence, token.offset, token.word)
                except DataError:
                    continue
                tag = source._tags(text)[position]
                written = {}
                for sub, freq in token.substitutes:
                    if " " not in sub:
                        written[lemma(sub, token.pos or "n")] = freq
                forms = [inflect(s, tag.tag) or s for s, _ in token.substitutes if " " not in s]
                for v in source.training_rows(text, position, forms, second=False):
                    key = lemma(v.substitute.lower(), token.pos or "n")
                    out.write(json.dumps({"set": "coinco", "part": "tune", "group": token.sentence_id,
                                          "target": f"{token.sentence_id}:{token.offset}", "word": token.word,
                                          "pos": token.pos, "form": v.substitute.lower(), "lemma": key,
                                          "routes": list(v.routes), "yes": 0, "no": 0,
                                          "written": written.get(key, 0), "features": v.features}) + "\n")
                if n % 50 == 0:
                    print(f"coinco {n}/{args.coinco} {time.perf_counter() - start:.0f} s", flush=True)
    return 0


class _NoJudge:
    """Stands in for the judge while its training rows are made: every score 0.5."""

    version = "none"

    def first(self, rows: object) -> object:
        import numpy as np

        return np.full(len(rows), 0.5)  # type: ignore[arg-type]

    def probability(self, rows: object) -> object:
        return self.first(rows)


if __name__ == "__main__":
    sys.exit(main())
