"""The two-stage judge's second stage (issue 39): Gemma only inside the band, stub models."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from textrobust.attack.candidates.judge import FEATURES
from textrobust.attack.candidates.second_judge import SECOND_FEATURES, SecondJudge, staged_keep
from textrobust.errors import ConfigError

DELTA = SECOND_FEATURES.index("lm_delta")


class CountingLM:
    """Log-probability by a fixed table (unknown sentences -1.0); counts calls and sentences."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table, self.calls, self.sentences = table, 0, 0

    def sentence_log_prob(self, texts: Sequence[str]) -> list[float]:
        self.calls += 1
        self.sentences += len(texts)
        return [self.table.get(t, -1.0) for t in texts]


def lm_judge(band: tuple[float, float] = (0.35, 0.65)) -> SecondJudge:
    """One stump on the LM delta: a drop of more than 3 nats gives P 0.12, else 0.88."""
    tree = ((DELTA, -3.0, 1, 2, 0.0), (-1, 0.0, 0, 0, -2.0), (-1, 0.0, 0, 0, 2.0))
    return SecondJudge((tree,), 0.0, band, 0.5, {"note": "test"})


ROW = [0.0] * len(FEATURES)


def test_second_stage_runs_only_inside_the_band() -> None:
    lm = CountingLM({})
    loads = []

    def factory() -> CountingLM:
        loads.append(1)
        return lm

    pairs = [("a b", "a c")] * 4
    result = staged_keep(lm_judge(), [0.9, 0.1, 0.65, 0.34], [ROW] * 4, pairs, factory)
    assert loads == [] and lm.calls == 0
    assert result.keep == (True, False, True, False) and result.asked == 0
    result = staged_keep(lm_judge(), [0.9, 0.5, 0.4, 0.1], [ROW] * 4,
                         [("x y", "x z"), ("x y", "x w"), ("p q", "p r"), ("x y", "x v")], factory)
    assert loads == [1] and lm.calls == 1
    # two candidates asked: their two originals once each, plus the two substituted sentences
    assert result.asked == 2 and result.lm_sentences == 4 and lm.sentences == 4


def test_a_sentence_it_must_reject_and_one_it_must_keep() -> None:
    lm = CountingLM({"hardly enough time": -20.0, "just enough time": -26.0,
                     "the film is great": -12.0, "the movie is great": -12.5})
    pairs = [("hardly enough time", "just enough time"), ("the film is great", "the movie is great")]
    result = staged_keep(lm_judge(), [0.5, 0.5], [ROW, ROW], pairs, lambda: lm)
    assert result.keep == (False, True)
    assert result.probability[0] == pytest.approx(1 / (1 + np.exp(2.0)))
    assert result.probability[1] == pytest.approx(1 / (1 + np.exp(-2.0)))


def test_stored_second_judge_gives_scikit_learns_probabilities(tmp_path: Path) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier  # type: ignore[import-untyped]

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, len(SECOND_FEATURES)))
    y = (x[:, DELTA] + 0.5 * x[:, 0] + rng.normal(scale=0.5, size=300) > 0).astype(int)
    model = HistGradientBoostingClassifier(max_iter=30, max_leaf_nodes=6, random_state=0).fit(x, y)
    judge = SecondJudge.from_sklearn(model, (0.3, 0.7), 0.5, {"trained_on": "noise"})
    assert np.max(np.abs(judge.probability(x) - model.predict_proba(x)[:, 1])) < 1e-9
    path = tmp_path / "second.json"
    path.write_text(json.dumps(judge.to_dict()), encoding="utf-8")
    loaded = SecondJudge.load(path)
    assert loaded.version == judge.version
    assert np.allclose(loaded.probability(x), judge.probability(x))


def test_version_follows_band_and_threshold() -> None:
    a, b = lm_judge((0.35, 0.65)), lm_judge((0.3, 0.7))
    assert a.version != b.version
    assert a.version == lm_judge((0.35, 0.65)).version


def test_bad_files_and_bands_raise_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="band"):
        lm_judge((0.7, 0.3))
    bad = tmp_path / "judge.json"
    bad.write_text(json.dumps({"format": "textrobust-judge"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a second judge"):
        SecondJudge.load(bad)
    with pytest.raises(ConfigError, match="one row"):
        staged_keep(lm_judge(), [0.5], [], [], lambda: CountingLM({}))


# ---- inside the validated source (tiny fakes of tests/test_validity.py) ----------------------


def staged_source(judge: Any, lm: CountingLM, second: SecondJudge | None = None, **settings: Any) -> Any:
    from test_validated_checks import FakeScorer
    from test_validity import _VEC, DictTagger, FakeMaskedLM

    from textrobust.attack.candidates import DictLexicon, ValidatedSynonyms
    from textrobust.attack.candidates.polarity import PolarityLexicon
    from textrobust.embeddings import WordVectors

    lexicon = DictLexicon(synonyms={("film", "n"): ["film", "movie", "picture"]})
    return ValidatedSynonyms(
        lexicon=lexicon, tagger=DictTagger(),
        vectors=WordVectors(list(_VEC), np.array(list(_VEC.values()), dtype=float), name="tiny"),
        fill_in=FakeMaskedLM(), polarity=PolarityLexicon({}), lm=lm, scorer=FakeScorer(), judge=judge,
        second_model=second or lm_judge(), verdict_cache=False,
        **{"min_judge": 0.5, "min_lm_delta": None, "min_zipf": 0.0, "min_cos": 0.5, "allow_unscored": False,
           "require_wordnet": True, **settings},
    )


def unsure_judge() -> Any:
    """A first judge that is never sure: P = 0.5 for every candidate (inside the band)."""
    from textrobust.attack.candidates.judge import TrainedJudge

    n = len(FEATURES)
    return TrainedJudge((0.0,) * n, (1.0,) * n, (0.0,) * n, 0.0, {})


def test_the_source_asks_the_lm_only_when_the_first_judge_is_unsure() -> None:
    from test_validated_checks import reverse_judge

    from textrobust.text import Text

    sure = CountingLM({})
    source = staged_source(reverse_judge(), sure, second_judge=True)
    assert [s.word for s in source.candidates(Text.from_string("The good film"), [2])[2]] == ["movie"]
    assert sure.calls == 0  # movie at 0.95, picture at 0.02: outside the band, no LM
    table = {"The good film": -10.0, "The good movie": -10.5, "The good picture": -16.0}
    unsure = CountingLM(table)
    source = staged_source(unsure_judge(), unsure, second_judge=True)
    # inside the band the LM decides: picture loses 6 nats (rejected), movie 0.5 (kept)
    assert [s.word for s in source.candidates(Text.from_string("The good film"), [2])[2]] == ["movie"]
    assert unsure.calls == 1 and unsure.sentences == 3  # one batch: the original once, two substitutes
    (picture,) = source.evidence(Text.from_string("The good film"), 2, "picture")
    assert picture.reason == "judge" and picture.judge is not None and picture.judge < 0.5
    off = CountingLM(table)
    plain = staged_source(unsure_judge(), off)
    assert [s.word for s in plain.candidates(Text.from_string("The good film"), [2])[2]] == ["movie", "picture"]
    assert off.calls == 0


def test_the_fingerprint_changes_when_the_second_judge_is_on() -> None:
    lm = CountingLM({})
    off = staged_source(unsure_judge(), lm)
    on = staged_source(unsure_judge(), lm, second_judge=True)
    assert off.fingerprint() != on.fingerprint()
    assert off.fingerprint() == staged_source(unsure_judge(), lm, lm_judge((0.3, 0.7))).fingerprint()
    other = staged_source(unsure_judge(), lm, lm_judge((0.3, 0.7)), second_judge=True)
    assert other.fingerprint() != on.fingerprint()


def test_the_shipped_second_judge_loads_with_its_dev_chosen_band() -> None:
    from textrobust.attack.candidates.second_judge import default_second_judge_path

    judge = SecondJudge.load(default_second_judge_path())
    assert list(judge.band) == judge.record["band"] and judge.threshold == judge.record["second_threshold"]
    assert "dev half" in judge.record["trained_on"]
    rows = np.zeros((2, len(SECOND_FEATURES)))
    rows[0, DELTA], rows[1, DELTA] = -8.0, 0.0  # a large drop of fluency reads as less valid
    low, high = judge.probability(rows)
    assert 0.0 < low < high < 1.0
