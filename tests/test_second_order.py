"""Second-order robustness (Zhang et al. 2021): neighbourhoods on a fill-in stub with known
logits, the generalised Eq. 2-4, patch choice, SO-Enum / SO-Beam / random baseline on a
toy victim with a planted vulnerable example, results, runs and the CLI wiring.

No real models: the fill-in is a table, the victims are closed-form functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from textrobust.attack.attack import Attack
from textrobust.attack.results import Status
from textrobust.attack.searches.search_testing import DictSource, check_search
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.analyses.second_order import (
    SECOND_ORDER_SEARCHES,
    Neighbourhood,
    NeighbourhoodConfig,
    Patch,
    PatchFinder,
    RandomBaseline,
    SecondOrderAttack,
    SecondOrderGoal,
    SecondOrderResult,
    SOEnum,
    keep_by_logit,
    labels_differ,
    masked_key,
    prediction_difference,
    second_order_loss,
    so_beam,
    summary,
)
from textrobust.records import decode, encode
from textrobust.store import RunStore
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.query import QueryLayer


# ---- doubles -------------------------------------------------------------------------------------
class TableFillIn:
    """A fill-in with known logits: ``table[word at position]`` (the *original* word of the
    start text, looked up by position index of ``positions``) -> [(word, logit)], the same
    in every context. Records every request."""

    def __init__(self, by_position: Mapping[int, Sequence[tuple[str, float]]]) -> None:
        self.by_position = {p: list(v) for p, v in by_position.items()}
        self.requests: list[tuple[str, int]] = []
        self.ks: set[int] = set()

    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        self.requests.extend((str(t), p) for t, p in requests)
        self.ks.add(k)
        return [sorted(self.by_position.get(p, []), key=lambda ws: -ws[1])[:k] for _, p in requests]


WEIGHTS = {"good": 1.0, "great": 2.0, "decent": 0.6, "one": -0.5, "film": 0.2, "movie": -0.2, "bad": -1.0}


def linear_victim(weights: Mapping[str, float] = WEIGHTS) -> FunctionVictim:
    """P(positive) = sigmoid(sum of word weights): x and x (+) (film -> movie) differ by
    0.4 in logit, so x is vulnerable iff its score is in [0, 0.4)."""

    def logits(texts: list[str]) -> np.ndarray:
        scores = [sum(weights.get(w, 0.0) for w in Text.from_string(t).words) for t in texts]
        return np.array([[0.0, s] for s in scores])

    return FunctionVictim(logits, ("negative", "positive"), outputs="logits", name="linear")


# The planted world: "a good film" (score 1.2) is robust to film -> movie; one change
# ("one good film" 0.7, "a decent film" 0.8) is not enough; "one decent film" (0.3, and
# 0.3 - 0.4 = -0.1 after the patch) is the only vulnerable text within two changes.
PLANTED_FILL = {0: [("a", 5.0), ("one", 4.0), ("the", 3.5)], 1: [("good", 5.0), ("great", 4.5), ("decent", 4.2)],
                2: [("film", 5.0), ("story", 1.0)]}
START = Text.from_string("a good film")
PATCH = Patch(2, "film", "movie", 0.2)


def planted_problem(search_fill: Mapping[int, Sequence[tuple[str, float]]] = PLANTED_FILL):
    from textrobust.attack.problem import Problem

    layer = QueryLayer(linear_victim())
    hood = Neighbourhood(TableFillIn(search_fill))
    start = START.freeze([PATCH.position])
    goal = SecondOrderGoal(layer, PATCH)
    return layer, hood, start, Problem(original=start, goal=goal, source=hood.source(("film", "movie")))


# ---- Algorithm 1: thresholds and sizes ---------------------------------------------------------
def test_keep_by_logit_applies_kappa_and_delta() -> None:
    scores = [10.0 - 0.1 * i for i in range(30)]  # dense: kappa binds
    assert keep_by_logit(scores, kappa=20, delta=3.0).sum() == 20
    sparse = [10.0, 9.0, 8.0, 7.0, 6.0]  # spread out: delta binds (> 7, strictly)
    assert keep_by_logit(sparse, kappa=20, delta=3.0).tolist() == [True, True, True, False, False]
    assert keep_by_logit([], kappa=20, delta=3.0).tolist() == []
    # unsorted input: the mask follows the input order
    assert keep_by_logit([1.0, 9.0, 8.5], kappa=1, delta=3.0).tolist() == [False, True, False]


def test_neighbourhood_size_on_known_logits() -> None:
    # position 0: 25 words 0.1 apart (kappa keeps 20, one of them the current word);
    # position 1: words 1.0 apart (delta keeps 10, 9, 8, one the current word);
    # position 2: nothing proposed.
    dense = [("cur0", 10.0)] + [(f"d{i}", 9.95 - 0.1 * i) for i in range(24)]
    sparse = [("cur1", 10.0), ("s1", 9.0), ("s2", 8.0), ("s3", 7.0), ("s4", 6.0)]
    fill = TableFillIn({0: dense, 1: sparse})
    hood = Neighbourhood(fill)
    text = Text.from_string("cur0 cur1 end")
    n1 = hood.neighbours(text)
    c0, c1 = 19, 2  # kept minus the current word
    assert len(n1) == c0 + c1
    assert {t.words[1] for t in n1 if t.words[1] != "cur1"} == {"s1", "s2"}
    assert fill.ks == {hood.config.kappa + 1}  # asked for kappa + 1 words, to read L(kappa)
    # Neighbor_2 = x itself (changed and changed back) + distance 1 + distance 2
    n2 = hood.enumerate(text, 2)
    assert len(n2) == 1 + (c0 + c1) + c0 * c1
    assert text in n2
    assert len({t.key for t in n2}) == len(n2)
    assert hood.enumerate(text, 0) == [text]
    # each masked context went to the fill-in only once
    masked = {masked_key(Text.from_string(s), p) for s, p in fill.requests}
    assert len(masked) == len(fill.requests)


def test_neighbourhood_blacklist_frozen_case_and_cache() -> None:
    fill = TableFillIn({0: [("the", 5.0), ("his", 4.9), ("one", 4.0)], 1: [("film", 5.0), ("movie", 4.5)]})
    hood = Neighbourhood(fill, blacklist=("his",))
    text = Text.from_string("The film").freeze([1])
    found = [str(t) for t in hood.neighbours(text)]
    assert found == ["One film"]  # case kept, blacklisted word and frozen position left out
    # a per-call blacklist adds to the configured one
    assert hood.neighbours(text, blacklist=("one",)) == []
    # the threshold is computed before the blacklist: "his" (blacklisted) still sets L(0)
    strict = Neighbourhood(TableFillIn({0: [("his", 5.0), ("one", 1.5)]}), blacklist=("his",))
    assert strict.neighbours(Text.from_string("the")) == []
    calls = hood.calls
    hood.neighbours(text)
    assert hood.calls == calls and hood.cache_hits > 0
    # texts differing only at the masked position share a cache entry
    assert masked_key(Text.from_string("a good film"), 1) == masked_key(Text.from_string("a bad film"), 1)
    with pytest.raises(ConfigError, match="kappa"):
        NeighbourhoodConfig(kappa=0)
    with pytest.raises(ConfigError, match="fill"):
        Neighbourhood(object())  # type: ignore[arg-type]


def test_enumerate_limit_raises() -> None:
    hood = Neighbourhood(TableFillIn(PLANTED_FILL))
    with pytest.raises(ConfigError, match="limit"):
        hood.enumerate(START, 2, limit=3)


def test_samples_are_seeded_and_inside_the_neighbourhood() -> None:
    hood = Neighbourhood(TableFillIn(PLANTED_FILL))
    start = START.freeze([2])
    a = hood.sample(start, 3, 50, np.random.default_rng(7))
    b = hood.sample(start, 3, 50, np.random.default_rng(7))
    assert [[t.key for t in step] for step in a] == [[t.key for t in step] for step in b]
    assert len(a) == 3 and all(len(step) == 50 for step in a)
    for j, step in enumerate(a, start=1):
        exact = {t.key for t in hood.enumerate(start, j)}
        assert all(t.key in exact for t in step)
        assert all(t.words[2] == "film" for t in step)  # frozen position never moves


# ---- Eq. 2-4 ----------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.floats(0.001, 0.999), st.floats(0.001, 0.999))
def test_loss_is_eq4_for_two_classes(f1: float, f2: float) -> None:
    u, v = np.array([[1 - f1, f1]]), np.array([[1 - f2, f2]])
    fmin, fmax = min(f1, f2), max(f1, f2)
    assert math.isclose(second_order_loss(u, v)[0], -math.log(1 - fmin) - math.log(fmax), rel_tol=1e-9)
    assert bool(labels_differ(u, v)[0]) == ((f1 > 0.5) != (f2 > 0.5))


def test_multiclass_loss_and_difference() -> None:
    u = np.array([[0.7, 0.2, 0.1]])
    v = np.array([[0.6, 0.3, 0.1]])
    expected = min(-math.log(u[0, a]) - math.log(v[0, b]) for a in range(3) for b in range(3) if a != b)
    assert math.isclose(second_order_loss(u, v)[0], expected)
    assert not labels_differ(u, v)[0]
    assert labels_differ(u, np.array([[0.2, 0.7, 0.1]]))[0]
    assert not labels_differ(u, np.array([[0.3, 0.4, 0.3]]), min_gap=0.5)[0]
    assert math.isclose(prediction_difference(u, v)[0], 0.1)
    with pytest.raises(ConfigError):
        second_order_loss(np.ones((1, 2)), np.ones((1, 3)))


def test_goal_costs_two_queries_per_text() -> None:
    layer = QueryLayer(linear_victim())
    goal = SecondOrderGoal(layer, PATCH)
    found = goal.evaluate([Text.from_string("one decent film"), START])
    assert found.success.tolist() == [True, False]
    assert found.outputs.shape == (2, 2, 2)
    assert np.all((found.scores > 0) & (found.scores <= 1)) and found.scores[0] > found.scores[1]
    assert layer.queries == 4


# ---- patch choice -----------------------------------------------------------------------------------
def test_patch_finder_picks_the_largest_single_word_difference() -> None:
    layer = QueryLayer(linear_victim({"film": 0.2, "movie": -0.2, "good": 1.0, "fine": 0.9, "nice": 0.95}))
    finder = PatchFinder(layer, DictSource({"film": ["movie"], "good": ["fine", "nice"], "a": ["an"]}))
    text = Text.from_string("a good film")
    ranked = finder.rank(text)
    assert [(p.source, p.target) for p in ranked][:2] == [("film", "movie"), ("good", "fine")]
    assert ranked[0].score == pytest.approx(abs(1 / (1 + math.exp(-0.2)) - 1 / (1 + math.exp(0.2))))
    # a word occurring twice, or a partner already present, gives no pair
    assert finder.choose(Text.from_string("film film")) is None
    assert finder.choose(Text.from_string("the film movie")) is None
    assert str(ranked[0].apply(Text.from_string("A good Film")).words[2]) == "Movie"
    # stop words are not patch words unless allowed
    assert "a" not in {p.source for p in ranked}
    everything = PatchFinder(layer, DictSource({"a": ["an"]}), stop_words=())
    assert [(p.source, p.target) for p in everything.rank(text)] == [("a", "an")]


# ---- SO-Enum, SO-Beam, random baseline ----------------------------------------------------------
def test_so_enum_finds_the_planted_vulnerable_example() -> None:
    _, _, start, problem = planted_problem()
    outcome = SOEnum(max_k=2).search(start, problem)
    assert outcome.success
    assert str(outcome.best) == "one decent film"
    assert start.l0(outcome.best) == 2
    # within one change there is none
    _, _, start, problem = planted_problem()
    assert not SOEnum(max_k=1).search(start, problem).success


def test_so_enum_returns_the_smallest_change() -> None:
    # add a distance-1 vulnerable text ("a meh film": 0.3): SO-Enum must stop at distance 1
    fill = {**PLANTED_FILL, 1: PLANTED_FILL[1] + [("meh", 4.1)]}
    weights = {**WEIGHTS, "meh": 0.1}
    from textrobust.attack.problem import Problem

    layer = QueryLayer(linear_victim(weights))
    hood = Neighbourhood(TableFillIn(fill))
    start = START.freeze([2])
    problem = Problem(original=start, goal=SecondOrderGoal(layer, PATCH), source=hood.source())
    outcome = SOEnum().search(start, problem)
    assert outcome.success and str(outcome.best) == "a meh film"


def test_so_beam_and_random_find_it_too() -> None:
    _, _, start, problem = planted_problem()
    outcome = so_beam().search(start, problem)
    assert outcome.success and str(outcome.best) == "one decent film"
    wins = 0
    for seed in range(12):
        _, _, start, problem = planted_problem()
        result = RandomBaseline(seed=seed).search(start, problem)
        wins += result.success
        assert result.best.words[2] == "film"
    assert 0 < wins < 12  # a random walk sometimes finds it, sometimes not


@pytest.mark.parametrize("search", [SOEnum(max_k=2), RandomBaseline(seed=1)], ids=repr)
def test_searches_keep_the_search_contract(search) -> None:
    mean = None if isinstance(search, RandomBaseline) else 2.0
    ran = check_search(search, min_mean_batch=mean)
    assert "budget" in ran and "frozen" in ran


def test_registry_and_factories() -> None:
    assert SECOND_ORDER_SEARCHES.names() == ["random", "so-beam", "so-enum"]
    assert repr(so_beam()) == "BeamSearch(beam_width=20, max_depth=6)"
    with pytest.raises(ConfigError, match="beam_width"):
        so_beam(beam_width=0)


# ---- the attack, results, runs ---------------------------------------------------------------------
def planted_attack(budget: int | None = None, search=None) -> SecondOrderAttack:
    layer = QueryLayer(linear_victim())
    hood = Neighbourhood(TableFillIn(PLANTED_FILL))
    finder = PatchFinder(layer, DictSource({"film": ["movie"]}))
    return SecondOrderAttack(layer, hood, search or SOEnum(), patches=finder, budget=budget, name="so-enum")


def test_attack_records_the_vulnerable_example() -> None:
    attack = planted_attack()
    result = attack.attack(Example("e1", START, 1))
    assert result.status is Status.SUCCEEDED
    assert str(result.vulnerable) == "one decent film" and result.l0 == 2
    assert (result.patch.source, result.patch.target, result.patch.position) == ("film", "movie", 2)
    assert np.argmax(result.vulnerable_probabilities) != np.argmax(result.vulnerable_patched_probabilities)
    assert np.argmax(result.original_probabilities) == np.argmax(result.original_patched_probabilities)
    assert result.queries == attack.layer.queries and result.fill_requests > 0
    back = decode(SecondOrderResult, encode(result))
    assert back == result and encode(back) == encode(result)
    view = result.as_attack_result()
    assert view.l0 == 2 and view.status is Status.SUCCEEDED
    # no synonym pair applies: skipped
    skipped = attack.attack(Example("e2", Text.from_string("nothing here"), 0))
    assert skipped.status is Status.SKIPPED and skipped.patch is None


def test_attack_budget_is_enforced() -> None:
    attack = planted_attack(budget=8)
    result = attack.attack(Example("e1", START, 1))
    assert result.status is Status.FAILED and result.budget_exhausted
    assert result.queries <= 8
    done = planted_attack().attack(Example("e1", START, 1))
    counts = summary([result, done])
    assert counts["failed_budget_exhausted"] == 1
    assert counts["failed_search_complete"] + counts["succeeded"] + counts["failed_budget_exhausted"] == 2
    assert SecondOrderGoal.queries_per_text == 2
    with pytest.raises(ConfigError, match="budget"):
        planted_attack(budget=1).attack(Example("e1", START, 1))


def test_add_perplexity_uses_the_lm() -> None:
    from textrobust.analyses.second_order import add_perplexity

    class FakeLM:
        def perplexity(self, texts: Sequence[str]) -> np.ndarray:
            return np.array([float(len(t)) for t in texts])

    result = planted_attack().attack(Example("e1", START, 1))
    scored = add_perplexity(result, FakeLM())
    assert scored.extras["perplexity_before"] == len("a good film")
    assert scored.extras["perplexity_after"] == len("one decent film")


# ---- BAE recipe and CLI wiring ------------------------------------------------------------------
def test_bae_recipe_spec() -> None:
    from textrobust.attack.recipes import garg_2020

    spec = garg_2020()
    assert spec.source.name == "fill_in" and spec.source.kwargs() == {"k": 50}
    assert spec.search.name == "greedy" and spec.search.kwargs() == {"ranking": "delete"}
    names = [c.name for c in spec.constraints]
    assert names[:3] == ["repeat_modification", "stop_words", "frozen_columns"] and "sentence_similarity" in names
    with pytest.raises(ConfigError):
        garg_2020(k=0)


def test_bae_style_attack_runs_on_a_fill_in_source() -> None:
    from textrobust.attack.candidates.fill_in import FillInSource
    from textrobust.attack.searches import GreedySearch

    layer = QueryLayer(linear_victim())
    fill = TableFillIn({1: [("bad", 5.0), ("good", 4.0)]})
    attack = Attack(layer, source=FillInSource(fill, k=50), search=GreedySearch(ranking="delete"))
    result = attack.attack(Example("x", START, 1))
    assert result.status is Status.SUCCEEDED and str(result.perturbed) == "a bad film"


# ---- the analysis on the protocol, and the CLI ---------------------------------------------------
PLANTED_DATA = (Example("a", START, 1), Example("b", Text.from_string("a good story"), 1),
                Example("c", Text.from_string("one great film"), 1))


#: The paper's count, without issue 38's checks (the planted flip is a near tie).
PAPER_CHECKS = {"margin": 0.0, "fluency": 0.0, "sentences": False, "pos_check": False, "content": False}


@pytest.fixture
def planted_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis builds its fill-in and patch finder by name: point both at the
    planted world (a table fill-in; film -> movie the only synonym pair)."""
    import textrobust.analyses.second_order as package

    real_finder = package.PatchFinder
    monkeypatch.setattr("textrobust.fill_in.neighbourhood.load_fill_in",
                        lambda name=None, placement=None: TableFillIn(PLANTED_FILL))
    monkeypatch.setattr(package, "PatchFinder", lambda layer, synonyms=None: real_finder(layer, DictSource({"film": ["movie"]})))


def planted_dataset():
    from textrobust.data.examples import Dataset

    return Dataset("planted", PLANTED_DATA, ("negative", "positive"), split="test")


def test_analysis_records_round_trip_through_the_store_codec(planted_world: None) -> None:
    import json

    from textrobust.analyses.protocol import WorkerContext
    from textrobust.analyses.second_order.analysis import SecondOrderAnalysis, SecondOrderRecord
    from textrobust.records import decode, encode

    analysis = SecondOrderAnalysis({"method": "so-enum", "n": 3, "quality": False, **PAPER_CHECKS})
    assert [uid for uid, _ in analysis.units(planted_dataset())] == ["a", "b", "c"]
    analyse = analysis.worker(WorkerContext(QueryLayer(linear_victim()), ("negative", "positive")))
    records = [analyse(e) for e in PLANTED_DATA]
    assert [r.status for r in records] == ["succeeded", "skipped", "succeeded"]
    assert str(records[0].result.vulnerable) == "one decent film" and records[0].queries == records[0].result.queries
    for record in records:
        back = decode(SecondOrderRecord, json.loads(json.dumps(encode(record))))
        assert back == record and isinstance(back.result, SecondOrderResult)
        assert back.result.original.frozen == record.result.original.frozen
    s = analysis.summarise(records, [])
    assert (s.units, s.succeeded, s.skipped, s.success_rate) == (3, 2, 1, 1.0)
    assert s.l0 == pytest.approx(np.mean([r.result.l0 for r in records if r.status == "succeeded"]))
    section = analysis.section(s, records, [], ("negative", "positive")).to_dict()
    assert section["risk"] == 1.0 and section["examples"] and section["figures"]


def test_summary_of_no_records_is_nan_not_zero() -> None:
    from textrobust.analyses.protocol import Failure
    from textrobust.analyses.second_order.analysis import SecondOrderAnalysis

    analysis = SecondOrderAnalysis()
    s = analysis.summarise([], [])
    assert (s.units, s.examples, s.succeeded) == (0, 0, 0)
    for name in ("success_rate", "l0", "queries_per_example", "fill_requests_per_example", "seconds_per_example"):
        assert math.isnan(getattr(s, name)), name
    section = analysis.section(s, [], [], ("negative", "positive")).to_dict()
    assert section["risk"] is None and section["headline"][0]["value"] is None
    failed = analysis.summarise([], [Failure("x", "ValueError", "boom")])
    assert (failed.units, failed.errors) == (1, 1) and math.isnan(failed.success_rate)


def test_analysis_settings_are_validated() -> None:
    from textrobust.analyses.second_order.analysis import SecondOrderAnalysis

    with pytest.raises(ConfigError, match="'method'.*so-beam"):
        SecondOrderAnalysis({"method": "nope"})
    with pytest.raises(ConfigError, match="'fill_in'"):
        SecondOrderAnalysis({"fill_in": "bert"})
    with pytest.raises(ConfigError, match="'budget'"):
        SecondOrderAnalysis({"budget": 0})
    assert "RandomBaseline" in SecondOrderAnalysis({"method": "random"}).describe()["search"]


def test_default_fill_in_is_the_product_route() -> None:
    # issue 13: minilm_gemma (tuned MiniLM x Gemma's left context) meets the speed bar with
    # the best recall@20, so it is the default of Neighbor_k (second-order, bias), BAE and TEA
    from textrobust.analyses.attribution.settings import AttributionSettings
    from textrobust.analyses.bias.analysis import BiasSettings
    from textrobust.analyses.second_order.analysis import SecondOrderSettings
    from textrobust.attack.recipes import garg_2020
    from textrobust.fill_in import DEFAULT_FILL_IN, FILL_INS

    assert DEFAULT_FILL_IN == "minilm_gemma" and "minilm_mlm" in FILL_INS.names()
    assert SecondOrderSettings().fill_in == BiasSettings().fill_in == "minilm_gemma"
    # BAE names no fill-in: it takes DEFAULT_FILL_IN when it builds its source; TEA's
    # settings name it, so the report and a resumed run record which model proposed words
    assert "fill_in" not in garg_2020().source.kwargs()
    assert AttributionSettings().fill_in == AttributionSettings(fill_in=None).fill_in == "minilm_gemma"


def test_cli_registers_commands(tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from textrobust.cli.generated import register

    app = typer.Typer()
    register(app)
    runner = CliRunner()
    out = runner.invoke(app, ["second-order", "--help"], terminal_width=200)
    words = " ".join(out.output.replace("│", " ").split())  # the help column, unwrapped
    assert out.exit_code == 0 and "--method" in words and "causal_rescore (Gemma 3 270M propose-and-rescore" in words
    assert "minilm_gemma (the default" in words and "minilm_tuned (the MiniLM part alone" in words
    out = runner.invoke(app, ["bias", "--help"])
    assert out.exit_code == 0 and "--exact-up-to" in out.output
    bad = runner.invoke(app, ["second-order", "--method", "nope", "--out", str(tmp_path / "unused")],
                        terminal_width=200)
    assert bad.exit_code == 2 and "so-beam" in bad.output and "--method" in bad.output


def test_cli_runs_the_analysis_into_a_store_and_report(tmp_path: Path, planted_world: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli.app import app
    from textrobust.fill_in import DEFAULT_FILL_IN

    real = audit.run
    monkeypatch.setattr(audit, "run", lambda victim, data, *args, **kw: real(linear_victim(), planted_dataset(),
                                                                            *args, **kw))
    out = tmp_path / "so"
    result = CliRunner().invoke(app, ["second-order", "--n", "2", "--no-quality", "--method", "so-enum", "--quiet",
                                      "--margin", "0", "--fluency", "0", "--no-sentences", "--no-pos-check",
                                      "--out", str(out)], terminal_width=80, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert (out / "store.sqlite").is_file() and (out / "report.json").is_file()
    assert max(len(line) for line in result.output.splitlines()
               if not line.startswith(("store: ", "report: "))) <= 80  # paths print whole (issue 49)
    report = json.loads((out / "report.json").read_text())
    section = next(s for s in report["analyses"] if s["name"] == "second-order")
    assert section["counts"] == {"units": 2, "ok": 2, "errors": 0, "budget_exhausted": 0}
    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run("second-order")
        assert run is not None and run.config["settings"]["fill_in"] == DEFAULT_FILL_IN == "minilm_gemma"


def test_exports_and_light_import() -> None:
    import subprocess
    import sys

    import textrobust.analyses.second_order as package

    public = {n for n in dir(package) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(package, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(package.__all__)
    code = ("import sys, textrobust.analyses.second_order, textrobust.cli.generated, textrobust.attack.recipes, "
            "textrobust.analyses.second_order.analysis\n"
            "print(','.join(m for m in ('torch', 'transformers', 'spacy', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
