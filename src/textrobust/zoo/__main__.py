"""Train and benchmark zoo victims from the shell.

    python -m textrobust.zoo train cnn [--out DIR] [--seed 0] [--epochs N] [--threads 1]
    python -m textrobust.zoo default                 # ensure_default_victim()
    python -m textrobust.zoo bench DIR [DIR ...]     # markdown table: card + texts/s

``train`` saves to ``<cache>/victims/<arch>`` unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path


def _threads(n: int | None) -> None:
    if n is not None:
        import torch

        torch.set_num_threads(n)


def _train(args: argparse.Namespace) -> int:
    from textrobust.assets import cache_dir
    from textrobust.zoo.training import rich_progress, train_victim

    _threads(args.threads)
    out = Path(args.out) if args.out else cache_dir() / "victims" / args.arch
    training = {"max_train_examples": args.max_train} if args.max_train else None
    with rich_progress(args.arch) as progress:
        trained = train_victim(
            args.arch, args.dataset, out=out, seed=args.seed, epochs=args.epochs, training=training, progress=progress
        )
    print(trained.card.summary())
    print(f"saved to {trained.path}")
    return 0


def _default(args: argparse.Namespace) -> int:
    from textrobust.zoo.default import ensure_default_victim
    from textrobust.zoo.io import read_card
    from textrobust.zoo.training import rich_progress

    _threads(args.threads)
    with rich_progress("default") as progress:
        path = ensure_default_victim(progress=progress)
    card = read_card(path)
    print(card.summary() if card else "(no card)")
    print(f"default victim at {path}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    import numpy as np

    from textrobust.data import load_bundled
    from textrobust.victims.torch import TorchVictim
    from textrobust.zoo.io import load_victim

    _threads(args.threads)
    rows = []
    for folder in args.folders:
        victim = load_victim(Path(folder), batch_size=args.batch_size)
        card = victim.card
        data = load_bundled(card.dataset if card else args.dataset, split="test")
        texts = data.texts
        victim.probabilities(texts[: args.batch_size])  # warm up
        start = time.perf_counter()
        probs = np.concatenate(
            [victim.probabilities(texts[i : i + args.batch_size]) for i in range(0, len(texts), args.batch_size)]
        )
        seconds = time.perf_counter() - start
        acc = float(np.mean(probs.argmax(axis=1) == np.asarray(data.labels)))
        tokenize = ""
        if isinstance(victim, TorchVictim):
            tokenizer = victim.tokenizer
            t0 = time.perf_counter()
            for i in range(0, len(texts), args.batch_size):
                tokenizer.encode(texts[i : i + args.batch_size])
            tokenize = f"{100 * (time.perf_counter() - t0) / seconds:.1f}%"
        name = card.architecture if card else Path(folder).name
        rows.append(
            (
                name,
                f"{card.parameters:,}" if card else "?",
                f"{card.train_seconds:.0f}" if card else "?",
                f"{card.epochs_run} (best {card.best_epoch})" if card else "?",
                f"{card.dev_accuracy:.3f}" if card else "?",
                f"{card.test_accuracy:.3f}" if card else "?",
                f"{acc:.3f}",
                f"{len(texts) / seconds:,.0f}",
                tokenize,
            )
        )
    header = ("architecture", "parameters", "train s", "epochs", "dev acc", "test acc", "test acc (reloaded)",
              f"texts/s (batch {args.batch_size})", "tokenize share")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m textrobust.zoo", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train one architecture and save it as a victim folder")
    train.add_argument("arch")
    train.add_argument("--dataset", default="rotten_tomatoes")
    train.add_argument("--out", default=None)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--epochs", type=int, default=None)
    train.add_argument("--max-train", type=int, default=None, help="train on a seeded subset of this size")
    train.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    train.set_defaults(run=_train)
    default = sub.add_parser("default", help="train the default victim if it is not in the cache")
    default.add_argument("--threads", type=int, default=None)
    default.set_defaults(run=_default)
    bench = sub.add_parser("bench", help="forward throughput and accuracy of victim folders")
    bench.add_argument("folders", nargs="+")
    bench.add_argument("--dataset", default="rotten_tomatoes")
    bench.add_argument("--batch-size", type=int, default=64)
    bench.add_argument("--threads", type=int, default=None)
    bench.set_defaults(run=_bench)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
