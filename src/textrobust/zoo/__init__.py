"""The victim zoo: small classifiers trained on the bundled data, saved as victim folders.

Architectures (:data:`ZOO`): ``bow``, ``cnn``, ``lstm``, ``transformer`` (word models over
a :class:`WordVocab`, GloVe-initialised) and ``minilm`` (all-MiniLM-L6-v2 fine-tuned,
saved as a Hugging Face folder). Train with :func:`train_victim`, load any victim folder
with :func:`load_victim`. Importing this package does not import torch.

>>> from textrobust.zoo import ZOO
>>> ZOO.names()
['bow', 'cnn', 'lstm', 'lstm_att', 'minilm', 'transformer']
"""

from __future__ import annotations

from textrobust.zoo.architectures import ZOO, Architecture
from textrobust.zoo.cards import VictimCard
from textrobust.zoo.default import (
    DEFAULT_ARCH,
    DEFAULT_DATASET,
    cached_victim,
    default_victim_dir,
    ensure_default_victim,
    zoo_victim_dir,
)
from textrobust.zoo.io import is_victim_folder, load_victim, read_card, save_victim
from textrobust.zoo.training import (
    TrainedVictim,
    TrainingConfig,
    TrainingData,
    TrainingEvent,
    VectorInit,
    rich_progress,
    train_victim,
)
from textrobust.zoo.vocab import WordVocab

__all__ = [
    "DEFAULT_ARCH",
    "DEFAULT_DATASET",
    "ZOO",
    "Architecture",
    "TrainedVictim",
    "TrainingConfig",
    "TrainingData",
    "TrainingEvent",
    "VectorInit",
    "VictimCard",
    "WordVocab",
    "cached_victim",
    "default_victim_dir",
    "ensure_default_victim",
    "is_victim_folder",
    "load_victim",
    "read_card",
    "rich_progress",
    "save_victim",
    "train_victim",
    "zoo_victim_dir",
]
