"""Counter-fitting word vectors to synonym and antonym constraints.

Mrksic, O Seaghdha, Thomson, Gasic, Rojas-Barahona, Su, Vandyke, Wen and Young,
"Counter-fitting Word Vectors to Linguistic Constraints", NAACL-HLT 2016.

Plain GloVe puts antonyms as close as synonyms (good~bad .80, good~great .80), so an
embedding-neighbour attack would happily swap "good" for "bad". Counter-fitting moves the
vectors so that synonyms attract and antonyms repel while the rest of the space keeps its
shape. With ``d`` the cosine distance and ``tau(x) = max(0, x)``, the paper minimises

    AR(V')     = sum over antonym pairs (u, w)   tau(delta - d(v'_u, v'_w))     antonym repel
    SA(V')     = sum over synonym pairs (u, w)   tau(d(v'_u, v'_w) - gamma)     synonym attract
    VSP(V, V') = sum_i sum_{j in N(i)}          tau(d(v'_i, v'_j) - d(v_i, v_j))
    C(V, V')   = k1 AR + k2 SA + k3 VSP

where ``N(i)`` holds the words within distance ``rho`` of word ``i`` in the original space
(vector space preservation). Hyper-parameters are the paper's: ``delta = 1.0``,
``gamma = 0.0``, ``rho = 0.2``, ``k1 = k2 = k3 = 0.1``, 20 epochs.

The optimiser follows the authors' released code rather than exact gradients of C: in each
epoch, for every pair whose hinge is active, word ``i`` takes the step ``k (v_j - v_i)``
toward its partner (SA, VSP) or away from it (AR); the steps are averaged (per term, see
below), added, and the moved vectors are renormalised. All pairs are updated together
(a full-batch step), so the procedure involves no sampling and no seed: the same vectors
and pairs (kept in a sorted, stable order) give the same result. (The VSP neighbourhoods
come from a thresholded matrix product; a different BLAS or thread count could in
principle flip a pair lying exactly on the ``rho`` boundary.)

Where this departs from the paper (each also marked in the code):

* **Constraints.** Synonyms are pairs of single-word lemmas sharing a WordNet synset;
  antonyms are WordNet's lemma antonyms. The paper took synonyms from PPDB 2.0 and
  antonyms from PPDB and WordNet; PPDB is not available offline. WordNet synsets are
  broader than PPDB synonyms (they include rare senses), so some pairs are loose.
* **Vectors and vocabulary.** GloVe 6B 50d, its ``vocab_size`` most frequent words
  (default 100k); the paper used 300-d GloVe and Paragram-SL999 vectors.
* **VSP neighbourhoods.** ``N(i)`` is computed only for words that occur in some
  constraint pair: VSP covers every pair (i, j) within ``rho`` where i or j is
  constrained. A pair of two unconstrained words has a zero hinge until one of them moves,
  and unconstrained words only move through VSP with a constrained word; we ignore that
  second-order effect. Words outside every pair and every such neighbourhood never move.
* **VSP hinge at zero.** The released code pulls a neighbour pair whenever the new
  distance is ``>=`` the original one, i.e. also when nothing moved, which contracts every
  neighbourhood at the first epoch; we use the paper's ``tau`` (strictly greater, with a
  ``1e-6`` tolerance).
* **Averaging per term.** The released code divides a word's summed steps by the number of
  all its active pairs. With WordNet, "good" has dozens of synonyms and 2 antonyms, so the
  antonym push got a few percent of the weight and good~bad stayed at cosine 0.79.
  We average within each term (AR, SA, VSP) and add the three means, so k1, k2 and k3 stay
  the relative weights of the three terms, as in the objective.
* As in the released code, a pair listed both as synonyms and antonyms is kept only as
  antonyms, and antonym pairs are removed from the VSP pairs.

Built once and cached: :func:`counterfitted_vectors` loads
``<cache_dir()>/vectors/counterfitted-glove50-<hash of settings>.npy`` (plus ``.words.txt``
and ``.json`` with the build statistics) or builds and writes them.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.config import Config
from textrobust.embeddings.vectors import (
    DEFAULT_VOCAB_SIZE,
    WordVectors,
    normalise_rows,
)
from textrobust.errors import ConfigError, DataError
from textrobust.text import WORD_PATTERN

__all__ = [
    "COUNTERFIT_VERSION",
    "CounterFitCache",
    "CounterFitSettings",
    "CounterFitStats",
    "counter_fit",
    "counterfit_cache",
    "counterfitted_vectors",
    "vsp_pairs",
    "wordnet_pairs",
]

#: Bumped whenever the algorithm changes, so that old caches are not reused.
COUNTERFIT_VERSION = 1

Log = Callable[[str], None]

# A VSP hinge is active when the new distance exceeds the original by more than this.
_VSP_TOLERANCE = 1e-6


class CounterFitSettings(Config):
    """The settings of counter-fitting (defaults: the paper's hyper-parameters)."""

    vocab_size: int = Field(DEFAULT_VOCAB_SIZE, ge=2)
    delta: float = Field(1.0, ge=0.0, le=2.0)  # antonym repel margin (cosine distance)
    gamma: float = Field(0.0, ge=0.0, le=2.0)  # synonym attract margin
    rho: float = Field(0.2, ge=0.0, le=2.0)  # VSP neighbourhood radius
    k1: float = Field(0.1, ge=0.0)  # antonym repel weight
    k2: float = Field(0.1, ge=0.0)  # synonym attract weight
    k3: float = Field(0.1, ge=0.0)  # vector space preservation weight
    epochs: int = Field(20, ge=0)


@dataclass(frozen=True)
class CounterFitStats:
    """What a counter-fitting run did and how the pairs moved (cosines are means)."""

    words: int
    synonym_pairs: int
    antonym_pairs: int
    vsp_pairs: int
    constrained_words: int
    moved_words: int
    epochs: int
    seconds: float
    synonym_cos_before: float
    synonym_cos_after: float
    antonym_cos_before: float
    antonym_cos_after: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- the algorithm --------------------------------------------------------------------------
def counter_fit(
    matrix: np.ndarray,
    synonyms: np.ndarray | Sequence[tuple[int, int]],
    antonyms: np.ndarray | Sequence[tuple[int, int]],
    settings: CounterFitSettings | None = None,
    *,
    log: Log | None = None,
) -> tuple[np.ndarray, CounterFitStats]:
    """Counter-fit the rows of ``matrix`` to synonym and antonym pairs of row indices.

    Returns the new unit-normalised float32 matrix and statistics. Pairs are unordered;
    duplicates and self-pairs are dropped, and pairs are processed in sorted order.
    """
    settings = settings or CounterFitSettings()
    say = log or (lambda message: None)
    start = time.perf_counter()
    original = normalise_rows(matrix)
    n = len(original)
    ant = _canonical_pairs(antonyms, n, "antonyms")
    syn = _difference(_canonical_pairs(synonyms, n, "synonyms"), ant, n)
    constrained = np.unique(np.concatenate([syn.ravel(), ant.ravel()]))
    vsp = np.empty((0, 2), dtype=np.int64)
    if settings.k3 > 0 and len(constrained):
        vsp = _difference(vsp_pairs(original, constrained, settings.rho), ant, n)
    vsp_base = _pair_distances(original, vsp)
    say(
        f"counter-fitting {n:,} words: {len(syn):,} synonym, {len(ant):,} antonym and "
        f"{len(vsp):,} VSP pairs over {len(constrained):,} constrained words "
        f"({time.perf_counter() - start:.1f} s to prepare)"
    )

    vectors = original.copy()
    epochs_run = 0
    for epoch in range(settings.epochs):
        tick = time.perf_counter()
        parts: list[tuple[np.ndarray, float]] = []
        if settings.k2 > 0 and len(syn):
            parts.append((syn[_pair_distances(vectors, syn) > settings.gamma], settings.k2))
        if settings.k1 > 0 and len(ant):
            parts.append((ant[_pair_distances(vectors, ant) < settings.delta], -settings.k1))
        if len(vsp):
            grown = _pair_distances(vectors, vsp) > vsp_base + _VSP_TOLERANCE
            parts.append((vsp[grown], settings.k3))
        active = sum(len(p) for p, _ in parts)
        if active == 0:
            say(f"epoch {epoch + 1}/{settings.epochs}: no active constraint, stopping")
            break
        moved = _step(vectors, parts)
        epochs_run += 1
        say(
            f"epoch {epoch + 1}/{settings.epochs}: "
            + ", ".join(f"{len(p):,} {name}" for (p, _), name in zip(parts, _names(settings, syn, ant, vsp)))
            + f" pairs active; {moved:,} words moved ({time.perf_counter() - tick:.2f} s)"
        )

    changed = int(np.count_nonzero(np.any(vectors != original, axis=1)))
    stats = CounterFitStats(
        words=n,
        synonym_pairs=len(syn),
        antonym_pairs=len(ant),
        vsp_pairs=len(vsp),
        constrained_words=len(constrained),
        moved_words=changed,
        epochs=epochs_run,
        seconds=round(time.perf_counter() - start, 3),
        synonym_cos_before=_mean_cos(original, syn),
        synonym_cos_after=_mean_cos(vectors, syn),
        antonym_cos_before=_mean_cos(original, ant),
        antonym_cos_after=_mean_cos(vectors, ant),
    )
    return vectors, stats


def _names(settings: CounterFitSettings, syn: np.ndarray, ant: np.ndarray, vsp: np.ndarray) -> list[str]:
    names = []
    if settings.k2 > 0 and len(syn):
        names.append("synonym")
    if settings.k1 > 0 and len(ant):
        names.append("antonym")
    if len(vsp):
        names.append("VSP")
    return names


def _step(vectors: np.ndarray, parts: Sequence[tuple[np.ndarray, float]]) -> int:
    """One full-batch update in place; returns how many words moved.

    For each term (pairs, k), word i moves by ``k (mean_j v_j - v_i)`` over its active pairs
    (i, j) of that term, ``k < 0`` repelling; the terms' steps are added and moved rows
    renormalised. DEPARTURE from the released code, which averages a word's steps over all
    its active pairs at once: WordNet gives "good" some 40 synonyms, so its 3 antonyms
    would get 1/40 of the weight and never move away. Averaging within each term keeps
    k1, k2 and k3 as the relative weights of the three terms, as in the objective.
    """
    from scipy.sparse import csr_matrix

    n = len(vectors)
    step = np.zeros(vectors.shape, dtype=np.float64)
    touched = np.zeros(n, dtype=bool)
    for pairs, k in parts:
        if not len(pairs):
            continue
        rows = np.concatenate([pairs[:, 0], pairs[:, 1]])  # every pair moves both words
        cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
        count = np.bincount(rows, minlength=n)
        hit = np.flatnonzero(count)
        adjacency = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
        mean = (adjacency[hit] @ vectors) / count[hit, None]
        step[hit] += k * (mean - vectors[hit])
        touched[hit] = True
    moved = np.flatnonzero(touched)
    vectors[moved] = normalise_rows(vectors[moved] + step[moved])
    return len(moved)


def vsp_pairs(
    vectors: np.ndarray, rows: Sequence[int] | np.ndarray, rho: float, *, block: int = 1024
) -> np.ndarray:
    """Unordered pairs (i, j), i < j, of unit ``vectors`` within cosine distance ``rho``
    where i or j is in ``rows`` (one matrix product per block of ``rows``), sorted."""
    n = len(vectors)
    rows = np.unique(np.asarray(rows, dtype=np.int64))
    is_row = np.zeros(n, dtype=bool)
    is_row[rows] = True
    floor = np.float32(1.0 - rho)
    found: list[np.ndarray] = []
    torch: Any
    try:  # torch's matrix product and comparison use both cores; numpy's comparison one
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tensor = torch.from_numpy(np.array(vectors, dtype=np.float32))
    for start in range(0, len(rows), block):
        batch = rows[start : start + block]
        if torch is not None:
            hits = torch.nonzero(tensor[torch.from_numpy(batch)] @ tensor.T >= float(floor)).numpy()
            hit_row, col = hits[:, 0], hits[:, 1]
        else:
            hit_row, col = np.nonzero(vectors[batch] @ vectors.T >= floor)
        row = batch[hit_row]
        # a pair of two constrained words shows up from both ends: keep it once
        keep = (row != col) & ~(is_row[col] & (col < row))
        row, col = row[keep], col[keep]
        found.append(np.stack([np.minimum(row, col), np.maximum(row, col)], axis=1))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate(found)
    return pairs[np.argsort(pairs[:, 0] * n + pairs[:, 1], kind="stable")]


def _canonical_pairs(pairs: np.ndarray | Sequence[tuple[int, int]], n: int, name: str) -> np.ndarray:
    array = np.asarray(pairs, dtype=np.int64).reshape(-1, 2) if len(pairs) else np.empty((0, 2), np.int64)
    if len(array) and (array.min() < 0 or array.max() >= n):
        raise ConfigError(
            f"The '{name}' parameter of counter_fit must hold row indices in [0, {n}). "
            f"Got values from {array.min()} to {array.max()}."
        )
    array = np.stack([array.min(axis=1), array.max(axis=1)], axis=1)
    array = array[array[:, 0] != array[:, 1]]
    return np.unique(array, axis=0) if len(array) else array


def _difference(pairs: np.ndarray, remove: np.ndarray, n: int) -> np.ndarray:
    if not len(pairs) or not len(remove):
        return pairs
    keys = pairs[:, 0] * n + pairs[:, 1]
    return pairs[~np.isin(keys, remove[:, 0] * n + remove[:, 1])]


def _pair_distances(vectors: np.ndarray, pairs: np.ndarray, *, chunk: int = 1 << 18) -> np.ndarray:
    out = np.empty(len(pairs), dtype=np.float32)
    for start in range(0, len(pairs), chunk):
        p = pairs[start : start + chunk]
        out[start : start + chunk] = 1.0 - np.einsum("ij,ij->i", vectors[p[:, 0]], vectors[p[:, 1]])
    return out


def _mean_cos(vectors: np.ndarray, pairs: np.ndarray) -> float:
    return float(np.mean(1.0 - _pair_distances(vectors, pairs))) if len(pairs) else float("nan")


# ---- constraints from WordNet -------------------------------------------------------------------
def _single_word(name: str) -> str | None:
    name = name.lower()
    return name if "_" not in name and WORD_PATTERN.fullmatch(name) else None


def wordnet_pairs(
    reader: Any, vocabulary: Container[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Synonym and antonym pairs from WordNet, sorted, each pair sorted.

    Synonyms: two single-word lemmas (lower-cased, no underscores) sharing a synset.
    Antonyms: a lemma and each of its ``antonyms()``. Both words must be in ``vocabulary``.
    ``reader`` is an NLTK ``WordNetCorpusReader`` (:func:`textrobust.assets.wordnet`).
    """
    synonyms: set[tuple[str, str]] = set()
    antonyms: set[tuple[str, str]] = set()
    for synset in reader.all_synsets():
        lemmas = synset.lemmas()
        names = sorted({n for n in (_single_word(l.name()) for l in lemmas) if n and n in vocabulary})
        synonyms.update(combinations(names, 2))
        for lemma in lemmas:
            name = _single_word(lemma.name())
            if not name or name not in vocabulary:
                continue
            for antonym in lemma.antonyms():
                other = _single_word(antonym.name())
                if other and other != name and other in vocabulary:
                    antonyms.add((min(name, other), max(name, other)))
    return sorted(synonyms), sorted(antonyms)


def _index_pairs(pairs: Iterable[tuple[str, str]], index: dict[str, int]) -> np.ndarray:
    rows = [(index[a], index[b]) for a, b in pairs if a in index and b in index]
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


# ---- the cache ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class CounterFitCache:
    """Where the counter-fitted vectors for one setting live."""

    vectors: Path
    words: Path
    meta: Path
    digest: str

    def exists(self) -> bool:
        return self.vectors.is_file() and self.words.is_file()

    def read_meta(self) -> dict[str, Any] | None:
        """The build statistics written next to the vectors, or None."""
        try:
            return json.loads(self.meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None


PairSource = Callable[[dict[str, int]], tuple[list[tuple[str, str]], list[tuple[str, str]]]]


def _digest(
    settings: CounterFitSettings, words: Sequence[str], matrix: np.ndarray, pairs_label: str
) -> str:
    h = hashlib.sha256()
    header = {"version": COUNTERFIT_VERSION, "pairs": pairs_label, **settings.to_dict()}
    h.update(json.dumps(header, sort_keys=True).encode())
    h.update(repr(matrix.shape).encode())
    h.update(np.ascontiguousarray(matrix[:1000], dtype=np.float32).tobytes())
    h.update("\n".join(words[:1000]).encode("utf-8"))
    return h.hexdigest()[:16]


def counterfit_cache(
    settings: CounterFitSettings | None = None, *, glove_path: str | Path | None = None
) -> CounterFitCache:
    """The cache files of the counter-fitted GloVe for ``settings`` (they may not exist)."""
    settings = settings or CounterFitSettings()
    words, matrix = _glove(settings, glove_path)
    return _cache_for(settings, words, matrix, "glove50", "wordnet")


def _glove(settings: CounterFitSettings, glove_path: str | Path | None) -> tuple[list[str], np.ndarray]:
    from textrobust.assets import load_glove

    words, matrix = load_glove(glove_path)
    n = min(settings.vocab_size, len(words))
    return words[:n], matrix[:n]


def _cache_for(
    settings: CounterFitSettings, words: Sequence[str], matrix: np.ndarray, label: str, pairs_label: str
) -> CounterFitCache:
    from textrobust.assets import cache_dir

    digest = _digest(settings, words, matrix, pairs_label)
    stem = f"counterfitted-{label}-{digest}"
    folder = cache_dir() / "vectors"
    return CounterFitCache(
        folder / f"{stem}.npy", folder / f"{stem}.words.txt", folder / f"{stem}.json", digest
    )


def counterfitted_vectors(
    settings: CounterFitSettings | None = None,
    *,
    glove_path: str | Path | None = None,
    wordnet_path: str | Path | None = None,
    source: tuple[Sequence[str], np.ndarray] | None = None,
    pairs: PairSource | None = None,
    rebuild: bool = False,
    log: Log | None = None,
) -> WordVectors:
    """Counter-fitted GloVe 50d as :class:`WordVectors`: from the cache, or built and cached.

    The first build reads WordNet and GloVe and takes a minute or two on two cores; ``log``
    receives progress lines. ``rebuild=True`` ignores an existing cache.

    ``source`` (words, matrix) replaces GloVe (only its first ``settings.vocab_size`` rows
    are used) and ``pairs`` replaces WordNet: a function from the vocabulary's word -> row
    index to (synonym pairs, antonym pairs) of words; tests use both. A custom ``pairs``
    is told apart in the cache by its qualified name.
    """
    settings = settings or CounterFitSettings()
    say = log or (lambda message: None)
    if source is None:
        words, matrix = _glove(settings, glove_path)
        label = "glove50"
    else:
        n = min(settings.vocab_size, len(source[0]))
        words, matrix = list(source[0][:n]), np.asarray(source[1])[:n]
        label = f"custom{matrix.shape[1] if matrix.ndim == 2 else ''}"
    pairs_label = "wordnet" if pairs is None else f"custom:{getattr(pairs, '__qualname__', type(pairs).__name__)}"
    cache = _cache_for(settings, words, matrix, label, pairs_label)
    name = f"counterfitted-{label}[{len(words)}]"
    if cache.exists() and not rebuild:
        loaded = _load(cache)
        if loaded is not None and loaded[0] == list(words):
            say(f"counter-fitted vectors loaded from {cache.vectors}")
            return WordVectors(loaded[0], loaded[1], name=name)
        say(f"counter-fitted cache {cache.vectors} is unreadable or inconsistent: rebuilding")

    start = time.perf_counter()
    index: dict[str, int] = {}
    for i, word in enumerate(words):
        index.setdefault(word, i)
    if pairs is None:
        from textrobust.assets import wordnet

        reader = wordnet(wordnet_path)
        pairs = lambda vocabulary: wordnet_pairs(reader, vocabulary)
    synonyms, antonyms = pairs(index)
    pair_seconds = time.perf_counter() - start
    say(f"constraints: {len(synonyms):,} synonym and {len(antonyms):,} antonym pairs in the "
        f"vocabulary ({pair_seconds:.1f} s)")
    vectors, stats = counter_fit(
        matrix, _index_pairs(synonyms, index), _index_pairs(antonyms, index), settings, log=log
    )
    meta = {
        "settings": settings.to_dict(),
        "version": COUNTERFIT_VERSION,
        "digest": cache.digest,
        "pairs": pairs_label,
        "stats": stats.to_dict(),
        "pair_seconds": round(pair_seconds, 3),
        "total_seconds": round(time.perf_counter() - start, 3),
    }
    _write(cache, words, vectors, meta)
    say(f"counter-fitted vectors written to {cache.vectors} ({meta['total_seconds']:.1f} s in all)")
    return WordVectors(words, vectors, name=name)


def _load(cache: CounterFitCache) -> tuple[list[str], np.ndarray] | None:
    try:
        matrix = np.load(cache.vectors, allow_pickle=False)
        words = cache.words.read_text(encoding="utf-8").split("\n")
    except (OSError, ValueError):
        return None
    if words and words[-1] == "":
        words.pop()
    if matrix.ndim != 2 or matrix.shape[0] != len(words) or not np.all(np.isfinite(matrix)):
        return None
    return words, matrix


def _write(cache: CounterFitCache, words: Sequence[str], vectors: np.ndarray, meta: dict[str, Any]) -> None:
    if any("\n" in w for w in words):
        raise DataError("A word of the vocabulary contains a line break; the cache cannot store it.")
    cache.vectors.parent.mkdir(parents=True, exist_ok=True)
    suffix = f".tmp{os.getpid()}"
    tmp_vectors = cache.vectors.with_name(cache.vectors.name + suffix)
    with open(tmp_vectors, "wb") as handle:
        np.save(handle, np.asarray(vectors, dtype=np.float32), allow_pickle=False)
    tmp_words = cache.words.with_name(cache.words.name + suffix)
    tmp_words.write_text("\n".join(words) + "\n", encoding="utf-8")
    tmp_meta = cache.meta.with_name(cache.meta.name + suffix)
    tmp_meta.write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp_words, cache.words)
    os.replace(tmp_meta, cache.meta)
    os.replace(tmp_vectors, cache.vectors)  # last: its presence marks a complete cache
