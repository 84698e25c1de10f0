"""Score candidate sources on people's judgements: SWORDS dev, scored as the SWORDS scorer does.

Issue 46. Each target of SWORDS v1.1 dev (Lee et al., NAACL 2021; CC-BY-3.0-US) is cut to
its sentence (:meth:`textrobust.validity.swords.SwordsTarget.in_sentence`: what a source sees
in an audit) and the source is asked for candidates at the target's position, best first;
:func:`textrobust.validity.swords.score` scores them (lemmas, lenient and strict precision of
acceptable, conceivable, recall of acceptable, substitutes per target, F@10, first proposal).

Parts: ``held_out`` (a third of the contexts by a hash of the context id,
:func:`~textrobust.validity.swords.swords_part`; reported, never tuned on), ``tune`` (the
rest), ``all``. The shared data lives in ``../shared/data/swords/`` (``--swords`` to point
elsewhere); SWORDS test is held out for independent checks and never read.

Rerun (one source, one part):
    .venv/bin/python benchmarks/validity/swords.py score validated --part held_out
Every route of the table, both parts, into a JSON file:
    .venv/bin/python benchmarks/validity/swords.py routes --out benchmarks/results/validity_swords.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textrobust.errors import DataError
from textrobust.text import Text
from textrobust.validity.swords import SwordsScore, SwordsTarget, load_swords, score, swords_part, wordnet_lemmatizer

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SWORDS = ROOT.parent / "shared" / "data" / "swords" / "swords-v1.1_dev.json.gz"

#: A proposer: (sentence, position) -> substitutes, best first.
Proposer = Callable[[Text, int], Sequence[str]]


def _source_proposer(source: Any) -> Proposer:
    def propose(text: Text, position: int) -> list[str]:
        return [s.word for s in source.candidates(text, [position]).get(position, [])]
    return propose


def _validated(**settings: Any) -> Proposer:
    from textrobust.attack.candidates import ValidatedSynonyms

    return _source_proposer(ValidatedSynonyms(**settings))


def _embedding() -> Proposer:
    from textrobust.attack.candidates import embedding_neighbours

    return _source_proposer(embedding_neighbours(k=50))


def _wordnet() -> Proposer:
    from textrobust.attack.candidates import WordNetSynonyms

    return _source_proposer(WordNetSynonyms())


def _people() -> Proposer:
    from textrobust.attack.candidates.people import PeopleSubstitutes

    return _source_proposer(PeopleSubstitutes())


#: Routes of the table: name -> (what it is, factory).
SOURCES: dict[str, tuple[str, Callable[[], Proposer]]] = {
    "validated_labelled": ("issue 39's validated source, its judge trained on the labelled set (the default "
                           "before issue 46)", _validated),
    "embedding": ("counter-fitted GloVe neighbours, top 50 (TextFooler's set, no cosine floor)", _embedding),
    "wordnet": ("WordNet synonyms, every sense, tagged POS, inflected (PWWS)", _wordnet),
    "people": ("the source learned from people's judgements (issue 46; the default --candidates validated)",
               _people),
}


def targets_of(path: Path, part: str) -> list[SwordsTarget]:
    targets = load_swords(path)
    return targets if part == "all" else [t for t in targets if swords_part(t.context_id) == part]


def run_source(proposer: Proposer, targets: Sequence[SwordsTarget]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Proposals per target id, and the cost: seconds per target, targets not one word."""
    proposals: dict[str, list[str]] = {}
    unaligned = 0
    start = time.perf_counter()
    for target in targets:
        try:
            text, position = target.in_sentence()
        except DataError:
            unaligned += 1
            continue
        proposals[target.id] = list(proposer(text, position))
    seconds = time.perf_counter() - start
    return proposals, {"seconds": round(seconds, 2), "seconds_per_target": round(seconds / max(1, len(targets)), 4),
                       "unaligned": unaligned}


def calibration(path: Path, part: str, lemma: Any, out: Path | None) -> int:
    """Every candidate the people source's second stage judged on ``part`` that people judged
    too: its calibrated probability against acceptable (more than half said yes)."""
    import numpy as np

    from textrobust.attack.candidates.people import PeopleSubstitutes
    from textrobust.validity.calibration import expected_calibration_error, format_table, reliability_table

    source = PeopleSubstitutes()
    probabilities, labels = [], []
    for target in targets_of(path, part):
        try:
            text, position = target.in_sentence()
        except DataError:
            continue
        votes: dict[str, list[int]] = {}
        for sub in target.substitutes:
            pair = votes.setdefault(lemma(sub.substitute, target.wordnet_pos), [0, 0])
            pair[0] += sub.yes
            pair[1] += sub.no
        for verdict in source.evidence(text, position):
            if verdict.probability is None:
                continue
            yes, no = votes.get(lemma(verdict.substitute.lower(), target.wordnet_pos), (0, 0))
            if yes + no:
                probabilities.append(verdict.probability)
                labels.append(int(yes / (yes + no) > 0.5))
    rows = reliability_table(probabilities, labels)
    ece = expected_calibration_error(probabilities, labels)
    print(format_table(rows))
    print(f"judged pairs: {len(labels)}, acceptable {sum(labels)}, mean probability {np.mean(probabilities):.3f}; "
          f"expected calibration error (10 bins): {ece:.3f}")
    if out is not None:
        out.write_text(json.dumps({"part": part, "pairs": len(labels), "ece": ece,
                                   "table": [r.__dict__ for r in rows]}, indent=1) + "\n", encoding="utf-8")
    return 0


def row(name: str, s: SwordsScore) -> str:
    d = s.as_dict()
    return (f"| {name} | {d['per_target']:.2f} | {d['lenient_precision']:.1%} | {d['strict_precision']:.1%} | "
            f"{d['conceivable']:.1%} | {d['recall']:.1%} | {d['first_proposal_acceptable']:.1%} | "
            f"{100 * d['f10_lenient_acceptable']:.1f} | {100 * d['f10_strict_acceptable']:.1f} |")


HEADER = ("| source | substitutes per target | acceptable (lenient precision) | strict precision | conceivable "
          "| recall of acceptable | first proposal acceptable | F@10 lenient | F@10 strict |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--swords", type=Path, default=DEFAULT_SWORDS, help="SWORDS dev JSON (.json.gz)")
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("score", help="one source on one part")
    one.add_argument("source", choices=sorted(SOURCES))
    one.add_argument("--part", choices=("held_out", "tune", "all"), default="held_out")
    one.add_argument("--show", type=int, default=0, help="print the first N targets' proposals with their labels")
    cal = sub.add_parser("calibration", help="the people source's probabilities against people's verdicts: "
                         "reliability table and expected calibration error (10 bins)")
    cal.add_argument("--part", choices=("held_out", "tune", "all"), default="held_out")
    cal.add_argument("--out", type=Path, default=None)
    many = sub.add_parser("routes", help="every source (or --sources) on both parts, as a table and JSON")
    many.add_argument("--sources", nargs="*", default=None)
    many.add_argument("--out", type=Path, default=None)
    many.add_argument("--parts", nargs="*", default=["tune", "held_out"], choices=("tune", "held_out"))
    args = parser.parse_args(argv)
    lemma = wordnet_lemmatizer()
    if args.command == "score":
        targets = targets_of(args.swords, args.part)
        proposals, cost = run_source(SOURCES[args.source][1](), targets)
        s = score(targets, proposals, lemmatizer=lemma)
        print(HEADER)
        print(row(args.source, s))
        print(json.dumps({**s.as_dict(), **cost}, indent=1))
        for target in targets[: args.show]:
            votes = {sub.substitute: f"{sub.yes}/{sub.yes + sub.no}" for sub in target.substitutes}
            shown = [f"{p}({votes.get(lemma(p, target.wordnet_pos), '-')})" for p in proposals.get(target.id, [])]
            print(f"{target.target} [{target.pos}] in {target.in_sentence()[0]}\n   -> {', '.join(shown)}")
        return 0
    if args.command == "calibration":
        return calibration(args.swords, args.part, lemma, args.out)
    results: dict[str, Any] = {}
    names = args.sources or list(SOURCES)
    for part in args.parts:
        targets = targets_of(args.swords, part)
        print(f"\n{part} ({len(targets)} targets)\n{HEADER}", flush=True)
        for name in names:
            proposals, cost = run_source(SOURCES[name][1](), targets)
            s = score(targets, proposals, lemmatizer=lemma)
            results.setdefault(name, {"what": SOURCES[name][0]})[part] = {**s.as_dict(), **cost}
            print(row(name, s), flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
