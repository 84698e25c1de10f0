"""The cross-check of two provers: an example that bound propagation certifies over the hull
of its substitution sets never has an adversarial example found by the exhaustive prover
or by an attack (small substitution spaces, tiny zoo victims built here)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from textrobust.analyses.msr.crosscheck import cross_check
from textrobust.attack.searches import GreedySearch, MCTSSearch
from textrobust.attack.searches.search_testing import DictSource
from textrobust.bounds.certify import Verifier
from textrobust.text import Text
from textrobust.victims.torch import TorchVictim
from textrobust.zoo.bow import BowClassifier, BowConfig
from textrobust.zoo.cnn import CnnClassifier, CnnConfig
from textrobust.zoo.lstm import LstmClassifier, LstmConfig
from textrobust.zoo.vocab import WordVocab

WORDS = ["good", "bad", "film", "plot", "great", "awful", "movie", "story", "fine", "dull", "the", "a", "was"]
TABLE = {"good": ["great", "fine"], "bad": ["awful", "dull"], "film": ["movie"], "plot": ["story"],
         "great": ["good"], "dull": ["bad", "awful"], "movie": ["film", "story"], "was": ["a"]}


def _victim(kind: str, seed: int) -> TorchVictim:
    torch.manual_seed(seed)
    vocab = WordVocab(WORDS, max_length=8)
    if kind == "cnn":
        model = CnnClassifier(CnnConfig(embed_dim=3, filters=3, widths=(2, 3)), len(vocab), 2)
    elif kind == "bow":
        model = BowClassifier(BowConfig(embed_dim=3, hidden=4), len(vocab), 2)
    else:
        model = LstmClassifier(LstmConfig(embed_dim=3, hidden=3), len(vocab), 2)
    return TorchVictim(model, vocab, ("neg", "pos"))


TEXTS = ["the film was good", "a dull plot", "bad movie", "the good film was great", "a movie was dull"]


@pytest.mark.parametrize("kind", ["cnn", "bow", "lstm"])
@settings(max_examples=4)
@given(seed=st.integers(0, 10_000))
def test_a_hull_certificate_is_never_contradicted(kind, seed):
    victim = _victim(kind, seed)
    verifier = Verifier(victim.module)
    source = DictSource(TABLE)
    for text in TEXTS:
        check = cross_check(victim, verifier, Text.from_string(text), source, radius=3,
                            attacks=(GreedySearch(), MCTSSearch(simulations=4, max_iterations=4)))
        assert not check.contradiction, (text, check)
        if check.certified:
            assert check.verdict == "certified" and not check.attack_found


def test_the_cross_check_is_not_vacuous():
    """Across these seeds both outcomes occur: certified texts and texts with an
    adversarial example (so the absence of contradictions above means something)."""
    certified = found = 0
    for seed in range(6):
        victim = _victim("bow", seed)
        verifier = Verifier(victim.module)
        for text in TEXTS:
            check = cross_check(victim, verifier, Text.from_string(text), DictSource(TABLE), radius=3)
            certified += check.certified
            found += check.verdict == "found"
    assert certified > 0 and found > 0
