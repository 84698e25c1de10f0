"""A word-level tokenizer for the zoo's models: one token per lowercased word.

Token ids: ``<pad>`` is 0, ``<unk>`` is 1, then the vocabulary words. A text's tokens are
its :attr:`Text.words`, lowercased, truncated to ``max_length``; word ``i`` is token
``i``, so ``word_index`` is simply ``0..n-1``. An empty text becomes one ``<unk>`` token
with word index -1, so every row has at least one real token.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.errors import ConfigError, VictimError
from textrobust.text import Text
from textrobust.victims.torch import Encoded

__all__ = ["PAD", "UNK", "WordVocab"]

PAD = "<pad>"
UNK = "<unk>"
_FORMAT = "textrobust-word-vocab"


class _IdsAsTyped(dict[str, int]):
    """Ids by the word as typed, filled on first sight from the lowercased table: an
    attack encodes the same few hundred words thousands of times, and a dict hit in C is
    cheaper than ``str.lower`` plus a lookup. Emptied past :attr:`LIMIT` entries, so
    hostile input with millions of distinct words cannot grow it without bound."""

    LIMIT = 200_000

    def __init__(self, lowered: dict[str, int]) -> None:
        super().__init__()
        self._lowered = lowered

    def __missing__(self, word: str) -> int:
        if len(self) >= self.LIMIT:
            self.clear()
        found = self[word] = self._lowered.get(word.lower(), 1)
        return found


class WordVocab:
    """Maps lowercased words to ids; ``encode(texts)`` gives an :class:`Encoded` batch.

    >>> v = WordVocab(["good", "film"], max_length=3)
    >>> e = v.encode([Text.from_string("A good film"), Text.from_string("")])
    >>> e.ids.tolist(), e.mask.tolist(), e.word_index.tolist()
    ([[1, 2, 3], [1, 0, 0]], [[True, True, True], [True, False, False]], [[0, 1, 2], [-1, -1, -1]])
    """

    def __init__(self, words: Sequence[str], *, max_length: int = 128) -> None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 1:
            raise ConfigError(
                f"The 'max_length' parameter of WordVocab must be an int >= 1. Got {max_length!r} instead."
            )
        self.max_length = max_length
        self._words: list[str] = [PAD, UNK]
        self._ids: dict[str, int] = {PAD: 0, UNK: 1}
        for word in words:
            w = word.lower()
            if w not in self._ids:
                self._ids[w] = len(self._words)
                self._words.append(w)
        self._as_typed = _IdsAsTyped(self._ids)

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def build(
        cls,
        texts: Iterable[Text],
        *,
        min_count: int = 1,
        max_size: int | None = None,
        max_length: int = 128,
        extra_words: Iterable[str] = (),
    ) -> WordVocab:
        """The words of ``texts`` seen at least ``min_count`` times (most frequent first,
        at most ``max_size``), then ``extra_words`` not already in."""
        if min_count < 1:
            raise ConfigError(f"The 'min_count' parameter of WordVocab.build must be >= 1. Got {min_count}.")
        if max_size is not None and max_size < 0:
            raise ConfigError(f"The 'max_size' parameter of WordVocab.build must be >= 0 or None. Got {max_size}.")
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(w.lower() for w in text.words)
        kept = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count]
        if max_size is not None:
            kept = kept[:max_size]
        return cls([*kept, *extra_words], max_length=max_length)

    # ---- lookups ---------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.lower() in self._ids

    def __repr__(self) -> str:
        return f"WordVocab(size={len(self)}, max_length={self.max_length})"

    @property
    def words(self) -> tuple[str, ...]:
        """All tokens by id, ``<pad>`` and ``<unk>`` first."""
        return tuple(self._words)

    def id_of(self, word: str) -> int:
        """The id of ``word`` (case-insensitive), or 1 (``<unk>``)."""
        return self._ids.get(word.lower(), 1)

    def ids_of(self, words: Iterable[str]) -> list[int]:
        get = self._ids.get
        return [get(w.lower(), 1) for w in words]

    def word_ids(self, words: Iterable[str]) -> list[int]:
        """One id per word, as :meth:`encode` gives them (without its truncation to
        ``max_length``): a victim over this vocabulary can take texts as id rows."""
        return self.ids_of(words)

    # ---- encoding --------------------------------------------------------------------
    def encode(self, texts: Sequence[Text]) -> Encoded:
        """Pad ``texts`` to the longest (at most ``max_length`` tokens)."""
        typed = self._as_typed
        limit = self.max_length
        rows = [[typed[w] for w in t.words[:limit]] for t in texts]
        n = len(rows)
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        width = max(int(lengths.max()) if n else 0, 1)
        positions = np.arange(width, dtype=np.int64)
        real = positions[None, :] < lengths[:, None]
        ids = np.zeros((n, width), dtype=np.int64)
        ids[real] = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
        word_index = np.where(real, positions[None, :], -1)
        mask = real
        empty = lengths == 0
        if empty.any():  # an empty text is one <unk> token that stands for no word
            ids[empty, 0] = 1
            mask = real.copy()
            mask[empty, 0] = True
        return Encoded(ids, mask, word_index)

    # ---- persistence -----------------------------------------------------------------
    def to_dict(self) -> dict[str, object]:
        return {"format": _FORMAT, "max_length": self.max_length, "words": self._words[2:]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WordVocab:
        words = data.get("words") if isinstance(data, dict) else None
        max_length = data.get("max_length", 128) if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(words, list):
            raise VictimError(
                f"Not a word vocabulary: expected a JSON object with format '{_FORMAT}' and a 'words' list."
            )
        if isinstance(max_length, bool) or not isinstance(max_length, int):
            raise VictimError(f"Not a word vocabulary: 'max_length' must be an int. Got {max_length!r}.")
        return cls([str(w) for w in words], max_length=max_length)

    def save(self, path: Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: Path) -> WordVocab:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise VictimError(f"Vocabulary file {path} does not exist (expected vocab.json in a victim folder).") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise VictimError(f"Vocabulary file {path} could not be read as JSON: {exc}.") from None
        try:
            return cls.from_dict(data)
        except VictimError as exc:
            raise VictimError(f"{path}: {exc}") from None
