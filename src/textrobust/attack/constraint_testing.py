"""The contract every constraint must keep, as a checker tests run over the registry.

:func:`check_constraint` runs a built constraint on a text and a batch of proposals and
raises :class:`ConstraintContractError` at the first broken promise. For a candidate
constraint (``check``):

- the verdict is a bool array with one entry per proposal, and an empty batch gives an
  empty array;
- it is deterministic (a second call, now served from caches, agrees);
- it is order-independent: a proposal's verdict does not depend on its batch neighbours
  (reversed, shuffled and one-at-a-time batches agree);
- when it offers the word-pair fast path (``pair_reference``, ``pair_verdicts``), that
  path agrees with ``check``.

For a position constraint (``allowed``), with the original, each proposal's parent and
each proposal's text as the current text:

- the answer is a frozenset and a subset of the positions given; none given, none back;
- it is deterministic, and a position's verdict does not depend on the other positions
  asked about (asking for one position alone agrees).

>>> from textrobust.attack.constraints import RepeatModification
>>> t = Text.from_string("a fine film")
>>> check_constraint(RepeatModification(), t, proposals_for(t, {1: ["good"]})).kind
'position'
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from textrobust.attack.problem import Constraint, PairConstraint, PositionConstraint, Proposal
from textrobust.errors import TextRobustError
from textrobust.text import Text

__all__ = ["ConstraintCheck", "ConstraintContractError", "check_constraint", "proposals_for"]


class ConstraintContractError(TextRobustError, AssertionError):
    """A constraint broke its contract (see :func:`check_constraint`)."""


@dataclass(frozen=True)
class ConstraintCheck:
    """What :func:`check_constraint` saw: the kind, candidate verdicts (None for a position
    constraint) and, for a position constraint, the allowed positions for each distinct
    current text tried (the original first, then parents and proposal texts)."""

    kind: str
    verdicts: np.ndarray | None
    allowed: tuple[frozenset[int], ...] = ()


def proposals_for(text: Text, edits: Mapping[int, Sequence[str]], parent: Text | None = None) -> list[Proposal]:
    """Proposals putting each word of ``edits[position]`` at ``position`` of ``parent``
    (default ``text``), in position then word order."""
    base = text if parent is None else parent
    return [Proposal(base.replace(p, w), base, p, w) for p in sorted(edits) for w in edits[p]]


def check_constraint(
    constraint: object, original: Text, proposals: Sequence[Proposal], *, seed: int = 0
) -> ConstraintCheck:
    """Check ``constraint`` against its contract on ``original`` and ``proposals``."""
    name = repr(constraint)
    is_position = isinstance(constraint, PositionConstraint)
    is_candidate = isinstance(constraint, Constraint)
    if not (is_position or is_candidate):
        raise ConstraintContractError(
            f"{name} has neither allowed(original, current, positions) nor check(original, proposals)."
        )
    if not repr(constraint) or " object at 0x" in name:
        raise ConstraintContractError(f"{type(constraint).__name__} has no repr showing its configuration.")
    if is_candidate:
        verdicts = _check_candidate(cast(Constraint, constraint), original, list(proposals), seed, name)
        return ConstraintCheck("candidate", verdicts)
    allowed = _check_position(cast(PositionConstraint, constraint), original, list(proposals), name)  # one of the two
    return ConstraintCheck("position", None, allowed)


def _verdicts(constraint: Constraint, original: Text, batch: list[Proposal], name: str) -> np.ndarray:
    mask = constraint.check(original, batch)
    if not isinstance(mask, np.ndarray):
        raise ConstraintContractError(f"{name}.check returned {type(mask).__name__}, not a numpy array.")
    if mask.dtype != np.bool_:
        raise ConstraintContractError(f"{name}.check returned dtype {mask.dtype}, not bool.")
    if mask.shape != (len(batch),):
        raise ConstraintContractError(f"{name}.check returned shape {mask.shape} for {len(batch)} proposals.")
    return mask


def _check_candidate(
    constraint: Constraint, original: Text, proposals: list[Proposal], seed: int, name: str
) -> np.ndarray:
    _verdicts(constraint, original, [], name)
    first = _verdicts(constraint, original, proposals, name)
    again = _verdicts(constraint, original, proposals, name)
    if not np.array_equal(first, again):
        raise ConstraintContractError(f"{name} is not deterministic: {first.tolist()} then {again.tolist()}.")
    shuffled = list(range(len(proposals)))
    random.Random(seed).shuffle(shuffled)
    for label, perm in (("reversed", list(range(len(proposals)))[::-1]), ("shuffled", shuffled)):
        got = _verdicts(constraint, original, [proposals[i] for i in perm], name)
        if not np.array_equal(got, first[perm]):
            raise ConstraintContractError(f"{name} depends on batch order ({label} batch disagrees).")
    for i, proposal in enumerate(proposals):
        alone = _verdicts(constraint, original, [proposal], name)[0]
        if alone != first[i]:
            raise ConstraintContractError(
                f"{name} depends on batch neighbours: proposal {i} ({proposal.word!r} at {proposal.position}) "
                f"is {bool(first[i])} in the batch and {bool(alone)} alone."
            )
    _check_pair_path(constraint, original, proposals, first, name)
    return first


def _check_pair_path(
    constraint: Constraint, original: Text, proposals: list[Proposal], verdicts: np.ndarray, name: str
) -> None:
    """A constraint offering the word-pair fast path (``pair_reference`` and
    ``pair_verdicts``) gives the verdicts ``check`` gives, on the same proposals."""
    if not callable(getattr(constraint, "pair_verdicts", None)):
        return
    pair_constraint = cast(PairConstraint, constraint)  # pair_reference is checked next
    reference = getattr(constraint, "pair_reference", None)
    reference = getattr(reference, "value", reference)
    if reference not in ("original", "parent"):
        raise ConstraintContractError(
            f"{name} offers pair_verdicts but its pair_reference is {reference!r}, not 'original' or 'parent'."
        )
    pairs = [
        ((original if reference == "original" else p.parent).words[p.position], p.word) for p in proposals
    ]
    got = [bool(v) for v in pair_constraint.pair_verdicts(pairs)]
    if got != verdicts.tolist():
        raise ConstraintContractError(
            f"{name}.pair_verdicts disagrees with check: {got} against {verdicts.tolist()}."
        )
    if list(pair_constraint.pair_verdicts([])) != []:
        raise ConstraintContractError(f"{name}.pair_verdicts of no pairs is not empty.")


def _check_position(
    constraint: PositionConstraint, original: Text, proposals: list[Proposal], name: str
) -> tuple[frozenset[int], ...]:
    currents = list(dict.fromkeys([original] + [p.parent for p in proposals] + [p.text for p in proposals]))
    out = []
    for current in currents:
        given = frozenset(current.modifiable) | frozenset(p.position for p in proposals if p.parent == current)
        got = constraint.allowed(original, current, given)
        if not isinstance(got, frozenset):
            raise ConstraintContractError(f"{name}.allowed returned {type(got).__name__}, not a frozenset.")
        if not got <= given:
            raise ConstraintContractError(f"{name}.allowed returned positions {sorted(got - given)} it was not given.")
        if constraint.allowed(original, current, given) != got:
            raise ConstraintContractError(f"{name}.allowed is not deterministic on {current!r}.")
        if constraint.allowed(original, current, frozenset()) != frozenset():
            raise ConstraintContractError(f"{name}.allowed returned positions when given none.")
        for p in sorted(given):
            alone = p in constraint.allowed(original, current, frozenset({p}))
            if alone != (p in got):
                raise ConstraintContractError(
                    f"{name}.allowed depends on the other positions asked about: position {p} is "
                    f"{p in got} among {sorted(given)} and {alone} alone."
                )
        out.append(got)
    return tuple(out)
