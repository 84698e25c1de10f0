"""Adversarial training: attack the model as it trains and train on its adversarial texts.

As TextAttack's ``textattack train --attack`` (Morris et al. 2020, ``Trainer``): after
``clean_epochs`` clean epochs, at the start of every epoch a seeded ``share`` of the
training examples (at most ``max_examples``) is attacked with an attack recipe
(:data:`~textrobust.attack.recipes.RECIPES`) against the model as it is after the previous
epoch; every successful adversarial text is added, with its example's true label, to that
epoch's training data only (the next epoch attacks afresh). Examples the model already
gets wrong are skipped, as the attack does. Cost is bounded by the per-example query
``budget`` (enforced by the query layer) and ``max_examples``.

Departures from TextAttack, stated: its default keeps the last epoch; here the kept model
is the one with the best clean dev accuracy among the adversarial epochs (never a clean
warm-up epoch); attacked examples are drawn afresh each epoch with a generator seeded by
(seed, epoch), so an interrupted training resumes to the same data. New words of an
adversarial text that the vocabulary (built before training) lacks are ``<unk>``.

The default recipe is TextFooler with its own candidates (``candidates="paper"``:
counter-fitted neighbours, part of speech and sentence similarity): the recipe TextAttack
documents for adversarial training, and far cheaper than the validated synonyms, whose
causal-LM check of every candidate sentence would dominate the training time. It took
1.3 s per attacked example on the default CNN (20 Rotten Tomatoes training texts,
budget 200, one thread, load 6 on 2 cores).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from textrobust.attack.candidates.choice import CANDIDATES_HELP, CandidateChoice
from textrobust.config import Config
from textrobust.data.examples import Example
from textrobust.devices import Placement

__all__ = ["AdversarialExamples", "AdversarialSettings", "EpochAttacks", "train_adversarial"]


class AdversarialSettings(Config):
    """Adversarial training (``--defense adversarial``)."""

    recipe: str = Field(default="textfooler", description="attack recipe that makes the adversarial texts "
                                                          "(see `textrobust list`)")
    candidates: CandidateChoice = Field(default="paper", description=CANDIDATES_HELP)
    share: float = Field(default=0.2, gt=0.0, le=1.0,
                         description="share of the training examples attacked each adversarial epoch")
    max_examples: int = Field(default=200, ge=1, description="most training examples attacked per epoch")
    budget: int = Field(default=200, ge=1, description="model queries per attacked example")
    clean_epochs: int = Field(default=1, ge=0, description="clean epochs before the attacks start")

    @field_validator("recipe")
    @classmethod
    def _known_recipe(cls, value: str) -> str:
        from textrobust.attack.recipes import RECIPES

        if value not in RECIPES:
            raise ValueError(f"must be one of {', '.join(RECIPES.names())}")
        return value


@dataclass(frozen=True)
class EpochAttacks:
    """The attacks of one epoch: examples attacked, skipped (already misclassified),
    succeeded (added to the epoch), the queries and seconds they took."""

    epoch: int
    attacked: int
    skipped: int
    succeeded: int
    queries: int
    seconds: float


def recipe_spec(name: str, seed: int, candidates: str) -> Any:
    """The recipe ``name`` (seeded when it takes a seed), on the validated synonyms unless
    ``candidates`` is "paper" (as the attack analysis builds it)."""
    from textrobust.attack.recipes import RECIPES

    factory = RECIPES.get(name)
    spec = factory(seed=seed) if "seed" in factory.__code__.co_varnames else factory()
    return spec if candidates == "paper" else spec.with_source("validated")


class AdversarialExamples:
    """The ``epoch_examples`` hook of :func:`~textrobust.zoo.train_victim`.

    ``make_attack(layer)`` builds the attack against a query layer; by default the
    settings' recipe (:func:`~textrobust.attack.recipes.build_attack`), built once and
    its components reused every epoch on a fresh layer (the model changed, so the
    layer's cache must not carry over). ``log`` holds one :class:`EpochAttacks` per
    adversarial epoch run in this process. ``placement``: where the recipe's own models
    (the validated synonyms' fill-in, LM and similarity constraints) run, the training's
    device (None: the CPU in float32).
    """

    def __init__(self, settings: AdversarialSettings, train: Sequence[Example], seed: int = 0,
                 make_attack: Callable[[Any], Any] | None = None, placement: Placement | None = None) -> None:
        self.settings = settings
        self.train = list(train)
        self.seed = seed
        self.placement = placement
        self._make_attack = make_attack
        self._first: Any = None
        self.log: list[EpochAttacks] = []

    def __repr__(self) -> str:
        return f"AdversarialExamples({self.settings!r}, train={len(self.train)}, seed={self.seed})"

    def _attack(self, layer: Any) -> Any:
        if self._make_attack is not None:
            return self._make_attack(layer)
        from textrobust.attack.attack import Attack
        from textrobust.attack.recipes import build_attack

        if self._first is None:
            spec = recipe_spec(self.settings.recipe, self.seed, self.settings.candidates)
            self._first = build_attack(spec, layer, budget=self.settings.budget, placement=self.placement)
            return self._first
        first = self._first
        return Attack(layer, source=first.source, search=first.search, position_constraints=first.position_constraints,
                      constraints=first.constraints, budget=self.settings.budget, name=first.name)

    def __call__(self, epoch: int, victim: Any, report: Callable[[int, int], None]) -> list[Example]:
        if epoch <= self.settings.clean_epochs or not self.train:
            return []
        from textrobust.attack.results import Status
        from textrobust.victims.query import QueryLayer

        began = time.perf_counter()
        rng = np.random.default_rng([self.seed, epoch])
        n = min(self.settings.max_examples, len(self.train), max(1, round(self.settings.share * len(self.train))))
        picked = np.sort(rng.choice(len(self.train), size=n, replace=False))
        attack = self._attack(QueryLayer(victim))
        out: list[Example] = []
        skipped = queries = 0
        report(0, n)
        for done, index in enumerate(picked, start=1):
            example = self.train[int(index)]
            result = attack.attack(example)
            queries += result.queries
            if result.status is Status.SKIPPED:
                skipped += 1
            elif result.status is Status.SUCCEEDED and result.perturbed is not None:
                out.append(Example(f"{example.id}~adv{epoch}", result.perturbed, example.label))
            report(done, n)
        self.log.append(EpochAttacks(epoch, n, skipped, len(out), queries, round(time.perf_counter() - began, 2)))
        return out


def train_adversarial(arch: str, dataset: Any, *, settings: AdversarialSettings, out: Any, seed: int = 0,
                      make_attack: Callable[[Any], Any] | None = None, **train: Any) -> Any:
    """Train ``arch`` adversarially (see the module docstring); the card records the
    settings, the examples added per epoch (``extra["extra_examples"]``) and, for the epochs
    run in this process, the attacks' counts (``extra["adversarial_epochs"]``)."""
    from dataclasses import asdict, replace

    from textrobust.errors import ConfigError
    from textrobust.zoo import TrainingData, train_victim
    from textrobust.zoo.training import training_placement, training_settings

    data = TrainingData.bundled(dataset) if isinstance(dataset, str) else dataset
    epochs = training_settings(arch, train.get("training"), train.get("epochs")).epochs
    if settings.clean_epochs >= epochs:
        raise ConfigError(f"Adversarial training needs more epochs ({epochs}) than clean epochs "
                          f"({settings.clean_epochs}): no epoch would see an adversarial text. Raise --epochs or "
                          "lower clean_epochs.")
    placement = training_placement(train.get("device", "auto"), train.get("dtype", "float32"))
    hook = AdversarialExamples(settings, data.train.examples, seed, make_attack, placement=placement)
    recorded = {**settings.to_dict(), "attack": "given" if make_attack is not None else "recipe"}
    trained = train_victim(arch, data, out=out, seed=seed, epoch_examples=hook,
                           select_from=settings.clean_epochs + 1, defense="adversarial", defense_settings=recorded,
                           **train)
    card = replace(trained.card, extra={**trained.card.extra,
                                        "adversarial_epochs": [asdict(log) for log in hook.log]})
    card.save(trained.path)
    return replace(trained, card=card, victim=_with_card(trained.victim, card))


def _with_card(victim: Any, card: Any) -> Any:
    """``victim`` whose ``card`` is the updated one (loaded victims keep theirs)."""
    try:
        victim.card = card
    except AttributeError:  # pragma: no cover - a victim without a settable card
        pass
    return victim
