"""Constraint robustness (Morris 2020): ACCS, the fool-the-constraint goal, the sweeps and
their caches, the monotone shortcut, the analysis on the audit's store, the CLI.

Fast tests build dictionary candidate sources, a word-list victim and a closed-form
similarity scorer here; tests marked heavy use real WordNet, spaCy and Gemma.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from textrobust.analyses.accs import (
    AccsAnalysis,
    AccsAnalysisSettings,
    AccsComponents,
    AccsRecord,
    accs,
    accs_tasks,
    analyse_task,
    bootstrap_accs,
    curve_area,
    curves,
    epsilon_grid,
    monotone_search,
    normalised_area,
    shortcut_distance,
)
from textrobust.attack.constraints.left_context_lm import LeftContextWordDrop, left_context
from textrobust.analyses.accs.scorers import SimilarityMemo, parse_constraint_model
from textrobust.analyses.accs.sweep import PointResult, sweep_thresholds
from textrobust.attack.goals_constraint import FoolConstraint, compared_string
from textrobust.attack.problem import Proposal, Substitution
from textrobust.data.examples import Dataset, Example
from textrobust.errors import AssetMissingError, ConfigError
from textrobust.records import decode, encode
from textrobust.text import Text
from textrobust.victims.query import QueryLayer
from textrobust.victims.testing import WordListVictim

# ---- fixtures built here -------------------------------------------------------------------------
SYNONYMS = {"good": ["decent", "poor"], "fine": ["okay", "dull"], "great": ["big", "awful"], "film": ["movie"],
            "actors": ["cast"], "story": ["tale", "plot"], "funny": ["comic", "silly"]}
ANTONYMS = {"good": ["bad"], "fine": ["coarse"], "great": ["small"], "funny": ["serious"], "story": ["truth"]}
# the similarity cost of putting a word in (closed form, so every score is known)
COST = {"decent": 0.02, "poor": 0.08, "okay": 0.03, "dull": 0.12, "big": 0.05, "awful": 0.15, "movie": 0.01,
        "cast": 0.02, "tale": 0.02, "plot": 0.06, "comic": 0.03, "silly": 0.09, "bad": 0.04, "coarse": 0.05,
        "small": 0.03, "serious": 0.07, "truth": 0.04}
STOP = {"the", "a", "was", "and", "were", "is", "it", "with"}


class DictSource:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls = 0

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        self.calls += 1
        return {p: [Substitution(p, w) for w in self.table.get(text.words[p].lower(), [])] for p in positions}

    def __repr__(self) -> str:  # stable: the run configuration stores it and resuming compares it
        return f"DictSource({sorted(self.table)})"


class CostScorer:
    """1 - sum of the costs of the words that differ (texts of equal length)."""

    def __init__(self) -> None:
        self.pairs = 0

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        self.pairs += len(a)
        out = []
        for x, y in zip(a, b):
            tx, ty = Text.from_string(x), Text.from_string(y)
            out.append(1.0 - sum(COST.get(ty.words[p], 0.5) for p in tx.diff(ty)))
        return np.array(out)


class Always:
    def __init__(self, value: float = 1.0) -> None:
        self.value = value

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return np.full(len(a), self.value)


class RejectWords:
    """A stand-in LM constraint: rejects some words, counts the proposals it judged."""

    def __init__(self, words: set[str]) -> None:
        self.words = words
        self.judged = 0

    def check(self, original: Text, proposals: Sequence[Proposal]) -> np.ndarray:
        self.judged += len(proposals)
        return np.array([p.word not in self.words for p in proposals], dtype=bool)

    def __repr__(self) -> str:
        return f"RejectWords({sorted(self.words)})"


SENTENCES = [
    "the good film was fine and the actors were great",
    "a funny story with good actors",
    "the story was dull and the film was poor",  # the victim gets it wrong (label positive)
    "it is a great and funny film",
]


def examples() -> list[Example]:
    return [Example(f"e{i}", Text.from_string(s), 1) for i, s in enumerate(SENTENCES)]


def victim() -> WordListVictim:
    return WordListVictim(["good", "fine", "great", "funny", "superb"], ["bad", "poor", "awful", "dull", "silly"])


def components(settings: AccsAnalysisSettings, lm: RejectWords | None = None) -> AccsComponents:
    return AccsComponents(
        settings,
        synonyms=DictSource(SYNONYMS),
        antonyms=DictSource(ANTONYMS),
        stop_words=STOP,
        lm_constraint=lm if lm is not None else RejectWords({"coarse"}),
    )


GRID = epsilon_grid(0.75, 1.0, 0.01)


# ---- ACCS ------------------------------------------------------------------------------------------
def test_paper_toy_curve_gives_accs_one_half() -> None:
    # Figure 2: a straight line to the maxima (0.3 second-order, 0.7 first-order), area 0.105.
    assert normalised_area(0.105, 0.7, 0.3) == 0.5
    assert math.isclose(curve_area([0.3], [0.7], interpolation="trapezoid"), 0.105)
    assert accs([0.3], [0.7], interpolation="trapezoid") == 0.5
    t = np.linspace(0.0, 1.0, 1001)[1:]
    fp, tp = 0.3 * t, 0.7 * t
    assert math.isclose(curve_area(fp, tp, interpolation="trapezoid"), 0.105, abs_tol=1e-12)
    assert math.isclose(accs(fp, tp, interpolation="trapezoid"), 0.5, abs_tol=1e-9)
    # the pessimistic (default) reading is a staircase under the line: 0.5 * (1 - 1/1000)
    assert math.isclose(accs(fp, tp), 0.5 * (1 - 1 / 1000), abs_tol=1e-9)


def test_accs_orders_points_and_handles_degenerate_curves() -> None:
    # a good constraint: first-order successes come long before second-order ones
    good = accs([0.0, 0.0, 0.1, 0.3], [0.2, 0.6, 0.7, 0.7])
    bad = accs([0.1, 0.3, 0.3, 0.3], [0.0, 0.0, 0.3, 0.7])
    assert good > 0.9 and bad < 0.1
    assert accs([0.3, 0.0, 0.1, 0.0], [0.7, 0.6, 0.7, 0.2]) == good  # threshold order does not matter
    assert math.isnan(accs([0.1, 0.2], [0.0, 0.0]))  # no first-order success: undefined
    assert accs([0.0, 0.0], [0.1, 0.4]) == 1.0  # never fooled
    with pytest.raises(ConfigError, match="interpolation"):
        accs([0.1], [0.2], interpolation="cubic")
    with pytest.raises(ConfigError, match="one first-order rate"):
        curve_area([0.1, 0.2], [0.3])


def test_epsilon_grid_matches_the_paper() -> None:
    grid = epsilon_grid()
    assert len(grid) == 26 and grid[0] == 0.75 and grid[-1] == 1.0 and grid[1] == 0.76
    assert epsilon_grid(0.5, 1.0, 0.02)[-1] == 1.0 and len(epsilon_grid(0.5, 1.0, 0.02)) == 26
    with pytest.raises(ConfigError, match="step"):
        epsilon_grid(0.5, 1.0, 0.0)
    with pytest.raises(ConfigError, match="start <= stop"):
        epsilon_grid(0.9, 0.8, 0.01)


# ---- the goal ---------------------------------------------------------------------------------------
def test_fool_constraint_needs_gamma_swaps_and_similarity() -> None:
    original = Text.from_string("the good film was fine and great")
    goal = FoolConstraint(original, CostScorer(), epsilon=0.85, gamma=3)
    two = original.replace({1: "bad", 4: "coarse"})
    three = original.replace({1: "bad", 4: "coarse", 6: "small"})
    costly = original.replace({1: "bad", 4: "coarse", 2: "zzz"})  # unknown word costs 0.5
    found = goal.evaluate([original, two, three, costly])
    assert found.success.tolist() == [False, False, True, False]
    np.testing.assert_allclose(found.outputs[:, 0], [1.0, 0.91, 0.88, 0.41])
    np.testing.assert_array_equal(found.outputs[:, 1], [0, 2, 3, 3])
    # the released code's score: 0 below epsilon, else swaps + similarity
    np.testing.assert_allclose(found.scores, [1.0, 2.91, 3.88, 0.0])
    with pytest.raises(ConfigError, match="gamma"):
        FoolConstraint(original, CostScorer(), epsilon=0.9, gamma=0)


def test_compared_string_is_the_modifiable_column() -> None:
    pair = Text.from_pair("A man sleeps.", "A person rests.")
    assert compared_string(pair, pair) == "A person rests."
    assert compared_string(Text.from_string("one two"), Text.from_string("one two")) == "one two"


# ---- sweeps and caches ----------------------------------------------------------------------------
def test_exact_sweep_with_shared_caches_equals_independent_runs() -> None:
    settings = AccsAnalysisSettings()
    shared_lm = RejectWords({"coarse"})
    shared = components(settings, shared_lm)
    shared_scorer = CostScorer()
    memo = SimilarityMemo(shared_scorer)
    layer = QueryLayer(victim())
    swept_first, swept_second = {}, {}
    for example in examples():
        shared.warm(example.text)
        swept_first[example.id] = shared.sweep_first_order(layer, memo, example)
        swept_second[example.id] = shared.sweep_second_order(memo, example)

    independent_pairs = independent_queries = 0
    for example in examples():
        for i, eps in enumerate(GRID):
            fresh = components(settings)  # new sources, LM, memo, query layer: nothing shared
            scorer = CostScorer()
            fresh_layer = QueryLayer(victim())
            first = fresh.first_order_point(fresh_layer, SimilarityMemo(scorer), example, eps)
            second = fresh.second_order_point(SimilarityMemo(scorer), example, eps)
            independent_pairs += scorer.pairs
            independent_queries += fresh_layer.queries
            for got, want in ((swept_first[example.id][i], first), (swept_second[example.id][i], second)):
                assert (got.success, got.status, got.perturbed, got.swapped) == (
                    want.success, want.status, want.perturbed, want.swapped)
                assert got.similarity == pytest.approx(want.similarity)
    # the curve is not trivial, and the caches did their job
    first_rates = [np.mean([swept_first[e.id][i].success for e in examples()]) for i in range(len(GRID))]
    second_rates = [np.mean([swept_second[e.id][i].success for e in examples()]) for i in range(len(GRID))]
    assert 0 < max(first_rates) < 1 and 0 < max(second_rates) < 1
    assert min(first_rates) == 0 and min(second_rates) == 0
    assert shared_scorer.pairs * 10 < independent_pairs
    assert layer.queries * 10 < independent_queries
    assert any(p.status == "skipped" for p in swept_first["e2"])  # the victim was already wrong


def test_second_order_swaps_real_antonyms_under_the_lm_constraint() -> None:
    settings = AccsAnalysisSettings(eps_start=0.8, eps_stop=0.9, eps_step=0.1)
    comp = components(settings, RejectWords({"coarse"}))
    example = examples()[0]
    point = comp.second_order_point(SimilarityMemo(CostScorer()), example, 0.8)
    # coarse is rejected by the LM stand-in, so only good->bad and great->small remain: 2 < gamma
    assert not point.success and point.swapped == 2
    permissive = components(settings, RejectWords(set()))
    found = permissive.second_order_point(SimilarityMemo(CostScorer()), example, 0.8)
    assert found.success and found.swapped == 3
    assert found.perturbed == "the bad film was coarse and the actors were small"
    assert found.similarity == pytest.approx(0.88)
    assert not permissive.second_order_point(SimilarityMemo(CostScorer()), example, 0.9).success


def test_monotone_shortcut_runs_few_thresholds_and_is_measured() -> None:
    k, visited = monotone_search(26, lambda i: i < 10)
    assert k == 10 and len(visited) <= 2 + math.ceil(math.log2(26))
    assert monotone_search(26, lambda i: False) == (0, (0,))
    assert monotone_search(26, lambda i: True) == (26, (0, 25))
    runs: list[float] = []

    def run_at(eps: float) -> PointResult:
        runs.append(eps)
        return PointResult(eps, success=eps < 0.9 or math.isclose(eps, 0.95))  # not monotone

    exact = sweep_thresholds(GRID, run_at, "exact")
    assert len(runs) == len(GRID)
    runs.clear()
    short = sweep_thresholds(GRID, run_at, "monotone")
    assert len(runs) < 8 and sum(p.ran for p in short) == len(runs)
    assert [p.success for p in short] != [p.success for p in exact]  # the shortcut misses eps=0.95
    assert [p.success for p in short] == [e < 0.9 for e in GRID]


def run_tasks(settings: AccsAnalysisSettings, scorers: dict[str, object], lm: RejectWords | None = None,
              exs: list[Example] | None = None) -> list[AccsRecord]:
    """Every task of an ACCS analysis on one worker, in the audit's order, without a store."""
    comp = components(settings, lm if lm is not None else RejectWords(set()))
    layer = QueryLayer(victim())
    memos = {name: SimilarityMemo(scorer) for name, scorer in scorers.items()}
    return [analyse_task(comp, layer, memos[task.constraint], task)
            for _, task in accs_tasks(exs if exs is not None else examples(), list(scorers))]


def test_always_similar_constraint_scores_zero_and_records_round_trip() -> None:
    records = run_tasks(AccsAnalysisSettings(), {"cost": CostScorer(), "always": Always(1.0)})
    assert [r.example_id for r in records[:4]] == ["second_order|cost|e0", "first_order|cost|e0",
                                                   "second_order|always|e0", "first_order|always|e0"]
    assert all(decode(AccsRecord, encode(r)) == r for r in records)  # the store keeps them exactly
    summary = AccsAnalysis().summarise(records, [])  # the default grid is GRID
    assert summary.units == 16 and summary.examples == 4 and summary.errors == 0
    always = summary.curves["always"]
    # a constraint that always says "similar": both rates flat at their maxima
    assert len(set(always.first_order)) == 1 and len(set(always.second_order)) == 1
    assert always.first_order[0] > 0 and always.second_order[0] > 0
    assert always.accs() == 0.0 and summary.accs["always"] == 0.0
    assert always.accs("trapezoid") == 0.5  # the released code's rule cannot tell it from the toy line
    cost = summary.curves["cost"]
    assert cost.accs() > always.accs()
    assert cost.first_attacked == 3 and cost.second_attacked == 4  # e2 is skipped for the victim only
    rows = {r.constraint: r for r in summary.rows}
    assert rows["always"].accs == 0.0 and rows["cost"].examples == 4
    assert summary.shortcut is not None and summary.shortcut.first_order.cells == 2 * 4 * len(GRID)
    assert {c.constraint for c in summary.shortcut.per_curve} == {"cost", "always"}
    assert [r.status for r in records if r.example == "e2" and r.kind == "first_order"] == ["skipped"] * 2
    empty = AccsAnalysis().summarise([], [])
    assert empty.rows == () and math.isnan(empty.lm_warm_seconds_per_example) and empty.bootstrap.examples == 0


def test_audit_runs_accs_on_its_victim_and_resumes(tmp_path: Path) -> None:
    from textrobust import audit

    data = Dataset("toy", tuple(examples()), ("negative", "positive"), split="test")
    # test doubles behind registered names: minilm -> the closed-form scorer, word_mean -> always similar
    doubles = {"minilm": CostScorer, "word_mean": lambda: Always(1.0)}
    settings = {"constraint": ["minilm", "word_mean"], "eps_start": 0.8, "eps_stop": 1.0, "eps_step": 0.05}

    def analysis() -> AccsAnalysis:
        return AccsAnalysis(settings, components=lambda method: components(method, RejectWords(set())),
                            scorers=lambda spec: doubles[spec]())

    first = audit.run(victim(), data, [analysis()], tmp_path, progress=False, report=False)
    result = first["accs"]
    assert result.computed == 16 and not result.failures
    expected = AccsAnalysis(settings).summarise(
        run_tasks(AccsAnalysisSettings(eps_start=0.8, eps_stop=1.0, eps_step=0.05),
                  {"minilm": CostScorer(), "word_mean": Always(1.0)}), [])
    assert result.summary.curves == expected.curves and result.summary.accs == expected.accs
    section = result.section.to_dict()
    assert section["risk"] is None and "ACCS" in section["point"]
    assert [h["label"] for h in section["headline"][:2]] == ["ACCS, minilm", "ACCS, word_mean"]
    assert section["figures"][0]["svg"].startswith("<?xml")
    assert any("bad" in "".join(e["perturbed"][i] for i in e["changed"]) for e in section["examples"])
    again = audit.run(victim(), data, [analysis()], tmp_path, progress=False, report=False, resume=True)
    assert again["accs"].computed == 0 and again["accs"].resumed == 16
    assert again["accs"].summary.curves == result.summary.curves
    stored = json.loads((tmp_path / "summary.json").read_text())["analyses"]["accs"]["summary"]
    assert stored["accs"]["word_mean"] == 0.0 and stored["curves"]["minilm"]["epsilons"][0] == 0.8


def test_section_marks_swapped_words_and_keeps_pairs() -> None:
    from textrobust.analyses.accs.report import accs_section, perturbed_text, staircase

    settings = AccsAnalysisSettings(eps_start=0.8, eps_stop=1.0, eps_step=0.1)
    records = run_tasks(settings, {"cost": CostScorer()})
    summary = AccsAnalysis(settings).summarise(records, [])
    section = accs_section(summary, records, ("negative", "positive")).to_dict()
    fooled = [e for e in section["examples"] if e["status"] == "fools the constraint"]
    assert fooled and ["bad", "coarse", "small"] == [fooled[0]["perturbed"][i] for i in fooled[0]["changed"]]
    flipped = [e for e in section["examples"] if e["status"] == "fools the victim"]
    assert flipped and flipped[0]["prediction_before"] == "positive" and flipped[0]["prediction_after"] == "negative"
    assert [t["title"] for t in section["tables"]][:2] == ["ACCS per constraint model", "seconds per sentence"]
    # issue 27: every figure says what it means, in a whole sentence ("1 = ..., 0 = ...")
    assert all(h["note"] for h in section["headline"])
    assert "1 = " in section["headline"][0]["note"] and "0 = both at once" in section["headline"][0]["note"]
    assert "max 1st" in section["tables"][0]["note"]
    pair = Text.from_pair("A good man.", "He sleeps.")
    assert perturbed_text(pair, "A bad man. He sleeps.").columns == ("A bad man.", "He sleeps.")
    xs, ys = staircase(summary.curves["cost"])
    assert xs[0] == ys[0] == 0.0 and ys == sorted(ys) and xs == sorted(xs)


def test_shortcut_distance_counts_non_monotone_cells() -> None:
    epsilons = (0.8, 0.9, 1.0)

    def record(kind: str, successes: list[bool]) -> AccsRecord:
        points = tuple(PointResult(e, s, seconds=1.0) for e, s in zip(epsilons, successes))
        return AccsRecord(f"{kind}|c|e", "failed", 0, 3.0, kind, "c", "e", 1, Text.from_string("x"), False, points)

    records = [record("first_order", [True, False, True]), record("second_order", [True, True, False])]
    distance = shortcut_distance(records, curves(records, epsilons), epsilons)
    assert distance.first_order.wrong_cells == 1 and distance.second_order.wrong_cells == 0
    assert distance.per_curve[0].max_gap_first_order == 1.0
    assert distance.non_monotone_examples == {"first_order|c": ("e",)}
    with pytest.raises(ConfigError, match="thresholds"):
        curves(records, (0.8, 0.9))


# ---- the LM constraint -------------------------------------------------------------------------------
class FakeWordScorer:
    """log P(word | prefix): -len(word), except words listed as unlikely; records prefixes."""

    def __init__(self, unlikely: set[str]) -> None:
        self.unlikely = unlikely
        self.prefixes: list[str] = []

    def log_probs(self, prefixes: Sequence[str], words: Sequence[str]) -> np.ndarray:
        self.prefixes += list(prefixes)
        return np.array([-10.0 if w in self.unlikely else -float(len(w)) for w in words])


def test_left_context_constraint_scores_the_word_after_the_original_prefix() -> None:
    original = Text.from_string("I loved the film, truly.")
    assert left_context(original, 3) == ("I loved the ", "film")
    pair = Text.from_pair("A man.", "He sleeps now.")
    assert left_context(pair, 3) == ("A man. He ", "sleeps")
    scorer = FakeWordScorer({"hated"})
    constraint = LeftContextWordDrop(scorer, max_drop=2.0)
    parent = original.replace(3, "movie")  # an earlier edit: the original's prefix is still used
    proposals = [Proposal(parent.replace(1, "hated"), parent, 1, "hated"),
                 Proposal(parent.replace(1, "liked"), parent, 1, "liked")]
    # loved: -5; hated: -10 (drop 5, rejected); liked: -5 (drop 0, kept)
    assert constraint.check(original, proposals).tolist() == [False, True]
    np.testing.assert_allclose(constraint.drops(original, proposals), [5.0, 0.0])
    assert set(scorer.prefixes) == {"I "}
    with pytest.raises(ConfigError, match="compare_to"):
        LeftContextWordDrop(scorer, compare_to="sibling")


# ---- constraint models and CLI ---------------------------------------------------------------------
def test_constraint_model_specs() -> None:
    assert parse_constraint_model("minilm") == ("minilm", None)
    assert parse_constraint_model("mpnet:/models/mpnet") == ("mpnet", "/models/mpnet")
    with pytest.raises(ConfigError, match="Known: .*bertscore"):
        parse_constraint_model("use")
    from textrobust.analyses.accs.scorers import build_constraint_model

    with pytest.raises(AssetMissingError, match="mpnet"):
        build_constraint_model("mpnet")
    with pytest.raises(AssetMissingError, match="/no/such/folder"):
        build_constraint_model("mpnet:/no/such/folder")
    memo = SimilarityMemo(CostScorer())
    memo.similarity(["a good film"] * 2, ["a bad film"] * 2)
    memo.similarity(["a good film"], ["a bad film"])
    assert memo.stats()["requested"] == 3 and memo.stats()["scored"] == 1


def test_settings_validate_with_the_option_names_and_the_method_takes_them() -> None:
    settings = AccsAnalysisSettings()  # the paper's grid, gamma 3, beam 2, 2.0 nats
    assert settings.epsilons == GRID and (settings.gamma, settings.beam_width, settings.max_drop) == (3, 2, 2.0)
    # the attacks read the analysis's own fields (no renamed copy of the settings)
    built = AccsComponents(AccsAnalysisSettings(max_drop=1.5, indirect_antonyms=False), synonyms=DictSource(SYNONYMS),
                           antonyms=DictSource(ANTONYMS), stop_words=STOP)
    assert "max_drop=1.5" in repr(built.lm_constraint)
    assert AccsComponents(AccsAnalysisSettings(lm_mode="none"), synonyms=DictSource(SYNONYMS),
                          antonyms=DictSource(ANTONYMS), stop_words=STOP).lm_constraint is None
    # resuming compares the stored configuration key by key: the method's part keeps the
    # layout runs were stored with before there was one settings class
    described = AccsAnalysis({"eps_start": 0.9, "eps_step": 0.05, "max_drop": 1.5, "budget": 7},
                             components=lambda chosen: components(chosen)).describe()
    assert described["components"]["settings"] == {
        "epsilons": [0.9, 0.95, 1.0], "gamma": 3, "beam_width": 2, "max_log_prob_drop": 1.5, "lm_mode": "left_word",
        "indirect_antonyms": True, "sweep": "exact", "budget": 7}
    assert AccsAnalysisSettings(constraint=["minilm", "minilm"]).constraint == ("minilm",)
    for bad, match in (({"eps_start": 0.9, "eps_stop": 0.8}, "'eps_stop' parameter .* must be >= eps_start"),
                       ({"eps_step": 0.0}, "'eps_step' parameter"),
                       ({"eps_step": 1e-6}, "more than 1000 thresholds"),
                       ({"constraint": ["use"]}, "'constraint' parameter .*Unknown constraint model 'use'"),
                       ({"lm_mode": "gpt2"}, "'lm_mode' parameter"), ({"gamma": 0}, "'gamma' parameter")):
        with pytest.raises(ConfigError, match=match):
            AccsAnalysisSettings(**bad)


def test_cli_options_are_the_settings_and_fail_cleanly_on_a_bad_constraint(tmp_path: Path) -> None:
    import inspect

    import typer
    from typer.testing import CliRunner

    from textrobust.analyses import ANALYSES
    from textrobust.cli.generated import analysis_command, register
    from textrobust.cli.options import SHARED

    accs_cmd = analysis_command(ANALYSES.get("accs"))  # the command `textrobust accs` is

    own = set(inspect.signature(accs_cmd).parameters) - set(SHARED) - {"ctx", "out"}
    assert own == set(AccsAnalysisSettings.model_fields)  # --resume takes unset options from the store
    app = typer.Typer()

    @app.command("noop")
    def noop() -> None:  # a second command, so typer keeps the command name
        """Nothing."""

    register(app)
    runner = CliRunner()
    helped = runner.invoke(app, ["accs", "--help"], env={"TEXTROBUST_NO_PROGRESS": "1", "COLUMNS": "200"})
    assert helped.exit_code == 0 and "--constraint" in helped.output and "--sweep" in helped.output
    failed = runner.invoke(app, ["accs", "--constraint", "use", "--out", str(tmp_path / "r")],
                           env={"TEXTROBUST_NO_PROGRESS": "1"})
    message = " ".join(failed.output.split())
    assert failed.exit_code == 2 and "The '--constraint' option" in message
    assert "Unknown constraint model 'use'" in message


# ---- real assets ----------------------------------------------------------------------------------
@pytest.mark.heavy
def test_antonym_swaps_are_wordnet_antonyms_with_the_original_inflection() -> None:
    from lemminflect import getInflection

    from textrobust.assets import wordnet
    from textrobust.attack.candidates import SpacyTagger, WordNetAntonyms
    from textrobust.attack.candidates.inflection import lemmatize
    from textrobust.attack.candidates.wordnet import wordnet_pos

    reader = wordnet()
    tagger = SpacyTagger()
    text = Text.from_string("She loved the happy endings but hated the long, boring scenes.")
    source = WordNetAntonyms(tagger=tagger)
    found = source.candidates(text, range(len(text)))
    tags = tagger(text)
    seen = {}
    for position, subs in found.items():
        for sub in subs:
            tag = tags[position]
            pos = wordnet_pos(tag)
            lemma = lemmatize(text.words[position].lower(), tag.tag, pos)
            antonyms = {a.name().lower() for s in reader.synsets(lemma, pos) for lem in s.lemmas()
                        if lem.name().lower() == lemma for a in lem.antonyms()}
            base = next(a for a in antonyms if sub.word.lower() in getInflection(a, tag.tag) + (a,))
            assert base in antonyms
            assert sub.word.lower() in getInflection(base, tag.tag)  # the word's own tag, e.g. VBD
            seen[text.words[position]] = sub.word
    assert seen["loved"] == "hated" and seen["hated"] == "loved"
    assert seen["happy"] == "unhappy" and seen["long"] == "short"


@pytest.mark.heavy
def test_prefix_word_scorer_matches_full_text_scoring() -> None:
    import torch

    torch.set_num_threads(1)
    from textrobust.attack.constraints.left_context_lm import PrefixWordScorer
    from textrobust.lm import CausalLM

    lm = CausalLM.default()
    scorer = PrefixWordScorer(lm)
    text = Text.from_string("I watched the film last night and loved every minute of it.")
    prefix, word = left_context(text, 7)
    words = [word, "hated", "adored", "unmakes"]  # "unmakes" takes several tokens
    mine = scorer.log_probs([prefix] * len(words), words)
    reference = lm.word_log_prob([Text.from_string(prefix + w) for w in words], [7] * len(words))
    np.testing.assert_allclose(mine, reference, atol=1e-3)
    first = scorer.log_probs(["", ""], ["I", "You"])
    np.testing.assert_allclose(first, lm.word_log_prob(["I", "You"], [0, 0]), atol=1e-3)
    assert scorer.stats()["cache_size"] == 6


def test_bootstrap_intervals_contain_the_estimate_and_pair_the_draws() -> None:
    records = run_tasks(AccsAnalysisSettings(), {"cost": CostScorer(), "always": Always(1.0)})
    by_constraint = curves(records, GRID)
    boot = bootstrap_accs(records, by_constraint, samples=200, seed=1)
    assert boot.examples == 4
    intervals = {r.constraint: (r.low, r.high) for r in boot.per_curve}
    # flat at the maxima in every resample that draws a second-order success (ACCS 0); a
    # resample without one (2 of 4 examples have one: 6% of draws) is "never fooled" (1.0)
    assert intervals["always"][0] == 0.0 and intervals["always"][1] < 1.0
    low, high = intervals["cost"]
    assert low <= by_constraint["cost"].accs() <= high
    (difference,) = boot.differences
    assert difference.minus == ("cost", "always") and difference.low >= 0.0
    assert bootstrap_accs(records, by_constraint, samples=200, seed=1) == boot  # seeded
