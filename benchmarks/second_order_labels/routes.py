"""Issue 48's routes to natural neighbours, measured on the DEV half of the labelled findings.

Each route is a rule a search could apply; measured post hoc on the findings people already
read (reader 1, dev half, every phase and victim), as the findings it would have kept:
their naturalness (x~0 over x0, the restated target: at least 0.94), how often the patch
kept the sentiment (target 85%) and how many survive. The test half is never read here.

    python benchmarks/second_order_labels/routes.py            # the markdown table
    python benchmarks/second_order_labels/routes.py --json

Routes:
- (a) one changed word (the paper's Neighbor_1), content words only, a neighbour no less
  fluent than x0 (Gemma perplexity ratio <= 1): what the search with ``max_k = 1`` and
  issue 38's checks reports; stricter fluency floors beside it.
- (b) the most fluent of a step's vulnerable neighbours (``pick = "fluent"``): the labelled set
  holds one neighbour per finding, so only its premise is measurable here: within route (a),
  the more fluent half of the findings against the less fluent half.
- (c) a trained neighbour check: a logistic model of "a reader gives the neighbour 4 or 5"
  on cheap features (words changed, log perplexity ratio to x0, whether a stop word is
  touched, word frequencies of the replaced and new words), fitted on the dev half and
  measured leave-one-out (each finding scored by the model fitted without it).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from textrobust.validity.second_order import LabelledFinding, load_labelled, table4

FEATURES = ("l0", "log_ratio", "touches_stop", "zipf_old", "zipf_new")


def _core(word: str) -> str:
    return re.sub(r"^\W+|\W+$", "", word).lower()


def features(f: LabelledFinding, stops: frozenset[str]) -> dict[str, float]:
    """The cheap features of a finding's neighbour (what a search knows when it checks)."""
    from wordfreq import zipf_frequency

    from textrobust.text import Text

    a, b = Text.from_string(f.x0), Text.from_string(f.neighbour)
    same = len(a) == len(b)
    diff = a.diff(b) if same else []
    olds = [_core(a.words[p]) for p in diff]
    news = [_core(b.words[p]) for p in diff]
    ratio = f.ppl_neighbour / f.ppl_x0 if f.ppl_x0 and not math.isnan(f.ppl_neighbour) else 1.0
    touches = (not same) or any(o in stops or n in stops or not any(c.isalpha() for c in n)
                                for o, n in zip(olds, news))
    return {"l0": float(len(diff) if same else 6), "log_ratio": math.log(max(ratio, 1e-6)),
            "touches_stop": float(touches),
            "zipf_old": min([zipf_frequency(w, "en") for w in olds] or [7.0]),
            "zipf_new": min([zipf_frequency(w, "en") for w in news] or [7.0])}


def ratio_of(f: LabelledFinding) -> float:
    return f.ppl_neighbour / f.ppl_x0 if f.ppl_x0 and not math.isnan(f.ppl_neighbour) else math.inf


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 500) -> tuple[np.ndarray, np.ndarray,
                                                                                           np.ndarray]:
    """A standardised L2 logistic regression by Newton's method: (mean, scale, weights with
    the bias last)."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-z @ w))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, w


def predict(model: tuple[np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    mean, scale, w = model
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    return np.asarray(1.0 / (1.0 + np.exp(-z @ w)))


def leave_one_out(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each row's probability under the model fitted without it."""
    out = np.empty(len(x))
    for i in range(len(x)):
        keep = np.arange(len(x)) != i
        out[i] = predict(fit_logistic(x[keep], y[keep]), x[i:i + 1])[0]
    return out


def row(name: str, rows: Sequence[LabelledFinding]) -> dict[str, Any]:
    t = table4(rows)
    ratio = t.naturalness_neighbour / t.naturalness_x0 if t.findings else math.nan
    return {"route": name, "n": t.findings, "nat_x0": t.naturalness_x0, "nat_neighbour": t.naturalness_neighbour,
            "ratio": ratio, "keeps": t.keeps_neighbour, "patch_ok": t.patch_ok}


def routes(found: Sequence[LabelledFinding]) -> list[dict[str, Any]]:
    from textrobust.assets import stop_words

    stops = frozenset(w.lower() for w in stop_words())
    dev = [f for f in found if f.reader == 1 and f.half == "dev"]
    feats = {f.item: features(f, stops) for f in dev}
    x = np.array([[feats[f.item][k] for k in FEATURES] for f in dev])
    y = np.array([f.nat_neighbour >= 4 for f in dev], dtype=np.float64)
    loo = dict(zip((f.item for f in dev), leave_one_out(x, y)))

    def content(f: LabelledFinding) -> bool:
        return not feats[f.item]["touches_stop"]

    def issue38(f: LabelledFinding) -> bool:  # the shipped default before issue 48: k <= 3, content, fluency 1
        return content(f) and f.l0 <= 3 and ratio_of(f) <= 1.0

    def neighbor1(f: LabelledFinding, floor: float = 1.0) -> bool:
        """At most one changed word; a changed one passes the fluency floor (x0 itself always does)."""
        return content(f) and (f.l0 == 0 or (f.l0 == 1 and ratio_of(f) <= floor))

    rules: list[tuple[str, Callable[[LabelledFinding], bool]]] = [
        ("all read (the paper's count, mostly)", lambda f: True),
        ("issue 38's default post hoc: content words, k <= 3, fluency <= 1.0 x x0", issue38),
        ("(a) Neighbor_1: content words, k <= 1, fluency <= 1.0 x x0", neighbor1),
        ("(a) ... of which l0 = 1 (a changed word)", lambda f: neighbor1(f) and f.l0 == 1),
        ("(a) with fluency <= 0.9 x x0", lambda f: neighbor1(f, 0.9)),
        ("(a) with fluency <= 0.8 x x0", lambda f: neighbor1(f, 0.8)),
    ]
    within = sorted((f for f in dev if neighbor1(f) and f.l0 == 1), key=ratio_of)
    half = len(within) // 2
    more, less = {f.item for f in within[:half]}, {f.item for f in within[half:]}
    rules.append(("(b) premise: l0 = 1 of (a), the more fluent half", lambda f: f.item in more))
    rules.append(("(b) premise: l0 = 1 of (a), the less fluent half", lambda f: f.item in less))
    rules.append(("(a) ... of which l0 = 0 (x0 itself)", lambda f: neighbor1(f) and f.l0 == 0))
    for bar in (0.5, 0.6, 0.7, 0.8):
        rules.append((f"(c) trained check P(natural) >= {bar} (leave-one-out), on (a)",
                      lambda f, bar=bar: neighbor1(f) and loo[f.item] >= bar))
        rules.append((f"(c) trained check P(natural) >= {bar} alone, k <= 3", lambda f, bar=bar: f.l0 <= 3
                      and loo[f.item] >= bar))
    return [row(name, [f for f in dev if keep(f)]) for name, keep in rules]


def _fmt(value: float, percent: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.0%}" if percent else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--path", help="a labelled.tsv (default: the shipped one)")
    args = parser.parse_args()
    table = routes(load_labelled(args.path))
    if args.json:
        print(json.dumps(table, indent=1))
        return
    print("| route (dev half, post hoc) | findings kept | naturalness x0 | naturalness x~0 | ratio | patch keeps | "
          "patch a synonym |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in table:
        print(f"| {r['route']} | {r['n']} | {_fmt(r['nat_x0'])} | {_fmt(r['nat_neighbour'])} | {_fmt(r['ratio'])} | "
              f"{_fmt(r['keeps'], True)} | {_fmt(r['patch_ok'], True)} |")


if __name__ == "__main__":
    main()
