"""Test doubles with known attributions.

- :func:`linear_victim`: a zoo-style torch victim whose label logits are linear in the
  sum of its word embeddings, ``logits = W @ sum_w e_w + b``. Its exact Saliency for
  label ``l`` is ``sum_d |W[l, d]|`` for every word, and its exact Integrated Gradients
  (zero baseline) is ``e_w . W[l]`` for word ``w``.
- :func:`planted_victim`: a black-box sentiment scorer whose explanation flips when one
  given word (``trigger``) appears, while its prediction stays: every word's
  contribution changes sign, and a large bias holds the label. Occlusion on it is
  anti-correlated before and after the trigger (PCC about -1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.torch import Encoded, TorchVictim

__all__ = ["DictTokenizer", "linear_victim", "planted_victim", "tiny_bert_victim"]

#: The vocabulary of :func:`tiny_bert_victim` ("unbelievable" is three pieces).
TINY_BERT_VOCAB = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "a", "film", "is", "good", "bad", "un", "##believ",
                   "##able", ".", "plot", "movie", "story", "and", "with", "acting", "great", "picture")


class DictTokenizer:
    """One token per word (lower-cased), id 1 for unknown words, 0 for padding."""

    def __init__(self, words: Sequence[str]) -> None:
        self.ids = {w.lower(): i + 2 for i, w in enumerate(words)}

    def encode(self, texts: Sequence[Text]) -> Encoded:
        width = max([len(t) for t in texts] + [1])
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=bool)
        word_index = np.full((len(texts), width), -1, dtype=np.int64)
        for i, text in enumerate(texts):
            for j, word in enumerate(text.words):
                ids[i, j] = self.ids.get(word.lower(), 1)
                mask[i, j] = True
                word_index[i, j] = j
        return Encoded(ids, mask, word_index)


def linear_victim(embeddings: Mapping[str, Sequence[float]], weights: Sequence[Sequence[float]],
                  bias: Sequence[float] | None = None, label_names: Sequence[str] = ("neg", "pos")) -> TorchVictim:
    """A :class:`TorchVictim` with ``logits = weights @ sum_w e_w + bias`` (unknown words: zero)."""
    import torch
    from torch import nn

    words = list(embeddings)
    table = np.zeros((len(words) + 2, len(next(iter(embeddings.values())))), dtype=np.float32)
    for i, word in enumerate(words):
        table[i + 2] = np.asarray(embeddings[word], dtype=np.float32)
    w = np.asarray(weights, dtype=np.float32)
    b = np.zeros(w.shape[0], dtype=np.float32) if bias is None else np.asarray(bias, dtype=np.float32)

    class Linear(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(table.shape[0], table.shape[1], padding_idx=0)
            self.embedding.weight.data = torch.from_numpy(table)
            self.out = nn.Linear(table.shape[1], w.shape[0])
            self.out.weight.data = torch.from_numpy(w)
            self.out.bias.data = torch.from_numpy(b)

        def embed(self, ids: Any) -> Any:
            return self.embedding(ids)

        def forward_embedded(self, emb: Any, mask: Any) -> Any:
            return self.out((emb * mask.unsqueeze(-1).to(emb.dtype)).sum(dim=1))

        def forward(self, ids: Any, mask: Any) -> Any:
            return self.forward_embedded(self.embed(ids), mask)

    return TorchVictim(Linear(), DictTokenizer(words), label_names, name="linear")


def planted_victim(scores: Mapping[str, float], trigger: str, *, bias: float = 4.0,
                   flip: str | None = None) -> FunctionVictim:
    """Two labels (neg, pos): ``p(pos) = sigmoid(bias + sign * sum of word scores)`` with
    ``sign = -1`` when ``trigger`` is one of the words, else +1 (the trigger itself scores
    0). With ``bias`` well above the sum of scores the prediction is always ``pos``;
    the trigger flips the sign of every word's contribution, so it flips the explanation.
    The word ``flip`` (optional) changes the prediction to ``neg`` (``z = -bias``)."""
    table = {k.lower(): float(v) for k, v in scores.items()}
    trig = trigger.lower()
    flipper = flip.lower() if flip else None

    def fn(strings: list[str]) -> np.ndarray:
        out = []
        for s in strings:
            words = Text.from_string(s).words
            lowered = [x.lower() for x in words]
            sign = -1.0 if trig in lowered else 1.0
            z = bias + sign * sum(table.get(x, 0.0) for x in lowered)
            if flipper is not None and flipper in lowered:
                z = -bias
            p = 1.0 / (1.0 + np.exp(-z))
            out.append([1.0 - p, p])
        return np.asarray(out)

    return FunctionVictim(fn, ("neg", "pos"), name=f"planted({trigger})")


def tiny_bert_victim(root: Any, *, seed: int = 0) -> Any:
    """A randomly initialised 1-layer BERT classifier with a fast word-piece tokenizer,
    saved under the folder ``root`` and loaded back as a ``HuggingFaceVictim`` (the
    Hugging Face folder path, built in a second)."""
    from pathlib import Path

    import torch
    import transformers
    # transformers 5 defines BertTokenizerFast (= BertTokenizer) but its typed __init__ does not list it
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast  # type: ignore[attr-defined]

    from textrobust.victims.huggingface import HuggingFaceVictim

    root = Path(root)
    (root / "vocab.txt").write_text("\n".join(TINY_BERT_VOCAB) + "\n", encoding="utf-8")
    if int(transformers.__version__.split(".")[0]) >= 5:  # transformers 5 takes `vocab`
        tokenizer = BertTokenizerFast(vocab=str(root / "vocab.txt"))
    else:  # pragma: no cover
        tokenizer = BertTokenizerFast(vocab_file=str(root / "vocab.txt"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(TINY_BERT_VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=32, id2label={0: "neg", 1: "pos"})  # 2 labels
    folder = root / "model"
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return HuggingFaceVictim.from_folder(folder, batch_size=4)
