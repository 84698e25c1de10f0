"""The source learned from people (textrobust.attack.candidates.people) on tiny fakes, and
its judge's and pair prior's files (textrobust.validity.people_judge, .pair_prior)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from textrobust.attack.candidates import DictLexicon, PosTag
from textrobust.attack.candidates.people import PeopleSubstitutes
from textrobust.attack.candidates.polarity import PolarityLexicon
from textrobust.attack.testing import check_candidate_source
from textrobust.embeddings import WordVectors
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.validity.calibration import Calibration
from textrobust.validity.pair_prior import PairPrior, load_pair_prior
from textrobust.validity.people_judge import FEATURES_ONE, FEATURES_TWO, SECOND_INPUTS, PeopleJudge, load_people_judge

_TAGS = {"the": ("DT", "DET"), "a": ("DT", "DET"), "good": ("JJ", "ADJ"), "great": ("JJ", "ADJ"),
         "fine": ("JJ", "ADJ"), "bad": ("JJ", "ADJ"), "film": ("NN", "NOUN"), "movie": ("NN", "NOUN"),
         "picture": ("NN", "NOUN"), "novel": ("NN", "NOUN"), "films": ("NNS", "NOUN"), "movies": ("NNS", "NOUN"),
         "is": ("VBZ", "AUX"), "john": ("NNP", "PROPN"), "just": ("RB", "ADV")}

_WORDS = ["good", "great", "fine", "bad", "film", "movie", "picture", "films", "movies", "novel", "the"]
_VEC = {"good": [1, 0.1, 0], "great": [0.95, 0.2, 0], "fine": [0.9, 0.3, 0.1], "bad": [0.8, -0.5, 0],
        "film": [0, 0, 1], "movie": [0, 0.05, 0.98], "picture": [0, 0.2, 0.9], "films": [0.05, 0, 1],
        "movies": [0.05, 0.05, 0.98], "novel": [0.5, 0.8, 0.2]}


class DictTagger:
    def __call__(self, text: Text) -> tuple[PosTag, ...]:
        return tuple(PosTag(*_TAGS.get(w.lower(), ("XX", "X"))) for w in text.words)


class FakeVocab:
    def words(self, spaced: bool) -> tuple[str, ...]:
        return tuple(_WORDS)


class FakeFillIn:
    """Masked logits over _WORDS: 'movie' likely, 'novel' unlikely."""

    vocab = FakeVocab()

    def whole_word_logits(self, requests: Any) -> list[tuple[bool, Any]]:
        import torch

        return [(True, torch.tensor([2.0, 1.0, 1.8, 1.9, 3.0, 2.8, 0.5, 3.0, 2.9, -3.0, 0.0])) for _ in requests]


class FakeScorer:
    """Target-visible log-probabilities over _WORDS (token id = index); per-candidate scores
    that make 'movie' move the sentence least. Counts its calls."""

    def __init__(self) -> None:
        self.visible_calls = self.score_calls = 0

    def word_index(self, spaced: bool) -> dict[str, int]:
        return {w: i for i, w in enumerate(_WORDS)}

    def visible(self, text: Text, positions: Any) -> dict[int, tuple[bool, Any]]:
        import torch

        self.visible_calls += 1
        logits = torch.tensor([2.0, 1.5, 1.0, 0.5, 3.0, 2.5, 1.0, 2.0, 2.0, -1.0, 1.0])
        return {p: (True, torch.log_softmax(logits, 0)) for p in positions}

    def score(self, text: Text, items: Any) -> list[Any]:
        from textrobust.attack.candidates.contextual import ContextualScores

        self.score_calls += 1
        return [ContextualScores(0.0, 0.0, 0.99 if s in ("movie", "great") else 0.5, 0.9) for _, s in items]


def _stump(feature: int, threshold: float, low: float, high: float) -> tuple:
    return ((feature, threshold, 1, 2, 0.0), (-1, 0.0, 0, 0, low), (-1, 0.0, 0, 0, high))


def tiny_judge() -> PeopleJudge:
    """First stage: by cosine (> 0.5 scores high); second: by the validation score alone
    (weight 40 on (validation - 0.95): 0.99 gives sigmoid(1.6) = 0.832, 0.5 gives ~0);
    identity calibration."""
    first = (_stump(FEATURES_ONE.index("cosine"), 0.5, -1.0, 1.0),)
    n = len(SECOND_INPUTS)
    weights = tuple(40.0 if name == "validation" else 0.0 for name in SECOND_INPUTS)
    mean = tuple(0.95 if name == "validation" else 0.0 for name in SECOND_INPUTS)
    return PeopleJudge(first, 0.0, mean, (1.0,) * n, weights, 0.0, Calibration.identity(draws=3),
                       {"trained": "by hand"})


def light_source(scorer: FakeScorer | None = None, **settings: Any) -> PeopleSubstitutes:
    lexicon = DictLexicon(synonyms={"good": ["good", "great", "fine", "bad"],
                                    ("film", "n"): ["film", "movie", "picture", "novel"]},
                          antonyms={"good": ["bad"]})
    settings = {"min_zipf": 0.0, "k_vectors": 3, "k_visible": 3, "k_masked": 2, **settings}
    return PeopleSubstitutes(
        lexicon=lexicon, tagger=DictTagger(), fill_in=FakeFillIn(), scorer=scorer or FakeScorer(),
        vectors=WordVectors(list(_VEC), np.array(list(_VEC.values()), dtype=float), name="tiny"),
        polarity=PolarityLexicon({"good": 1.9, "great": 3.1, "fine": 1.5, "bad": -2.5}),
        judge=tiny_judge(), prior=PairPrior.count([("film", "n", [("movie", 4)])]), verdict_cache=False,
        **settings)


def test_kept_candidates_are_those_people_would_accept_best_first() -> None:
    source = light_source()
    found = source.candidates(Text.from_string("The film"), [1])[1]
    assert [s.word for s in found] == ["movie"]
    assert found[0].score == pytest.approx(1 / (1 + np.exp(-1.6)), abs=1e-3)
    verdicts = {v.substitute: v for v in source.evidence(Text.from_string("The film"), 1)}
    assert verdicts["picture"].reason == "judge" and verdicts["picture"].probability == pytest.approx(0.0, abs=1e-3)
    assert verdicts["movie"].features["prior_any"] == 1.0 and verdicts["picture"].features["prior_any"] == 0.0
    assert "wordnet" in verdicts["movie"].routes


def test_antonyms_and_misfits_never_reach_the_judge_and_guards_hold() -> None:
    source = light_source()
    good = {v.substitute: v for v in source.evidence(Text.from_string("a good film"), 1)}
    assert good["bad"].reason == "antonym" and good["bad"].probability is None
    assert source.candidates(Text.from_string("John is just good"), [0, 1, 2]) == {0: [], 1: [], 2: []}


def test_only_the_first_stages_best_reach_the_second() -> None:
    scorer = FakeScorer()
    source = light_source(scorer, stage_two=1)
    verdicts = source.evidence(Text.from_string("The film"), 1)
    reached = [v for v in verdicts if v.probability is not None]
    assert len(reached) == 1
    assert {v.reason for v in verdicts if v.probability is None} <= {"first stage", "part of speech or inflection",
                                                                      "antonym", "rare"}
    assert source.stats["second_stage"] == 1


def test_a_pair_nobody_proposed_is_judged_through_both_stages() -> None:
    source = light_source()
    (verdict,) = source.judge_pairs(Text.from_string("The film"), [(1, "fine")])
    assert verdict.probability is not None and verdict.routes == ()
    assert set(FEATURES_TWO) <= set(verdict.features)


def test_settings_are_validated_and_the_source_passes_the_contract() -> None:
    with pytest.raises(ConfigError, match="min_probability"):
        light_source(min_probability=1.5)
    with pytest.raises(ConfigError, match="not both"):
        PeopleSubstitutes(light_source().config, k_visible=3)
    assert check_candidate_source(light_source(), [Text.from_string("The good film"), "a good film"]) >= 1


def test_verdicts_are_read_back_from_the_cache(tmp_path: Path) -> None:
    first = light_source()
    first._verdict_path = tmp_path / "v.sqlite"
    text = Text.from_string("The film")
    before = first.candidates(text, [1])
    scorer = FakeScorer()
    second = light_source(scorer)
    second._verdict_path = tmp_path / "v.sqlite"
    assert second.candidates(text, [1]) == before
    assert scorer.visible_calls == 0 and scorer.score_calls == 0


def test_people_judge_round_trip_and_bad_files(tmp_path: Path) -> None:
    judge = tiny_judge()
    path = tmp_path / "judge.json"
    judge.save(path)
    back = load_people_judge(path)
    rows = np.zeros((2, len(FEATURES_TWO)))
    rows[0, FEATURES_TWO.index("validation")] = 0.95
    assert np.allclose(back.probability(rows), judge.probability(rows))
    assert back.draws(rows).shape == (3, 2)
    assert back.version == judge.version
    data = json.loads(path.read_text())
    data["features_one"] = data["features_one"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="not a people judge for these features"):
        load_people_judge(path)
    path.write_text("{")
    with pytest.raises(ConfigError, match="Cannot read the people judge"):
        load_people_judge(path)
    data = judge.to_dict()
    data["first"]["trees"][0][0][2] = 7  # a child outside the tree
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="bad node"):
        load_people_judge(path)
    data = judge.to_dict()
    data["second"]["scale"][0] = 0.0
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="positive scales"):
        load_people_judge(path)
    data = judge.to_dict()
    del data["second"]["bias"]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="second stage of .* is malformed"):
        load_people_judge(path)


def test_the_shipped_judge_and_prior_load() -> None:
    judge = load_people_judge()
    assert judge.calibration.bootstrap >= 50 and judge.record
    prior = load_pair_prior()
    assert len(prior.entries) > 1000 and "SWORDS" in prior.record["excluded"]
    (lemma, pos), (tokens, written) = next((k, v) for k, v in sorted(prior.entries.items()) if v[1])
    substitute = max(written, key=lambda w: written[w])
    share, seen, anyone = prior.features(lemma, pos, substitute)
    assert share == written[substitute] / tokens and seen > 0 and anyone == 1.0


def test_pair_prior_counts_and_bad_files(tmp_path: Path) -> None:
    prior = PairPrior.count([("film", "n", [("movie", 3), ("picture", 1), ("motion picture", 2)]),
                             ("film", "n", [("movie", 2)])])
    assert prior.features("film", "n", "movie") == (2.5, pytest.approx(np.log2(3)), 1.0)
    assert prior.features("film", "n", "picture")[0] == 0.5
    assert prior.features("film", "n", "motion picture") == (0.0, pytest.approx(np.log2(3)), 0.0)
    assert prior.features("book", "n", "novel") == (0.0, 0.0, 0.0)
    path = tmp_path / "p.json.gz"
    prior.save(path)
    assert load_pair_prior(path).entries == prior.entries
    with gzip.open(path, "wt") as handle:
        handle.write('{"format": "other"}')
    with pytest.raises(ConfigError, match="not a pair prior"):
        load_pair_prior(path)
    with pytest.raises(ConfigError, match="Cannot read the pair prior"):
        load_pair_prior(tmp_path / "missing.json.gz")


def test_a_substitute_that_is_not_one_word_gets_a_verdict_of_zero() -> None:
    (verdict,) = light_source().judge_pairs(Text.from_string("The film"), [(1, "ex-")])
    assert verdict.reason == "not one word" and verdict.probability == 0.0
