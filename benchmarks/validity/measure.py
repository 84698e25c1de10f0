"""Precision, recall and candidates per word of every candidate source on the labelled set.

The papers' sources are measured from the ``sources`` column of the labelled set (which
sources proposed each substitution when the pool was drawn: ``build_pool.py``); the
validated source is run on every labelled position (:func:`score_source`). Candidates per
word: each source run on the content words of 60 test sentences (20 per corpus; the
fill-in's top 20 is fixed by construction and not rerun).

Rerun: ``.venv/bin/python benchmarks/validity/measure.py --out benchmarks/results/validity.json``
(``--source labelled`` for issue 39's ValidatedSynonyms; the default scores the source learned from
people, issue 46)
(``--splits test``: 2 min 31 s at load 2-7 on the grown set, 2026-11-28; the default source
runs no Gemma).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from textrobust.assets import stop_words
from textrobust.attack.candidates import ValidatedSynonyms, WordNetSynonyms, embedding_neighbours
from textrobust.attack.candidates.labelled import (
    LabelledSubstitution,
    candidates_per_word,
    labelled_substitutions,
    score_source,
)
from textrobust.text import Text

PAPER_SOURCES = {
    "embedding": "counter-fitted GloVe 50d, k=50, cos >= 0.5 (TextFooler; Alzantot, PSO space)",
    "wordnet": "WordNet synonyms, every sense, tagged POS, inflected (PWWS)",
    "fill_in": "minilm_gemma fill-in, top 20 (BAE-style; second-order neighbourhoods)",
    "cleaned": "WordNet ranked by counter-fitted cosine >= 0.5, top 5 (radius / PR, Yang et al.)",
}


class _CosFloor:
    """The TextFooler candidate set: embedding neighbours with cos >= 0.5."""

    def __init__(self) -> None:
        self.inner = embedding_neighbours(k=50)

    def candidates(self, text: Text, positions: list[int]) -> dict:
        found = self.inner.candidates(text, positions)
        return {p: [s for s in subs if s.score >= 0.5] for p, subs in found.items()}


class _CountingLM:
    """Gemma (loaded on first use) counting the batches and sentences it scores."""

    def __init__(self) -> None:
        self.inner: Any = None
        self.calls = self.sentences = 0

    def sentence_log_prob(self, texts: list[str]) -> list[float]:
        if self.inner is None:
            from textrobust.lm.causal import CausalLM

            self.inner = CausalLM.default()
        self.calls += 1
        self.sentences += len(texts)
        return [float(x) for x in self.inner.sentence_log_prob(texts)]

    def take(self, sentences: int) -> dict[str, float]:
        out = {"batches": self.calls, "lm_sentences": self.sentences, "sentences_judged": sentences,
               "batches_per_sentence": round(self.calls / sentences, 3) if sentences else 0.0}
        self.calls = self.sentences = 0
        return out


def by_column(items: list[LabelledSubstitution], name: str) -> dict[str, float]:
    accepted = [i for i in items if name in i.sources]
    tp = sum(i.valid for i in accepted)
    positives = sum(i.valid for i in items)
    return {"n": len(items), "accepted": len(accepted), "true_positives": tp, "positives": positives,
            "precision": tp / len(accepted) if accepted else 0.0, "recall": tp / positives if positives else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sentences", type=int, default=20, help="test sentences per corpus for candidates per word")
    parser.add_argument("--splits", nargs="+", default=["dev", "test"], help="splits the validated source is run on")
    parser.add_argument("--issue28", action="store_true", help="also score issue 28's default settings (Gemma)")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="the validated source's settings (JSON values), e.g. second_judge=true")
    parser.add_argument("--verdicts", type=Path, default=None, help="a verdict cache file (default: none)")
    parser.add_argument("--source", choices=("people", "labelled"), default="people",
                        help="the validated source to score: people (issue 46's, the default since) or labelled "
                             "(issue 39's ValidatedSynonyms; --set and --issue28 apply to it)")
    args = parser.parse_args()
    splits = {split: labelled_substitutions(split) for split in ("dev", "test")}
    everything = labelled_substitutions()
    result: dict = {"sources": {}, "validated": {},
                    "labelled": {"items": len(everything), "valid": sum(i.valid for i in everything),
                                 "corpora": sorted({i.corpus for i in everything}),
                                 **{s: {"items": len(v), "valid": sum(i.valid for i in v)} for s, v in splits.items()}}}
    # the papers' sources from the sources column of the first two pools (issue 28), which
    # recorded them; the third pool (issue 39, ids from s2000) recorded other sources
    first_pools = {s: [i for i in items if int(i.id[1:]) < 2000] for s, items in splits.items()}
    for name, what in PAPER_SOURCES.items():
        result["sources"][name] = {"what": what, **{s: by_column(items, name) for s, items in first_pools.items()}}
    settings = {name: json.loads(value) for name, _, value in (spec.partition("=") for spec in args.set)}
    lm = _CountingLM() if settings.get("second_judge") else None
    source: Any
    if args.source == "people":
        from textrobust.attack.candidates.people import PeopleSubstitutes

        source = PeopleSubstitutes(verdict_cache=args.verdicts if args.verdicts is not None else False, **settings)
    else:
        source = ValidatedSynonyms(verdict_cache=args.verdicts if args.verdicts is not None else False, lm=lm,
                                   **settings)
    result["validated"]["source"] = args.source
    result["validated"]["settings"] = source.config.model_dump()
    if args.issue28:
        old = ValidatedSynonyms(verdict_cache=args.verdicts if args.verdicts is not None else False, min_judge=None, function_adverbs=False,
                                name_guard=False, min_lm_delta=-4.0)
        result["issue28_default"] = {s: score_source(old, items).as_dict() for s, items in splits.items()}
        print("issue 28 default:", result["issue28_default"], flush=True)
    for split, items in splits.items():
        if split not in args.splits:
            continue
        start = time.perf_counter()
        result["validated"][split] = {**score_source(source, items).as_dict(),
                                      "seconds": round(time.perf_counter() - start, 1)}
        print(split, result["validated"][split], flush=True)
        if lm is not None:  # how often the two-stage judge asked Gemma
            result["validated"][split]["lm"] = lm.take(len({i.sentence for i in items}))
            print(split, "Gemma:", result["validated"][split]["lm"], flush=True)
    texts: list[Text] = []
    for corpus in ("rotten_tomatoes", "bbc_news", "tweets"):
        seen: list[str] = []
        for item in splits["test"]:
            if item.corpus == corpus and item.sentence not in seen:
                seen.append(item.sentence)
        texts += [Text.from_string(s) for s in seen[: args.sentences]]
    stops = stop_words()
    per_word = {}
    for name, built in (("embedding", _CosFloor()), ("wordnet", WordNetSynonyms()), ("validated", source)):
        start = time.perf_counter()
        per_word[name] = {"per_word": round(candidates_per_word(built, texts, stops), 2),
                          "seconds": round(time.perf_counter() - start, 1)}
        print(name, per_word[name], flush=True)
    result["candidates_per_word"] = {"texts": len(texts), **per_word}
    # the validated source's proposals on these texts, with their evidence, to read
    examples = []
    for text in texts[:: max(1, len(texts) // 15)]:
        positions = [i for i, w in enumerate(text.words) if w.isalpha() and w.lower() not in stops]
        for position, subs in source.candidates(text, positions).items():
            for sub in subs[:2]:
                e = source.evidence(text, position, sub.word)[0]
                examples.append({"sentence": str(text), "word": text.words[position], **e.as_dict()})
    result["examples"] = examples
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
