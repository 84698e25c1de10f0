"""The zoo CNN's incremental forward pass over batches of edits of one text
(``src/textrobust/zoo/cnn_edits.py``) against the full convolution (issue 14).

    python benchmarks/cnn_edits.py [--victim default] [--repeats 300]

For the victim's model (a zoo CNN), batches like an attack's: B candidates of one text of
T words, each with one word substituted (greedy's candidates at one position), or with
two (a genetic population), and the T leave-one-out deletions of a text of T + 1 words
(the delete ranking). Prints one Markdown table: milliseconds per batch (CPU time of this
thread, best of three rounds of ``--repeats`` calls), full and incremental, and the ratio,
plus the largest logit difference. One torch thread. Run it alone on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch


def _batches(vocab: int, rows: int, words: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    base = torch.randint(2, vocab, (words,), generator=g)
    one = base.repeat(rows, 1)
    one[:, words // 2] = torch.randint(2, vocab, (rows,), generator=g)
    two = one.clone()
    two[torch.arange(rows), torch.randint(0, words, (rows,), generator=g)] = torch.randint(2, vocab, (rows,),
                                                                                              generator=g)
    original = torch.randint(2, vocab, (words + 1,), generator=g)
    deletions = torch.stack([torch.cat([original[:d], original[d + 1:]]) for d in range(words + 1)])
    return {"1 substitution": one, "2 substitutions": two, "leave-one-out": deletions[:rows]}


def _ms(model: torch.nn.Module, ids: torch.Tensor, repeats: int) -> float:
    mask = torch.ones(ids.shape, dtype=torch.bool)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(5):
            model(ids, mask)
        for _ in range(3):
            start = time.thread_time()
            for _ in range(repeats):
                model(ids, mask)
            best = min(best, (time.thread_time() - start) / repeats * 1000)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--victim", default="default")
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)
    from textrobust.zoo import load_victim

    path = Path(args.victim)
    if not path.exists():
        path = Path.home() / ".cache" / "textrobust" / "victims" / args.victim
    model = load_victim(path).module
    if not hasattr(model, "incremental"):
        raise SystemExit(f"{path} is not a zoo CNN (no incremental pass)")
    vocab = model.embedding.num_embeddings
    print(f"load average before: {os.getloadavg()[0]:.2f}; torch threads 1; victim {path}")
    print("| batch | rows x words | full ms | incremental ms | full / incremental | max logit difference |")
    print("|---|---|---|---|---|---|")
    seen = set()
    for rows, words in ((25, 20), (64, 20), (25, 40), (64, 40)):
        for name, ids in _batches(vocab, rows, words, seed=rows * 100 + words).items():
            if (name, tuple(ids.shape)) in seen:  # a text of T words has only T + 1 deletions
                continue
            seen.add((name, tuple(ids.shape)))
            mask = torch.ones(ids.shape, dtype=torch.bool)
            with torch.inference_mode():
                model.incremental = False
                full_logits = model(ids, mask)
                model.incremental = True
                fast_logits = model(ids, mask)
            model.incremental = False
            full = _ms(model, ids, args.repeats)
            model.incremental = True
            fast = _ms(model, ids, args.repeats)
            diff = float((full_logits - fast_logits).abs().max())
            print(f"| {name} | {len(ids)} x {ids.shape[1]} | {full:.3f} | {fast:.3f} | {full / fast:.2f}x | "
                  f"{diff:.1e} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
