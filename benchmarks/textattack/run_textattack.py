"""TextAttack 0.3.11's side of the benchmark. Runs INSIDE benchmarks/.venv-textattack.

Reads what ``prepare.py`` wrote (examples, settings, victim folder, stop words, and the
embedding subset with its neighbour table), builds TextAttack's attack from local objects
only (nothing can download: the environment is offline and every component is given),
attacks the examples one by one with ``Attack.attack`` (TextAttack's core loop, without
the ``Attacker``'s logging and checkpoints), and writes per-example records and totals.

The victim is the project's own, loaded from its folder and wrapped in a
``textattack.models.wrappers.ModelWrapper`` whose ``__call__`` runs
``victim.probabilities([Text.from_string(s) ...])`` and times that call (the forward
pass), so both sides' overhead shares are measured the same way.

    benchmarks/.venv-textattack/bin/python benchmarks/textattack/run_textattack.py \
        --search greedy [--work DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common

for _key, _value in common.OFFLINE_ENV.items():
    os.environ.setdefault(_key, _value)


def forbid_network() -> None:
    """Make any connection attempt fail at once and loudly: nothing in this benchmark may
    download (TextAttack's default embeddings, USE, language models and NLTK data all
    would), and the offline variables alone only cover Hugging Face."""
    import socket

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(
            "benchmark: network access is disabled; a TextAttack component tried to download"
        )

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse  # type: ignore[assignment]
    socket.getaddrinfo = refuse  # type: ignore[assignment]


def _wrapper_class() -> type:
    import numpy as np
    from textattack.models.wrappers import ModelWrapper

    from textrobust.text import Text

    class VictimWrapper(ModelWrapper):
        """The project's victim behind TextAttack's model interface (strings in,
        probabilities out), with the time spent in the victim counted."""

        def __init__(self, victim: Any) -> None:
            self.model = victim
            self.forward_seconds = 0.0
            self.forward_cpu_seconds = 0.0
            self.texts = 0
            self.calls = 0

        def __call__(self, text_input_list: list[str]) -> Any:
            texts = [Text.from_string(s) for s in text_input_list]
            start, cpu = time.perf_counter(), time.thread_time()
            probs = self.model.probabilities(texts)
            self.forward_seconds += time.perf_counter() - start
            self.forward_cpu_seconds += time.thread_time() - cpu
            self.texts += len(texts)
            self.calls += 1
            return np.asarray(probs, dtype=np.float32)

    return VictimWrapper


def build_attack(
    name: str,
    settings: dict[str, Any],
    wrapper: Any,
    embedding_file: Path,
    stop_words: list[str],
) -> Any:
    """TextAttack's Attack for one of the settings of :data:`common.SETTINGS`."""
    import numpy as np
    from textattack import Attack
    from textattack.constraints.overlap import MaxWordsPerturbed
    from textattack.constraints.pre_transformation import (
        RepeatModification,
        StopwordModification,
    )
    from textattack.constraints.semantics import WordEmbeddingDistance
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import AlzantotGeneticAlgorithm, GreedyWordSwapWIR
    from textattack.shared import WordEmbedding
    from textattack.transformations import WordSwapEmbedding

    with np.load(embedding_file, allow_pickle=False) as data:
        words = [str(w) for w in data["words"]]
        matrix = np.asarray(data["matrix"], dtype=np.float32)
        flat = data[f"nn_{name}"].tolist()
        offsets = data[f"nn_offsets_{name}"].tolist()
    # Row i: word i, then its candidates as the project's EmbeddingNeighbours gives them.
    # Rows differ in length (non-words are dropped from a word's k nearest), so the
    # table is a list of lists; WordEmbedding only slices rows ([1 : k + 1]).
    nn = [flat[a:b] for a, b in itertools.pairwise(offsets)]
    word2index = {w: i for i, w in enumerate(words)}
    index2word = dict(enumerate(words))
    embedding = WordEmbedding(matrix, word2index, index2word, nn_matrix=nn)

    transformation = WordSwapEmbedding(
        max_candidates=settings["neighbours"], embedding=embedding
    )
    # TextAttack's StopwordModification matches case-sensitively; the project's lower-cases.
    # Give TextAttack every casing a sentence uses so both exclude the same positions.
    stops = (
        set(stop_words)
        | {w.capitalize() for w in stop_words}
        | {w.upper() for w in stop_words}
    )
    constraints: list[Any] = [
        RepeatModification(),
        StopwordModification(stopwords=stops),
    ]
    if settings.get("max_modification_rate"):
        constraints.append(
            MaxWordsPerturbed(max_percent=settings["max_modification_rate"])
        )
    constraints.append(
        WordEmbeddingDistance(
            embedding=embedding,
            min_cos_sim=settings.get("min_cos"),
            max_mse_dist=settings.get("max_mse"),
            compare_against_original=settings["compare_to"] == "original",
        )
    )
    budget = settings.get("budget") or float("inf")
    goal = UntargetedClassification(wrapper, model_batch_size=64, query_budget=budget)
    if settings["search"] == "greedy":
        search = GreedyWordSwapWIR(wir_method=settings["wir"])
    elif settings["search"] == "genetic":
        search = AlzantotGeneticAlgorithm(
            pop_size=settings["pop_size"],
            max_iters=settings["max_iters"],
            temp=settings["temperature"],
            give_up_if_no_improvement=False,
            post_crossover_check=settings["post_crossover_check"],
            max_crossover_retries=settings["max_crossover_retries"],
        )
    else:
        raise SystemExit(
            f"unknown search {settings['search']!r}: expected greedy or genetic"
        )
    return Attack(goal, constraints, transformation, search)


def _status(result: Any) -> str:
    name = type(result).__name__
    if name.startswith("Successful"):
        return "succeeded"
    if name.startswith("Skipped"):
        return "skipped"
    return "failed"


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
    args = parser.parse_args(argv)

    inputs = common.read_json(args.work / "inputs.json")
    settings = inputs["settings"][args.search]
    examples = inputs["examples"][: args.limit]

    import numpy as np
    import torch

    torch.set_num_threads(int(inputs["torch_threads"]))
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)

    forbid_network()
    t_import = time.perf_counter()
    import textattack
    from textattack.shared import AttackedText

    from textrobust.zoo import load_victim

    import_seconds = time.perf_counter() - t_import
    victim = load_victim(inputs["victim"], batch_size=64)
    if args.full_forward and hasattr(victim.module, "incremental"):
        victim.module.incremental = False
    wrapper = _wrapper_class()(victim)
    attack = build_attack(
        args.search,
        settings,
        wrapper,
        args.work / inputs["embedding_file"],
        inputs["stop_words"],
    )

    records: list[dict[str, Any]] = []
    mismatched = 0
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    for example in examples:
        before_texts, before_forward = wrapper.texts, wrapper.forward_seconds
        before_cpu = wrapper.forward_cpu_seconds
        start = time.perf_counter()
        result = attack.attack(AttackedText(example["text"]), int(example["label"]))
        seconds = time.perf_counter() - start
        original = result.original_result.attacked_text
        perturbed = result.perturbed_result.attacked_text
        if list(original.words) != example["words"]:
            mismatched += 1
        records.append(
            {
                "id": example["id"],
                "status": _status(result),
                "queries": int(result.perturbed_result.num_queries),
                "model_texts": wrapper.texts - before_texts,
                "words": len(original.words),
                "perturbed_words": len(original.all_words_diff(perturbed)),
                "seconds": seconds,
                "forward_seconds": wrapper.forward_seconds - before_forward,
                "forward_cpu_seconds": wrapper.forward_cpu_seconds - before_cpu,
                "perturbed": perturbed.text,
            }
        )
    wall = time.perf_counter() - wall_start
    cpu = time.process_time() - cpu_start
    profile_text = None
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        profiler.dump_stats(str(args.work / f"textattack-{args.search}-profile.pstats"))
        buffer = io.StringIO()
        stats = pstats.Stats(profiler, stream=buffer)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
        profile_text = buffer.getvalue()

    # Not timed: the candidate set of every example's start text after the constraints,
    # to check both sides search the same space.
    candidates: dict[str, list[list[Any]]] = {}
    for example in examples:
        text = AttackedText(example["text"])
        found = attack.get_transformations(text, original_text=text)
        pairs = set()
        for new in found:
            for i in new.attack_attrs["newly_modified_indices"]:
                pairs.add((int(i), new.words[i]))
        candidates[example["id"]] = sorted([list(p) for p in pairs])

    summary = common.summarise(records, wall, cpu)
    suffix = "-profile" if args.profile else ""
    out = args.out or args.work / f"textattack-{args.search}{suffix}.json"
    common.write_json(
        out,
        {
            "side": "textattack",
            "version": textattack.__version__
            if hasattr(textattack, "__version__")
            else "0.3.11",
            "search": args.search,
            "settings": settings,
            "attack": repr(attack),
            "import_seconds": import_seconds,
            "word_split_mismatches": mismatched,
            "machine": common.machine(),
            "torch_threads": torch.get_num_threads(),
            "summary": summary,
            "records": records,
            "candidates": candidates,
            "profile": profile_text,
        },
    )
    print(
        f"textattack {args.search}{suffix}: {len(records)} examples in {wall:.1f} s "
        f"({summary['examples_per_second']:.3f}/s), success {summary['success_rate']:.3f}, "
        f"queries/example {summary['queries_per_example']:.1f}, overhead {summary['overhead_share']:.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
