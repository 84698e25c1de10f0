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
from textrobust.attack.candidates.neighbours import EmbeddingSpace, L2Neighbours
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
FAST = {"n": 2, "candidates": "paper", "pos_filter": False, "simulations": 8, "iterations": 6, "multi_sets": 2, "lime_samples": 30,
        "max_set_size": 2}


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
    space = EmbeddingSpace.of_victim(victim)
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
    space = EmbeddingSpace.of_victim(_victim("cnn"))
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
    section = analysis.section(summary, records, [], ["neg", "pos"]).to_dict()
    titles = [f["title"] for f in section["figures"]]
    assert any(t.startswith("Per-word bounds") for t in titles) and "Gap between the bounds" in titles
    assert any(t.startswith("Lower bound by word position") for t in titles)
    validate_section(analysis, section, units=2)
    assert summary.to_dict()["sizes"][0]["size"] == 1
    assert all(h["note"] for h in section["headline"])  # issue 27: every figure says what it means


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
    space = EmbeddingSpace.of_victim(_victim("cnn"))
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


# ---- issue 27, item 10: both normalisations, the paper's named ------------------------------------
def test_embedding_diameter_is_sqrt_d_and_definition_1_is_the_farthest_corner():
    """Closed form: the paper's Table 4 diameter of a normalised D-dimensional embedding is
    sqrt(D) (1 in L-infinity); Definition 1's d of one word is the distance to the farthest
    corner, sqrt(D) at a corner of the cube and sqrt(D) / 2 at its centre."""
    from textrobust.bounds.region import EmbeddingScale, embedding_diameter

    table = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5], [0.25, 1, 0, 0.5]])
    space = EmbeddingSpace(["<pad>", "lo", "hi", "mid", "mix"], table,
                           lambda w: {"lo": 1, "hi": 2, "mid": 3, "mix": 4}.get(w), skip=(0,))
    assert space.embedding_diameter("l2") == 2.0 and space.embedding_diameter("linf") == 1.0
    scale = EmbeddingScale.from_table(torch.tensor(table))
    assert embedding_diameter("l2", scale) == 2.0 and embedding_diameter("linf", scale) == 1.0
    words = Text.from_string("lo hi mid mix")
    assert space.diameter(words, [0]) == 2.0 and space.diameter(words, [1]) == 2.0
    assert space.diameter(words, [2]) == 1.0  # the centre: half the embedding's diameter
    assert space.diameter(words, [3]) == pytest.approx(np.sqrt(0.75**2 + 1 + 1 + 0.5**2))
    assert space.diameter(words, [0, 1]) == pytest.approx(np.sqrt(8))  # |I| = 2: sqrt(D |I|) at corners
    constant = EmbeddingSpace(["a", "b"], np.array([[0.0, 1.0], [1.0, 1.0]]), {"a": 0, "b": 1}.get)
    assert constant.embedding_diameter("l2") == 1.0  # a dimension that never varies adds nothing


def test_summary_reports_both_normalisations_exactly():
    """sizes divides by Definition 1's d, sizes_embedding by sqrt(D) = 2 for this 4-d CNN:
    each word's certified radius eps (normalised space) gives lower = eps / d and eps / 2."""
    from textrobust.bounds.certify import Verifier

    victim = _victim("cnn")
    analysis, records = _run(victim, {**FAST, "lime": False})
    summary = analysis.summarise(records, [])
    assert summary.embedding_diameter == 2.0 and all(r.embedding_diameter == 2.0 for r in records)
    verifier = Verifier(victim.module)
    eps, by_d, by_root, upper_by_root = [], [], [], []
    for r in records:
        ids_t, mask, _ = victim.encode([r.text])
        ids = ids_t[0][mask[0]].tolist()
        for w in r.words:
            bound = verifier.lower_radius(ids, (w.position,), norm="l2", method="crown", tolerance=1e-3,
                                          label=r.predicted)
            assert w.lower == pytest.approx(bound.eps / bound.diameter) and w.diameter == pytest.approx(bound.diameter)
            eps.append(bound.eps)
            by_d.append(bound.eps / bound.diameter)
            by_root.append(bound.eps / 2.0)
            upper_by_root.append(1.0 if w.upper is None else min(w.upper * w.diameter / 2.0, 1.0))
        for b in r.sets:
            assert b.diameter == pytest.approx(EmbeddingSpace.of_victim(victim).diameter(r.text, b.positions))
    one, paper = summary.sizes[0], summary.sizes_embedding[0]
    assert one.size == paper.size == 1 and one.sets == paper.sets == len(eps)
    assert one.mean_lower == pytest.approx(np.mean(by_d))
    assert paper.mean_lower == pytest.approx(np.mean(by_root)) and paper.std_lower == pytest.approx(np.std(by_root))
    assert paper.mean_upper == pytest.approx(np.mean(upper_by_root))
    assert paper.certified_any == one.certified_any
    # for one word d lies in [sqrt(D) / 2, sqrt(D)], so the paper's figures are 1-2x smaller
    assert all(1.0 - 1e-9 <= w.diameter <= 2.0 + 1e-9 for r in records for w in r.words)
    assert one.mean_lower / 2 - 1e-12 <= paper.mean_lower <= one.mean_lower + 1e-12
    # multi-word sets convert with their own d
    two = [b for r in records for b in r.sets if b.lower is not None]
    assert summary.sizes_embedding[1].mean_lower == pytest.approx(np.mean([b.lower * b.diameter / 2 for b in two]))


def test_cli_names_both_normalisations(tmp_path, monkeypatch):
    """What the user meets: the terminal, summary.json and the report say which diameter
    each figure is divided by, and give the paper's (sqrt(D)) beside Definition 1's."""
    import json

    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli.app import app
    from textrobust.data.examples import Dataset

    real = audit.run
    data = Dataset("toy", tuple(EXAMPLES), ("neg", "pos"), "test")
    monkeypatch.setattr(audit, "run", lambda victim, _data, *args, **kw: real(_victim("cnn"), data, *args, **kw))
    out = tmp_path / "msr"
    result = CliRunner().invoke(app, ["msr", "--n", "2", "--no-pos-filter", "--no-lime", "--simulations", "4",
                                      "--iterations", "3", "--max-set-size", "2", "--multi-sets", "1", "--quiet", "--candidates", "paper",
                                      "--out", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "mean lower bound / d, one word (l2)" in said and "mean lower bound / sqrt(D), one word (l2)" in said
    assert "Definition 1" in said and "farthest corner" in said and "the paper's tables" in said
    summary = json.loads((out / "summary.json").read_text())["analyses"]["msr"]["summary"]
    assert summary["embedding_diameter"] == 2.0 and "Definition 1" in summary["normalisation"]
    assert "sqrt(D)" in summary["normalisation"]
    by_d, by_root = summary["sizes"][0]["mean_lower"], summary["sizes_embedding"][0]["mean_lower"]
    assert by_d / 2 - 1e-12 <= by_root <= by_d + 1e-12
    section = next(s for s in json.loads((out / "report.json").read_text())["analyses"] if s["name"] == "msr")
    titles = [t["title"] for t in section["tables"]]
    assert "Bounds by |I| / d (Definition 1, farthest corner), l2" in titles
    assert "Bounds by |I| / sqrt(D) = 2 (the paper's tables), l2" in titles


def test_msr_cli_analyses_whole_texts_and_no_option_shadows_a_shared_one(tmp_path, monkeypatch):
    """Issue 29: msr's own --max-words (words perturbed together) once took the name of the
    shared text-length limit, so every text was cut to 3 words. Now the set size is
    --max-set-size and a command option named like a shared one fails at import."""
    import json

    import pytest
    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli import options as o
    from textrobust.cli.app import app
    from textrobust.data.examples import Dataset

    real = audit.run
    data = Dataset("toy", tuple(EXAMPLES), ("neg", "pos"), "test")
    assert max(len(e.text) for e in EXAMPLES[:2]) > 3
    monkeypatch.setattr(audit, "run", lambda victim, _data, *args, **kw: real(_victim("cnn"), data, *args, **kw))
    out = tmp_path / "msr"
    result = CliRunner().invoke(app, ["msr", "--n", "2", "--no-pos-filter", "--no-lime", "--simulations", "2",
                                      "--iterations", "2", "--multi-sets", "1", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["length_limit"]["truncated"] == [] and summary["length_limit"]["max_words"] > 3

    def clashing(ctx, max_words: int = 3) -> None: ...

    with pytest.raises(TypeError, match="max_words"):
        o.with_shared_options("runs/x")(clashing)
