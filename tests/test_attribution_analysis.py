"""The attribution-robustness analysis (Ivankay et al.): k, AUC_k, grammar checker, section."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from textrobust.analyses import ANALYSES
from textrobust.analyses.attribution.analysis import AttributionAnalysis
from textrobust.analyses.attribution.grammar import score_checker
from textrobust.analyses.attribution.grammar_pairs import GRAMMAR_PAIRS
from textrobust.analyses.attribution.records import AttributionRecord
from textrobust.analyses.attribution.robustness import auc, lipschitz_k, mean_std, relative_increase
from textrobust.analyses.attribution.section import attribution_map_svg
from textrobust.analyses.attribution.text_distances import TextDistances, relative_perplexity, semantic_distance
from textrobust.attack.testing import StaticCandidates
from textrobust.attribution.testing import planted_victim
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.records import decode, encode
from textrobust.text import Text
from textrobust.victims import QueryLayer

pytest.importorskip("captum")

SCORES = {"good": 1.0, "film": 0.5, "plot": -0.7, "story": 0.3, "acting": 0.6}
TABLE = {"film": ["picture", "movie"], "good": ["awful", "great"], "plot": ["storyline"], "acting": ["cast"]}
TEF_TABLE = {"film": ["picture"], "good": ["great"], "plot": ["storyline"]}


# ---- k, AUC, distances ------------------------------------------------------------------------------
def test_k_is_never_computed_when_the_prediction_changed() -> None:
    assert lipschitz_k(0.9, 0.1, prediction_kept=False, changed_words=2) is None
    assert lipschitz_k(0.9, 0.1, prediction_kept=True, changed_words=2) == pytest.approx(9.0)
    assert lipschitz_k(0.0, 0.0, prediction_kept=True, changed_words=0) == 0.0  # nothing moved
    assert lipschitz_k(0.4, 0.0, prediction_kept=True, changed_words=1) is None  # d_s = 0: undefined
    assert lipschitz_k(0.4, None, prediction_kept=True, changed_words=1) is None  # scorer absent
    # Eq. 2 divides by a distance: a relative perplexity that fell (Eq. 6 < 0) gives no k, never a negative one
    assert lipschitz_k(0.4, -0.5, prediction_kept=True, changed_words=1) is None


def test_text_distances_follow_eq_5_and_6() -> None:
    assert semantic_distance(1.0) == 0.0 and semantic_distance(-1.0) == 1.0
    assert semantic_distance(0.8) == pytest.approx(0.1)
    assert relative_perplexity(40.0, 60.0) == pytest.approx(0.5, rel=1e-6)


def test_auc_mean_and_relative_increase() -> None:
    assert auc([0.1, 0.2, 0.4], [1.0, 3.0, 3.0]) == pytest.approx(0.1 * 2 + 0.2 * 3)
    assert math.isnan(auc([0.1], [1.0])) and math.isnan(auc([0.1, 0.2], [1.0, math.nan]))
    assert mean_std([1.0, None, 3.0]) == (2.0, 1.0, 2)
    assert math.isnan(mean_std([None])[0])
    assert relative_increase(1.5, 1.0) == pytest.approx(0.5)
    assert math.isnan(relative_increase(1.0, 0.0))


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="'rhos'"):
        AttributionAnalysis({"rhos": (0.0, 0.2)})
    with pytest.raises(ConfigError, match="'attribution'"):
        AttributionAnalysis({"attribution": "lime"})
    with pytest.raises(ConfigError, match="'attacks'"):
        AttributionAnalysis({"attacks": ("tea", "tea")})
    assert AttributionAnalysis({"rhos": (0.3, 0.1)}).settings.rhos == (0.1, 0.3)
    assert "attribution" in ANALYSES.names()


# ---- grammar checker --------------------------------------------------------------------------------
def test_link_grammar_separates_the_hand_made_pairs() -> None:
    pytest.importorskip("linkgrammar")
    from textrobust.analyses.attribution.grammar import LinkGrammarErrors

    assert len(GRAMMAR_PAIRS) == 40
    checker = LinkGrammarErrors()
    assert checker.errors(["the film is beautiful .", "a a the of movie good"]).tolist() == [0.0, 4.0]
    score = score_checker("link-grammar", checker.errors)
    # measured: pair accuracy 0.675, sentence accuracy 0.825 (benchmarks/results/attribution.md)
    assert score.pair_accuracy >= 0.6 and score.sentence_accuracy >= 0.75


# ---- the analysis end to end on a planted victim ----------------------------------------------------
class Words:
    """A toy sentence encoder: word counts over a fixed vocabulary."""

    vocab = ["good", "film", "plot", "story", "acting", "movie", "picture", "great", "storyline", "cast", "awful"]

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[t.lower().split().count(w) + 0.1 for w in self.vocab] for t in texts], dtype=float)


@pytest.fixture(scope="module")
def run() -> tuple[AttributionAnalysis, list[AttributionRecord]]:
    from textrobust.similarity import EncoderCosine

    layer = QueryLayer(planted_victim(SCORES, "movie", flip="awful"))
    analysis = AttributionAnalysis({"attribution": "occlusion", "rhos": (0.1, 0.2, 0.4), "n": 2,
                                    "perplexity": False, "grammar": False})
    analyse = analysis.worker_with(layer, {"tea": StaticCandidates(TABLE), "tef": StaticCandidates(TEF_TABLE)},
                                   TextDistances(EncoderCosine(Words())), stop_words={"a", "the", "with", "and"})
    examples = [Example("e1", Text.from_string("good film with a plot and a story"), 1),
                Example("e2", Text.from_string("the acting and the film"), 0)]
    return analysis, [analyse(e) for e in examples]


def test_records_keep_predictions_and_compute_k(run: tuple[AttributionAnalysis, list[AttributionRecord]]) -> None:
    _, records = run
    first = records[0]
    assert first.prediction == 1 and len(first.runs) == 6  # 2 attacks x 3 rhos
    tea_top = [r for r in first.runs if r.attack == "tea" and r.rho_max == 0.4][0]
    assert "movie" in tea_top.perturbed.words and tea_top.pcc < 0.0  # the planted flip was found
    assert all(r.prediction_kept for r in first.runs)
    for r in first.runs:
        if r.changed:
            assert r.k_semantic == pytest.approx(r.attribution_distance / r.semantic_distance)
        assert r.k_perplexity is None and r.perplexity is None  # Gemma not asked for: absent, no crash
    assert records[1].label == 0 and records[1].prediction == 1  # the predicted class is explained
    again = decode(AttributionRecord, encode(first))
    assert again.runs[0].perturbed == first.runs[0].perturbed and again.original == first.original


class FakePerplexity:
    """A causal LM whose perplexity is known in closed form: 20, minus 5 for each of
    "movie", "picture", "great" (more fluent), plus 10 for each of "storyline", "cast"."""

    def perplexity(self, texts: list[str]) -> list[float]:
        def one(text: str) -> float:
            words = text.lower().split()
            return 20.0 - 5.0 * sum(words.count(w) for w in ("movie", "picture", "great")) \
                + 10.0 * sum(words.count(w) for w in ("storyline", "cast"))

        return [one(t) for t in texts]


def test_k_pp_follows_eq_2_and_6_and_is_never_negative() -> None:
    """k_PP = d_attr / ((PP' - PP) / (PP + eps)) where the perplexity rose; where it fell
    (TEA's fill-in often lowers it) k_PP is undefined, left out of the mean and of AUC_k,
    and counted; the old code averaged in the negative ratios."""
    from textrobust.analyses.attribution.text_distances import EPSILON
    from textrobust.similarity import EncoderCosine

    layer = QueryLayer(planted_victim(SCORES, "movie", flip="awful"))
    analysis = AttributionAnalysis({"attribution": "occlusion", "rhos": (0.2, 0.4), "n": 2, "grammar": False})
    analyse = analysis.worker_with(layer, {"tea": StaticCandidates(TABLE), "tef": StaticCandidates(TEF_TABLE)},
                                   TextDistances(EncoderCosine(Words()), FakePerplexity()),
                                   stop_words={"a", "the", "with", "and"})
    examples = [Example("e1", Text.from_string("good film with a plot and a story"), 1),
                Example("e2", Text.from_string("the acting and the film"), 0)]
    records = [analyse(e) for e in examples]
    lm = FakePerplexity()
    runs = [(r, run) for r in records for run in r.runs if run.changed and run.prediction_kept]
    fell = [run for _, run in runs if run.relative_perplexity <= 0]
    rose = [run for _, run in runs if run.relative_perplexity > 0]
    assert rose and any(run.relative_perplexity < 0 for run in fell)  # the fixture exercises both signs
    for record, run in runs:
        before, after = lm.perplexity([str(record.original), str(run.perturbed)])
        assert run.relative_perplexity == pytest.approx((after - before) / (before + EPSILON))  # Eq. 6
        if run.relative_perplexity > 0:
            assert run.k_perplexity == pytest.approx(run.attribution_distance / run.relative_perplexity)  # Eq. 2
        else:
            assert run.k_perplexity is None
    summary = analysis.summarise(records, [])
    for point in summary.points:
        kept = [run for r in records for run in r.runs
                if run.attack == point.attack and run.rho_max == point.rho_max and run.prediction_kept]
        defined = [run.attribution_distance / run.relative_perplexity for run in kept
                   if run.changed and run.relative_perplexity > 0] + [0.0 for run in kept if not run.changed]
        assert point.k_perplexity_n == len(defined)
        assert point.k_perplexity_undefined == sum(1 for run in kept if run.changed and run.relative_perplexity <= 0)
        if defined:
            assert point.k_perplexity_mean == pytest.approx(float(np.mean(defined)))
            assert point.k_perplexity_mean >= 0.0
    assert sum(p.k_perplexity_undefined for p in summary.points) == len(fell)
    for row in summary.aucs:
        assert math.isnan(row.auc_k_perplexity) or row.auc_k_perplexity >= 0.0
    # a record stored by the old code (negative k_PP) is summarised by the same rule
    import dataclasses

    old = [dataclasses.replace(r, runs=tuple(dataclasses.replace(
        run, k_perplexity=None if run.relative_perplexity is None or not run.changed
        or abs(run.relative_perplexity) < 1e-12 else run.attribution_distance / run.relative_perplexity)
        for run in r.runs)) for r in records]
    assert analysis.summarise(old, []).points == summary.points
    section = analysis.section(summary, records, [], ["neg", "pos"]).to_dict()
    assert any(h["label"].startswith("perturbed texts without k_PP") and h["value"] == len(fell)
               for h in section["headline"])


def test_summary_and_section_validate(run: tuple[AttributionAnalysis, list[AttributionRecord]]) -> None:
    from textrobust.report.testing import validate_section

    analysis, records = run
    summary = analysis.summarise(records, [])
    assert summary.prediction_changed == 0 and summary.units == 2
    assert [(p.attack, p.rho_max) for p in summary.points][:3] == [("tea", 0.1), ("tea", 0.2), ("tea", 0.4)]
    tea = [a for a in summary.aucs if a.attack == "tea"][0]
    assert math.isfinite(tea.auc_k_semantic) and tea.auc_k_semantic > 0
    assert summary.to_dict()["aucs"][0]["attack"] == "tea"
    section = analysis.section(summary, records, [], ["neg", "pos"]).to_dict()
    assert any(f["title"].startswith("Attribution map") for f in section["figures"])
    validate_section(analysis, section, units=2)
    assert all(h["note"] for h in section["headline"])  # issue 27: every figure says what it means
    assert "PCC: Pearson correlation" in section["tables"][0]["note"]


def test_attribution_map_is_an_svg_without_raw_text_markup() -> None:
    text = Text.from_string("good <script>alert(1)</script> film")
    svg = attribution_map_svg([("original", text, [1.0] * len(text), [0])], title="t")
    assert svg.startswith("<?xml") and "<script" not in svg  # words are drawn as paths


def test_cli_options_are_checked_before_any_work() -> None:
    from typer.testing import CliRunner

    from textrobust.cli.app import app

    runner = CliRunner()
    result = runner.invoke(app, ["attribution", "--help"], terminal_width=200)
    assert result.exit_code == 0 and "--rhos" in result.output and "--fill-in" in result.output
    bad = runner.invoke(app, ["attribution", "--rhos", "0.1,abc"], terminal_width=200)
    assert bad.exit_code == 2 and "--rhos" in bad.output
    bad = runner.invoke(app, ["attribution", "--attribution", "lime"], terminal_width=200)
    assert bad.exit_code == 2 and "attribution" in bad.output


def test_a_missing_language_model_is_recorded_as_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.errors import AssetMissingError
    from textrobust.lm import CausalLM

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise AssetMissingError("causal_lm", ["~/.cache/textrobust/causal_lm"], "pip install the lm extra")

    monkeypatch.setattr(CausalLM, "default", classmethod(lambda cls, *a, **k: missing()))
    distances = TextDistances.default(semantic=False, grammar=False)
    assert distances.lm is None and "perplexity" in distances.absent[0]
    first, rest = distances.score("a film", ["a movie"])
    assert first.perplexity == [None] and rest.perplexity == [None] and rest.similarity == [None]


def test_content_words_drops_stop_word_candidates() -> None:
    from textrobust.attack.candidates import ContentWords

    source = ContentWords(StaticCandidates({"film": ["the", "movie", "and", "picture", "show"]}), 2,
                          frozenset({"the", "and"}))
    found = source.candidates(Text.from_string("a film"), [1])
    assert [s.word for s in found[1]] == ["movie", "picture"]


def _sklearn_victim() -> Any:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from textrobust.victims import SklearnVictim

    pipe = make_pipeline(CountVectorizer(), LogisticRegression())
    pipe.fit(["good film", "great plot", "bad film", "awful plot", "good story", "dull acting"] * 3,
             ["pos", "pos", "neg", "neg", "pos", "neg"] * 3)
    return SklearnVictim(pipe, ("neg", "pos"))


def _torch_victim() -> Any:
    from textrobust.attribution.testing import linear_victim

    emb = {"good": [1.0, 0.2], "film": [0.3, -0.4], "plot": [-0.5, 0.1], "story": [0.2, 0.9], "acting": [0.7, 0.7],
           "movie": [-0.9, 0.4], "picture": [0.1, 0.1], "great": [1.2, 0.0], "storyline": [-0.4, 0.3], "cast": [0.6, 0.5]}
    return linear_victim(emb, [[0.5, -1.0], [-0.5, 1.0]])


@pytest.mark.parametrize("kind", ["sklearn", "torch", "function"])
def test_every_victim_kind_can_be_analysed(kind: str) -> None:
    victim = {"sklearn": _sklearn_victim, "torch": _torch_victim,
              "function": lambda: planted_victim(SCORES, "movie")}[kind]()
    # saliency of a linear model is the same for every word (no ranking to move): IG instead
    method = "integrated_gradients" if kind == "torch" else "auto"
    analysis = AttributionAnalysis({"rhos": (0.2, 0.4), "perplexity": False, "grammar": False, "semantic": False,
                                    "attribution": method, "ig_steps": 4})
    analyse = analysis.worker_with(QueryLayer(victim), {"tea": StaticCandidates(TABLE), "tef": StaticCandidates(TEF_TABLE)},
                                   TextDistances(), stop_words={"a", "the", "with", "and"})
    record = analyse(Example("x", Text.from_string("good film with a plot and a story and some acting"), 1))
    assert record.method == ("integrated_gradients" if kind == "torch" else "occlusion")
    assert len(record.runs) == 4 and all(r.prediction_kept for r in record.runs)
    assert any(r.changed > 0 for r in record.runs)
    assert all(r.k_semantic is None or r.changed == 0 for r in record.runs)  # no semantic scorer: k absent
    summary = analysis.summarise([record], [])
    assert summary.units == 1 and summary.prediction_changed == 0


def test_a_hugging_face_folder_can_be_analysed(tmp_path: Any) -> None:
    from textrobust.attribution.testing import tiny_bert_victim

    victim = tiny_bert_victim(tmp_path)
    analysis = AttributionAnalysis({"rhos": (0.4,), "perplexity": False, "grammar": False, "semantic": False,
                                    "attribution": "attention", "attacks": ("tea",)})
    analyse = analysis.worker_with(QueryLayer(victim), {"tea": StaticCandidates(TABLE)}, TextDistances(),
                                   stop_words={"a", "the", "with", "and"})
    record = analyse(Example("x", Text.from_string("good film with a plot and a story"), 1))
    assert record.method == "attention" and len(record.original_attribution) == 8
    assert all(r.prediction_kept for r in record.runs)


def test_tea_fill_in_is_named_in_the_settings_and_checked() -> None:
    from textrobust.fill_in import DEFAULT_FILL_IN

    analysis = AttributionAnalysis({"n": 1})
    assert analysis.settings.fill_in == DEFAULT_FILL_IN
    assert analysis.describe()["settings"]["fill_in"] == DEFAULT_FILL_IN  # stored with the run, shown in the report
    assert AttributionAnalysis({"fill_in": None}).settings.fill_in == DEFAULT_FILL_IN
    assert AttributionAnalysis({"fill_in": "minilm_tuned"}).describe()["settings"]["fill_in"] == "minilm_tuned"
    with pytest.raises(ConfigError, match="'fill_in' parameter of AttributionSettings"):
        AttributionAnalysis({"fill_in": "no_such_model"})
    # TEF alone asks no fill-in: its name is not checked
    assert AttributionAnalysis({"attacks": ["tef"], "fill_in": "no_such_model"}).settings.attacks == ("tef",)
