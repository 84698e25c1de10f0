"""Fill-in batching across SO-Beam's beam (issue 31): is one fill-in call per beam step
faster than one per beam text, and does it change any score, neighbour set or record?

    python benchmarks/fill_in_batching.py                      # default fill-in, 2 examples (~1 min)
    python benchmarks/fill_in_batching.py --examples 3 --max-words 14
    python benchmarks/fill_in_batching.py --fill-in minilm_tuned --examples 3 --max-words 14 --repeats 3

SO-Beam (Algorithm 2 of Zhang et al. 2021, the double-perturbation paper) on the default
victim (``textrobust.zoo``'s word CNN), fresh caches for every run. Ratios are taken
within one process (the machine is shared); each way runs ``--repeats`` times, the two
ways alternated, and the fastest run of each is kept (the first run of a process is
often slowed by warm-up and by other jobs).

1. ``per text`` vs ``per step``: the second-order wall time, the time in the fill-in,
   its calls and rows per example, with a source without the beam's ``prefetch`` hook
   (one fill-in call per beam text, as before) and with it (one call per beam step);
   whether any record (status, vulnerable text, queries, iterations, probabilities)
   differs.
2. ``micro``: the fill-in requests of every beam step of the per-text run, asked again
   with empty caches as they were (one call per text) and all at once: seconds per row
   both ways, the largest score difference, and how many kept-word sets (Algorithm 1's
   kappa/delta threshold) and top-21 word orders differ.

The tables are printed as Markdown; benchmarks/results/fill_in_batching.md holds runs.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

from textrobust.text import Text


class Recorder:
    """A fill-in wrapper that times its calls and keeps their requests, tagged with the
    beam step they come from (``step`` is set from outside)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.step = 0
        # (step, requests, answers, seconds) of every call
        self.calls: list[tuple[int, list[tuple[Text, int]], list[list[tuple[str, float]]], float]] = []
        self.seconds = 0.0
        self.rows = 0

    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        started = time.perf_counter()
        out = self.inner.fill(requests, k)
        spent = time.perf_counter() - started
        self.seconds += spent
        self.calls.append((self.step, list(requests), out, spent))
        self.rows += len(requests)
        return out

    def reset(self) -> None:
        self.inner.clear_cache()
        self.calls.clear()
        self.seconds = 0.0
        self.rows = self.step = 0

    def __repr__(self) -> str:
        return f"Recorder({self.inner!r})"


def build(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The query layer, the recorded fill-in and the examples (the first ``--examples``
    test examples of --min-words..--max-words words that have a patch pair)."""
    from textrobust.analyses.second_order import PatchFinder
    from textrobust.analyses.second_order.analysis import patch_synonyms
    from textrobust.data.sources import load_dataset
    from textrobust.fill_in import DEFAULT_FILL_IN, load_fill_in
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo.default import ensure_default_victim
    from textrobust.zoo.io import load_victim

    layer = QueryLayer(load_victim(ensure_default_victim()))
    fill_in = Recorder(load_fill_in(args.fill_in or DEFAULT_FILL_IN))
    finder = PatchFinder(layer, patch_synonyms("validated"))
    examples = []
    for example in load_dataset("rotten_tomatoes", "test"):
        if not args.min_words <= len(example.text) <= args.max_words:
            continue
        if finder.choose(example.text) is None:
            continue
        examples.append(example)
        if len(examples) == args.examples:
            break
    return layer, fill_in, examples


class PerTextSource:
    """A neighbour source without the beam's ``prefetch`` hook: one fill-in call per beam
    text, as before issue 31."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def candidates(self, text: Text, positions: Sequence[int]) -> Any:
        return self.inner.candidates(text, positions)


def attack_all(layer: Any, fill_in: Recorder, examples: Sequence[Any], *, prefetch: bool) -> tuple[list[Any], float]:
    """SO-Beam on ``examples`` (fresh caches: fill-in, neighbourhood, query layer); the
    records and the wall seconds. ``prefetch``: the beam's one fill-in call per step."""
    import textrobust.attack.searches.base as base
    from textrobust.analyses.second_order import Neighbourhood, PatchFinder, SecondOrderAttack, so_beam
    from textrobust.analyses.second_order.analysis import patch_synonyms

    class PerText(Neighbourhood):
        def source(self, blacklist: Any = ()) -> Any:
            return PerTextSource(super().source(blacklist))

    fill_in.reset()
    layer.clear_cache()
    hood = (Neighbourhood if prefetch else PerText)(fill_in)
    search = so_beam()
    attack = SecondOrderAttack(layer, hood, search, patches=PatchFinder(layer, patch_synonyms("validated")))
    evaluate = base.Run.evaluate

    def counting(self: Any, texts: Sequence[Text], **kw: Any) -> Any:
        fill_in.step += 1  # every beam step ends with one evaluate call
        return evaluate(self, texts, **kw)

    base.Run.evaluate = counting  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        records = [attack.attack(example) for example in examples]
        seconds = time.perf_counter() - started
    finally:
        base.Run.evaluate = evaluate  # type: ignore[method-assign]
    return records, seconds


def micro(fill_in: Recorder, calls: Sequence[Any], k: int) -> dict[str, float]:
    """Every step with two or more fill-in calls in the per-text run (``calls``), asked
    again with empty caches one call per text and then all at once: seconds both ways,
    rows, the largest score difference and the kept-word sets that differ."""
    from textrobust.fill_in.neighbourhood import keep_by_logit

    steps: dict[int, list[list[tuple[Text, int]]]] = {}
    for step, requests, _, _ in calls:
        steps.setdefault(step, []).append(requests)
    inner = fill_in.inner
    per_text = batched = 0.0
    rows = n_steps = n_calls = 0
    worst = 0.0
    sets_differ = order_differ = 0
    for groups in steps.values():
        if len(groups) < 2:
            continue
        n_steps += 1
        n_calls += len(groups)
        flat = [r for g in groups for r in g]
        rows += len(flat)
        inner.clear_cache()
        started = time.perf_counter()
        one = [a for g in groups for a in inner.fill(g, k)]
        per_text += time.perf_counter() - started
        inner.clear_cache()
        started = time.perf_counter()
        many = inner.fill(flat, k)
        batched += time.perf_counter() - started
        for a, b in zip(one, many):
            if [w for w, _ in a] != [w for w, _ in b]:
                order_differ += 1
            scores_a = dict(a)
            worst = max([worst, *(abs(s - scores_a[w]) for w, s in b if w in scores_a)])
            kept_a = {w for (w, _), keep in zip(a, keep_by_logit([s for _, s in a], k - 1, 3.0)) if keep}
            kept_b = {w for (w, _), keep in zip(b, keep_by_logit([s for _, s in b], k - 1, 3.0)) if keep}
            sets_differ += kept_a != kept_b
    inner.clear_cache()
    return {"steps": n_steps, "calls": n_calls, "rows": rows, "per_text_s": per_text, "batched_s": batched,
            "max_score_diff": worst, "kept_sets_differ": sets_differ, "word_orders_differ": order_differ}


def exactness(fill_in: Any, examples: Sequence[Any]) -> dict[str, float]:
    """Would batches of equal token length (no padding) make the masked LM's logits
    independent of the batch? The largest logit difference of each row computed alone
    vs in a batch of rows of its token length, vs in one padded batch of every row, and
    between equal-length batches of 2 rows and of all rows of that length."""
    import torch

    from textrobust.fill_in.requests import masked_columns

    masked = getattr(fill_in, "masked", fill_in)  # the MiniLM part of minilm_gemma
    gaps = [masked_columns(e.text, p, masked._mask_token) for e in examples for p in range(len(e.text))]
    encoded = masked._encode(gaps)

    def logits(rows: Sequence[int]) -> Any:
        with torch.inference_mode():
            return masked._mask_logits(masked._pad([encoded[i] for i in rows], torch)).float().cpu()

    alone = [logits([i])[0] for i in range(len(encoded))]
    by_length: dict[int, list[int]] = {}
    for i, row in enumerate(encoded):
        by_length.setdefault(len(row[0]), []).append(i)
    equal = padded = sizes = 0.0
    for rows in by_length.values():
        out = logits(rows)
        equal = max([equal, *((out[r] - alone[i]).abs().max().item() for r, i in enumerate(rows))])
        if len(rows) > 2:
            sizes = max(sizes, (logits(rows[:2]) - out[:2]).abs().max().item())
    everything = list(range(len(encoded)))
    out = logits(everything)
    padded = max((out[r] - alone[i]).abs().max().item() for r, i in enumerate(everything))
    return {"rows": len(encoded), "lengths": len(by_length), "equal_vs_alone": equal, "padded_vs_alone": padded,
            "equal_2_vs_all": sizes}


def record_key(r: Any) -> tuple[Any, ...]:
    return (r.example_id, r.status.value, str(r.vulnerable), r.queries, r.iterations,
            tuple(round(p, 6) for p in r.vulnerable_probabilities))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fill-in", default=None, help="fill-in name (default: the library's default)")
    parser.add_argument("--examples", type=int, default=2)
    parser.add_argument("--min-words", type=int, default=6)
    parser.add_argument("--max-words", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each way, alternated; the fastest is kept")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    print(f"load before: {os.getloadavg()}")
    layer, fill_in, examples = build(args)
    fill_in.inner.fill([(examples[0].text, 0), (examples[0].text, 1)], 21)  # load the models
    layer.probabilities([examples[0].text])
    n = len(examples)
    best: dict[bool, tuple[float, float, int, int]] = {}  # prefetch -> seconds, fill-in seconds, calls, rows
    records: dict[bool, list[Any]] = {}
    calls: list[Any] = []
    evaluations = 0
    for _ in range(args.repeats):
        for prefetch in (False, True):
            found, seconds = attack_all(layer, fill_in, examples, prefetch=prefetch)
            keys = [record_key(r) for r in found]
            if prefetch in records and keys != [record_key(r) for r in records[prefetch]]:
                raise SystemExit(f"a rerun (prefetch={prefetch}) changed a record: not deterministic")
            records[prefetch] = found
            if not prefetch:
                calls, evaluations = list(fill_in.calls), fill_in.step
            if prefetch not in best or seconds < best[prefetch][0]:
                best[prefetch] = (seconds, fill_in.seconds, len(fill_in.calls), fill_in.rows)
    same = sum(record_key(a) == record_key(b) for a, b in zip(records[False], records[True]))
    (t0, f0, c0, r0), (t1, f1, c1, r1) = best[False], best[True]
    print(f"\n## {fill_in.inner!r}\n\n{n} examples ({[len(e.text) for e in examples]} words), "
          f"threads={args.threads}, best of {args.repeats}\n")
    print("| SO-Beam, per example | per text (before) | per step (prefetch) |\n|---|---|---|")
    print(f"| second-order seconds | {t0 / n:.2f} | {t1 / n:.2f} |")
    print(f"| fill-in seconds (share) | {f0 / n:.2f} ({100 * f0 / t0:.0f}%) | {f1 / n:.2f} ({100 * f1 / t1:.0f}%) |")
    print(f"| fill-in calls | {c0 / n:.1f} | {c1 / n:.1f} |")
    print(f"| fill-in rows (record's fill_requests) | {r0 / n:.1f} | {r1 / n:.1f} |")
    print(f"| search evaluate calls (start + beam steps) | {evaluations / n:.1f} | |")
    print(f"| speed-up of second-order | | {t0 / t1:.2f}x |")
    print(f"| records identical | | {same} of {n} |")
    m = micro(fill_in, calls, 21)
    print("\n| micro: the per-text run's steps, empty caches | value |\n|---|---|")
    print(f"| steps / calls / rows | {m['steps']} / {m['calls']} / {m['rows']} |")
    print(f"| ms per row, one call per text | {1000 * m['per_text_s'] / max(m['rows'], 1):.2f} |")
    print(f"| ms per row, one call per step | {1000 * m['batched_s'] / max(m['rows'], 1):.2f} |")
    print(f"| speed-up of the fill-in | {m['per_text_s'] / max(m['batched_s'], 1e-9):.2f}x |")
    print(f"| largest score difference | {m['max_score_diff']:.3g} |")
    print(f"| kept-word sets that differ | {m['kept_sets_differ']} of {m['rows']} |")
    print(f"| top-21 word orders that differ | {m['word_orders_differ']} of {m['rows']} |")
    e = exactness(fill_in.inner, examples)
    print("\n| exactness of the masked LM's logits (no padding?) | largest difference |\n|---|---|")
    print(f"| rows / token lengths | {e['rows']} / {e['lengths']} |")
    print(f"| equal-length batch vs each row alone | {e['equal_vs_alone']:.3g} |")
    print(f"| one padded batch vs each row alone | {e['padded_vs_alone']:.3g} |")
    print(f"| equal-length batch of 2 vs of all rows of that length | {e['equal_2_vs_all']:.3g} |")
    print(f"\nload after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
