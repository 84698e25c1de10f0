"""Counterfactual token bias B_{p,k} over the neighbourhoods of a test set (Eq. 5-6).

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt), Section 4:

- ``F_soft(x; p) = f_soft(x (+) p) - f_soft(x)`` (Eq. 6), ``f_soft`` the probability of
  one class (the paper's positive class; here ``label``, by default the last label,
  "positive" for the bundled sentiment data). Multi-class: any class can be chosen, and
  the whole vector of differences is recorded at k = 0;
- ``B_{p,k} = E_{x in Neighbor_k(X_test)} F_soft(x; p)`` (Eq. 5), where ``X_test`` holds the
  test sentences with exactly one ``p1`` and no ``p2``; the patch word's position is
  frozen and every protected word is blacklisted while building neighbours (footnote 7);
- ``X_filter = {x in X_test : |F_soft(x; p)| < eps}``, eps = 0.005 (Section 4.2.1): the
  test sentences on which the bias is invisible; B is reported on both;
- Neighbor_k is enumerated in full for ``k <= exact_up_to`` (the paper: 2) and sampled
  above it (the paper: k = 3), ``samples`` seeded random walks per test sentence
  (:meth:`~textrobust.fill_in.neighbourhood.Neighbourhood.sample`), deduplicated.

One unit of work is an *anchor*: a test sentence and the position of its protected word.
Its neighbourhood does not depend on which partner the word is swapped for, so all pairs
sharing the anchor word are measured on the same neighbours, and since the neighbourhood
does not depend on the victim either, two victims measured with the same seed see the
same sentences. A record keeps, per pair and k, the count, sum, sum of squares, extremes
and a fixed-bin histogram of F_soft, so B and the histograms are exact sums over records.
Records are typed (:class:`AnchorMeasure` holding one :class:`PairMeasure` per pair, each
holding one :class:`SoftStats` per k) and stored through the generic codec of
:mod:`textrobust.records`.

Departures: ``both_directions=True`` also uses sentences holding ``p2`` (swapped to
``p1``, the difference taken with the sign that keeps ``F_soft = f(.. p2 ..) - f(.. p1
..)``); the paper uses ``p1`` sentences only (the default). With sampled k, each test
sentence's sample weighs by its size, not by the (unknown) size of its neighbourhood.
"""

from __future__ import annotations

import time
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from textrobust.attack.candidates.inflection import match_case
from textrobust.analyses.bias.pairs import ProtectedGroup, ProtectedPair
from textrobust.analyses.bias.settings import BiasSettings
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.fill_in.neighbourhood import Neighbourhood
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

if TYPE_CHECKING:
    from textrobust.store import Run

__all__ = [
    "Anchor",
    "AnchorMeasure",
    "AnchorScan",
    "BINS",
    "ENUMERATE_LIMIT",
    "PairMeasure",
    "SoftStats",
    "find_anchors",
    "histogram_edges",
    "measure_anchor",
    "scan_anchors",
    "stored_bias_records",
]


#: The most texts held when enumerating one Neighbor_k (more raises, naming the limit).
ENUMERATE_LIMIT = 200_000

#: Histogram bins of F_soft over [-1, 1]: width 0.001, finer than X_filter's eps.
BINS = 2000


@dataclass(frozen=True)
class Anchor:
    """A test sentence, the position of its protected word, and the pairs measured there:
    ``(pair, sign)``, sign +1 when the sentence holds ``pair.first`` (the paper's case),
    -1 when it holds ``pair.second`` (``both_directions``)."""

    example: Example
    position: int
    partners: tuple[tuple[ProtectedPair, int], ...]

    @property
    def id(self) -> str:
        return f"{self.example.id}@{self.position}"

    @property
    def word(self) -> str:
        return self.example.text.words[self.position]

    def replacement(self, pair: ProtectedPair, sign: int) -> str:
        """The word put at ``position`` to build the counterfactual twin."""
        return match_case(self.word, pair.second if sign > 0 else pair.first)


@dataclass(frozen=True)
class AnchorScan:
    """How the anchors of a data set were found, so that a run with few or none can say
    why. ``examples``: sentences scanned; ``with_word``: those holding a word of the
    chosen ``groups``' pairs (either word); ``with_anchor``: those giving at least one
    anchor; ``anchors``. Each protected word of a sentence that gave no anchor is counted
    once under the first filter that removed it (the paper's X_p: exactly one ``p1``,
    no ``p2``): ``repeated`` (it occurs more than once), ``frozen`` (its position may not
    change), ``second_word`` (it would be an anchor as a pair's second word, which
    ``both_directions`` uses), ``partner_present`` (the pair's other word occurs too)."""

    examples: int
    with_word: int
    with_anchor: int
    anchors: int
    repeated: int
    second_word: int
    frozen: int
    partner_present: int
    groups: tuple[str, ...]
    both_directions: bool

    def reason(self) -> str | None:
        """Why there are no anchors and how to get some (None when there are some)."""
        if self.anchors:
            return None
        groups = " or ".join(self.groups) or "the chosen"
        scanned = f"{self.examples:,} example{'s' if self.examples != 1 else ''} scanned"
        if not self.examples:
            return "no anchors: 0 examples scanned; raise --n (or check --split) to scan some."
        if not self.with_word:
            return (f"no anchors: {scanned}, none holds a {groups} word; anchors are rare (about 10 gender "
                    "anchors per 50 Rotten Tomatoes sentences): raise --n (e.g. --n 50) or add --group all.")
        removed = [(self.repeated, "repeated in its sentence"),
                   (self.partner_present, "next to its pair's other word"),
                   (self.second_word, "a pair's second word (measured with --both-directions)"),
                   (self.frozen, "in a frozen column")]
        why = "; ".join(f"{n:,} {what}" for n, what in removed if n)
        return (f"no anchors: {scanned}, {self.with_word:,} hold{'s' if self.with_word == 1 else ''} a {groups} "
                f"word, but the paper's filter (one p1 and no p2 per sentence) removed every such word: {why}. "
                "Raise --n (e.g. --n 50) for more sentences.")


def _by_word(groups: Sequence[ProtectedGroup], both_directions: bool) -> dict[str, list[tuple[ProtectedPair, int]]]:
    by_word: dict[str, list[tuple[ProtectedPair, int]]] = {}
    for group in groups:
        for pair in group.pairs:
            by_word.setdefault(pair.first, []).append((pair, +1))
            if both_directions:
                by_word.setdefault(pair.second, []).append((pair, -1))
    return by_word


def _anchors_of(example: Example, by_word: dict[str, list[tuple[ProtectedPair, int]]],
                either: dict[str, list[tuple[ProtectedPair, int]]]) -> tuple[list[Anchor], Counter[str]]:
    """The anchors of one sentence, and why each other protected word was passed over
    (``either``: every word of the groups, with its pairs in both directions)."""
    words = [w.lower() for w in example.text.words]
    counts = Counter(words)
    anchors: list[Anchor] = []
    passed: Counter[str] = Counter()
    seen: set[str] = set()

    def free(pairs: list[tuple[ProtectedPair, int]]) -> tuple[tuple[ProtectedPair, int], ...]:
        return tuple((pair, sign) for pair, sign in pairs if counts[pair.second if sign > 0 else pair.first] == 0)

    for position, word in enumerate(words):
        if word not in either or word in seen:
            continue
        if counts[word] != 1:
            seen.add(word)
            passed["repeated"] += 1
        elif position in example.text.frozen:
            passed["frozen"] += 1
        elif partners := free(by_word.get(word, [])):
            anchors.append(Anchor(example, position, partners))
        elif free(either[word]):
            passed["second_word"] += 1  # an anchor with both_directions
        else:
            passed["partner_present"] += 1
    return anchors, passed


def find_anchors(
    dataset: Iterable[Example], groups: Sequence[ProtectedGroup], *, both_directions: bool = False
) -> list[Anchor]:
    """The anchors of ``dataset``: sentences in X_p for some pair p of ``groups`` (exactly
    one occurrence of the pair's word, none of its partner; lower-cased match)."""
    by_word, either = _by_word(groups, both_directions), _by_word(groups, True)
    return [anchor for example in dataset for anchor in _anchors_of(example, by_word, either)[0]]


def scan_anchors(
    dataset: Iterable[Example], groups: Sequence[ProtectedGroup], *, both_directions: bool = False
) -> AnchorScan:
    """What :func:`find_anchors` finds in ``dataset``, counted: sentences scanned, those
    holding a protected word, and which filter removed the words that gave no anchor."""
    by_word, either = _by_word(groups, both_directions), _by_word(groups, True)
    examples = with_word = with_anchor = anchors = 0
    passed: Counter[str] = Counter()
    for example in dataset:
        examples += 1
        found, why = _anchors_of(example, by_word, either)
        with_word += bool(found or why)
        with_anchor += bool(found)
        anchors += len(found)
        if not found:
            passed.update(why)
    return AnchorScan(examples, with_word, with_anchor, anchors, passed["repeated"], passed["second_word"],
                      passed["frozen"], passed["partner_present"], tuple(g.name for g in groups), both_directions)


def histogram_edges(bins: int) -> np.ndarray:
    """The fixed histogram edges of F_soft: ``bins`` equal bins over [-1, 1]."""
    return np.linspace(-1.0, 1.0, bins + 1)


@dataclass(frozen=True)
class SoftStats:
    """F_soft over the texts of one Neighbor_k: how many, their sum and sum of squares
    (B and its spread are exact sums over records), the extremes (NaN when there are no
    texts) and the fixed-bin histogram as ``(bin index, count)`` pairs (bins that are
    empty left out; see :func:`histogram_edges`)."""

    count: int
    total: float
    total_squares: float
    minimum: float
    maximum: float
    histogram: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class PairMeasure:
    """One pair measured at one anchor: ``sign`` (+1: the sentence holds ``pair.first``),
    ``f0 = F_soft(x0; p)`` and the whole vector of probability differences at ``x0``,
    whether ``x0`` is in X_filter, and F_soft on Neighbor_k(x0) for k = 0..max_k
    (``by_k[k]``)."""

    pair: str
    group: str
    sign: int
    f0: float
    f0_vector: tuple[float, ...]
    in_filter: bool
    by_k: tuple[SoftStats, ...]


@dataclass(frozen=True)
class AnchorMeasure:
    """Everything measured at one anchor (a test sentence and the position of its
    protected word): the neighbourhood sizes per k (``sizes[k]``), the k from which
    Neighbor_k was sampled (None: all enumerated), the histogram bins, one
    :class:`PairMeasure` per pair, and the cost (fill-in requests, victim queries,
    seconds). ``soft_class`` is the class whose probability is f_soft."""

    anchor: str
    example_id: str
    position: int
    word: str
    text: str
    label: int
    soft_class: int
    sizes: tuple[int, ...]
    sampled_from_k: int | None
    bins: int
    partners: tuple[PairMeasure, ...]
    fill_requests: int
    queries: int
    seconds: float


def _stats(values: np.ndarray, bins: int) -> SoftStats:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return SoftStats(0, 0.0, 0.0, float("nan"), float("nan"), ())
    index = np.clip(np.floor((values + 1.0) / 2.0 * bins).astype(np.int64), 0, bins - 1)
    idx, counts = np.unique(index, return_counts=True)
    return SoftStats(
        count=int(values.size),
        total=float(values.sum()),
        total_squares=float(np.square(values).sum()),
        minimum=float(values.min()),
        maximum=float(values.max()),
        histogram=tuple((int(i), int(c)) for i, c in zip(idx, counts)),
    )


def _rng(seed: int, anchor: Anchor) -> np.random.Generator:
    tag = zlib.crc32(f"{anchor.example.id}\x1f{anchor.position}\x1f{anchor.example.text}".encode())
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, tag])


def _class(layer: QueryLayer, label: int | None) -> int:
    n = layer.num_labels
    if label is None:
        return n - 1
    if not 0 <= label < n:
        raise ConfigError(f"The 'label' parameter of BiasSettings must be in [0, {n}) for this victim. Got {label}.")
    return label


def measure_anchor(
    anchor: Anchor,
    layer: QueryLayer,
    neighbourhood: Neighbourhood,
    settings: BiasSettings,
    blacklist: Iterable[str] = (),
    *,
    seed: int = 0,
    chunk: int = 4096,
) -> AnchorMeasure:
    """F_soft of every pair of ``anchor`` on Neighbor_k(x0), k = 0..``settings.max_k`` (see
    the module docstring); ``settings``: the bias analysis's (``max_k``, ``exact_up_to``,
    ``samples``, ``eps``, ``label``); ``seed``: of the sampled k (the run's); ``blacklist``:
    words kept out of the neighbours."""
    started = time.perf_counter()
    fills = neighbourhood.requests
    queries = layer.queries
    c = _class(layer, settings.label)
    blacklist = tuple(blacklist)
    x0 = anchor.example.text.freeze([anchor.position])
    levels: dict[int, list[Text]] = {0: [x0]}
    exact = min(settings.exact_up_to, settings.max_k)
    for k in range(1, exact + 1):
        levels[k] = neighbourhood.enumerate(x0, k, blacklist, limit=ENUMERATE_LIMIT)
    if settings.max_k > exact:
        first = levels.get(1)
        walks = neighbourhood.sample(x0, settings.max_k, settings.samples, _rng(seed, anchor), blacklist,
                                     first_step=first)
        for k in range(exact + 1, settings.max_k + 1):
            levels[k] = list({t.key: t for t in walks[k - 1]}.values())
    partners = []
    for pair, sign in anchor.partners:
        word = anchor.replacement(pair, sign)
        by_k = tuple(_stats(_soft_differences(layer, levels[k], anchor.position, word, sign, c, chunk), BINS)
                     for k in range(settings.max_k + 1))
        base = layer.probabilities([x0, x0.replace(anchor.position, word)])
        vector = (base[1] - base[0]) * sign
        partners.append(PairMeasure(
            pair=pair.name,
            group=pair.group,
            sign=sign,
            f0=float(vector[c]),
            f0_vector=tuple(float(v) for v in vector),
            in_filter=bool(np.max(np.abs(vector)) < settings.eps),
            by_k=by_k,
        ))
    return AnchorMeasure(
        anchor=anchor.id,
        example_id=anchor.example.id,
        position=anchor.position,
        word=anchor.word,
        text=str(anchor.example.text),
        label=anchor.example.label,
        soft_class=c,
        sizes=tuple(len(levels[k]) for k in range(settings.max_k + 1)),
        sampled_from_k=exact + 1 if settings.max_k > exact else None,
        bins=BINS,
        partners=tuple(partners),
        fill_requests=neighbourhood.requests - fills,
        queries=layer.queries - queries,
        seconds=time.perf_counter() - started,
    )


def _soft_differences(
    layer: QueryLayer, texts: Sequence[Text], position: int, word: str, sign: int, c: int, chunk: int
) -> np.ndarray:
    out = np.empty(len(texts), dtype=np.float64)
    for start in range(0, len(texts), chunk):
        part = list(texts[start : start + chunk])
        twins = [t.replace(position, word) for t in part]
        probs = layer.probabilities(part + twins)
        out[start : start + len(part)] = (probs[len(part) :, c] - probs[: len(part), c]) * sign
    return out


def stored_bias_records(run: Run) -> list[AnchorMeasure]:
    """The anchor records of ``run`` (failed units left out, by the store's own flag), in order."""
    from textrobust.records import decode

    return [decode(AnchorMeasure, r.payload) for r in run.results() if not r.failed]
