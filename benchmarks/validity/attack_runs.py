"""Shared by ``min_validity.py`` and ``findings_readings.py`` (issue 47, items 2 and 5): the
sentences each run attacks, one ``textrobust attack`` run, and its flips re-judged by the
current judge.

Sentences. Rotten Tomatoes: the bundled split's sentences of 4-40 words. Tweets: the
bundled split's non-neutral tweets (negative -> negative, positive -> positive: both
victims are binary sentiment classifiers) of 8-35 words, cleaned as
``benchmarks/second_order_labels/generate.py`` cleans them (no links, handles, "RT", "#"),
ASCII only, not cut off ("..."). Drawn at random with a fixed seed per corpus and split and
written as a JSONL file (``id``, ``text``, ``label``) that ``textrobust attack --data`` reads,
so the run attacks exactly those sentences in that order.

A run is ``textrobust attack --recipe textfooler --no-quality --min-validity M`` (the
default attack: the validated source, no query budget) in a subprocess with
``TEXTROBUST_THREADS=1``; :func:`flips` reads its store back and re-judges every flip with
the judge current at measuring time (:func:`~textrobust.attack.candidates.swap_validity.
finding_validity` over the shared validated source).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = os.environ.get("TEXTROBUST_PYTHON", sys.executable)
CORPORA = ("rotten_tomatoes", "tweets")
SHORT = {"rotten_tomatoes": "rt", "tweets": "tw"}
_TWEET_STRIP = re.compile(r"https?://\S+|www\.\S+|\bRT\b:?|@\w+:?|&amp;?")


def clean_tweet(text: str) -> str:
    """A tweet without links, handles, "RT" and "#" marks (the hashtag's word is kept)."""
    return " ".join(_TWEET_STRIP.sub(" ", text).replace("#", "").split()).strip(" :-")


def pool(corpus: str, split: str) -> list[dict[str, Any]]:
    """The sentences of ``corpus``'s ``split`` that may be drawn (module docstring)."""
    from textrobust.data import load_dataset

    data = load_dataset(corpus, split=split)
    names = list(data.label_names)
    out = []
    for e in data.examples:
        text = clean_tweet(str(e.text)) if corpus == "tweets" else str(e.text)
        words = len(text.split())
        label = names[int(e.label)]
        if corpus == "tweets" and (label == "neutral" or not 8 <= words <= 35 or not text.isascii()
                                   or text.endswith("...")):
            continue
        if corpus == "rotten_tomatoes" and not 4 <= words <= 40:
            continue
        out.append({"id": e.id, "text": text, "label": label})
    return out


def draw(corpus: str, split: str, n: int, path: Path, *, skip: int = 0) -> list[dict[str, Any]]:
    """Sentences ``skip`` .. ``skip + n`` of the seeded shuffle of :func:`pool`, written to
    ``path`` as JSONL; the same arguments give the same sentences."""
    rows = pool(corpus, split)
    random.Random(f"issue47|{corpus}|{split}").shuffle(rows)
    picked = rows[skip: skip + n]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for row in picked:
            f.write(json.dumps(row) + "\n")
    return picked


def attack(victim: str, data: Path, min_validity: float, out: Path, *, log: Path | None = None,
           resume: bool = False) -> dict[str, Any]:
    """One ``textrobust attack`` run (module docstring); its summary.json."""
    env = dict(os.environ, TEXTROBUST_THREADS="1", TEXTROBUST_NO_PROGRESS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = sum(1 for _ in data.open())
    command = [PYTHON, "-m", "textrobust.cli.app", "attack", "--recipe", "textfooler", "--no-quality",
               "--victim", victim, "--data", str(data), "--id-column", "id", "--label-names", "negative,positive",
               "--n", str(rows), "--min-validity", str(min_validity), "--threads", "1", "--quiet",
               "--out", str(out)]
    if resume and (out / "store.sqlite").exists():
        command.append("--resume")
    with (log.open("a") if log else open(os.devnull, "w")) as sink:
        subprocess.run(command, check=True, env=env, stdout=sink, stderr=subprocess.STDOUT)
    return json.loads((out / "summary.json").read_text())


def records(out: Path) -> list[dict[str, Any]]:
    """The attack records of the run in ``out`` (payloads, in the store's order)."""
    from textrobust.store import RunStore

    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run("attack")
        if run is None:
            return []
        return [dict(row.payload) for row in run.results() if not row.failed]


_JUDGE: Any = None


def judge() -> Any:
    """The current validated source (its judge and calibration), loaded once."""
    global _JUDGE
    if _JUDGE is None:
        from textrobust.attack.candidates.choice import shared_validated

        _JUDGE = shared_validated()
    return _JUDGE


def rejudge(original: str, changed: str) -> dict[str, Any]:
    """A finding's probability with the current judge, its swaps combined independently
    (FindingValidity as a dict): the product the measured combination is fitted on."""
    from textrobust.attack.candidates.swap_validity import finding_validity, independent
    from textrobust.text import Text

    before, after = Text.from_string(original), Text.from_string(changed)
    if len(before) != len(after):
        raise ValueError(f"the finding has {len(after)} words, its sentence {len(before)}: {changed!r}")
    return finding_validity(judge(), before, after, combine=independent).to_dict()


def flips(out: Path) -> tuple[int, list[dict[str, Any]]]:
    """The attacked count (succeeded + failed) of the run in ``out`` and its flips:
    example id, original, changed, the swaps and the probability, re-judged now."""
    attacked = 0
    found = []
    for payload in records(out):
        result = payload["result"]
        if result["status"] not in ("succeeded", "failed"):
            continue
        attacked += 1
        if result["status"] != "succeeded":
            continue
        original = result["original"]["columns"][0]
        changed = result["perturbed"]["columns"][0]
        validity = rejudge(original, changed)
        found.append({"example_id": result["example_id"], "original": original, "changed": changed,
                      "label": result["label"], "queries": result["queries"],
                      "probability": validity["probability"], "draws": validity["draws"],
                      "swaps": validity["swaps"], "run_probability": (result["extras"].get("validity") or {})
                      .get("probability")})
    return attacked, found
