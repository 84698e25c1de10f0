"""Compare the fill-in routes: recall of a masked original word, and speed.

Probes: ``--n`` sentences of the Rotten Tomatoes *test* split (never seen by the MLM
head's training), drawn with ``--seed``, one content word masked in each
(:func:`textrobust.fill_in.masked_word_probes`). For each route, recall@1/5/20 of the
original word (case-insensitive) among the top 20, and candidates returned per second
(20 per probe, 50 probes per ``fill`` call, cold caches, model loading excluded).

Routes: ``minilm_mlm`` (shipped head), ``minilm_tuned`` (top MiniLM layers fine-tuned,
shipped, or ``--tuned-folder``), ``minilm_gemma`` (the tuned MiniLM's logits plus
``--weights`` times Gemma's next-word logits from the left context, its top ``--rerank``
re-ranked by Gemma's probability of the ``--lookahead-tokens`` after the gap, with Gemma's
next-word score weighted ``--rerank-weights`` among them; ``--split dev`` is how the
weights and the rerank depth were chosen), ``causal_rescore`` (Gemma 3 270M, with ``--proposals``;
``causal_rescore_nokv`` is the same without the key/value cache, for the speed-up), ``huggingface`` (a real local masked-LM folder with ``--hf-folder``;
without it a tiny randomly initialised BERT over MiniLM's vocabulary is run as a smoke
test of the code path and its speed, and its recall means nothing), and a context-free
baseline (the 20 most frequent English content words from wordfreq).

    python benchmarks/fill_in.py --out benchmarks/results/fill_in.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from textrobust.assets import stop_words
from textrobust.data import load_dataset
from textrobust.fill_in import (
    FILL_INS,
    CausalRescoreFillIn,
    HuggingFaceFillIn,
    MiniLMFillIn,
    masked_word_probes,
    recall_at_k,
)
from textrobust.fill_in.evaluation import content_positions
from textrobust.fill_in.minilm_tuned import tuned_fill_in
from textrobust.text import Text


class FrequencyBaseline:
    """The same 20 frequent content words for every gap (no context at all)."""

    def __init__(self) -> None:
        from wordfreq import top_n_list

        stops = stop_words()
        words = [w for w in top_n_list("en", 2000) if content_positions(Text.from_string(w), stops) == [0]]
        self.words = words[:50]

    def fill(self, requests: list[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        return [[(w, -float(i)) for i, w in enumerate(self.words[:k])] for _ in requests]


def tiny_random_bert(folder: Path) -> HuggingFaceFillIn:
    """A 2-layer random BERT with MiniLM's tokenizer, saved and loaded like a user's folder."""
    import transformers

    from textrobust.fill_in.minilm_mlm import load_minilm

    _, tokenizer = load_minilm()
    config = transformers.BertConfig(
        vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128
    )
    torch.manual_seed(0)
    transformers.BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return HuggingFaceFillIn.from_folder(folder)


def single_token_share(probes: list[tuple[Text, int]], fill_in: Any) -> float | None:
    """Share of probes whose word is one whole-word entry of the route's vocabulary, case
    ignored (the ceiling of its recall)."""
    vocab = getattr(fill_in, "vocab", None)
    if vocab is None:
        return None
    words = {w.lower() for w in (*vocab.spaced_words, *vocab.unspaced_words)}
    return sum(text.words[position].lower() in words for text, position in probes) / len(probes)


def kv_ab(probes: list[tuple[Text, int]], proposals: int) -> int:
    """Time the rescoring step alone, full path vs KV cache, alternated twice on the same
    candidate groups (the proposals are made once); prints one JSON line per run."""
    import numpy as np

    from textrobust.fill_in.causal_rescore import _left_context

    fill_in = CausalRescoreFillIn.default(proposals=proposals)
    proposed = fill_in._propose([_left_context(t, p) for t, p in probes], proposals)
    groups = [[str(t), *(str(t.replace(p, w)) for w in words)] for (t, p), words in zip(probes, proposed)]
    results = {}
    for rep in range(2):
        for name, rescore in (("full", fill_in._rescore), ("kv", fill_in._rescore_kv)):
            start = time.perf_counter()
            results[name] = rescore(groups)
            print(json.dumps({"rep": rep, "method": name, "seconds": round(time.perf_counter() - start, 1),
                              "candidates": sum(len(g) - 1 for g in groups), "load": os.getloadavg()[0]}), flush=True)
    gap = max(float(np.max(np.abs((a - a[0]) - (b - b[0])))) for a, b in zip(results["full"], results["kv"]))
    print(json.dumps({"max_score_difference": gap}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--routes", default="baseline,minilm_mlm,huggingface,causal_rescore")
    parser.add_argument("--proposals", type=int, default=20, help="causal route: next-token proposals rescored")
    parser.add_argument("--causal-n", type=int, default=0, help="probes for the (slow) causal route; 0 = --n")
    parser.add_argument("--tuned-folder", type=Path, default=None,
                        help="minilm_tuned / minilm_gemma: tuned MiniLM weights folder (default: shipped)")
    parser.add_argument("--weights", default="",
                        help="minilm_gemma: comma-separated causal-LM weights, one row each (default: the shipped "
                             "DEFAULT_WEIGHT)")
    parser.add_argument("--rerank", default="",
                        help="minilm_gemma: comma-separated numbers of candidates re-ranked by the lookahead, one "
                             "row each (default: the shipped DEFAULT_RERANK; 0 = none)")
    parser.add_argument("--lookahead-tokens", type=int, default=1,
                        help="minilm_gemma: tokens after the gap scored by the lookahead")
    parser.add_argument("--lookahead-weight", type=float, default=None,
                        help="minilm_gemma: exponent of the lookahead probability (default: shipped)")
    parser.add_argument("--rerank-weights", default="",
                        help="minilm_gemma: comma-separated exponents of Gemma's next-word score among the "
                             "reranked words (default: shipped)")
    parser.add_argument("--split", default="test", choices=("test", "dev"),
                        help="Rotten Tomatoes split the probes come from (dev: for choosing settings)")
    parser.add_argument("--kv-ab", type=int, default=0,
                        help="only compare Gemma rescoring with and without the KV cache on this many probes "
                             "(the two paths alternated twice in one process) and exit")
    parser.add_argument("--json", type=Path, default=None, help="also append the rows (JSON lines) to this file")
    parser.add_argument("--hf-folder", type=Path, default=None, help="a real local masked-LM folder to measure")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="markdown table to write")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    texts = [e.text for e in load_dataset("rotten_tomatoes", split=args.split).examples]
    probes = masked_word_probes(texts, args.n, seed=args.seed)
    if args.kv_ab:
        return kv_ab(probes[: args.kv_ab], args.proposals)
    rows: list[dict[str, Any]] = []
    examples: dict[str, list[str]] = {}
    show = [(Text.from_string("a deep and meaningful film."), 4), probes[0], probes[1]]
    from textrobust.fill_in.product import DEFAULT_RERANK, DEFAULT_WEIGHT

    weights = [float(w) for w in args.weights.split(",") if w] or [DEFAULT_WEIGHT]
    reranks = [int(r) for r in args.rerank.split(",") if r] or [DEFAULT_RERANK]
    rerank_weights = [float(w) for w in args.rerank_weights.split(",") if w] or [None]
    runs = [
        (r, w, rr, rw)
        for r in args.routes.split(",")
        for w in (weights if r == "minilm_gemma" else [None])
        for rr in (reranks if r == "minilm_gemma" else [None])
        for rw in (rerank_weights if r == "minilm_gemma" else [None])
    ]
    for route, weight, rerank, rerank_weight in runs:
        t0 = time.perf_counter()
        n = args.n
        with tempfile.TemporaryDirectory() as tmp:
            if route == "baseline":
                fill_in: Any = FrequencyBaseline()
                name = "context-free baseline (20 frequent content words)"
            elif route == "minilm_mlm":
                fill_in = MiniLMFillIn.default()
                name = "minilm_mlm (MiniLM + trained head)"
            elif route == "huggingface":
                if args.hf_folder is not None:
                    fill_in = HuggingFaceFillIn.from_folder(args.hf_folder)
                    name = f"huggingface ({args.hf_folder.name})"
                else:
                    fill_in = tiny_random_bert(Path(tmp))
                    name = "huggingface: tiny random BERT, smoke test only (no real masked LM offline)"
            elif route == "minilm_tuned":
                fill_in = tuned_fill_in(tuned_path=args.tuned_folder)
                name = "minilm_tuned (MiniLM, top layers + head fine-tuned)"
            elif route == "minilm_gemma":
                fill_in = FILL_INS.get("minilm_gemma")(
                    tuned_path=args.tuned_folder, weight=weight, rerank=rerank,
                    lookahead_tokens=args.lookahead_tokens, lookahead_weight=args.lookahead_weight,
                    rerank_weight=rerank_weight,
                )
                name = (f"minilm_gemma (tuned MiniLM x Gemma left context, weight {weight:g}; lookahead over the "
                        f"top {fill_in.rerank}, {fill_in.lookahead_tokens} token(s), weight {fill_in.lookahead_weight:g}, "
                        f"Gemma weight among them {fill_in.rerank_weight:g})")
            elif route in ("causal_rescore", "causal_rescore_nokv"):
                kv = route == "causal_rescore"
                fill_in = CausalRescoreFillIn.default(proposals=args.proposals, kv_cache=kv)
                name = f"{route} (Gemma 3 270M, {args.proposals} proposals, {'KV cache' if kv else 'no KV cache'})"
                n = args.causal_n or args.n
            else:
                raise SystemExit(f"unknown route {route!r}")
            # one-time setup (vocabulary tables) counts as loading: one fill on a sentence
            # that is not a probe, then the answer caches are emptied
            fill_in.fill([(Text.from_string("An unrelated warm-up sentence."), 1)], 1)
            for part in (fill_in, getattr(fill_in, "masked", None)):
                if hasattr(part, "clear_cache"):
                    part.clear_cache()
            load_seconds = time.perf_counter() - t0
            score = recall_at_k(fill_in, probes[:n], (1, 5, 20))
            examples[name] = [", ".join(w for w, _ in a[:10]) for a in fill_in.fill(show, 10)]
            rows.append({
                "route": name,
                "n": score.n,
                "recall@1": score.recall[1],
                "recall@5": score.recall[5],
                "recall@20": score.recall[20],
                "ceiling": single_token_share(probes[:n], fill_in),
                "candidates/s": score.candidates_per_second,
                "positions/s": score.positions_per_second,
                "seconds": score.seconds,
                "load_seconds": load_seconds,
            })
            rows[-1]["seed"] = args.seed
            rows[-1]["split"] = args.split
            rows[-1]["load_average"] = os.getloadavg()[0]
            print(json.dumps(rows[-1]), flush=True)
            if args.json is not None:
                with args.json.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(rows[-1]) + "\n")
            del fill_in

    lines = [
        "# Fill-in routes: recall of the masked original word",
        "",
        (f"{args.n} sentences of the bundled Rotten Tomatoes **{args.split}** split, drawn with seed {args.seed}, one "
        "content word masked in each (alphabetic, >= 3 letters, not a stop word). Recall@k: the original "
        "word (case-insensitive) is among the route's top k whole words. Candidates/s: (word, score) pairs "
        "returned per second, 20 per position, 50 positions per `fill` call, cold cache, model loading "
        "and one warm-up call (vocabulary tables) excluded. Ceiling: share of the probes whose word is a single whole-word entry of the route's "
        "vocabulary (no route can return other words)."),
        "",
        (f"Machine: {os.cpu_count()} cores shared with other jobs, {args.threads} torch threads, "
        f"Python {platform.python_version()}, torch {torch.__version__}. Speeds vary with the load."),
        "",
        "| route | n | recall@1 | recall@5 | recall@20 | ceiling | candidates/s | positions/s | load s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        ceiling = f"{r['ceiling']:.1%}" if r["ceiling"] is not None else "-"
        lines.append(
            f"| {r['route']} | {r['n']} | {r['recall@1']:.1%} | {r['recall@5']:.1%} | {r['recall@20']:.1%} | "
            f"{ceiling} | {r['candidates/s']:.0f} | {r['positions/s']:.1f} | {r['load_seconds']:.0f} |"
        )
    lines += ["", "Top 10 words for three gaps (`a deep and meaningful ___.` and the first two probes):", ""]
    for (text, position), i in zip(show, range(3)):
        lines.append(f"- `{' '.join('___' if j == position else w for j, w in enumerate(text.words))}` (original: {text.words[position]})")
        for name, answers in examples.items():
            lines.append(f"  - {name.split(' (')[0].split(':')[0]}: {answers[i]}")
    command = " ".join(["python", "benchmarks/fill_in.py", *sys.argv[1:]])
    lines += ["", "Rerun:", "", "```", command, "```", ""]
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
