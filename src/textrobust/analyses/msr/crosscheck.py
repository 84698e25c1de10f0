"""Two independent provers of this project, checked against each other.

Bound propagation (:mod:`textrobust.bounds`) over the *convex hull* of each word's
substitution set (the box of its word vectors, every position at once: Jia et al. 2019's
certificate) against the exhaustive prover of the robustness-radius analysis
(:class:`~textrobust.attack.searches.exhaustive.ExhaustiveProver`, Yang et al. 2022), which
enumerates ``Omega_r``, and against any attack on the same substitution sets. A text the
hull certifies keeps its class for every combination of substitutions, so neither the
prover nor an attack may ever find an adversarial example for it: each such pair is a
*contradiction*, a soundness bug in one of the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.problem import CandidateSource, Problem, Search
from textrobust.attack.searches.exhaustive import ExhaustiveProver, Verdict
from textrobust.attack.space import space_from_problem
from textrobust.text import Text
from textrobust.victims.query import QueryLayer

__all__ = ["CrossCheck", "cross_check"]


@dataclass(frozen=True)
class CrossCheck:
    """One text: is it certified over the hull, what the prover says for ``radius``, did an
    attack succeed; ``contradiction``: certified and yet an adversarial example exists."""

    certified: bool
    verdict: str
    radius: int
    space_size: int
    attack_found: bool
    contradiction: bool


def cross_check(victim: Any, verifier: Any, text: Text, source: CandidateSource, *, radius: int = 2,
                method: str = "crown", attacks: tuple[Search, ...] = (), max_texts: int = 200_000) -> CrossCheck:
    """Certify ``text`` over the hull of ``source``'s substitutions with ``verifier`` (a
    :class:`~textrobust.bounds.certify.Verifier` of ``victim``'s zoo model), run the
    exhaustive prover to ``radius`` and ``attacks`` on the same problem."""
    from textrobust.bounds.region import hull

    layer = QueryLayer(victim)
    predicted = int(np.asarray(layer.probabilities([text]))[0].argmax())
    problem = Problem(original=text, goal=UntargetedClassification(layer, predicted), source=source)
    space = space_from_problem(problem)
    ids_t, mask, _ = victim.encode([text])
    ids = ids_t[0][mask[0]].tolist()
    vocab = victim.tokenizer
    table = verifier.model.embedding.weight.detach()
    seen = [(p, subs) for p, subs in zip(space.positions, space.substitutes) if p < len(ids)]
    certified = False
    if seen:
        region = hull(verifier.embed(ids), [p for p, _ in seen],
                      [table[[vocab.id_of(w) for w in subs]] for _, subs in seen])
        certified = verifier.certifies(region, predicted, method)
    r = min(radius, len(space.positions))
    proof = ExhaustiveProver(batch_size=512, max_texts=max_texts).prove(space, problem.evaluate, r)
    found = False
    for attack in attacks:
        found = found or bool(attack.search(text, problem).success)
    contradiction = certified and (proof.verdict is Verdict.FOUND or found)
    return CrossCheck(certified, str(proof.verdict), r, proof.size, found, contradiction)
