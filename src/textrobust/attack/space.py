"""The perturbation space Omega_r(X): perturbable positions, candidate sets, exact sizes,
lazy enumeration and exact uniform sampling.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Definitions 2-4:
``P`` is the set of perturbable positions, ``S(X, p)`` the candidate words of position
``p`` (the original word included), ``Omega(X)`` every text made by choosing one word of
``S(X, p)`` at each ``p`` (``|Omega| = prod |S(X, p)|``) and ``Omega_r(X)`` the texts of
``Omega(X)`` with at most ``r`` substituted words.

With ``a_i = |S(X, p_i)| - 1`` substitutes at position ``i``, the texts with exactly ``k``
substitutions number ``e_k(a_1, ..., a_m)`` (the elementary symmetric polynomial), so
``|Omega_r| = sum_{k <= r} e_k``. :class:`PerturbationSpace` computes these exactly as
Python integers (never floats: ``6^40`` does not fit a float exactly), enumerates a layer
lazily (combinations of positions, most sensitive first when an order is given, times the
product of their substitutes; no list of the layer is ever built) and samples uniformly
from ``Omega_r`` by drawing an index in ``[0, |Omega_r|)`` with Python's exact big-integer
``randrange`` and *unranking* it, which makes every text exactly equally likely.

:class:`SpaceSource` turns a space back into a
:class:`~textrobust.attack.problem.CandidateSource`, so the engine's searches (greedy,
PSO) attack on exactly the same candidate sets as PDP and the prover.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textrobust.attack.problem import CandidateSource, Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text

if TYPE_CHECKING:
    from textrobust.attack.problem import Problem

__all__ = ["PerturbationSpace", "SpaceSource", "build_space", "space_from_problem", "space_rng"]


def space_rng(seed: int, text: Text) -> random.Random:
    """A :class:`random.Random` seeded by ``seed`` and the text (a stable CRC), so each
    example gets its own reproducible stream."""
    tag = zlib.crc32("\x1f".join(text.key).encode("utf-8"))
    return random.Random((int(seed) << 32) ^ tag)


@dataclass(frozen=True)
class PerturbationSpace:
    """``Omega(X)`` for one text: ``positions`` (P, in text order) and for each the
    ``substitutes`` (``S(X, p)`` without the original word, best first).

    >>> from textrobust.analyses.radius import PerturbationSpace
    >>> from textrobust.text import Text
    >>> x = Text.from_string("a good film")
    >>> space = PerturbationSpace(x, (1, 2), (("fine", "nice"), ("movie",)))
    >>> space.size(), space.size(1), space.layer_size(2)
    (6, 4, 2)
    >>> [str(t) for t in space.layer(1)]
    ['a fine film', 'a nice film', 'a good movie']
    """

    original: Text
    positions: tuple[int, ...]
    substitutes: tuple[tuple[str, ...], ...]
    _tables: dict[int, list[list[int]]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "positions", tuple(int(p) for p in self.positions))
        object.__setattr__(self, "substitutes", tuple(tuple(s) for s in self.substitutes))
        if len(self.positions) != len(self.substitutes):
            raise ConfigError(
                f"PerturbationSpace needs one substitute list per position: got {len(self.positions)} "
                f"positions and {len(self.substitutes)} lists."
            )
        if list(self.positions) != sorted(set(self.positions)):
            raise ConfigError(
                f"The positions of a PerturbationSpace must be distinct and sorted. Got {self.positions}."
            )
        n = len(self.original)
        words = self.original.words
        for p, subs in zip(self.positions, self.substitutes):
            if not 0 <= p < n:
                raise ConfigError(f"Position {p} is outside the text ({n} words).")
            if not subs:
                raise ConfigError(f"Position {p} has no substitute: leave it out of the space.")
            if words[p] in subs or len(set(subs)) != len(subs):
                raise ConfigError(
                    f"The substitutes of position {p} must be distinct and differ from the original "
                    f"word {words[p]!r}. Got {list(subs)}."
                )

    # ---- views -------------------------------------------------------------------------
    @property
    def m(self) -> int:
        """``|P|``: the number of perturbable positions."""
        return len(self.positions)

    def candidate_sets(self) -> dict[int, tuple[str, ...]]:
        """``S(X, p)`` for each perturbable position: the original word first."""
        words = self.original.words
        return {p: (words[p], *subs) for p, subs in zip(self.positions, self.substitutes)}

    def substitutes_at(self, position: int) -> tuple[str, ...]:
        """The substitutes of ``position`` (empty if it is not perturbable)."""
        try:
            return self.substitutes[self.positions.index(position)]
        except ValueError:
            return ()

    def __repr__(self) -> str:
        return f"PerturbationSpace({self.original!r}, m={self.m}, |Omega|={self.size()})"

    # ---- sizes -------------------------------------------------------------------------
    def _table(self, r: int) -> list[list[int]]:
        """``E[i][j] = e_j(a_i, ..., a_{m-1})`` for ``j <= r`` (suffix elementary symmetric
        polynomials of the substitute counts), exact integers."""
        table = self._tables.get(r)
        if table is None:
            m = self.m
            counts = [len(s) for s in self.substitutes]
            table = [[0] * (r + 1) for _ in range(m + 1)]
            table[m][0] = 1
            for i in range(m - 1, -1, -1):
                below, here, a = table[i + 1], table[i], counts[i]
                here[0] = 1
                for j in range(1, r + 1):
                    here[j] = below[j] + a * below[j - 1]
            self._tables[r] = table
        return table

    def _radius(self, r: int | None) -> int:
        if r is None:
            return self.m
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise ConfigError(f"The radius 'r' must be an int >= 0 or None (the whole space). Got {r!r} instead.")
        return min(r, self.m)

    def layer_size(self, k: int) -> int:
        """How many texts have exactly ``k`` substitutions (``e_k``)."""
        if k < 0 or k > self.m:
            return 0
        return self._table(k)[0][k]

    def size(self, r: int | None = None) -> int:
        """``|Omega_r(X)|`` exactly (``r=None``: ``|Omega(X)| = prod |S(X, p)|``)."""
        if r is None:
            return math.prod(len(s) + 1 for s in self.substitutes)
        r = self._radius(r)
        return sum(self._table(r)[0][: r + 1])

    def log10_size(self, r: int | None = None) -> float:
        """``log10 |Omega_r|`` (for reports of very large spaces)."""
        size = self.size(r)
        return math.log10(size) if size > 0 else float("-inf")

    # ---- texts -------------------------------------------------------------------------
    def text(self, assignment: Mapping[int, str]) -> Text:
        """The text with ``assignment`` ({position: word}) applied to the original."""
        return self.original.replace(dict(assignment)) if assignment else self.original

    def contains(self, text: Text, r: int | None = None) -> bool:
        """Whether ``text`` is in ``Omega_r(X)``."""
        if len(text) != len(self.original) or text.frozen != self.original.frozen:
            return False
        try:
            changed = self.original.diff(text)
        except ConfigError:
            return False
        if r is not None and len(changed) > r:
            return False
        return all(text.words[p] in self.substitutes_at(p) for p in changed)

    def layer(self, k: int, order: Sequence[int] | None = None) -> Iterator[Text]:
        """Every text with exactly ``k`` substitutions, lazily: combinations of ``k``
        positions taken from ``order`` (a permutation of the positions, most sensitive
        first; default text order), so combinations of the first positions come first,
        each followed by the product of its substitutes."""
        positions = self._order(order)
        if k == 0:
            yield self.original
            return
        if k > self.m:
            return
        subs = {p: self.substitutes_at(p) for p in positions}
        replace = self.original.replace
        for chosen in itertools.combinations(positions, k):
            for words in itertools.product(*(subs[p] for p in chosen)):
                yield replace(dict(zip(chosen, words)))

    def ball(self, r: int | None = None, order: Sequence[int] | None = None) -> Iterator[Text]:
        """Every text of ``Omega_r`` (layers 0, 1, ..., r in turn), lazily."""
        for k in range(self._radius(r) + 1):
            yield from self.layer(k, order)

    def _order(self, order: Sequence[int] | None) -> tuple[int, ...]:
        if order is None:
            return self.positions
        order = tuple(int(p) for p in order)
        if sorted(order) != list(self.positions):
            raise ConfigError(
                f"The 'order' parameter must be a permutation of the space's positions {list(self.positions)}. "
                f"Got {list(order)}."
            )
        return order

    # ---- uniform sampling --------------------------------------------------------------
    def unrank(self, index: int, r: int | None = None) -> dict[int, str]:
        """The ``index``-th text of ``Omega_r`` as an assignment {position: word}: a
        bijection from ``[0, |Omega_r|)`` onto ``Omega_r`` (layer 0 first, then layer 1,
        ...; inside a layer, positions in text order)."""
        r = self._radius(r)
        total = self.size(r)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < total:
            raise ConfigError(f"The 'index' parameter must be an int in [0, {total}). Got {index!r} instead.")
        table = self._table(r)
        k = 0
        while index >= table[0][k]:
            index -= table[0][k]
            k += 1
        chosen: dict[int, str] = {}
        for i, (p, subs) in enumerate(zip(self.positions, self.substitutes)):
            if k == 0:
                break
            skip = table[i + 1][k]
            if index < skip:
                continue
            index -= skip
            option, index = divmod(index, table[i + 1][k - 1])
            chosen[p] = subs[option]
            k -= 1
        return chosen

    def sample(self, r: int | None, n: int, rng: random.Random) -> list[Text]:
        """``n`` texts drawn independently and uniformly from ``Omega_r`` (with
        replacement, as the Hoeffding bound of the PR metric assumes)."""
        if n < 0:
            raise ConfigError(f"The sample size 'n' must be >= 0. Got {n} instead.")
        r = self._radius(r)
        total = self.size(r)
        return [self.text(self.unrank(rng.randrange(total), r)) for _ in range(n)]


class SpaceSource:
    """A :class:`~textrobust.attack.problem.CandidateSource` that proposes, at each
    perturbable position, the other words of ``S(X, p)`` (the original word included when
    the position was already changed), whatever the rest of the text: a search that uses
    it never leaves ``Omega(X)``."""

    def __init__(self, space: PerturbationSpace) -> None:
        self.space = space
        self._sets = space.candidate_sets()

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        if len(text) != len(self.space.original):
            raise ConfigError(
                f"This SpaceSource belongs to a text of {len(self.space.original)} words; it was asked "
                f"about a text of {len(text)} words."
            )
        out: dict[int, list[Substitution]] = {}
        words = text.words
        for p in positions:
            options = self._sets.get(p)
            if options is None:
                continue
            n = len(options)
            subs = [Substitution(p, w, float(n - i)) for i, w in enumerate(options) if w != words[p]]
            if subs:
                out[p] = subs
        return out

    def __repr__(self) -> str:
        return f"SpaceSource(m={self.space.m}, |Omega|={self.space.size()})"


def build_space(text: Text, source: CandidateSource, positions: Sequence[int] | None = None) -> PerturbationSpace:
    """The space of ``text`` under ``source``: every modifiable position (or those in
    ``positions``) for which the source proposes at least one new word, with its distinct
    proposals in the source's order."""
    allowed = text.modifiable if positions is None else tuple(p for p in text.modifiable if p in set(positions))
    found = source.candidates(text, list(allowed)) if allowed else {}
    return _space(text, allowed, {p: [s.word for s in found.get(p, ())] for p in allowed})


def space_from_problem(problem: Problem, start: Text | None = None) -> PerturbationSpace:
    """The space a :class:`~textrobust.attack.problem.Problem` defines around ``start``
    (default: its original): the positions it allows there, and at each the words of the
    one-word edits every constraint accepts."""
    start = problem.original if start is None else start
    allowed = problem.positions(start)
    words: dict[int, list[str]] = {p: [] for p in allowed}
    for proposal in problem.neighbours(start):
        words.setdefault(proposal.position, []).append(proposal.word)
    return _space(start, allowed, words)


def _space(text: Text, allowed: Sequence[int], words: Mapping[int, Sequence[str]]) -> PerturbationSpace:
    positions: list[int] = []
    substitutes: list[tuple[str, ...]] = []
    for p in sorted(set(allowed)):
        kept = tuple(dict.fromkeys(w for w in words.get(p, ()) if w != text.words[p]))
        if kept:
            positions.append(p)
            substitutes.append(kept)
    return PerturbationSpace(text, tuple(positions), tuple(substitutes))
