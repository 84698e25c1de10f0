"""Train the "debiased" LSTM of the double-perturbation bias comparison (Zhang et al. 2021,
Section 4.2.1): the zoo's LSTM with the base LSTM's settings (seed 0, one torch thread)
trained on the gender-swap-augmented Rotten Tomatoes train split.

    python benchmarks/train_debiased_lstm.py        # -> ~/.cache/textrobust/victims/lstm-debiased
"""

from __future__ import annotations

import json

import torch

from textrobust.assets import cache_dir
from textrobust.analyses.bias import GenderSwap
from textrobust.zoo import train_victim


def main() -> None:
    torch.set_num_threads(1)
    out = cache_dir() / "victims" / "lstm-debiased"
    trained = train_victim("lstm", "rotten_tomatoes", out=out, seed=0, augment=GenderSwap())
    card = trained.card
    print(json.dumps({"path": str(trained.path), "dev_accuracy": card.dev_accuracy,
                      "test_accuracy": card.test_accuracy, "train_seconds": card.train_seconds,
                      "splits": card.splits, "augment": card.augment}, indent=2))


if __name__ == "__main__":
    main()
