"""Sentence similarity: one interface, several scorers, embeddings cached by string.

Every scorer offers ``similarity(a, b) -> np.ndarray`` over pairs ``(a[i], b[i])``:

- :class:`EncoderCosine`: cosine of sentence-encoder embeddings (default MiniLM; plug in
  any object with ``encode(list[str])``, e.g. MPNet from a local folder);
- :class:`BERTScore`: BERTScore F1 with a local encoder folder (``bert-score`` package);
- :class:`WordEmbeddingMeanCosine`: cosine of mean word vectors, a weak baseline.

``SIMILARITY_SCORERS``, the one registry of similarity scorers (the sentence-similarity
constraints and the ACCS analysis's constraint models both name scorers here), maps names
to factories. Each takes its asset as the optional first argument: an object (an encoder,
vectors), a local folder (``"mpnet:<folder>"`` on the ACCS command line), or None for the
project's default, built lazily; keyword arguments go to the scorer.

>>> from textrobust.similarity import SIMILARITY_SCORERS
>>> SIMILARITY_SCORERS.names()
['bertscore', 'encoder', 'minilm', 'mpnet', 'word_mean']
"""

from __future__ import annotations

import os
from typing import Any

from textrobust.errors import ConfigError
from textrobust.registry import Registry
from textrobust.similarity.bertscore import BERTScore
from textrobust.similarity.cache import LRUCache
from textrobust.similarity.encoder import EncoderCosine
from textrobust.similarity.folder import encoder_folder
from textrobust.similarity.protocol import SentenceScorer
from textrobust.similarity.word_mean import WordEmbeddingMeanCosine, default_word_vectors

__all__ = [
    "SIMILARITY_SCORERS",
    "BERTScore",
    "EncoderCosine",
    "LRUCache",
    "SentenceScorer",
    "WordEmbeddingMeanCosine",
    "default_word_vectors",
    "encoder_folder",
]

SIMILARITY_SCORERS: Registry[Any] = Registry("similarity scorer")


def _is_folder(asset: Any) -> bool:
    return isinstance(asset, (str, os.PathLike))


@SIMILARITY_SCORERS.register(
    "minilm", "Cosine of sentence embeddings: MiniLM by default (stands in for USE), any encoder or folder")
def _minilm(encoder: Any | None = None, **settings: Any) -> EncoderCosine:
    if _is_folder(encoder):
        return EncoderCosine(encoder_folder("minilm", encoder, settings.get("placement")), **settings)
    return EncoderCosine(encoder, **settings)


@SIMILARITY_SCORERS.register("mpnet", "Cosine of all-mpnet-base-v2 embeddings from a folder you give (mpnet:<folder>)")
def _mpnet(folder: Any | None = None, **settings: Any) -> EncoderCosine:
    return EncoderCosine(encoder_folder("mpnet", folder, settings.get("placement")), **settings)


@SIMILARITY_SCORERS.register("encoder", "Cosine of any sentence-transformers folder you give (encoder:<folder>)")
def _encoder(folder: Any | None = None, **settings: Any) -> EncoderCosine:
    return EncoderCosine(encoder_folder("encoder", folder, settings.get("placement")), **settings)


@SIMILARITY_SCORERS.register("bertscore", "BERTScore F1 over a local encoder folder (default MiniLM, layer 4)")
def _bertscore(model_path: Any | None = None, **settings: Any) -> BERTScore:
    return BERTScore(model_path, **settings)


@SIMILARITY_SCORERS.register("word_mean", "Cosine of mean word vectors (weak baseline; default GloVe)")
def _word_mean(vectors: Any | None = None, **settings: Any) -> WordEmbeddingMeanCosine:
    if _is_folder(vectors):
        raise ConfigError("The similarity scorer 'word_mean' takes no folder; it uses the project's GloVe vectors "
                          "(or WordVectors you pass).")
    return WordEmbeddingMeanCosine(vectors if vectors is not None else default_word_vectors(), **settings)
