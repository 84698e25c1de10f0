"""A small bounded least-recently-used cache, shared by the scorers, the LM and constraints.

Keys are plain strings (or tuples of strings): the cache of a sentence encoder maps each
string to its embedding, so a string is encoded once however often it is compared.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

from textrobust.errors import ConfigError

__all__ = ["LRUCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A dict that forgets its least recently used entries beyond ``maxsize``.

    ``maxsize=None`` keeps everything. Counts hits and misses of :meth:`get`.

    >>> cache = LRUCache(maxsize=2)
    >>> cache.put("a", 1); cache.put("b", 2); cache.put("c", 3)
    >>> "a" in cache, cache.get("c")
    (False, 3)
    """

    def __init__(self, maxsize: int | None = 100_000) -> None:
        if maxsize is not None and maxsize < 1:
            raise ConfigError(f"The 'cache_size' parameter must be >= 1 or None. Got {maxsize} instead.")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> V | None:
        """The value for ``key`` (marked as recently used), or None."""
        try:
            value = self._data[key]
        except KeyError:
            self.misses += 1
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if self.maxsize is not None:
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    def missing(self, keys: Iterable[K]) -> list[K]:
        """The distinct keys not in the cache, in first-seen order (counts no hits)."""
        seen: dict[K, None] = {}
        for key in keys:
            if key not in self._data and key not in seen:
                seen[key] = None
        return list(seen)

    def clear(self) -> None:
        self._data.clear()
        self.hits = self.misses = 0

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"LRUCache(size={len(self)}, maxsize={self.maxsize}, hits={self.hits}, misses={self.misses})"
