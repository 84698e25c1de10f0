"""The query layer: the only door between an attack and a victim.

Around every victim one :class:`QueryLayer` batches texts, caches probabilities (an
identical text is never sent to the model twice), counts queries, times the forward
passes and enforces a query budget by raising :class:`~textrobust.errors.
QueryBudgetExceeded`. Searches never count queries themselves (TextAttack's per-search
budget handling produced a series of IndexErrors, #437, #307).

A *query* is one text actually sent to the victim; cache hits are free.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from textrobust.errors import ConfigError, QueryBudgetExceeded, VictimError
from textrobust.victims.protocol import as_texts
from textrobust.text import Text
from textrobust.victims.protocol import Capabilities, Victim, WordIdVictim

__all__ = ["LONG_KEY_CHARS", "QueryLayer", "QueryStats", "Budget", "cache_key"]


@dataclass(frozen=True)
class QueryStats:
    """Counters of a query layer at one moment (see :meth:`QueryLayer.stats`)."""

    requested: int  # texts asked for, cache hits included
    queries: int  # texts sent to the victim
    cache_hits: int
    batches: int  # forward calls made
    forward_seconds: float  # wall time inside the victim

    @property
    def hit_rate(self) -> float:
        return self.cache_hits / self.requested if self.requested else 0.0

    def minus(self, earlier: QueryStats) -> QueryStats:
        """Counters accumulated since ``earlier``."""
        return QueryStats(
            self.requested - earlier.requested,
            self.queries - earlier.queries,
            self.cache_hits - earlier.cache_hits,
            self.batches - earlier.batches,
            self.forward_seconds - earlier.forward_seconds,
        )


class Budget:
    """A running query allowance, opened with :meth:`QueryLayer.budget`."""

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 0:
            raise ConfigError(f"The 'budget' parameter must be >= 0 or None. Got {limit} instead.")
        self.limit = limit
        self.used = 0

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else self.limit - self.used

    def __repr__(self) -> str:
        return f"Budget(limit={self.limit}, used={self.used})"


#: Keys longer than this many characters are cached under a digest, not the text.
LONG_KEY_CHARS = 1024


def cache_key(key: tuple[str, ...]) -> tuple[Any, ...]:
    """The cache's key for a text key: the key itself for ordinary texts; for long ones a
    128-bit BLAKE2b digest of the columns, so the cache of a 50,000-word text's leave-one-
    out probes holds 16 bytes per text, not the text (a chance collision is about 2^-64
    after 2^32 texts: negligible)."""
    if sum(map(len, key)) <= LONG_KEY_CHARS:
        return key
    digest = hashlib.blake2b(digest_size=16)
    for column in key:
        data = column.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return ("blake2b", digest.digest())


class QueryLayer:
    """Batches, caches, counts and budgets the queries sent to ``victim``.

    >>> import numpy as np
    >>> from textrobust.victims.function import FunctionVictim
    >>> v = FunctionVictim(lambda s: np.array([[0.5, 0.5]] * len(s)), ("neg", "pos"))
    >>> layer = QueryLayer(v, batch_size=8)
    >>> t = Text.from_string("fine")
    >>> _ = layer.probabilities([t, t]); _ = layer.probabilities([t])
    >>> layer.stats().queries, layer.stats().cache_hits
    (1, 2)
    """

    def __init__(
        self,
        victim: Victim,
        *,
        batch_size: int = 64,
        cache_size: int | None = 500_000,
        check_outputs: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(
                f"The 'batch_size' parameter of QueryLayer must be an int >= 1. Got {batch_size} instead."
            )
        if cache_size is not None and cache_size < 0:
            raise ConfigError(
                f"The 'cache_size' parameter of QueryLayer must be >= 0 or None. Got {cache_size} instead."
            )
        self.victim = victim
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.check_outputs = check_outputs
        self._cache: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._budgets: list[Budget] = []
        self._requested = 0
        self._queries = 0
        self._hits = 0
        self._batches = 0
        self._forward = 0.0

    # ---- the victim's face ------------------------------------------------------------
    @property
    def label_names(self) -> tuple[str, ...]:
        return tuple(self.victim.label_names)

    @property
    def num_labels(self) -> int:
        return len(self.victim.label_names)

    @property
    def capabilities(self) -> Capabilities:
        return self.victim.capabilities

    def __repr__(self) -> str:
        return f"QueryLayer({self.victim!r}, batch_size={self.batch_size}, cache_size={self.cache_size})"

    # ---- queries ------------------------------------------------------------------------
    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        """Probabilities [len(texts), num_labels], from the cache where possible. Plain
        strings are accepted too (read with :meth:`Text.from_string`)."""
        texts = as_texts(texts)
        n_labels = self.num_labels
        out = np.empty((len(texts), n_labels), dtype=np.float64)
        hits = 0
        missing: dict[tuple[Any, ...], int] = {}  # key -> its row in missing_texts
        missing_texts: list[Text] = []
        missing_rows: list[int] = []  # the row of ``out`` each missing text fills first
        duplicates: list[tuple[int, int]] = []  # (row of out, index in missing_texts)
        cache = self._cache
        caching = self.cache_size != 0
        hit_rows: list[int] = []
        hit_values: list[np.ndarray] = []
        for i, text in enumerate(texts):
            key = text.key
            if len(key) != 1 or len(key[0]) > LONG_KEY_CHARS:
                key = cache_key(key)
            row = cache.get(key) if caching else None
            if row is not None:
                cache.move_to_end(key)
                hit_rows.append(i)
                hit_values.append(row)
                hits += 1
            elif key in missing:
                duplicates.append((i, missing[key]))
                hits += 1  # a duplicate inside one request is sent once
            else:
                missing[key] = len(missing_texts)
                missing_texts.append(text)
                missing_rows.append(i)
        if hit_rows:
            out[hit_rows] = hit_values
        if missing_texts:
            self._charge(len(missing_texts))  # may raise: then nothing is counted
        self._requested += len(texts)
        self._hits += hits
        missing_keys = list(missing)
        step = self.call_size
        for start in range(0, len(missing_texts), step):
            end = start + step
            probs = self._forward_batch(missing_texts[start:end])
            out[missing_rows[start:end]] = probs
            if caching:
                cache.update(zip(missing_keys[start:end], probs))
                if self.cache_size is not None and len(cache) > self.cache_size:
                    for _ in range(len(cache) - self.cache_size):
                        cache.popitem(last=False)
        if duplicates:
            rows, sources = zip(*duplicates)
            out[list(rows)] = out[[missing_rows[j] for j in sources]]
        return out

    @property
    def call_size(self) -> int:
        """Most texts sent to the victim in one call: ``batch_size``, or more when the
        victim asks for more with an int ``sort_window`` attribute. A victim does so when it
        cuts its calls into batches itself, sorted by token length
        (:class:`~textrobust.victims.huggingface.HuggingFaceVictim` with ``bucket``): the
        more texts it sees at once, the less its batches pad."""
        window = getattr(self.victim, "sort_window", None)
        if isinstance(window, int) and not isinstance(window, bool):
            return max(self.batch_size, window)
        return self.batch_size

    @property
    def accepts_word_ids(self) -> bool:
        """Whether the victim takes texts as rows of word ids (see :meth:`probabilities_of_ids`)."""
        return bool(getattr(self.victim, "accepts_word_ids", False))

    def probabilities_of_ids(self, ids: np.ndarray, *, distinct: bool = False) -> np.ndarray:
        """Probabilities of texts given as rows of word ids (victims that accept them, e.g.
        the zoo's word models): counted and budgeted like texts, one query per row, never
        cached. A row repeated inside one call is sent once, as with texts; ``distinct=True``
        says the rows are known to differ (the prover's layers) and skips that check."""
        if not self.accepts_word_ids:
            from textrobust.errors import CapabilityError

            raise CapabilityError(f"{self.victim!r} does not take texts as word ids.")
        ids = np.asarray(ids)
        if not distinct and len(ids) > 1:
            unique, inverse = np.unique(ids, axis=0, return_inverse=True)
            if len(unique) < len(ids):
                probs = self.probabilities_of_ids(unique, distinct=True)  # may raise: nothing counted
                self._requested += len(ids) - len(unique)
                self._hits += len(ids) - len(unique)
                return probs[inverse.reshape(-1)]
        n = len(ids)
        if n:
            self._charge(n)
        self._requested += n
        if not n:
            return np.empty((0, self.num_labels), dtype=np.float64)
        start = time.perf_counter()
        try:
            victim = cast(WordIdVictim, self.victim)  # accepts_word_ids checked above
            probs = np.array(victim.probabilities_of_ids(ids), dtype=np.float64, copy=True)
        finally:
            self._forward += time.perf_counter() - start
        self._batches += 1
        self._queries += n
        if self.check_outputs:
            self._check(probs, n)
        return probs

    def predict(self, texts: Sequence[Text | str]) -> np.ndarray:
        """Predicted label indices."""
        return self.probabilities(texts).argmax(axis=1)

    # ---- budgets and counters --------------------------------------------------------
    @contextmanager
    def budget(self, limit: int | None) -> Iterator[Budget]:
        """Within the block, at most ``limit`` queries may reach the victim; past that,
        :class:`QueryBudgetExceeded` is raised *before* anything is sent. Budgets nest;
        each one counts the queries made inside it."""
        budget = Budget(limit)
        self._budgets.append(budget)
        try:
            yield budget
        finally:
            self._budgets.remove(budget)

    def stats(self) -> QueryStats:
        return QueryStats(self._requested, self._queries, self._hits, self._batches, self._forward)

    @property
    def queries(self) -> int:
        return self._queries

    def clear_cache(self) -> None:
        self._cache.clear()

    # ---- internals -------------------------------------------------------------------
    def _charge(self, n: int) -> None:
        for budget in self._budgets:
            if budget.limit is not None and budget.used + n > budget.limit:
                raise QueryBudgetExceeded(budget.limit, budget.used, n)
        for budget in self._budgets:
            budget.used += n

    def _forward_batch(self, chunk: list[Text]) -> np.ndarray:
        start = time.perf_counter()
        try:
            # A copy: a victim may return a view of a buffer it reuses, and the cache
            # keeps rows of this array.
            probs = np.array(self.victim.probabilities(chunk), dtype=np.float64, copy=True)
        finally:
            self._forward += time.perf_counter() - start
        self._batches += 1
        self._queries += len(chunk)
        if self.check_outputs:
            self._check(probs, len(chunk))
        return probs

    def _check(self, probs: np.ndarray, n: int) -> None:
        expected = (n, self.num_labels)
        if probs.shape != expected:
            raise VictimError(
                f"{self.victim!r} returned probabilities of shape {probs.shape} for {n} texts; "
                f"expected {expected} (one row per text, one column per label in label_names)."
            )
        sums = probs.sum(axis=1)
        if n and probs.min() >= -1e-6 and np.abs(sums - 1.0).max() <= 1e-3:
            return  # the common case in three reductions (NaN and inf fail these comparisons)
        if not np.isfinite(probs).all():
            raise VictimError(f"{self.victim!r} returned non-finite probabilities.")
        if n and (probs.min() < -1e-6 or np.abs(sums - 1.0).max() > 1e-3):
            raise VictimError(
                f"{self.victim!r} returned rows that are not probability distributions "
                f"(row sums {sums[:3].round(4).tolist()}...). If it returns logits, wrap it "
                f"with outputs='logits'."
            )
