"""The simple prover (SP): certify robustness within a fixed radius by enumeration.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Type-3 problem:
for a fixed ``r``, ``|Omega_r(X)| <= C(m, r) v^r`` is polynomial, so testing every text of
``Omega_r`` either finds an adversarial example or proves that none exists ("certified
robustness"), and ``r`` is then a lower bound of the maximum robustness radius. The
positions are pre-sorted by sensitivity, most sensitive first, so that an adversarial
example, if any, tends to come early and ends the enumeration.

:class:`ExhaustiveProver` walks ``Omega_r`` layer by layer (exactly ``k`` substitutions for
``k = 0, 1, ..., r``), each layer lazily (:meth:`PerturbationSpace.layer`), and sends the
texts to the victim in batches of ``batch_size`` (one ``evaluate`` call per batch, i.e. one
query-layer call). A verdict is **certified only when every text of ``Omega_r`` was
evaluated** and none met the goal; a time limit, a text limit or an exhausted query budget
gives ``unknown``, never ``certified``. :meth:`ExhaustiveProver.prove_radii` answers every
``r`` up to a maximum in one pass (a layer is enumerated once).

Sensitivity (:func:`sensitivity_order`): the paper sorts positions by
``||dF_{y*}(X) / dw_p||_1``. With victims that declare gradients we use the L1 norm of the
gradient of the cross-entropy loss ``-log F_{y*}`` with respect to the word's embedding,
which is the paper's quantity divided by ``F_{y*}(X)`` (the same for every position of a
text), hence the same order. Without gradients, leave-one-out: the goal's score of the text
with the word deleted (as the engine's ``delete`` word-importance ranking).

:class:`ExhaustiveSearch` is the prover as a :class:`~textrobust.attack.problem.Search`:
it returns an adversarial example with the fewest substitutions there are (exactly
minimal, where it finishes).

For millions of texts give the prover a :class:`~textrobust.victims.query.QueryLayer` with
``cache_size=0`` (or a small cache): the texts of ``Omega_r`` are all distinct, so caching
them only costs memory.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.problem import Evaluation, Problem
from textrobust.attack.searches.base import BaseSearch, Run, admissible
from textrobust.attack.searches.ranking import PROBE_CHUNK
from textrobust.config import Config
from textrobust.errors import ConfigError, QueryBudgetExceeded, TextRobustError
from textrobust.attack.space import PerturbationSpace, space_from_problem
from textrobust.text import Text
from textrobust.victims.protocol import unwrap

__all__ = [
    "ExhaustiveProver",
    "ExhaustiveSearch",
    "ExhaustiveSearchConfig",
    "Proof",
    "ProverConfig",
    "Sensitivity",
    "Verdict",
    "WordIdPath",
    "sensitivity_order",
]

Evaluate = Callable[[Sequence[Text]], Evaluation]


class Verdict(StrEnum):
    """The answer of the prover for one radius."""

    CERTIFIED = "certified"  # every text of Omega_r checked, none adversarial
    FOUND = "found"  # an adversarial example in Omega_r
    UNKNOWN = "unknown"  # stopped (time, text limit, query budget) before deciding


@dataclass(frozen=True)
class Proof:
    """The prover's verdict for ``Omega_r``.

    ``checked``: texts evaluated to reach it (layers are cumulative: the original, then
    layer 1, ...); ``size``: ``|Omega_r|``; ``seconds``: wall time from the start of the
    call; ``adversarial``: the example found (FOUND only); ``reason``: why UNKNOWN.
    """

    radius: int
    verdict: Verdict
    checked: int
    size: int
    seconds: float
    adversarial: Text | None = None
    adversarial_l0: int | None = None
    reason: str = ""


class ProverConfig(Config):
    """Settings of :class:`ExhaustiveProver`.

    ``batch_size``: texts per ``evaluate`` call; ``time_limit``: seconds per call of
    ``prove``/``prove_radii`` (None: no limit); ``max_texts``: texts per call at most.
    """

    batch_size: int = Field(default=512, ge=1)
    time_limit: float | None = Field(default=None, gt=0.0)
    max_texts: int | None = Field(default=None, ge=1)


class Sensitivity(StrEnum):
    """How the prover orders positions (most sensitive first)."""

    AUTO = "auto"  # gradient when available, else delete
    GRADIENT = "gradient"
    DELETE = "delete"
    TEXT = "text"  # text order


def sensitivity_order(
    space: PerturbationSpace,
    method: Sensitivity | str = Sensitivity.AUTO,
    *,
    evaluate: Evaluate | None = None,
    gradients: Callable[[Text], np.ndarray] | None = None,
) -> tuple[int, ...]:
    """The space's positions, most sensitive first (ties in text order).

    ``gradients(text) -> [len(text), dim]`` (e.g. ``problem.gradients`` or a wrapper of
    ``victim.word_gradients``) for ``gradient``; ``evaluate`` (a goal's) for ``delete``,
    which costs ``m`` queries. ``auto`` uses gradients when given, else ``delete``.
    """
    try:
        method = Sensitivity(method)
    except ValueError:
        raise ConfigError(
            f"The 'method' parameter of sensitivity_order must be one of {[m.value for m in Sensitivity]}. "
            f"Got {method!r} instead."
        ) from None
    positions = space.positions
    if not positions or method is Sensitivity.TEXT:
        return positions
    if method is Sensitivity.AUTO:
        method = Sensitivity.GRADIENT if gradients is not None else Sensitivity.DELETE
    if method is Sensitivity.GRADIENT:
        if gradients is None:
            raise ConfigError("sensitivity_order(method='gradient') needs 'gradients' (the victim has none?).")
        grads = np.asarray(gradients(space.original), dtype=np.float64)
        if grads.ndim != 2 or grads.shape[0] != len(space.original):
            raise ConfigError(
                f"gradients returned shape {grads.shape} for a text of {len(space.original)} words; "
                f"expected ({len(space.original)}, dim)."
            )
        values = np.abs(grads[list(positions)]).sum(axis=1)
    else:
        if evaluate is None:
            raise ConfigError("sensitivity_order(method='delete') needs 'evaluate' (a goal's evaluate).")
        # Leave-one-out texts in chunks, as the engine's word-importance ranking: a long
        # text never has all n texts of n words in memory at once.
        values = np.concatenate([
            np.asarray(evaluate([space.original.without(p) for p in positions[i:i + PROBE_CHUNK]]).scores,
                       dtype=np.float64)
            for i in range(0, len(positions), PROBE_CHUNK)]) if positions else np.zeros(0)
    order = np.argsort(-values, kind="stable")
    return tuple(positions[i] for i in order)


class WordIdPath:
    """The prover's fast path for victims that read one token id per word (the zoo's word
    models): a layer's texts are built as rows of ids, a batch at a time with numpy (the
    original's ids, the substitutes' ids written into their columns), and scored with
    :meth:`~textrobust.victims.query.QueryLayer.probabilities_of_ids`, without a
    :class:`~textrobust.text.Text` per text. Same texts, same order, same batches and the
    same verdicts as the text path; only the adversarial text found is built as a Text.

    Soundness guard: the first row of every batch, and the adversarial row, are compared
    with the tokenizer's own ``encode`` of the same text; any difference stops the proof
    with an error (never a wrong "certified").
    """

    def __init__(self, layer: Any, judge: Callable[[np.ndarray], Evaluation]) -> None:
        self.layer = layer
        self.judge = judge

    @classmethod
    def of(cls, goal: Any) -> WordIdPath | None:
        """The fast path for ``goal`` (a classification goal over a query layer), or None
        when its victim cannot take word ids."""
        layer, judge = getattr(goal, "layer", None), getattr(goal, "judge", None)
        if layer is None or not callable(judge) or not getattr(layer, "accepts_word_ids", False):
            return None
        return cls(layer, judge)

    def batches(self, space: PerturbationSpace, k: int, order: Sequence[int], batch_size: int
                ) -> Iterator[tuple[np.ndarray, list[tuple[tuple[int, ...], tuple[int, ...], int, int]]]]:
        """Layer ``k`` in batches of ``batch_size`` rows (the last may be shorter), each with
        its segments ``(positions, sizes, first, stop)``: rows ``first..stop-1`` of the
        product of the positions' substitutes, in ``itertools.product`` order."""
        victim = unwrap(self.layer.victim)  # the word ids are the victim's own (a gate member's too)
        limit = int(victim.max_words)
        words = space.original.words
        base = victim.word_ids(words[:limit])
        subs = {p: space.substitutes_at(p) for p in order}
        sub_ids = {p: victim.word_ids(subs[p]) for p in order}
        pending: list[tuple[tuple[int, ...], tuple[int, ...], int, int]] = []
        filled = 0
        for chosen in itertools.combinations(order, k):
            sizes = tuple(len(subs[p]) for p in chosen)
            total = math.prod(sizes)
            start = 0
            while start < total:
                take = min(total - start, batch_size - filled)
                pending.append((chosen, sizes, start, start + take))
                filled += take
                start += take
                if filled == batch_size:
                    yield self._ids(base, sub_ids, pending, filled), pending
                    pending, filled = [], 0
        if pending:
            yield self._ids(base, sub_ids, pending, filled), pending

    def rows(self, space: PerturbationSpace, assignments: Sequence[Mapping[int, str]]) -> np.ndarray:
        """Id rows of the texts ``space.text(a)`` for each assignment ``a`` (uniform samples
        of the PR metric), checked against the tokenizer on the first row."""
        victim = unwrap(self.layer.victim)  # the word ids are the victim's own (a gate member's too)
        limit = int(victim.max_words)
        base = victim.word_ids(space.original.words[:limit])
        lookup = {p: dict(zip(space.substitutes_at(p), victim.word_ids(space.substitutes_at(p)).tolist()))
                  for p in space.positions if p < len(base)}
        ids = np.empty((len(assignments), len(base)), dtype=np.int64)
        ids[:] = base
        for row, assignment in enumerate(assignments):
            for p, word in assignment.items():
                if p < len(base):
                    ids[row, p] = lookup[p][word]
        if len(assignments):
            self.check(space.text(assignments[0]), ids[0])
        return ids

    @staticmethod
    def _ids(base: np.ndarray, sub_ids: dict[int, np.ndarray],
             segments: list[tuple[tuple[int, ...], tuple[int, ...], int, int]], rows: int) -> np.ndarray:
        ids = np.empty((rows, len(base)), dtype=np.int64)
        ids[:] = base
        row = 0
        for chosen, sizes, first, stop in segments:
            block = ids[row:row + stop - first]
            choice = np.unravel_index(np.arange(first, stop), sizes)
            for j, p in enumerate(chosen):
                if p < len(base):  # words past what the model reads change nothing
                    block[:, p] = sub_ids[p][choice[j]]
            row += stop - first
        return ids

    @staticmethod
    def text(space: PerturbationSpace, segments: list[tuple[tuple[int, ...], tuple[int, ...], int, int]],
             row: int) -> Text:
        """The text of row ``row`` of a batch."""
        for chosen, sizes, first, stop in segments:
            if row < stop - first:
                choice = np.unravel_index(first + row, sizes)
                return space.original.replace({p: space.substitutes_at(p)[int(c)] for p, c in zip(chosen, choice)})
            row -= stop - first
        raise IndexError(row)

    def check(self, text: Text, ids: np.ndarray) -> None:
        """Refuse to go on when ``ids`` are not what the tokenizer makes of ``text``."""
        encoded = unwrap(self.layer.victim).tokenizer.encode([text])
        real = np.asarray(encoded.ids[0])[np.asarray(encoded.mask[0], dtype=bool)]
        if real.shape != ids.shape or not np.array_equal(real, ids):
            raise TextRobustError(
                f"The prover's word-id path built ids that differ from the tokenizer's for {str(text)[:80]!r}: "
                "refusing to certify (please report this bug).")


class ExhaustiveProver:
    """Enumerates ``Omega_r`` in batches and stops at the first adversarial example.

    ``evaluate`` is a goal's (or a Problem's) ``evaluate``: success means adversarial.

    >>> from textrobust.analyses.radius import ExhaustiveProver
    >>> ExhaustiveProver(batch_size=256)
    ExhaustiveProver(batch_size=256, time_limit=None, max_texts=None)
    """

    def __init__(self, config: ProverConfig | None = None, /, **settings: Any) -> None:
        if config is None:
            config = ProverConfig(**settings)
        elif settings:
            config = config.replace(**settings)
        if not isinstance(config, ProverConfig):
            raise ConfigError(f"The 'config' parameter of ExhaustiveProver must be a ProverConfig. Got {config!r}.")
        self.config: ProverConfig = config

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.config.to_dict().items())
        return f"ExhaustiveProver({shown})"

    def prove(
        self,
        space: PerturbationSpace,
        evaluate: Evaluate,
        radius: int,
        *,
        order: Sequence[int] | None = None,
        time_limit: float | None = None,
    ) -> Proof:
        """The verdict for ``Omega_radius`` (``radius >= 0``)."""
        return self.prove_radii(space, evaluate, radius, order=order, time_limit=time_limit)[-1]

    def prove_radii(
        self,
        space: PerturbationSpace,
        evaluate: Evaluate,
        max_radius: int,
        *,
        order: Sequence[int] | None = None,
        time_limit: float | None = None,
        ids: WordIdPath | None = None,
    ) -> list[Proof]:
        """Verdicts for ``r = 0, 1, ..., max_radius`` in one pass over the layers.

        Once a layer holds an adversarial example every larger radius is FOUND with it;
        once the time limit, the text limit or the query budget stops the pass, the
        current radius and every larger one are UNKNOWN. ``time_limit`` overrides the
        configured one for this call. ``ids`` (:meth:`WordIdPath.of` the goal) scores
        layers 1 and up as word-id rows: the same verdicts, faster.
        """
        if isinstance(max_radius, bool) or not isinstance(max_radius, int) or max_radius < 0:
            raise ConfigError(f"The 'max_radius' parameter must be an int >= 0. Got {max_radius!r} instead.")
        limit = self.config.time_limit if time_limit is None else time_limit
        started = time.perf_counter()
        deadline = None if limit is None else started + limit
        max_texts = self.config.max_texts
        batch_size = self.config.batch_size
        proofs: list[Proof] = []
        checked = 0

        def close(verdict: Verdict, first: int, adversarial: Text | None = None, reason: str = "") -> None:
            seconds = time.perf_counter() - started
            l0 = None if adversarial is None else space.original.l0(adversarial)
            for r in range(first, max_radius + 1):
                proofs.append(Proof(r, verdict, checked, space.size(r), seconds, adversarial, l0, reason))

        positions = space._order(order)
        for k in range(max_radius + 1):
            fast = ids is not None and k >= 1 and len(space.original) >= 1
            for size, score, text_of in (_id_batches(ids, space, k, positions, batch_size) if fast and ids is not None
                                         else _text_batches(evaluate, space, k, order, batch_size)):
                if deadline is not None and time.perf_counter() > deadline:
                    close(Verdict.UNKNOWN, k, reason="time limit")
                    return proofs
                if max_texts is not None and checked + size > max_texts:
                    close(Verdict.UNKNOWN, k, reason="text limit")
                    return proofs
                try:
                    found = score()
                except QueryBudgetExceeded:
                    close(Verdict.UNKNOWN, k, reason="query budget")
                    return proofs
                checked += size
                success = np.asarray(found.success, dtype=bool)
                if success.any():
                    close(Verdict.FOUND, k, text_of(int(np.argmax(success))))
                    return proofs
            expected = space.size(k)
            if checked != expected:  # a sanity check of the enumeration, never user input
                raise TextRobustError(
                    f"The prover checked {checked} texts for Omega_{k} but |Omega_{k}| = {expected}: "
                    f"refusing to certify (please report this bug)."
                )
            proofs.append(Proof(k, Verdict.CERTIFIED, checked, expected, time.perf_counter() - started))
        return proofs


#: (batch size, score the batch, the text of a row of it)
_Batch = tuple[int, Callable[[], Evaluation], Callable[[int], Text]]


def _text_batches(evaluate: Evaluate, space: PerturbationSpace, k: int, order: Sequence[int] | None,
                  batch_size: int) -> Iterator[_Batch]:
    """Layer ``k`` as batches of Text objects, scored by ``evaluate``."""
    texts = space.layer(k, order)
    while batch := list(itertools.islice(texts, batch_size)):
        def score(b: list[Text] = batch) -> Evaluation:
            return evaluate(b)

        def text_of(row: int, b: list[Text] = batch) -> Text:
            return b[row]

        yield len(batch), score, text_of


def _id_batches(ids: WordIdPath, space: PerturbationSpace, k: int, positions: Sequence[int],
                batch_size: int) -> Iterator[_Batch]:
    """Layer ``k`` as batches of word-id rows (the same texts in the same order), each
    batch's first row and any adversarial row checked against the tokenizer."""
    for batch_ids, segments in ids.batches(space, k, positions, batch_size):
        ids.check(ids.text(space, segments, 0), batch_ids[0])

        def text_of(row: int, b: np.ndarray = batch_ids, s: Any = segments) -> Text:
            text = ids.text(space, s, row)
            ids.check(text, b[row])
            return text

        def score(b: np.ndarray = batch_ids) -> Evaluation:
            return ids.judge(ids.layer.probabilities_of_ids(b, distinct=True))

        yield len(batch_ids), score, text_of


class ExhaustiveSearchConfig(Config):
    """Settings of :class:`ExhaustiveSearch`: ``max_radius`` (None: the whole space),
    ``batch_size``, ``order`` (how positions are sorted)."""

    max_radius: int | None = Field(default=None, ge=0)
    batch_size: int = Field(default=512, ge=1)
    order: Sensitivity = Sensitivity.AUTO


class ExhaustiveSearch(BaseSearch):
    """The prover as a search: layers 1, 2, ... of the problem's space, in sensitivity
    order, until an adversarial example the problem admits (its position constraints,
    such as a modification cap, hold); it has the fewest substitutions possible.

    >>> from textrobust.analyses.radius import ExhaustiveSearch
    >>> ExhaustiveSearch(max_radius=2)
    ExhaustiveSearch(max_radius=2, batch_size=512, order='auto')
    """

    config_class = ExhaustiveSearchConfig
    config: ExhaustiveSearchConfig

    def _prepare(self, start: Text, problem: Problem) -> Any:
        space = space_from_problem(problem, start)
        order: Sequence[int] | None = None
        if self.config.order is Sensitivity.GRADIENT or (
            self.config.order is Sensitivity.AUTO and problem.gradients is not None
        ):
            order = sensitivity_order(space, Sensitivity.GRADIENT, gradients=problem.word_gradients)
        return space, order

    def _search(self, start: Text, problem: Problem, run: Run, prepared: Any) -> None:
        space, order = prepared
        if order is None and self.config.order is not Sensitivity.TEXT:
            order = sensitivity_order(space, Sensitivity.DELETE, evaluate=lambda t: run.evaluate(t, track=False))
        top = space.m if self.config.max_radius is None else min(self.config.max_radius, space.m)
        size = self.config.batch_size
        for k in range(1, top + 1):
            run.iterations += 1
            texts = space.layer(k, order)
            while batch := list(itertools.islice(texts, size)):
                found = run.evaluate(batch, track=False)
                for i in np.flatnonzero(found.success).tolist():
                    if admissible(problem, start, start, batch[i]):
                        run.best, run.score, run.success = batch[i], float(found.scores[i]), True
                        return
