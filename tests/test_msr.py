"""The maximal-safe-radius analysis end to end on tiny victims built in the test: lower and
upper bounds per word and per set, no contradiction between them, records round-trip, the
summary and report section validate, unsupported victims get a status and no number."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from textrobust.analyses import ANALYSES
from textrobust.analyses.msr.analysis import MsrAnalysis, MsrRecord, UNSUPPORTED
from textrobust.analyses.msr.space import EmbeddingSpace, L2Neighbours
from textrobust.analyses.protocol import WorkerContext
from textrobust.data.examples import Example
from textrobust.records import decode, encode
from textrobust.text import Text
from textrobust.victims import QueryLayer
from textrobust.victims.function import FunctionVictim
from textrobust.victims.torch import TorchVictim
from textrobust.zoo.cnn import CnnClassifier, CnnConfig
from textrobust.zoo.lstm import LstmClassifier, LstmConfig
from textrobust.zoo.transformer import TransformerClassifier, TransformerConfig
from textrobust.zoo.vocab import WordVocab

WORDS = ["good", "bad", "film", "plot", "great", "awful", "movie", "story", "fine", "dull", "the", "a", "was"]
FAST = {"n": 2, "pos_filter": False, "simulations": 8, "iterations": 6, "multi_sets": 2, "lime_samples": 30,
        "max_words": 2}


def _victim(kind: str = "cnn", seed: int = 0) -> TorchVictim:
    torch.manual_seed(seed)
    vocab = WordVocab(WORDS, max_length=8)
    if kind == "cnn":
        model = CnnClassifier(CnnConfig(embed_dim=4, filters=4, widths=(2, 3)), len(vocab), 2)
    elif kind == "lstm":
        model = LstmClassifier(LstmConfig(embed_dim=4, hidden=4), len(vocab), 2)
    else:
        model = TransformerClassifier(TransformerConfig(layers=1, d_model=8, heads=2, ff=8), len(vocab), 2)
    return TorchVictim(model, vocab, ("neg", "pos"))


EXAMPLES = [Example("e1", Text.from_string("the film was good"), 1),
            Example("e2", Text.from_string("a dull plot and awful story"), 0)]


def _run(victim, settings=FAST, space=None):
    analysis = MsrAnalysis(settings, space=space)
    analyse = analysis.worker(WorkerContext(QueryLayer(victim), ("neg", "pos")))
    return analysis, [analyse(e) for e in EXAMPLES]


@pytest.mark.parametrize("kind", ["cnn", "lstm"])
def test_bounds_per_word_and_per_set_never_contradict(kind):
    analysis, records = _run(_victim(kind))
    for r in records:
        assert r.lower_status == "ok" and r.lower_method == ("linear" if kind == "lstm" else "crown")
        assert len(r.words) == min(len(r.text), 8)  # out-of-vocabulary words are <unk>, which has a vector
        for w in r.words:
            assert w.lower is not None and 0.0 <= w.lower <= 1.0
            if w.upper is not None:
                assert w.lower <= w.upper <= 1.0 and w.substitute is not None
        assert all(len(b.positions) == 2 for b in r.sets)
    summary = analysis.summarise(records, [])
    assert summary.contradictions == 0 and summary.with_lower == 2
    assert summary.sizes[0].size == 1 and summary.sizes[0].sets == sum(len(r.words) for r in records)
    again = decode(MsrRecord, encode(records[0]))
    assert again == records[0]


def test_lime_is_compared_with_the_bounds():
    _, records = _run(_victim("cnn"), {**FAST, "n": 2})
    r = records[1]
    assert all(w.lime is not None for w in r.words)
    assert r.spearman is None or -1.0 <= r.spearman <= 1.0


def test_a_successful_substitution_is_an_upper_bound():
    """A victim that flips whenever 'good' is replaced: MCTS finds it at position 3."""
    victim = _victim("cnn")
    space = EmbeddingSpace.of_zoo_victim(victim)
    analysis, records = _run(victim, {**FAST, "iterations": 20, "simulations": 16})
    for r in records:
        for w in r.words:
            if w.upper is not None:
                sub = r.text.replace(w.position, w.substitute)
                flipped = QueryLayer(victim).predict([sub])[0] != r.predicted
                assert flipped
                assert w.upper == pytest.approx(space.distance(r.text, sub) / w.diameter)


@pytest.mark.parametrize("victim", [
    pytest.param(lambda: _victim("transformer"), id="zoo-transformer"),
    pytest.param(lambda: FunctionVictim(lambda s: [[0.4, 0.6] if "good" in x else [0.7, 0.3] for x in s],
                                        ("neg", "pos")), id="function"),
])
def test_unsupported_victims_get_a_status_and_no_number(victim):
    v = victim()
    space = EmbeddingSpace.of_zoo_victim(_victim("cnn"))
    analysis, records = _run(v, FAST, space=space)
    for r in records:
        assert r.lower_status.startswith(UNSUPPORTED) and r.lower_method == ""
        assert all(w.lower is None for w in r.words) and all(b.lower is None for b in r.sets)
    summary = analysis.summarise(records, [])
    assert summary.with_lower == 0 and math.isnan(summary.sizes[0].mean_lower)
    assert UNSUPPORTED in summary.lower_status
    # the upper bound still runs: the function victim flips when 'good' goes
    if isinstance(v, FunctionVictim):
        assert records[0].successes > 0 and any(w.upper is not None for w in records[0].words)


def test_summary_and_section_validate_against_the_report_schema():
    from textrobust.report.testing import validate_section

    analysis, records = _run(_victim("cnn"))
    summary = analysis.summarise(records, [])
    section = analysis.section(summary, records, [], ["neg", "pos"])
    titles = [f["title"] for f in section["figures"]]
    assert any(t.startswith("Per-word bounds") for t in titles) and "Gap between the bounds" in titles
    assert any(t.startswith("Lower bound by word position") for t in titles)
    validate_section(analysis, section, units=2)
    assert summary.to_dict()["sizes"][0]["size"] == 1


def test_neighbours_are_the_closest_words_in_l2_nearest_first():
    space = EmbeddingSpace(["<pad>", "a", "b", "c", "d"], np.array([[0, 0], [0, 0], [1, 0], [0.2, 0.1], [1, 1.0]]),
                           lambda w: {"a": 1, "b": 2, "c": 3, "d": 4}.get(w.lower()), skip=(0,))
    found = L2Neighbours(space, n=2).candidates(Text.from_string("a B"), [0, 1])
    assert [s.word for s in found[0]] == ["c", "b"]
    assert [s.word for s in found[1]] == ["C", "A"]  # case follows the original word; ties by row
    assert found[0][0].score > found[0][1].score
    assert space.distance(Text.from_string("a b"), Text.from_string("c b")) == pytest.approx(np.hypot(0.2, 0.1))
    assert space.diameter(Text.from_string("a"), [0]) == pytest.approx(np.sqrt(2))


def test_settings_reject_unknown_keys_and_bad_values():
    from textrobust.errors import ConfigError

    with pytest.raises(ConfigError):
        MsrAnalysis({"simulatons": 3})
    with pytest.raises(ConfigError):
        MsrAnalysis({"norm": "l3"})
    assert "msr" in ANALYSES.names()


def test_cli_checks_options_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from textrobust.cli.app import app

    runner = CliRunner()
    result = runner.invoke(app, ["msr", "--help"], terminal_width=200)
    assert result.exit_code == 0 and "--max-words" in result.output and "--lime" in result.output
    bad = runner.invoke(app, ["msr", "--norm", "l3", "--out", str(tmp_path / "run")], terminal_width=200)
    assert bad.exit_code != 0 and "norm" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "run" / "store.sqlite").exists()


@pytest.mark.heavy
def test_candidates_keep_the_part_of_speech_in_context():
    """With spaCy's tagger (offline package), every substitute MCTS tried kept the tag."""
    from textrobust.attack.constraints.part_of_speech import PartOfSpeech
    from textrobust.attack.problem import Proposal

    victim = FunctionVictim(lambda s: [[0.4, 0.6] if "good" in x else [0.7, 0.3] for x in s], ("neg", "pos"))
    space = EmbeddingSpace.of_zoo_victim(_victim("cnn"))
    analysis, records = _run(victim, {**FAST, "pos_filter": True, "iterations": 10}, space=space)
    tagger = PartOfSpeech(window=3)
    tried = 0
    for r in records:
        for w in r.words:
            if w.substitute is not None:
                proposal = Proposal(r.text.replace(w.position, w.substitute), r.text, w.position, w.substitute)
                assert tagger.check(r.text, [proposal])[0]
                tried += 1
    assert tried > 0  # 'good' was replaced (by an adjective)
