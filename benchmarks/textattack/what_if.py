"""What would cut our overhead: the engine as it is against two local changes (greedy).

Not part of the benchmark table: an experiment that measures the two fixes the profile
points at, without touching ``src/``. Both variants run in one process on the inputs of
the last ``prepare.py`` (same victim, examples, candidates and constraints), alternating
``--rounds`` times, and the best round of each is reported:

- ``lazy``: :class:`LazyGreedy` builds and filters a position's candidate texts only when
  the search reaches that position (as TextAttack does), instead of building every
  candidate text of every position up front to rank only positions that have one. It
  ranks the positions that have at least one candidate from the source (before the
  candidate constraints), so it may spend a few more ranking queries.
- ``vectorised``: :class:`BatchEmbeddingDistance` checks a batch of proposals with one
  dictionary lookup per word and numpy on the whole batch, instead of a per-pair cache.

    python benchmarks/textattack/what_if.py [--limit N] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import prepare  # noqa: E402
import run_ours  # noqa: E402


def lazy_greedy_class() -> type:
    from textrobust.attack.searches.base import best_index, seeded_rng
    from textrobust.attack.searches.greedy import GreedySearch
    from textrobust.attack.searches.ranking import rank_positions

    class LazyGreedy(GreedySearch):
        """GreedySearch that builds a position's candidates only when it gets there."""

        def _prepare(self, start: Any, problem: Any) -> Any:
            return None

        def _search(self, start: Any, problem: Any, run: Any, prepared: Any) -> None:
            allowed = problem.positions(start)
            found = problem.source.candidates(start, allowed)
            words = start.words
            positions = [p for p in allowed if any(s.word != words[p] for s in found.get(p, ()))]
            ranking = rank_positions(
                start, problem, positions, self.config.ranking, unk_token=self.config.unk_token,
                rng=seeded_rng(self.config.seed, start),
                evaluate=lambda texts: run.evaluate(texts, track=False),
            )
            current, score = start, run.score
            for position in ranking.positions:
                proposals = problem.neighbours(current, [position])
                if not proposals:
                    continue
                result = run.evaluate([p.text for p in proposals])
                run.iterations += 1
                i = best_index(result.success, result.scores)
                if result.success[i]:
                    return
                if result.scores[i] > score:
                    current, score = proposals[i].text, float(result.scores[i])

    return LazyGreedy


class BatchEmbeddingDistance:
    """WordEmbeddingDistance's rule (min_cos and/or max_l2 against the original or parent
    word, unknown words accepted or not, the same word always accepted), on a batch."""

    def __init__(self, vectors: Any, *, min_cos: float | None, max_l2: float | None,
                 accept_unknown: bool, compare_to: str) -> None:
        self.vectors = vectors
        self.min_cos = min_cos
        self.max_l2 = max_l2
        self.accept_unknown = accept_unknown
        self.parent = compare_to == "parent"
        self._rows: dict[str, int] = {}

    def _row(self, word: str) -> int:
        row = self._rows.get(word)
        if row is None:
            index = self.vectors.index
            found = index.get(word)
            if found is None:
                found = index.get(word.lower())
            row = -1 if found is None else found
            self._rows[word] = row
        return row

    def check(self, original: Any, proposals: Sequence[Any]) -> Any:
        import numpy as np

        n = len(proposals)
        if not n:
            return np.zeros(0, dtype=bool)
        refs = [(p.parent if self.parent else original).words[p.position] for p in proposals]
        news = [p.word for p in proposals]
        a = np.fromiter((self._row(w) for w in refs), dtype=np.int64, count=n)
        b = np.fromiter((self._row(w) for w in news), dtype=np.int64, count=n)
        known = (a >= 0) & (b >= 0)
        ok = np.full(n, self.accept_unknown, dtype=bool)
        if known.any():
            m = self.vectors.matrix
            u, v = m[a[known]].astype(np.float64), m[b[known]].astype(np.float64)
            cos = np.einsum("ij,ij->i", u, v) / np.maximum(
                np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1), 1e-12)
            good = np.ones(len(cos), dtype=bool)
            if self.min_cos is not None:
                good &= cos >= self.min_cos - 1e-6
            if self.max_l2 is not None:
                good &= np.linalg.norm(u - v, axis=1) <= self.max_l2 + 1e-6
            ok[known] = good
        same = np.fromiter((x.lower() == y.lower() for x, y in zip(refs, news)), dtype=bool, count=n)
        return ok | same


def variant(name: str, settings: dict[str, Any], layer: Any, vectors: Any, stop_words: list[str]) -> Any:
    attack = run_ours.build_attack(settings, layer, vectors, stop_words)
    if "lazy" in name:
        attack.search = lazy_greedy_class()(ranking=settings["wir"])
    if "vectorised" in name:
        max_mse = settings.get("max_mse")
        attack.constraints = (
            BatchEmbeddingDistance(
                vectors, min_cos=settings.get("min_cos"),
                max_l2=None if max_mse is None else math.sqrt(max_mse),
                accept_unknown=True, compare_to=settings["compare_to"],
            ),
        )
    return attack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=common.WORK)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    import torch

    from textrobust.data import Example
    from textrobust.text import Text
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo import load_victim

    inputs = common.read_json(args.work / "inputs.json")
    settings = inputs["settings"]["greedy"]
    torch.set_num_threads(int(inputs["torch_threads"]))
    examples = [Example(e["id"], Text.from_string(e["text"]), int(e["label"]))
                for e in inputs["examples"][: args.limit]]
    victim = load_victim(inputs["victim"], batch_size=64)
    vectors = prepare.load_vectors(inputs["space"])
    names = ["engine", "lazy", "vectorised", "lazy+vectorised"]
    best: dict[str, dict[str, Any]] = {}
    for _ in range(args.rounds):
        for name in names:
            layer = QueryLayer(victim, batch_size=64)  # a fresh cache: every variant pays its queries
            attack = variant(name, settings, layer, vectors, inputs["stop_words"])
            run_ours.warm_neighbours(attack, examples)
            start = time.perf_counter()
            records, wall, cpu = run_ours.run(attack, layer, examples)
            summary = common.summarise(records, wall, cpu)
            if name not in best or summary["wall_seconds"] < best[name]["wall_seconds"]:
                best[name] = summary
    common.write_json(args.work / "what-if-greedy.json", best)
    print("| variant | examples / s | success | queries / example | overhead outside forward |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in names:
        s = best[name]
        print(f"| {name} | {s['examples_per_second']:.1f} | {s['success_rate']:.3f} | "
              f"{s['queries_per_example']:.1f} | {s['overhead_share']:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
