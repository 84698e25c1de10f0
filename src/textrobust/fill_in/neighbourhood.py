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
- Batching across texts (issue 31): :meth:`Neighbourhood.prefetch` fills the requests of
  many texts in one fill-in call and holds the answers for the lookups that follow; SO-Beam's
  beam search calls it (through :meth:`NeighbourSource.prefetch`) with every text of a
  step, so a step costs one fill-in call instead of one per beam text. A fill-in's scores
  may move in the last float32 digits when rows of different texts share a padded batch
  (up to ~2.5e-5 measured; no kept-word set changed: benchmarks/results/fill_in_batching.md).
- For large k, :meth:`Neighbourhood.sample` samples instead of enumerating (the paper
  samples at k = 3 without saying how): importance-weighted walks over distinct positions
  (:meth:`Neighbourhood.sample_weighted`) resampled to be uniform over Neighbor_k, since
  plain random walks (:meth:`Neighbourhood.walk`) are not uniform (issue 13).
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from textrobust.attack.candidates.fill_in import FillIn
from textrobust.attack.candidates.inflection import is_word, match_case
from textrobust.devices import Placement
from textrobust.attack.problem import Substitution
from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = [
    "NeighbourSource",
    "Neighbourhood",
    "NeighbourhoodConfig",
    "WeightedSample",
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


@dataclass(frozen=True)
class WeightedSample:
    """Importance-weighted draws from a neighbourhood (:meth:`Neighbourhood.sample_weighted`):
    ``texts[i]`` with weight ``weights[i]`` (0: a failed draw) at ``distances[i]`` changes."""

    texts: list[Text]
    weights: np.ndarray
    distances: np.ndarray

    def mean(self, values: Sequence[float]) -> float:
        """The self-normalised estimate of the mean of ``values`` (one per draw) over the
        neighbourhood; NaN when every weight is 0."""
        total = float(self.weights.sum())
        return float(np.dot(self.weights, np.asarray(values, dtype=np.float64)) / total) if total > 0 else math.nan

    def size(self) -> float:
        """The estimated number of texts in the neighbourhood (mean weight)."""
        return float(self.weights.mean()) if self.weights.size else 0.0


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
            config = NeighbourhoodConfig(**settings)
        elif settings:
            config = config.replace(**settings)
        self.fill_in = fill_in
        self.config = config
        self._blacklist = frozenset(w.lower() for w in config.blacklist)
        self._cache: OrderedDict[tuple[str, ...], tuple[tuple[str, float], ...]] = OrderedDict()
        # the answers of the last prefetch, read before the cache (see prefetch)
        self._prefetched: dict[tuple[str, ...], tuple[tuple[str, float], ...]] = {}
        # rows sent to the fill-in: distinct masked inputs that were not cached, however
        # many fill() calls carried them (a prefetched row counts once, when prefetched)
        self.requests = 0
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

    def prefetch(self, requests: Sequence[tuple[Text, int]]) -> None:
        """Fill ``requests`` now, in one fill-in call, and hold their answers for the
        :meth:`kept` calls that follow, until the next prefetch (issue 31: a beam step asks
        for all its texts at once instead of one call per text). Held answers do not
        depend on the cache size; the rows count in :attr:`requests` when prefetched, and
        reading a held answer later is neither a request nor a cache hit."""
        self._prefetched = {}
        answers = self._fill(requests)
        self._prefetched = {masked_key(text, position): answer for (text, position), answer in zip(requests, answers)}

    def _fill(self, requests: Sequence[tuple[Text, int]]) -> list[tuple[tuple[str, float], ...]]:
        """Thresholded fill-in answers (current word not yet removed), through the last
        prefetch's answers and the cache."""
        keys = [masked_key(text, position) for text, position in requests]
        out: list[tuple[tuple[str, float], ...] | None] = [None] * len(requests)
        missing: dict[tuple[str, ...], list[int]] = {}
        held = self._prefetched
        for i, key in enumerate(keys):
            if held:
                ready = held.get(key)
                if ready is not None:
                    out[i] = ready
                    continue
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
        levels: Sequence[int] | None = None,
    ) -> list[list[Text]]:
        """Uniform samples of Neighbor_j(text) for j = 1..k: ``out[j - 1]`` holds ``n``
        texts (with repeats) drawn uniformly from the texts within ``j`` changes of
        ``text`` (``text`` itself excluded), or ``[]`` when there are none.

        Neighbor_1 is drawn directly from its enumeration (``first_step``, if already
        built). For j >= 2 the draws come from :meth:`sample_weighted` (importance
        weights that undo the walk's bias), resampled in proportion to their weights
        (sampling-importance-resampling): the resampled texts are uniform over
        Neighbor_j as ``n`` grows. ``levels``: only these j are sampled (others get
        ``[]``); default all.

        Departure (issue 13): this used to return the end points of plain random walks,
        which over-represent texts reached by few paths and from positions with few
        kept words; the paper samples Neighbor_3 "randomly" without saying how.
        """
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of Neighbourhood.sample must be an int >= 1. Got {k!r} instead.")
        if not isinstance(n, int) or n < 1:
            raise ConfigError(f"The 'n' parameter of Neighbourhood.sample must be an int >= 1. Got {n!r} instead.")
        blacklist = tuple(blacklist)
        wanted = set(range(1, k + 1) if levels is None else levels)
        out: list[list[Text]] = []
        first = list(first_step) if first_step is not None else None
        for j in range(1, k + 1):
            if j not in wanted:
                out.append([])
                continue
            if j == 1:
                if first is None:
                    first = self.neighbours(text, blacklist)
                out.append([first[int(i)] for i in rng.integers(0, len(first), size=n)] if first else [])
                continue
            drawn = self.sample_weighted(text, j, n, rng, blacklist)
            total = float(drawn.weights.sum())
            if total <= 0:
                out.append([])
                continue
            picks = rng.choice(len(drawn.texts), size=n, replace=True, p=drawn.weights / total)
            out.append([drawn.texts[int(i)] for i in picks])
        return out

    def walk(self, text: Text, k: int, n: int, rng: np.random.Generator, blacklist: Iterable[str] = ()) -> list[list[Text]]:
        """``n`` plain random walks of ``k`` steps (the old, *biased* sampler, kept for
        comparison): each step picks a modifiable position uniformly, then a kept word
        there uniformly; a walk with no kept word at 8 drawn positions stays put.
        ``out[j - 1]`` are the walks' texts after ``j`` steps."""
        blacklist = tuple(blacklist)
        current = [text] * n
        steps = []
        for _ in range(k):
            current = self._step(current, rng, blacklist)
            steps.append(list(current))
        return steps

    def sample_weighted(
        self, text: Text, k: int, n: int, rng: np.random.Generator, blacklist: Iterable[str] = ()
    ) -> WeightedSample:
        """``n`` importance-weighted draws from Neighbor_k(text), the texts within ``k``
        changes of ``text`` (``text`` excluded): ``sum(w * f) / sum(w)`` over the draws
        converges to the mean of ``f`` over Neighbor_k (self-normalised importance
        sampling), and ``sum(w) / n`` to its size.

        A draw: a distance ``d`` in 1..k with probability ``r(d)`` proportional to a size
        guess ``C(m, d) * a^d`` (``m`` modifiable positions, ``a`` kept words per position
        on average at ``text``); then ``d`` distinct positions in a uniformly random order,
        each changed to a word drawn uniformly from those Algorithm 1 keeps there *in the
        current context* (the positions changed so far included). A draw that meets a
        position with no kept word gets weight 0. The probability of reaching ``z`` is
        ``q(z) = r(d) * (m - d)! / m! * sum over the d! orders of z's changed positions of
        prod_t [z's word is kept at step t] / |kept at step t|``; the weight is ``1/q(z)``.
        Every order's kept lists are asked of the fill-in (batched, cached), so a draw
        costs up to ``d! * d`` fill-in requests (k = 3: 12).

        Departure (the set sampled): texts whose ``d <= k`` changed positions can be changed
        one at a time, in some order, each to a word kept in the context of that moment.
        The paper's recursion (:meth:`enumerate`) also reaches texts only by changing a
        position twice (first to make room in the context, then again); those are left
        out. They coincide when the kept words at a position do not depend on the rest
        of the text (tested).
        """
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of Neighbourhood.sample_weighted must be an int >= 1. Got {k!r} instead.")
        if not isinstance(n, int) or n < 1:
            raise ConfigError(f"The 'n' parameter of Neighbourhood.sample_weighted must be an int >= 1. Got {n!r} instead.")
        blacklist = tuple(blacklist)
        positions = list(text.modifiable)
        m = len(positions)
        if m == 0:
            return WeightedSample([], np.zeros(0), np.zeros(0, dtype=int))
        first = self.kept([(text, p) for p in positions], blacklist)
        mean_kept = max(sum(len(w) for w in first) / m, 1e-9)
        top = min(k, m)
        guess = np.array([math.comb(m, d) * mean_kept**d for d in range(1, top + 1)], dtype=np.float64)
        r = guess / guess.sum()
        # draw the distance and the order of positions of each draw, then walk all draws
        # together, one batched fill-in call per step
        distances = rng.choice(np.arange(1, top + 1), size=n, p=r)
        orders = [[positions[int(i)] for i in rng.permutation(m)[:d]] for d in distances]
        current = [text] * n
        alive = np.ones(n, dtype=bool)
        for t in range(top):
            todo = [i for i in range(n) if alive[i] and t < distances[i]]
            if not todo:
                break
            kept = self.kept([(current[i], orders[i][t]) for i in todo], blacklist)
            for i, words in zip(todo, kept):
                if not words:
                    alive[i] = False
                    continue
                word = words[int(rng.integers(0, len(words)))][0]
                current[i] = current[i].replace(orders[i][t], word)
        # q(z): every order of each draw's changed positions
        chains: list[tuple[int, list[tuple[Text, int, str]]]] = []
        for i in range(n):
            if not alive[i]:
                continue
            changed = orders[i]
            for order in itertools.permutations(changed):
                steps = []
                state = text
                for p in order:
                    steps.append((state, p, current[i].words[p]))
                    state = state.replace(p, current[i].words[p])
                chains.append((i, steps))
        flat = [(state, p) for _, steps in chains for state, p, _ in steps]
        answers = self.kept(flat, blacklist) if flat else []
        prob = np.zeros(n, dtype=np.float64)
        cursor = 0
        for i, steps in chains:
            value = 1.0
            for _, _, word in steps:
                kept_words = [w.lower() for w, _ in answers[cursor]]
                cursor += 1
                value = value / len(kept_words) if word.lower() in kept_words else 0.0
            prob[i] += value
        weights = np.zeros(n, dtype=np.float64)
        for i in range(n):
            if alive[i] and prob[i] > 0:
                d = int(distances[i])
                position_prob = math.factorial(m - d) / math.factorial(m)
                weights[i] = 1.0 / (r[d - 1] * position_prob * prob[i])
        return WeightedSample(current, weights, distances.astype(int))

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
        """Rows sent to the fill-in (``fill_requests``, see :attr:`requests`), lookups
        answered by the cache, and fill-in calls."""
        return {"fill_requests": self.requests, "fill_cache_hits": self.cache_hits, "fill_calls": self.calls}


class NeighbourSource:
    """A :class:`~textrobust.attack.problem.CandidateSource` of Algorithm 1's kept words
    (scores are the fill-in's), so that ``Problem.neighbours(x)`` is Neighbor_1(x)."""

    def __init__(self, neighbourhood: Neighbourhood, blacklist: tuple[str, ...] = ()) -> None:
        self.neighbourhood = neighbourhood
        self.blacklist = blacklist

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        """Algorithm 1's kept words at each of ``positions`` of ``text``, best first."""
        positions = list(dict.fromkeys(positions))
        kept = self.neighbourhood.kept([(text, p) for p in positions], self.blacklist)
        return {p: [Substitution(p, w, s) for w, s in words] for p, words in zip(positions, kept)}

    def prefetch(self, items: Sequence[tuple[Text, Sequence[int]]]) -> None:
        """The beam search's hook (:mod:`textrobust.attack.searches.beam`): fill every
        ``(text, positions)`` of ``items`` in one fill-in call
        (:meth:`Neighbourhood.prefetch`), for the :meth:`candidates` calls that follow."""
        self.neighbourhood.prefetch([(text, p) for text, positions in items for p in dict.fromkeys(positions)])

    def __repr__(self) -> str:
        extra = f", blacklist={list(self.blacklist)}" if self.blacklist else ""
        return f"NeighbourSource({self.neighbourhood!r}{extra})"


def load_fill_in(name: str | None = None, placement: Placement | None = None) -> FillIn:
    """A fill-in model: a name registered in ``textrobust.fill_in.FILL_INS`` or the path of
    a local Hugging Face masked-LM folder; None: ``textrobust.fill_in.DEFAULT_FILL_IN``
    (``minilm_gemma``: the tuned MiniLM times Gemma's left context). ``placement``: the
    run's :class:`~textrobust.devices.Placement` (see ``textrobust.fill_in.load_fill_in``)."""
    from textrobust.errors import TextRobustError

    try:
        from textrobust.fill_in import load_fill_in as load
    except ImportError as exc:  # the fill-in package is built separately (issue 4, section 1)
        raise TextRobustError(
            f"No fill-in models are available (textrobust.fill_in could not be imported: {exc}). "
            "Second-order neighbourhoods need one."
        ) from None
    return load(name, placement=placement)


def _chunks(items: Sequence[Text], size: int) -> Iterable[Sequence[Text]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
