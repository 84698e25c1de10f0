"""textrobust's side of the TextAttack benchmark (project environment).

Reads what ``prepare.py`` wrote and runs the same attack with the textrobust engine:
the same victim behind a :class:`~textrobust.victims.query.QueryLayer` (batch 64, as
TextAttack's goal function), the same candidates (``EmbeddingNeighbours`` over the same
vectors), the same constraints and search settings. Writes per-example records and
totals; the time inside the victim is the query layer's ``forward_seconds``, so the
overhead share is ``1 - forward / wall``.

    python benchmarks/textattack/run_ours.py --search greedy [--limit N] [--profile]

``--profile`` runs the examples under cProfile and writes ``ours-<search>-profile.pstats`` and a
text summary (the top functions by own time, and by cumulative time) next to the output.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
import prepare


def build_attack(
    settings: dict[str, Any], layer: Any, vectors: Any, stop_words: list[str]
) -> Any:
    """The textrobust Attack for one of the settings of :data:`common.SETTINGS`."""
    from textrobust.attack.attack import Attack
    from textrobust.attack.constraints import (
        MaxModificationRate,
        RepeatModification,
        StopWords,
        WordEmbeddingDistance,
    )
    from textrobust.attack.searches import SEARCHES

    positions: list[Any] = [StopWords(stop_words), RepeatModification()]
    if settings.get("max_modification_rate"):
        positions.append(MaxModificationRate(rate=settings["max_modification_rate"]))
    max_mse = settings.get("max_mse")
    distance = WordEmbeddingDistance(
        vectors,
        min_cos=settings.get("min_cos"),
        # TextAttack's max_mse_dist is the squared L2 distance
        max_l2=None if max_mse is None else math.sqrt(max_mse),
        accept_unknown=True,  # TextAttack's include_unknown_words=True
        compare_to=settings["compare_to"],
    )
    if settings["search"] == "greedy":
        search = SEARCHES.get("greedy")(ranking=settings["wir"])
    else:
        search = SEARCHES.get("genetic")(
            pop_size=settings["pop_size"],
            max_iters=settings["max_iters"],
            temperature=settings["temperature"],
            post_crossover_check=settings["post_crossover_check"],
            max_crossover_retries=settings["max_crossover_retries"],
            seed=0,
        )
    return Attack(
        layer,
        source=prepare.neighbour_source(vectors, settings),
        search=search,
        position_constraints=positions,
        constraints=[distance],
        budget=settings.get("budget"),
        name=f"benchmark-{settings['search']}",
    )


def warm_neighbours(attack: Any, examples: list[Any]) -> float:
    """Compute every example word's neighbour list before the timed loop (seconds spent).

    TextAttack's side gets these lists precomputed (its ``nn_matrix``, written by
    ``prepare.py``), as its own counter-fitted embedding ships a precomputed ``nn.npy``;
    filling the project's neighbour cache first gives both sides the same start.
    """
    start = time.perf_counter()
    for example in examples:
        attack.source.candidates(example.text, range(len(example.text)))
    return time.perf_counter() - start


class ForwardClock:
    """Counts the CPU time of the calling thread inside ``victim.probabilities`` (the
    query layer counts the wall time); with one torch thread the forward pass runs in the
    calling thread, so this is its CPU cost, whatever else the machine is doing."""

    def __init__(self, victim: Any) -> None:
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0
        self.calls = 0
        self.texts = 0
        inner = victim.probabilities

        def probabilities(texts: Any) -> Any:
            start, wall = time.thread_time(), time.perf_counter()
            try:
                return inner(texts)
            finally:
                self.cpu_seconds += time.thread_time() - start
                self.wall_seconds += time.perf_counter() - wall
                self.calls += 1
                self.texts += len(texts)

        victim.probabilities = probabilities


def run(
    attack: Any, layer: Any, examples: list[Any], clock: ForwardClock | None = None
) -> tuple[list[dict[str, Any]], float, float]:
    records: list[dict[str, Any]] = []
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    for example in examples:
        before = layer.stats()
        before_cpu = clock.cpu_seconds if clock is not None else 0.0
        start = time.perf_counter()
        result = attack.attack(example)
        seconds = time.perf_counter() - start
        spent = layer.stats().minus(before)
        records.append(
            {
                "id": example.id,
                "status": result.status.value,
                "queries": result.queries,
                "model_texts": spent.queries,
                "words": len(result.original),
                "perturbed_words": result.l0,
                "seconds": seconds,
                "forward_seconds": spent.forward_seconds,
                "forward_cpu_seconds": (clock.cpu_seconds - before_cpu)
                if clock is not None
                else 0.0,
                "perturbed": str(result.perturbed),
            }
        )
    return records, time.perf_counter() - wall_start, time.process_time() - cpu_start


def run_lockstep(
    attacks: list[Any], layers: list[Any], gate: Any, examples: list[Any]
) -> tuple[list[dict[str, Any]], float, float]:
    """``len(attacks)`` examples at a time in threads, their forward passes merged by
    ``gate`` (what ``--executor lockstep`` does in an audit). Per-example forward times
    do not exist here (passes are shared): the totals come from the clock."""
    import threading

    records: list[dict[str, Any]] = [{} for _ in examples]
    todo = list(range(len(examples)))[::-1]
    lock = threading.Lock()
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    gate.open(len(attacks))

    def member(i: int) -> None:
        gate.enter()
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    index = todo.pop()
                example = examples[index]
                before = layers[i].stats()
                start = time.perf_counter()
                result = attacks[i].attack(example)
                spent = layers[i].stats().minus(before)
                records[index] = {
                    "id": example.id, "status": result.status.value, "queries": result.queries,
                    "model_texts": spent.queries, "words": len(result.original),
                    "perturbed_words": result.l0, "seconds": time.perf_counter() - start,
                    "perturbed": str(result.perturbed),
                }
        finally:
            gate.leave()

    threads = [threading.Thread(target=member, args=(i,)) for i in range(len(attacks))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return records, time.perf_counter() - wall_start, time.process_time() - cpu_start


def candidate_sets(attack: Any, examples: list[Any]) -> dict[str, list[list[Any]]]:
    """Every example's one-word edits of the start text that pass the constraints."""
    from textrobust.attack.problem import Problem

    out: dict[str, list[list[Any]]] = {}
    for example in examples:
        problem = Problem(
            original=example.text,
            goal=None,  # type: ignore[arg-type]  # neighbours() never evaluates
            source=attack.source,
            position_constraints=attack.position_constraints,
            constraints=attack.constraints,
        )
        pairs = {(p.position, p.word) for p in problem.neighbours(example.text)}
        out[example.id] = sorted([list(p) for p in pairs])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--search", required=True, choices=sorted(common.SETTINGS))
    parser.add_argument("--work", type=Path, default=common.WORK)
    parser.add_argument(
        "--limit", type=int, default=None, help="attack only the first N examples"
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--full-forward",
        action="store_true",
        help="switch off the zoo CNN's incremental forward over batches of edits (the full convolution, as "
        "before it existed); the same flag goes to both sides",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run under cProfile (slower; not for the table)",
    )
    parser.add_argument(
        "--lockstep",
        type=int,
        default=0,
        help="attack this many examples at a time, sharing forward passes (0: one at a time)",
    )
    parser.add_argument(
        "--victim-batch",
        type=int,
        default=64,
        help="texts per forward pass inside the victim (the query layer sends 64 at a time)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="do not precompute the neighbour lists before the timed loop",
    )
    args = parser.parse_args(argv)

    inputs = common.read_json(args.work / "inputs.json")
    settings = inputs["settings"][args.search]

    import numpy as np
    import torch

    from textrobust.data import Example
    from textrobust.text import Text
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo import load_victim

    torch.set_num_threads(int(inputs["torch_threads"]))
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)

    examples = [
        Example(e["id"], Text.from_string(e["text"]), int(e["label"]))
        for e in inputs["examples"][: args.limit]
    ]
    victim = load_victim(inputs["victim"], batch_size=args.victim_batch)
    if args.full_forward and hasattr(victim.module, "incremental"):
        victim.module.incremental = False
    clock = ForwardClock(victim)
    layer = QueryLayer(victim, batch_size=64)
    vectors = prepare.load_vectors(inputs["space"])
    attack = build_attack(settings, layer, vectors, inputs["stop_words"])

    warm_seconds = 0.0 if args.cold else warm_neighbours(attack, examples)
    profile_text = None
    totals: dict[str, float] = {}
    if args.lockstep > 0:
        from textrobust.victims.gate import BatchingGate

        gate = BatchingGate(victim)
        layers = [QueryLayer(gate.member(), batch_size=64) for _ in range(args.lockstep)]
        attacks = [build_attack(settings, lane, vectors, inputs["stop_words"]) for lane in layers]
        for other in attacks:  # the same neighbour lists (warm, as the sequential run's)
            other.source = attack.source
        records, wall, cpu = run_lockstep(attacks, layers, gate, examples)
        totals = {"forward": clock.wall_seconds, "forward_cpu": clock.cpu_seconds}
        layer = layers[0]
    elif args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        records, wall, cpu = run(attack, layer, examples, clock)
        profiler.disable()
        out_stats = (
            args.out or args.work / f"ours-{args.search}-profile.json"
        ).with_suffix(".pstats")
        profiler.dump_stats(str(out_stats))
        buffer = io.StringIO()
        stats = pstats.Stats(profiler, stream=buffer)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
        profile_text = buffer.getvalue()
    else:
        records, wall, cpu = run(attack, layer, examples, clock)

    candidates = candidate_sets(attack, examples)
    summary = common.summarise(records, wall, cpu, **totals)
    summary["victim_calls"] = clock.calls
    summary["texts_per_victim_call"] = clock.texts / clock.calls if clock.calls else math.nan
    suffix = ("-profile" if args.profile else "") + ("-cold" if args.cold else "") + (
        f"-lockstep{args.lockstep}" if args.lockstep else "")
    out = args.out or args.work / f"ours-{args.search}{suffix}.json"
    common.write_json(
        out,
        {
            "side": "textrobust",
            "search": args.search,
            "settings": settings,
            "attack": repr(attack),
            "machine": common.machine(),
            "torch_threads": torch.get_num_threads(),
            "summary": summary,
            "query_layer": repr(layer.stats()),
            "neighbour_warmup_seconds": warm_seconds,
            "records": records,
            "candidates": candidates,
            "profile": profile_text,
        },
    )
    print(
        f"textrobust {args.search}{suffix}: {len(records)} examples in {wall:.1f} s "
        f"({summary['examples_per_second']:.3f}/s), success {summary['success_rate']:.3f}, "
        f"queries/example {summary['queries_per_example']:.1f}, overhead {summary['overhead_share']:.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
