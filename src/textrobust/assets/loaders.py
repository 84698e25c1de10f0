"""Convenience loaders for the offline assets; heavy libraries are imported inside them.

Each loader resolves its asset with :func:`textrobust.assets.resolve` (explicit argument,
environment variable, package, cache), loads it from local files only, and caches the
loaded object per resolved path: callers share one instance, so do not mutate it.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textrobust.assets.catalog import resolve
from textrobust.assets.offline import hf_offline
from textrobust.devices import Placement
from textrobust.errors import DataError, MissingDependencyError
from textrobust.loading import loading

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "causal_lm",
    "load_glove",
    "sentence_encoder",
    "spacy_pipeline",
    "stop_words",
    "wordnet",
]


def _missing(
    package: str, feature: str, install: str | None = None
) -> MissingDependencyError:
    return MissingDependencyError(package, feature, install or f"pip install {package}")


def load_glove(path: str | Path | None = None) -> tuple[list[str], np.ndarray]:
    """GloVe 6B 50d: the words (row order) and a read-only float32 matrix ``[V, 50]``."""
    words, vectors = _glove(str(resolve("glove", path)))
    return list(words), vectors


@lru_cache(maxsize=2)
def _glove(root: str) -> tuple[tuple[str, ...], np.ndarray]:
    import numpy as np

    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise _missing("pyarrow", "Reading the GloVe word index") from None
    folder = Path(root)
    words = pq.read_table(folder / "glove_6B_index.parquet", columns=["index"]).column(
        "index"
    )
    vocab = tuple(words.to_pylist())
    vectors = np.load(folder / "glove_6B_50d_emb.npy").astype(np.float32, copy=False)
    if (
        vectors.ndim != 2
        or vectors.shape[0] != len(vocab)
        or any(w is None for w in vocab)
    ):
        raise DataError(
            f"GloVe folder {folder} is inconsistent: {len(vocab):,} words but vectors of shape "
            f"{vectors.shape}, or empty words in the index."
        )
    vectors.flags.writeable = False
    return vocab, vectors


def wordnet(path: str | Path | None = None) -> Any:
    """An NLTK ``WordNetCorpusReader`` over the resolved NLTK_DATA root (no nltk.download).

    The root is appended to ``nltk.data.path`` (NLTK 3.10 refuses corpus files outside its
    data roots), so ``nltk.corpus.wordnet`` finds the same files afterwards. The Open
    Multilingual Wordnet is not available offline, so only English lemmas are there.
    """
    return _wordnet(str(resolve("wordnet", path)))


@lru_cache(maxsize=2)
def _wordnet(root: str) -> Any:
    try:
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise _missing("nltk", "WordNet synonyms") from None
    # NLTK >= 3.10 opens corpus files only under a known data root (nltk.pathsec).
    if not any(str(p) == root for p in nltk.data.path):
        nltk.data.path.append(root)
    with (
        warnings.catch_warnings()
    ):  # no Open Multilingual Wordnet offline: say so once, here
        warnings.filterwarnings("ignore", message="The multilingual functions")
        return _english_reader(WordNetCorpusReader)(str(Path(root) / "corpora" / "wordnet"), None)


def _english_reader(base: type) -> type:
    """NLTK's reader without its WordNet-version map: ``map_wn`` maps the Open Multilingual
    Wordnet's 3.0 offsets onto the loaded version (``map30``) and is read only when OMW data
    is loaded, which never happens offline (no OMW reader is given). Building it cost 3.4 s
    of the 3.7 s a WordNet load took here, in every process that proposes a substitute."""

    class EnglishWordNetReader(base):
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    return EnglishWordNetReader


def spacy_pipeline(path_or_name: str | Path | None = None) -> Any:
    """``spacy.load`` of the resolved pipeline folder (a path or an installed package name)."""
    return _spacy(str(resolve("pos_tagger", path_or_name)))


@lru_cache(maxsize=2)
def _spacy(folder: str) -> Any:
    try:
        import spacy
    except ImportError:
        raise _missing(
            "spacy", "POS tagging", "pip install 'spacy>=3.7.5,<3.9'"
        ) from None
    with loading(f"the spaCy pipeline {Path(folder).name}"):
        return spacy.load(folder)


def sentence_encoder(path: str | Path | None = None, placement: Placement | None = None) -> Any:
    """``SentenceTransformer`` from the resolved MiniLM folder, local files only, on
    ``placement``'s device and float type (``None``: the CPU in float32); one per process,
    folder and placement."""
    return _encoder(str(resolve("minilm", path)), placement or Placement())


@lru_cache(maxsize=2)
def _encoder(folder: str, placement: Placement) -> Any:
    hf_offline()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise _missing("sentence-transformers", "The sentence encoder") from None
    with loading(f"the sentence encoder {'/'.join(Path(folder).parts[-2:])} ({placement.device}, {placement.dtype})"):
        encoder = SentenceTransformer(folder, device=placement.device, local_files_only=True)
        return encoder if not placement.reduced else encoder.to(placement.torch_dtype())


def causal_lm(path: str | Path | None = None, placement: Placement | None = None) -> tuple[Any, Any]:
    """The causal LM (Gemma 3 270M) in eval mode and its tokenizer, local files only, on
    ``placement``'s device and float type (``None``: the CPU in float32); one per process,
    folder and placement."""
    return _causal_lm(str(resolve("causal_lm", path)), placement or Placement())


@lru_cache(maxsize=2)  # the run's placement, and the CPU for a component that asks for none
def _causal_lm(folder: str, placement: Placement) -> tuple[Any, Any]:
    hf_offline()
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise _missing("transformers", "The causal LM") from None
    with loading(f"the causal LM {Path(folder).name} ({placement.device}, {placement.dtype})"):
        model: Any = AutoModelForCausalLM.from_pretrained(
            folder, dtype=placement.torch_dtype(), local_files_only=True
        )
        model = model.to(placement.torch_device()).eval()
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return model, tokenizer


def stop_words(path: str | Path | None = None) -> frozenset[str]:
    """The English stop word list (one lower-case word a line; ``#`` starts a comment)."""
    return _stop_words(str(resolve("stop_words", path)))


@lru_cache(maxsize=4)
def _stop_words(file: str) -> frozenset[str]:
    text = Path(file).read_text(encoding="utf-8")
    return frozenset(
        w.strip().lower()
        for w in text.splitlines()
        if w.strip() and not w.lstrip().startswith("#")
    )
