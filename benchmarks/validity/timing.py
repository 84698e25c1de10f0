"""Seconds per sentence of the validated source, cold and with a warm verdict cache (issue 39).

The source judges every content word of the 60 test sentences that ``measure.py`` uses for
candidates per word (20 per corpus): once with no verdict cache (cold: every model runs),
then a second, fresh source on the same verdict file (warm: what a second audit of the same
data costs). Models are loaded and warmed on other sentences first, so load time is not
counted. ``--settings`` compares the issue-28 default (the Gemma fluency check) with the
current one. The load average is printed beside each figure: timings on a shared machine
are upper bounds.

Rerun: ``.venv/bin/python benchmarks/validity/timing.py --out /tmp/h39/timing.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from textrobust.assets import stop_words
from textrobust.attack.candidates.labelled import labelled_substitutions
from textrobust.attack.candidates.validated import ValidatedSynonyms
from textrobust.text import Text

#: issue 28's default: no judge, no guards, the causal-LM (Gemma) fluency check
ISSUE_28 = {"min_judge": None, "function_adverbs": False, "name_guard": False, "min_lm_delta": -4.0}


def test_sentences(per_corpus: int) -> list[Text]:
    items = labelled_substitutions("test")
    texts: list[Text] = []
    for corpus in ("rotten_tomatoes", "bbc_news", "tweets"):
        seen: list[str] = []
        for item in items:
            if item.corpus == corpus and item.sentence not in seen:
                seen.append(item.sentence)
        texts += [Text.from_string(s) for s in seen[:per_corpus]]
    return texts


def run(source: Any, texts: list[Text], stops: set[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        positions = [i for i, w in enumerate(text.words) if w.isalpha() and len(w) >= 3 and w.lower() not in stops]
        source.candidates(text, positions)
    return (time.perf_counter() - start) / len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sentences", type=int, default=20, help="test sentences per corpus")
    parser.add_argument("--settings", choices=["default", "issue28", "both", "two_stage", "default_two_stage",
                                               "people", "people_validated"],
                        default="both", help="two_stage: second_judge on (Gemma inside the band)")
    args = parser.parse_args()
    texts = test_sentences(args.sentences)
    stops = {w.lower() for w in stop_words()}
    warm_up = [Text.from_string("A warm-up sentence about a quiet film and its patient director.")]
    result: dict[str, Any] = {"sentences": len(texts)}
    names = {"both": ["default", "issue28"], "default_two_stage": ["default", "two_stage"],
             "people_validated": ["people", "default"]}.get(args.settings, [args.settings])
    for name in names:
        settings = {"issue28": ISSUE_28, "two_stage": {"second_judge": True}}.get(name, {})
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "verdicts.sqlite"
            if name == "people":  # issue 46: the source learned from people (the default since then)
                from textrobust.attack.candidates.people import PeopleSubstitutes

                cold_people = PeopleSubstitutes(verdict_cache=path)
                run(cold_people, warm_up, stops)
                load = os.getloadavg()[0]
                seconds = run(cold_people, texts, stops)
                warm_people = PeopleSubstitutes(verdict_cache=path)
                warm_people._fill_in, warm_people._vectors = cold_people._fill_in, cold_people._vectors
                cached = run(warm_people, texts, stops)
                result[name] = {"seconds_per_sentence": round(seconds, 3), "warm_cache_seconds_per_sentence":
                                round(cached, 4), "load_average_at_start": round(load, 2),
                                "load_average_at_end": round(os.getloadavg()[0], 2), "stats": cold_people.stats}
                print(name, result[name], flush=True)
                continue
            cold = ValidatedSynonyms(verdict_cache=path, **settings)
            run(cold, warm_up, stops)
            if name == "two_stage":  # Gemma loads inside the band only: load it before the clock
                cold.lm.sentence_log_prob(["A warm-up sentence."])
            load = os.getloadavg()[0]
            seconds = run(cold, texts, stops)
            warm = ValidatedSynonyms(verdict_cache=path, **settings)
            warm._fill_in, warm._vectors, warm._lm = cold._fill_in, cold._vectors, cold._lm  # loaded already
            cached = run(warm, texts, stops)
            result[name] = {"seconds_per_sentence": round(seconds, 3), "warm_cache_seconds_per_sentence":
                            round(cached, 4), "load_average_at_start": round(load, 2),
                            "load_average_at_end": round(os.getloadavg()[0], 2)}
        print(name, result[name], flush=True)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
