"""The PAC-style robustness metric PR: the share of Omega_r(X) the victim still gets right.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt), Type-4 problem,
equations (6)-(9):

``PR = |{X' in Omega_r(X) : F(X') = y*}| / |Omega_r(X)|``, estimated by
``PR_hat = (1/N) sum_i 1[F(X_i) = y*]`` over ``N`` texts drawn independently and uniformly
from ``Omega_r(X)``. Hoeffding's inequality gives ``Pr(|PR_hat - PR| >= eps) <= 2
exp(-2 N eps^2)``, so ``N > ln(2/delta) / (2 eps^2)`` samples guarantee
``Pr(|PR_hat - PR| < eps) > 1 - delta``.

With the paper's ``eps = 0.025`` and ``delta = 0.005`` the bound is 4793.2, so the
smallest valid ``N`` is 4794 (:func:`hoeffding_samples`); the paper uses 5000, a round
number above it. The default here is the smallest valid ``N``; pass ``samples=5000`` to
match the paper. ``r`` is 25% of the sentence length by default (``floor(0.25 n)``, the
same rule as the modification cap, :func:`~textrobust.attack.cap.modification_cap`).

Additions: when ``|Omega_r|`` is at most ``exact_limit`` (default: the sample size) the
space is enumerated and PR computed exactly (the interval then has width 0, and it costs
fewer queries than sampling); the reported interval ``[PR_hat - eps_N, PR_hat + eps_N]``
(clipped to [0, 1]) uses the ``eps_N`` that Hoeffding gives for the ``N`` actually drawn,
at confidence ``1 - delta``; the first ``keep`` misclassified texts (default 3, in the order
they were drawn, or enumerated when exact) are kept with the estimate (:class:`PRSample`:
their swaps and the victim's probabilities), so that a person can read them (``textrobust
review``): PR_hat counts every misclassified draw as a failure, whether or not its
substitutions keep the meaning.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.attack.problem import Evaluation
from textrobust.config import Config
from textrobust.errors import ConfigError
from textrobust.attack.cap import modification_cap
from textrobust.attack.searches.exhaustive import WordIdPath
from textrobust.attack.space import PerturbationSpace
from textrobust.text import Text

__all__ = ["PRConfig", "PREstimate", "PRSample", "PRSwap", "estimate_pr", "hoeffding_epsilon", "hoeffding_samples", "pr_radius"]

Evaluate = Callable[[Sequence[Text]], Evaluation]


def hoeffding_samples(epsilon: float, delta: float) -> int:
    """The smallest ``N`` with ``N > ln(2/delta) / (2 epsilon^2)`` (equation 9).

    >>> from textrobust.analyses.radius import hoeffding_samples
    >>> hoeffding_samples(0.025, 0.005)
    4794
    """
    if not 0.0 < epsilon < 1.0:
        raise ConfigError(f"The 'epsilon' parameter must be in (0, 1). Got {epsilon} instead.")
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"The 'delta' parameter must be in (0, 1). Got {delta} instead.")
    bound = math.log(2.0 / delta) / (2.0 * epsilon * epsilon)
    return math.floor(bound) + 1


def hoeffding_epsilon(samples: int, delta: float) -> float:
    """The ``eps`` that ``samples`` draws guarantee at confidence ``1 - delta``:
    ``sqrt(ln(2/delta) / (2 N))``."""
    if samples < 1:
        raise ConfigError(f"The 'samples' parameter must be >= 1. Got {samples} instead.")
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"The 'delta' parameter must be in (0, 1). Got {delta} instead.")
    return math.sqrt(math.log(2.0 / delta) / (2.0 * samples))


def pr_radius(text: Text, fraction: float) -> int:
    """``r`` for the PR metric: ``floor(fraction * n)`` words (n = modifiable words)."""
    return modification_cap(text, fraction)


class PRConfig(Config):
    """Settings of :func:`estimate_pr`.

    ``epsilon``/``delta``: the guarantee; ``samples``: N (None: the smallest N Hoeffding
    allows, :func:`hoeffding_samples`); ``fraction``: r as a share of the length;
    ``exact_limit``: enumerate spaces up to this size (None: the sample size; 0: never);
    ``batch_size``: texts per ``evaluate`` call; ``keep``: misclassified texts kept per
    estimate, the first drawn (0: none).
    """

    epsilon: float = Field(default=0.025, gt=0.0, lt=1.0)
    delta: float = Field(default=0.005, gt=0.0, lt=1.0)
    samples: int | None = Field(default=None, ge=1)
    fraction: float = Field(default=0.25, gt=0.0, le=1.0)
    exact_limit: int | None = Field(default=None, ge=0)
    batch_size: int = Field(default=1024, ge=1)
    keep: int = Field(default=3, ge=0, le=100)

    def sample_size(self) -> int:
        return self.samples if self.samples is not None else hoeffding_samples(self.epsilon, self.delta)

    def guaranteed(self) -> bool:
        """Whether the sample size meets the Hoeffding bound for (epsilon, delta)."""
        return self.sample_size() >= hoeffding_samples(self.epsilon, self.delta)

    def guaranteed_epsilon(self) -> float:
        """The ``eps`` the sample size actually guarantees at confidence ``1 - delta``
        (below the requested ``epsilon`` when :meth:`guaranteed`, above it otherwise:
        ``samples=50`` with ``delta=0.005`` guarantees only ``eps ~ 0.245``)."""
        return hoeffding_epsilon(self.sample_size(), self.delta)


@dataclass(frozen=True)
class PRSwap:
    """One substituted word of a sample: ``word`` at ``position`` of the original replaced
    by ``substitute``."""

    position: int
    word: str
    substitute: str


@dataclass(frozen=True)
class PRSample:
    """One misclassified text of ``Omega_r``: ``draw`` (its place among the texts evaluated,
    from 0), its ``swaps`` and the victim's ``probabilities`` for it (empty when the
    evaluation gave none). The text itself is :meth:`text` of the original."""

    draw: int
    swaps: tuple[PRSwap, ...]
    probabilities: tuple[float, ...] = ()

    def text(self, original: Text) -> Text:
        """The sample: ``original`` with the swaps applied."""
        return original.replace({s.position: s.substitute for s in self.swaps}) if self.swaps else original


def _sample(original: Text, text: Text, draw: int, outputs: Any, row: int) -> PRSample:
    swaps = tuple(PRSwap(p, original.words[p], text.words[p]) for p in original.diff(text))
    probabilities = () if outputs is None else tuple(float(v) for v in np.asarray(outputs)[row])
    return PRSample(draw, swaps, probabilities)


@dataclass(frozen=True)
class PREstimate:
    """PR for one text: ``pr`` (PR_hat, or the exact PR when ``exact``), its interval
    ``[low, high]`` at confidence ``1 - delta`` (width 0 when exact), the radius, the
    space size, the texts evaluated and how many kept the label; ``samples``: the first
    misclassified texts (at most ``keep``; none in estimates stored before they were kept)."""

    radius: int
    size: int
    evaluated: int
    robust: int
    pr: float
    low: float
    high: float
    epsilon: float
    delta: float
    exact: bool
    seconds: float
    samples: tuple[PRSample, ...] = ()


def estimate_pr(
    space: PerturbationSpace,
    evaluate: Evaluate,
    rng: random.Random,
    config: PRConfig | None = None,
    *,
    radius: int | None = None,
    ids: WordIdPath | None = None,
) -> PREstimate:
    """PR of ``space.original`` at ``radius`` (default ``floor(fraction * n)``).

    ``evaluate`` is a goal's evaluate (success = adversarial: the text does not keep the
    label); ``rng`` (e.g. :func:`~textrobust.attack.space.space_rng`) draws the samples.
    ``ids`` (:meth:`~textrobust.attack.searches.exhaustive.WordIdPath.of` the goal) sends
    the same texts as word-id rows: the same draws, the same estimate and the same kept
    samples, faster.
    """
    config = config or PRConfig()
    started = time.perf_counter()
    r = pr_radius(space.original, config.fraction) if radius is None else radius
    if isinstance(r, bool) or not isinstance(r, int) or r < 0:
        raise ConfigError(f"The 'radius' parameter must be an int >= 0. Got {r!r} instead.")
    size = space.size(r)
    n = config.sample_size()
    limit = n if config.exact_limit is None else config.exact_limit
    exact = size <= limit
    robust = evaluated = 0
    batch: list[Text] = []
    kept: list[PRSample] = []
    original = space.original

    def keep(found: Evaluation, text_of: Callable[[int], Text]) -> None:
        """Keep the first misclassified texts of a batch just judged (its first draw is
        ``evaluated``), up to ``config.keep`` in all."""
        if len(kept) < config.keep:
            for row in np.flatnonzero(np.asarray(found.success, dtype=bool))[:config.keep - len(kept)]:
                kept.append(_sample(original, text_of(int(row)), evaluated + int(row), found.outputs, int(row)))

    def flush() -> None:
        nonlocal robust, evaluated
        if batch:
            found = evaluate(batch)
            keep(found, batch.__getitem__)
            robust += int(np.count_nonzero(~np.asarray(found.success, dtype=bool)))
            evaluated += len(batch)
            batch.clear()

    if ids is not None and len(original) >= 1:
        def count(found: Evaluation, text_of: Callable[[int], Text]) -> None:
            nonlocal robust, evaluated
            keep(found, text_of)
            success = np.asarray(found.success, dtype=bool)
            robust += int(np.count_nonzero(~success))
            evaluated += len(success)

        if exact:
            count(evaluate([original]), lambda row: original)
            for k in range(1, r + 1):
                for batch_ids, segments in ids.batches(space, k, space.positions, config.batch_size):
                    count(ids.judge(ids.layer.probabilities_of_ids(batch_ids, distinct=True)),
                          partial(ids.text, space, segments))
        else:
            for start in range(0, n, config.batch_size):
                drawn = [space.unrank(rng.randrange(size), r) for _ in range(min(config.batch_size, n - start))]
                count(ids.judge(ids.layer.probabilities_of_ids(ids.rows(space, drawn))),
                      lambda row: space.text(drawn[row]))
    else:
        texts = space.ball(r) if exact else (space.text(space.unrank(rng.randrange(size), r)) for _ in range(n))
        for text in texts:
            batch.append(text)
            if len(batch) >= config.batch_size:
                flush()
        flush()
    pr = robust / evaluated
    half = 0.0 if exact else hoeffding_epsilon(evaluated, config.delta)
    return PREstimate(
        radius=r,
        size=size,
        evaluated=evaluated,
        robust=robust,
        pr=pr,
        low=max(0.0, pr - half),
        high=min(1.0, pr + half),
        epsilon=half if not exact else 0.0,
        delta=config.delta,
        exact=exact,
        seconds=time.perf_counter() - started,
        samples=tuple(kept),
    )
