"""Checks that make a second-order finding one a reader believes (issue 38).

Zhang et al., "Double Perturbation", NAACL 2021 (../shared/papers/double-perturbation-
second-order-robustness-and-bias.txt): Neighbor_k(x0) is meant to hold *natural* sentences
(Eq. 1, "Ball_k(x0) intersected with X_natural"), which Algorithm 1 approximates by the
masked LM's top 20 words "subject to a threshold"; and the patch ``p`` is meant to be an
invariance transformation (their Table 4: it kept the sentiment of 71% of the vulnerable
examples). Read by hand, the project's SO-Beam findings were often neither (issue 38), so a
vulnerable example may have to pass these checks before it counts:

- ``margin``: ``x~0`` and ``x~0 (+) p`` are both at least ``margin`` from the decision
  boundary, measured as half the gap between the two largest probabilities (for two classes
  ``|p(positive) - 0.5|``). ``margin = 0`` is the paper's count (any flip).
- ``fluency``: a floor relative to ``x0``: the causal LM's perplexity of ``x~0`` is at most
  ``fluency`` times that of ``x0`` (None: no floor; below 1: more fluent than ``x0``; ``x0``
  itself always passes). Asked only of would-be successes, so it
  costs a few LM calls per example, not one per neighbour.
- ``no_fragments``: a neighbour never replaces a content word by a stop word or a
  non-word, and never makes a word equal to the word beside it ("Thanks to to Williams";
  "The three-hour cinema of a."): applied to the neighbourhood's proposals (no model).
- ``content_only``: stricter, a neighbour changes content words only: never a stop word, and
  never into one ("before a single frame" -> "in a single frame"; "Too bad the pilots" ->
  "Very well the pilots"): also applied to the proposals (no model). The paper's fill-in may
  change any word; function words carry the grammar that readers judged (issue 38: on the
  dev half, the paper's-count findings that touched no stop word lost 1.33 naturalness
  points, those that did 3.04).
- ``pos_in_context``: every changed word of ``x~0`` keeps the coarse part of speech of the
  word of ``x0`` it replaces, tagged in context, and the patch target keeps the patch
  word's part of speech in ``x~0`` (the test of the validated source,
  :mod:`textrobust.attack.candidates.validated`).

A would-be success that fails the fluency or part-of-speech check is not a success and its
goal score is set to 0, so the beam does not grow from it (its descendants would share the
defect); one that fails only the margin keeps its score (a near tie is close to a real flip).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textrobust.attack.problem import Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = [
    "REJECT_FLUENCY",
    "REJECT_MARGIN",
    "REJECT_POS",
    "CheckCounts",
    "FragmentFilter",
    "SecondOrderChecks",
    "boundary_distance",
    "is_fragment_edit",
    "touches_stop_word",
]

REJECT_MARGIN = "margin"
REJECT_FLUENCY = "fluency"
REJECT_POS = "pos"


def boundary_distance(probabilities: np.ndarray) -> np.ndarray:
    """Distance of each row of ``probabilities`` from the decision boundary: half the gap
    between its two largest values (two classes: ``|p[1] - 0.5|``).

    >>> boundary_distance(np.array([[0.3, 0.7], [0.52, 0.48]])).round(2).tolist()
    [0.2, 0.02]
    """
    p = np.atleast_2d(np.asarray(probabilities, dtype=np.float64))
    top = np.sort(p, axis=1)
    return (top[:, -1] - top[:, -2]) / 2.0


def is_fragment_edit(words: Sequence[str], position: int, new: str, stop_words: frozenset[str]) -> bool:
    """True when putting ``new`` at ``position`` of ``words`` turns content into a fragment:
    a content word (not a stop word) replaced by a stop word or a non-alphabetic token, or
    ``new`` equal to the word just before or after it.

    >>> stops = frozenset({"of", "a", "to"})
    >>> is_fragment_edit(["a", "cinema", "master", "class"], 2, "of", stops)
    True
    >>> is_fragment_edit(["thanks", "largely", "to", "williams"], 1, "to", stops)
    True
    >>> is_fragment_edit(["a", "cinema", "master", "class"], 2, "film", stops)
    False
    """
    old = words[position].lower()
    lower = new.lower()
    if old not in stop_words and (lower in stop_words or not any(c.isalpha() for c in lower)):
        return True
    before = words[position - 1].lower() if position > 0 else None
    after = words[position + 1].lower() if position + 1 < len(words) else None
    return lower in (before, after)


def touches_stop_word(words: Sequence[str], position: int, new: str, stop_words: frozenset[str]) -> bool:
    """True when putting ``new`` at ``position`` of ``words`` changes a stop word or puts
    one (or a non-alphabetic token) in: the edits ``content_only`` forbids.

    >>> stops = frozenset({"before", "in", "too", "very"})
    >>> touches_stop_word(["before", "a", "single", "frame"], 0, "in", stops)
    True
    >>> touches_stop_word(["a", "fascinating", "story"], 1, "very", stops)
    True
    >>> touches_stop_word(["a", "fascinating", "story"], 1, "gripping", stops)
    False
    """
    lower = new.lower()
    return words[position].lower() in stop_words or lower in stop_words or not any(c.isalpha() for c in lower)


class FragmentFilter:
    """A candidate source (the neighbourhood's) without fragment edits
    (:func:`is_fragment_edit`), and with ``content_only`` without edits that touch a stop
    word (:func:`touches_stop_word`); keeps the wrapped source's ``prefetch`` hook."""

    def __init__(self, source: Any, stop_words: frozenset[str], content_only: bool = False) -> None:
        self.source = source
        self.stop_words = stop_words
        self.content_only = content_only
        self.dropped = 0
        prefetch = getattr(source, "prefetch", None)
        if callable(prefetch):
            self.prefetch = prefetch

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        found = self.source.candidates(text, positions)
        words = text.words
        out: dict[int, list[Substitution]] = {}
        for position, subs in found.items():
            kept = [s for s in subs if not is_fragment_edit(words, position, s.word, self.stop_words)
                    and not (self.content_only and touches_stop_word(words, position, s.word, self.stop_words))]
            self.dropped += len(subs) - len(kept)
            out[position] = kept
        return out

    def __repr__(self) -> str:
        return f"FragmentFilter({self.source!r})"


@dataclass
class CheckCounts:
    """What the checks did for one example: would-be successes rejected by each check, and
    the first flip seen at margin 0 that passed the other checks (its boundary distance, the
    smaller of the two texts'), or None when there was none."""

    rejected: dict[str, int] = field(default_factory=lambda: {REJECT_MARGIN: 0, REJECT_FLUENCY: 0, REJECT_POS: 0})
    first_flip_distance: float | None = None
    #: every flip that passed all the checks: (text, perplexity ratio to x0 or None, boundary distance)
    accepted: list[tuple[str, float | None, float]] = field(default_factory=list)


@dataclass(frozen=True)
class SecondOrderChecks:
    """The checks of a vulnerable example (see the module): ``margin`` (0: the paper's
    count), ``fluency`` (max perplexity ratio x~0 / x0; None: off), ``no_fragments``,
    ``content_only``, ``pos_in_context``; ``fluent_first``: of the vulnerable examples
    found in one search step, report the most fluent (lowest perplexity ratio to x0)
    rather than the clearest flip (the paper's smallest Eq. 4 loss). ``perplexity`` (texts -> perplexities) and ``tagger`` (a
    :class:`~textrobust.attack.candidates.tagging.Tagger`) are loaded on first use when not
    given; ``stop_words`` default to the project's list."""

    margin: float = 0.0
    fluency: float | None = None
    no_fragments: bool = False
    pos_in_context: bool = False
    content_only: bool = False
    fluent_first: bool = False
    perplexity: Callable[[Sequence[str]], Any] | None = field(default=None, compare=False, repr=False)
    tagger: Callable[[Text], Any] | None = field(default=None, compare=False, repr=False)
    stop_words: frozenset[str] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.margin < 0.5:
            raise ConfigError(f"The 'margin' parameter of SecondOrderChecks must be in [0, 0.5). Got {self.margin}.")
        if self.fluency is not None and not self.fluency > 0.0:
            raise ConfigError(
                f"The 'fluency' parameter of SecondOrderChecks must be > 0 (the most perplexity of x~0 as a multiple "
                f"of x0's) or None (off). Got {self.fluency}.")

    @property
    def active(self) -> bool:
        return (self.margin > 0 or self.fluency is not None or self.no_fragments or self.content_only
                or self.pos_in_context or self.fluent_first)

    def describe(self) -> dict[str, Any]:
        return {"margin": self.margin, "fluency": self.fluency, "no_fragments": self.no_fragments,
                "content_only": self.content_only, "pos_in_context": self.pos_in_context,
                "fluent_first": self.fluent_first}

    def wrap_source(self, source: Any) -> Any:
        """The neighbourhood's candidate source, without fragment edits (and with
        ``content_only`` without edits of stop words) when asked."""
        if not (self.no_fragments or self.content_only):
            return source
        stops = self.stop_words
        if stops is None:
            from textrobust.assets import stop_words

            stops = frozenset(w.lower() for w in stop_words())
        return FragmentFilter(source, stops, content_only=self.content_only)

    def bind(self, original: Text, patch: Any) -> BoundChecks:
        """The checks for one example: ``x0`` and its patch."""
        return BoundChecks(self, original, patch)


class BoundChecks:
    """:class:`SecondOrderChecks` for one ``x0`` and patch: ``judge`` says, for texts whose
    labels the patch flips, why each is rejected ("" when accepted). Verdicts are cached by
    text; :attr:`counts` records the rejections and the first flip at margin 0."""

    def __init__(self, checks: SecondOrderChecks, original: Text, patch: Any) -> None:
        self.checks = checks
        self.original = original
        self.patch = patch
        self.counts = CheckCounts()
        self._quality: dict[tuple[str, ...], str] = {}
        self._ratio: dict[tuple[str, ...], float] = {}
        self._x0_ppl: float | None = None
        self._x0_tags: Any = None

    def judge(self, texts: Sequence[Text], u: np.ndarray, v: np.ndarray) -> list[str]:
        """Why each of ``texts`` (flipped by the patch: ``u`` and ``v`` are the probabilities
        of the text and of its patched twin) fails the checks, "" when it passes."""
        if not texts:
            return []
        quality = self._quality_verdicts(texts)
        distance = np.minimum(boundary_distance(u), boundary_distance(v))
        out = []
        for text, q, d in zip(texts, quality, distance):
            if q:
                self.counts.rejected[q] += 1
                out.append(q)
                continue
            if self.counts.first_flip_distance is None:
                self.counts.first_flip_distance = float(d)
            if d < self.checks.margin:
                self.counts.rejected[REJECT_MARGIN] += 1
                out.append(REJECT_MARGIN)
            else:
                self.counts.accepted.append((str(text), self._ratio.get(text.key), float(d)))
                out.append("")
        return out

    def preference(self, texts: Sequence[Text]) -> list[float]:
        """Higher for the more fluent texts: x0's perplexity over each text's."""
        return [1.0 / max(r, 1e-12) for r in self.fluency_ratios(texts)]

    def fluency_ratios(self, texts: Sequence[Text]) -> list[float]:
        """Each text's perplexity ratio to x0 under the causal LM (1.0 for x0 itself; lower
        is more fluent), computed for the texts whose ratio is not known yet."""
        todo = list({t.key: t for t in texts if t.key not in self._ratio and t.key != self.original.key}.values())
        if todo:
            ppl = np.asarray(self._perplexity([str(t) for t in todo]), dtype=np.float64)
            x0 = self._original_perplexity()
            for text, value in zip(todo, ppl):
                self._ratio[text.key] = float(value) / x0
        return [1.0 if t.key == self.original.key else self._ratio[t.key] for t in texts]

    def _quality_verdicts(self, texts: Sequence[Text]) -> list[str]:
        todo = list({t.key: t for t in texts if t.key not in self._quality}.values())
        if todo:
            verdicts = [""] * len(todo)
            if self.checks.pos_in_context:
                for i, text in enumerate(todo):
                    if not self._pos_kept(text):
                        verdicts[i] = REJECT_POS
            if self.checks.fluency is not None:
                ask = [i for i, v in enumerate(verdicts) if not v and todo[i].key != self.original.key]
                if ask:
                    ratios = self.fluency_ratios([todo[i] for i in ask])
                    for i, ratio in zip(ask, ratios):
                        if ratio > self.checks.fluency:
                            verdicts[i] = REJECT_FLUENCY
            for text, verdict in zip(todo, verdicts):
                self._quality[text.key] = verdict
        return [self._quality[t.key] for t in texts]

    def _perplexity(self, texts: Sequence[str]) -> Any:
        score = self.checks.perplexity
        if score is None:
            from textrobust.lm import CausalLM

            lm = CausalLM.default()
            score = lm.perplexity
            object.__setattr__(self.checks, "perplexity", score)
        return score(texts)

    def _original_perplexity(self) -> float:
        if self._x0_ppl is None:
            self._x0_ppl = float(np.asarray(self._perplexity([str(self.original)]))[0])
        return self._x0_ppl

    def _tags(self, text: Text) -> Any:
        tagger = self.checks.tagger
        if tagger is None:
            from textrobust.attack.candidates.tagging import SpacyTagger

            tagger = SpacyTagger()
            object.__setattr__(self.checks, "tagger", tagger)
        return tagger(text)

    def _pos_kept(self, text: Text) -> bool:
        if self._x0_tags is None:
            self._x0_tags = self._tags(self.original)
        if len(text) != len(self.original):
            return False
        tags = self._tags(text)
        if any(tags[p].pos != self._x0_tags[p].pos for p in self.original.diff(text)):
            return False
        if self.patch is None:
            return True
        patched = self.patch.apply(text)
        if len(patched) != len(text):
            return False
        position = self.patch.position
        return bool(self._tags(patched)[position].pos == tags[position].pos)
