"""Neighbor_k: natural sentences within k word changes of a text (Algorithm 1).

Zhang, Zhao, Zhang, Chang and Hsieh, "Double Perturbation: On the Robustness of Robustness
and Counterfactual Bias Evaluation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 2.2 and Algorithm 1.

For every modifiable position ``i`` of a text, a fill-in model (any
:class:`~textrobust.attack.candidates.fill_in.FillIn`) proposes words with scores (the
model's logit of the whole word). Sorted decreasingly, ``L(0) >= L(1) >= ...``, a word is
kept when its score is above ``max(L(kappa), L(0) - delta)`` (kappa = 20, delta = 3), so
at most the top ``kappa`` words per position, and none far below the best one.
``Neighbor_1(x)`` is every text with one position replaced by a kept word;
``Neighbor_k(x)`` is the union of ``Neighbor_{k-1}`` over ``Neighbor_1(x)``
(recursive, deduplicated).

Choices, where the paper leaves room:

- A text is never its own neighbour: a kept word equal to the current word (up to case)
  is dropped after the threshold is computed (the released code does the same). The
  threshold itself is computed on the fill-in's list *with* that word, as in Algorithm 1.
- Frozen positions of the text (``Text.frozen``) are never changed: freeze the patch
  word's position before building its neighbourhood.
- A ``blacklist`` of words (case-insensitive) is never proposed, e.g. every protected word
  when measuring bias (the paper's footnote 7); it is applied after the threshold, so it
  does not let lower-ranked words in.
- Kept words take the case style of the word they replace; words that are not one word
  for :meth:`Text.replace` are dropped.
- The fill-in answer for position ``i`` is cached by the text *with position i masked*:
  a fill-in's answer must not depend on the word it replaces (true of masked LMs and of
  propose-and-rescore). This makes ``Neighbor_1(x~)`` at the position where ``x~``
  differs from ``x`` free once ``Neighbor_1(x)`` is known.
- For large k, :meth:`Neighbourhood.sample` draws seeded random walks instead of
  enumerating (the paper samples at k = 3 without saying how; see its docstring).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import Field

from textrobust.attack.candidates.fill_in import FillIn
from textrobust.attack.candidates.inflection import is_word, match_case
from textrobust.attack.problem import Substitution
from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = [
    "NeighbourSource",
    "Neighbourhood",
    "NeighbourhoodConfig",
    "keep_by_logit",
    "load_fill_in",
    "masked_key",
]


class NeighbourhoodConfig(Config):
    """Settings of :class:`Neighbourhood` (Algorithm 1).

    ``kappa``: at most this many words per position (the fill-in is asked for
    ``kappa + 1``); ``delta``: keep words whose score is above the best score minus
    ``delta``; ``blacklist``: words never proposed (matched lower-cased);
    ``cache_size``: fill-in answers remembered (None: unbounded; 0: none).
    """

    kappa: int = Field(default=20, ge=1)
    delta: float = Field(default=3.0, ge=0.0)
    blacklist: tuple[str, ...] = ()
    cache_size: int | None = Field(default=200_000, ge=0)


def keep_by_logit(scores: Sequence[float], kappa: int, delta: float) -> np.ndarray:
    """Which of ``scores`` Algorithm 1 keeps: ``score > max(L(kappa), L(0) - delta)``,
    where ``L`` is ``scores`` sorted decreasingly (``L(kappa) = -inf`` when there are at
    most ``kappa`` scores). Returns a boolean mask aligned with ``scores``.

    >>> keep_by_logit([5.0, 4.0, 1.5, 2.5], kappa=20, delta=3.0).tolist()
    [True, True, False, True]
    >>> keep_by_logit([5.0, 4.9, 4.8], kappa=2, delta=3.0).tolist()
    [True, True, False]
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.size == 0:
        return np.zeros(0, dtype=bool)
    ordered = np.sort(values)[::-1]
    floor = ordered[kappa] if ordered.size > kappa else -math.inf
    threshold = max(floor, ordered[0] - delta)
    return values > threshold


def masked_key(text: Text, position: int) -> tuple[str, ...]:
    """The identity of ``text`` with the word at ``position`` blanked out: two texts that
    differ only there share it (the fill-in cache key)."""
    column, start, end = text.word_spans()[position]
    columns = list(text.columns)
    columns[column] = columns[column][:start] + "\x00" + columns[column][end:]
    return tuple(columns)


class Neighbourhood:
    """Neighbor_k of texts, from a fill-in model (Algorithm 1 of Zhang et al., 2021).

    >>> class Stub:  # a fill-in that proposes the same scored words everywhere
    ...     def fill(self, requests, k):
    ...         return [[("good", 4.0), ("fine", 3.5), ("odd", 0.5)][:k] for _ in requests]
    >>> hood = Neighbourhood(Stub())
    >>> sorted(str(t) for t in hood.neighbours(Text.from_string("a bad film")))[:3]
    ['a bad fine', 'a bad good', 'a fine film']
    >>> len(hood.enumerate(Text.from_string("a bad film"), 2)) > 6
    True
    """

    def __init__(self, fill_in: FillIn, config: NeighbourhoodConfig | None = None, /, **settings: object) -> None:
        if not callable(getattr(fill_in, "fill", None)):
            raise ConfigError(
                f"The 'fill_in' parameter of Neighbourhood must have a fill(requests, k) method "
                f"(textrobust.attack.candidates.FillIn). Got {type(fill_in).__name__}."
            )
        if config is None:
            config = NeighbourhoodConfig(**settings)  # type: ignore[arg-type]
        elif settings:
            config = config.replace(**settings)  # type: ignore[assignment]
        self.fill_in = fill_in
        self.config = config
        self._blacklist = frozenset(w.lower() for w in config.blacklist)
        self._cache: OrderedDict[tuple[str, ...], tuple[tuple[str, float], ...]] = OrderedDict()
        self.requests = 0  # (text, position) requests sent to the fill-in
        self.cache_hits = 0
        self.calls = 0  # fill() calls

    def __repr__(self) -> str:
        return (
            f"Neighbourhood({self.fill_in!r}, kappa={self.config.kappa}, delta={self.config.delta}, "
            f"blacklist={len(self._blacklist)} words)"
        )

    def describe(self) -> dict[str, object]:
        return {"fill_in": repr(self.fill_in), **self.config.to_dict()}

    # ---- the words kept at a position -------------------------------------------------
    def kept(
        self, requests: Sequence[tuple[Text, int]], blacklist: Iterable[str] = ()
    ) -> list[list[tuple[str, float]]]:
        """For each ``(text, position)``: the words Algorithm 1 keeps there, best first,
        case-matched, without the current word and blacklisted words."""
        extra = frozenset(w.lower() for w in blacklist)
        banned = self._blacklist | extra if extra else self._blacklist
        answers = self._fill(requests)
        out: list[list[tuple[str, float]]] = []
        for (text, position), answer in zip(requests, answers):
            original = text.words[position]
            words: list[tuple[str, float]] = []
            seen = {original.lower()}
            for word, score in answer:
                lower = word.lower()
                if lower in seen or lower in banned:
                    continue
                seen.add(lower)
                words.append((match_case(original, word), score))
            out.append(words)
        return out

    def _fill(self, requests: Sequence[tuple[Text, int]]) -> list[tuple[tuple[str, float], ...]]:
        """Thresholded fill-in answers (current word not yet removed), through the cache."""
        keys = [masked_key(text, position) for text, position in requests]
        out: list[tuple[tuple[str, float], ...] | None] = [None] * len(requests)
        missing: dict[tuple[str, ...], list[int]] = {}
        for i, key in enumerate(keys):
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                out[i] = hit
                self.cache_hits += 1
            else:
                missing.setdefault(key, []).append(i)
        if missing:
            todo = [requests[indices[0]] for indices in missing.values()]
            answers = self.fill_in.fill(todo, self.config.kappa + 1)
            if len(answers) != len(todo):
                raise ConfigError(
                    f"The fill-in {type(self.fill_in).__name__} returned {len(answers)} answers for "
                    f"{len(todo)} requests; it must return one list per request."
                )
            self.calls += 1
            self.requests += len(todo)
            for (key, indices), answer in zip(missing.items(), answers):
                kept = self._threshold(answer)
                for i in indices:
                    out[i] = kept
                self._remember(key, kept)
        return [o if o is not None else () for o in out]

    def _threshold(self, answer: Sequence[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
        pairs = [(str(w), float(s)) for w, s in answer]
        if not pairs:
            return ()
        mask = keep_by_logit([s for _, s in pairs], self.config.kappa, self.config.delta)
        kept = [(w, s) for (w, s), keep in zip(pairs, mask) if keep and is_word(w)]
        kept.sort(key=lambda ws: -ws[1])
        return tuple(kept)

    def _remember(self, key: tuple[str, ...], value: tuple[tuple[str, float], ...]) -> None:
        size = self.config.cache_size
        if size == 0:
            return
        self._cache[key] = value
        if size is not None and len(self._cache) > size:
            self._cache.popitem(last=False)

    # ---- Neighbor_1 and Neighbor_k ----------------------------------------------------
    def neighbours(self, text: Text, blacklist: Iterable[str] = ()) -> list[Text]:
        """Neighbor_1(text): one modifiable position replaced by a kept word."""
        return self.neighbours_many([text], blacklist)[0]

    def neighbours_many(self, texts: Sequence[Text], blacklist: Iterable[str] = ()) -> list[list[Text]]:
        """Neighbor_1 of each text, with one fill-in call for all of them."""
        blacklist = tuple(blacklist)
        requests = [(text, p) for text in texts for p in text.modifiable]
        kept = self.kept(requests, blacklist)
        out: list[list[Text]] = [[] for _ in texts]
        cursor = 0
        for i, text in enumerate(texts):
            seen: set[tuple[str, ...]] = {text.key}
            for position in text.modifiable:
                for word, _ in kept[cursor]:
                    new = text.replace(position, word)
                    if new.key not in seen:
                        seen.add(new.key)
                        out[i].append(new)
                cursor += 1
        return out

    def enumerate(self, text: Text, k: int, blacklist: Iterable[str] = (), *, limit: int | None = None) -> list[Text]:
        """Neighbor_k(text) (Algorithm 1): ``[text]`` for k = 0, else the deduplicated
        union of Neighbor_1 applied k times, in first-reached order. Texts reached back at
        a smaller distance belong to it, as in the paper's recursion. ``limit`` stops
        with a :class:`ConfigError` once more texts than that would be held (Neighbor_k
        grows like (kappa * words)^k)."""
        if not isinstance(k, int) or k < 0:
            raise ConfigError(f"The 'k' parameter of Neighbourhood.enumerate must be an int >= 0. Got {k!r} instead.")
        blacklist = tuple(blacklist)
        frontier = [text]
        for _ in range(k):
            found: dict[tuple[str, ...], Text] = {}
            for chunk in _chunks(frontier, 64):
                for group in self.neighbours_many(chunk, blacklist):
                    for new in group:
                        found.setdefault(new.key, new)
                if limit is not None and len(found) > limit:
                    raise ConfigError(
                        f"Neighbor_{k} of {text!r} has more than limit={limit} texts; sample it "
                        f"with Neighbourhood.sample instead, or raise the limit."
                    )
            frontier = list(found.values())
        return frontier

    def sample(
        self,
        text: Text,
        k: int,
        n: int,
        rng: np.random.Generator,
        blacklist: Iterable[str] = (),
        *,
        first_step: Sequence[Text] | None = None,
    ) -> list[list[Text]]:
        """``n`` seeded random walks of ``k`` steps in the neighbourhood graph of ``text``;
        returns, for each step ``1..k``, the texts the walks are at (``out[j - 1]`` is a
        sample of Neighbor_j, with repeats).

        A step from ``x``: the first step picks uniformly from Neighbor_1(text) (pass it as
        ``first_step`` if already built); later steps pick a modifiable position
        uniformly, then a kept word there uniformly (one fill-in request per walk and
        step, batched over the walks). A position without a kept word is re-drawn up to
        8 times; a walk that finds none stays where it is for that step (so a sample of
        Neighbor_j may hold texts from nearer). This is a departure in detail: the paper
        samples Neighbor_3 "randomly" without saying how; walks make k = 3 affordable.
        """
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of Neighbourhood.sample must be an int >= 1. Got {k!r} instead.")
        if not isinstance(n, int) or n < 1:
            raise ConfigError(f"The 'n' parameter of Neighbourhood.sample must be an int >= 1. Got {n!r} instead.")
        blacklist = tuple(blacklist)
        first = list(first_step) if first_step is not None else self.neighbours(text, blacklist)
        if not first:
            return [[] for _ in range(k)]
        current = [first[int(i)] for i in rng.integers(0, len(first), size=n)]
        steps = [list(current)]
        for _ in range(k - 1):
            current = self._step(current, rng, blacklist)
            steps.append(list(current))
        return steps

    def _step(self, texts: list[Text], rng: np.random.Generator, blacklist: tuple[str, ...]) -> list[Text]:
        out = list(texts)
        pending = [i for i, t in enumerate(texts) if t.modifiable]
        for _ in range(8):
            if not pending:
                break
            positions = [texts[i].modifiable[int(rng.integers(0, len(texts[i].modifiable)))] for i in pending]
            kept = self.kept([(texts[i], p) for i, p in zip(pending, positions)], blacklist)
            retry = []
            for i, position, words in zip(pending, positions, kept):
                if words:
                    word = words[int(rng.integers(0, len(words)))][0]
                    out[i] = texts[i].replace(position, word)
                else:
                    retry.append(i)
            pending = retry
        return out

    def source(self, blacklist: Iterable[str] = ()) -> NeighbourSource:
        """This neighbourhood as a candidate source for an attack
        :class:`~textrobust.attack.problem.Problem` (Neighbor_1 one position at a time)."""
        return NeighbourSource(self, tuple(blacklist))

    def stats(self) -> dict[str, int]:
        return {"fill_requests": self.requests, "fill_cache_hits": self.cache_hits, "fill_calls": self.calls}


class NeighbourSource:
    """A :class:`~textrobust.attack.problem.CandidateSource` of Algorithm 1's kept words
    (scores are the fill-in's), so that ``Problem.neighbours(x)`` is Neighbor_1(x)."""

    def __init__(self, neighbourhood: Neighbourhood, blacklist: tuple[str, ...] = ()) -> None:
        self.neighbourhood = neighbourhood
        self.blacklist = blacklist

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        positions = list(dict.fromkeys(positions))
        kept = self.neighbourhood.kept([(text, p) for p in positions], self.blacklist)
        return {p: [Substitution(p, w, s) for w, s in words] for p, words in zip(positions, kept)}

    def __repr__(self) -> str:
        extra = f", blacklist={list(self.blacklist)}" if self.blacklist else ""
        return f"NeighbourSource({self.neighbourhood!r}{extra})"


def load_fill_in(name: str | None = None) -> FillIn:
    """A fill-in model: a name registered in ``textrobust.fill_in.FILL_INS`` or the path of
    a local Hugging Face masked-LM folder; None: ``textrobust.fill_in.DEFAULT_FILL_IN``
    (the fast ``minilm_mlm``)."""
    from textrobust.errors import TextRobustError

    try:
        from textrobust.fill_in import load_fill_in as load
    except ImportError as exc:  # the fill-in package is built separately (issue 4, section 1)
        raise TextRobustError(
            f"No fill-in models are available (textrobust.fill_in could not be imported: {exc}). "
            "Second-order neighbourhoods need one."
        ) from None
    return load(name)


def _chunks(items: Sequence[Text], size: int) -> Iterable[Sequence[Text]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
