"""Counterfactual token bias (Zhang et al. 2021, Section 4): protected pairs, anchors,
B_{p,k} on victims with a built-in known bias (sign and size recovered, and a bias hidden
on the test set revealed by the neighbourhood), X_filter, sampling, tables, figures, the
run store, and the gender-swap augmentation through the zoo's training hook.

No real models: fill-ins are tables, victims closed-form functions, the zoo victim tiny.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from textrobust.analyses.bias import (
    NATIONALITY_WORDS,
    PROTECTED_GROUPS,
    AnchorMeasure,
    BiasSettings,
    GenderSwap,
    ProtectedGroup,
    bias_table,
    find_anchors,
    markdown_table,
    measure_anchor,
    pair_histogram,
    protected_groups,
    protected_words,
    write_bias_report,
)
from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError
from textrobust.analyses.second_order import Neighbourhood
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.query import QueryLayer


class WordFillIn:
    """A fill-in with known logits, by the word currently at the position (lower-cased)."""

    def __init__(self, table: Mapping[str, Sequence[tuple[str, float]]]) -> None:
        self.table = {w: list(v) for w, v in table.items()}

    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        return [list(self.table.get(t.words[p].lower(), []))[:k] for t, p in requests]


def biased_victim(bias: Mapping[str, float], *, when: str | None = None) -> FunctionVictim:
    """P(positive) = 0.5 + 0.3 tanh(#good - #bad) + sum of ``bias[w]`` for the words w of
    the text (only if ``when`` is in the text, when given): every swap he -> she moves
    P(positive) by exactly bias["she"] - bias["he"]."""

    def probs(texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            words = [w.lower() for w in Text.from_string(t).words]
            p = 0.5 + 0.3 * np.tanh(words.count("good") - words.count("bad"))
            if when is None or when in words:
                p += sum(bias.get(w, 0.0) for w in words)
            out.append([1 - p, p])
        return np.array(out)

    return FunctionVictim(probs, ("negative", "positive"), name="biased")


FILL = {"liked": [("liked", 5.0), ("loved", 4.5), ("hated", 4.0)], "film": [("film", 5.0), ("movie", 4.6), ("show", 4.2)],
        "the": [("the", 5.0), ("this", 4.0)], "he": [("he", 5.0), ("she", 4.9), ("it", 4.5)]}


def examples(*texts: str) -> list[Example]:
    return [Example(f"e{i}", Text.from_string(t), 1) for i, t in enumerate(texts)]


# ---- pairs and anchors --------------------------------------------------------------------------
def test_groups_and_blacklist() -> None:
    assert set(PROTECTED_GROUPS.names()) == {"gender", "nationality", "religion", "sexual_orientation"}
    gender = protected_groups(["gender"])[0]
    assert ("he", "she") in {(p.first, p.second) for p in gender.pairs}
    nationality = protected_groups(["nationality"])[0]
    assert len(nationality.pairs) == len(NATIONALITY_WORDS) * (len(NATIONALITY_WORDS) - 1) // 2
    words = protected_words(protected_groups(["all"]))
    assert {"he", "she", "gay", "straight", "muslim", "american"} <= words
    with pytest.raises(ConfigError):
        ProtectedGroup.from_pairs("bad", [("he", "he")])


def test_find_anchors_follows_x_p() -> None:
    gender = protected_groups(["gender"])
    data = examples("he liked the film", "he said he liked it", "he and she liked it", "She liked it")
    anchors = find_anchors(data, gender)
    assert [(a.example.id, a.position, a.word) for a in anchors] == [("e0", 0, "he")]
    both = find_anchors(data, gender, both_directions=True)
    assert [(a.example.id, a.word) for a in both] == [("e0", "he"), ("e3", "She")]
    reverse = both[1]
    assert reverse.partners[0][1] == -1 and reverse.replacement(*reverse.partners[0]) == "He"


# ---- B_{p,k} ------------------------------------------------------------------------------------
def measure(victim: FunctionVictim, texts: Sequence[str], config: BiasSettings, fill=FILL, **kw) -> list[AnchorMeasure]:
    layer = QueryLayer(victim)
    hood = Neighbourhood(WordFillIn(fill))
    anchors = find_anchors(examples(*texts), protected_groups(["gender"]), both_directions=config.both_directions)
    banned = protected_words(protected_groups(["all"]))
    return [measure_anchor(a, layer, hood, config, banned, **kw) for a in anchors]


def test_known_bias_sign_and_size_are_recovered() -> None:
    config = BiasSettings(max_k=3, exact_up_to=2, samples=40)
    texts = ["he liked the film", "he liked the good film", "he hated the bad film"]
    up = bias_table(measure(biased_victim({"she": 0.1}), texts, config), max_k=3)
    row = next(r for r in up if r.pair == "he,she")
    for k in range(4):
        assert row.b["test"][k] == pytest.approx(0.1, abs=1e-9)
        assert row.std["test"][k] == pytest.approx(0.0, abs=1e-6)
    assert row.originals == {"test": 3, "filter": 0}  # the bias is visible: X_filter is empty
    down = bias_table(measure(biased_victim({"she": -0.05}), texts, config), max_k=3)
    assert next(r for r in down if r.pair == "he,she").b["test"][3] == pytest.approx(-0.05, abs=1e-9)
    # sentences holding the second word measure the same difference (both directions)
    both = BiasSettings(max_k=1, both_directions=True)
    rows = bias_table(measure(biased_victim({"she": 0.1}), ["she liked the film"], both), max_k=1)
    assert next(r for r in rows if r.pair == "he,she").b["test"][1] == pytest.approx(0.1)


def test_hidden_bias_is_revealed_on_x_filter() -> None:
    # the bias exists only in sentences about a "movie": none in the test sentence, so
    # F_soft(x0) = 0 (x0 in X_filter), but one neighbour in Neighbor_1 says "movie"
    victim = biased_victim({"she": 0.2}, when="movie")
    config = BiasSettings(max_k=1, exact_up_to=1)
    records = measure(victim, ["he liked the film"], config)
    partner = next(p for p in records[0].partners if p.pair == "he,she")
    assert partner.in_filter and partner.f0 == pytest.approx(0.0)
    n1 = records[0].sizes[1]
    assert n1 == 2 + 1 + 2  # liked -> loved/hated, the -> this, film -> movie/show; "he" frozen
    row = next(r for r in bias_table(records, max_k=1) if r.pair == "he,she")
    assert row.b["filter"][0] == pytest.approx(0.0)
    assert row.b["filter"][1] == pytest.approx(0.2 / n1)
    assert row.table5(1) == (1, n1)


def test_blacklist_keeps_protected_words_out() -> None:
    fill = {**FILL, "it": [("it", 5.0), ("she", 4.9), ("him", 4.8), ("that", 4.0)]}
    layer = QueryLayer(biased_victim({}))
    hood = Neighbourhood(WordFillIn(fill))
    anchor = find_anchors(examples("he liked it"), protected_groups(["gender"]))[0]
    record = measure_anchor(anchor, layer, hood, BiasSettings(max_k=1), protected_words(protected_groups(["all"])))
    assert record.sizes[1] == 2 + 1  # liked -> loved/hated, it -> that; she/him banned


def test_sampling_is_seeded_and_shared_between_victims() -> None:
    config = BiasSettings(max_k=3, exact_up_to=1, samples=30)
    texts = ["he liked the film"]
    a = measure(biased_victim({"she": 0.1}), texts, config, seed=3)[0]
    b = measure(biased_victim({"she": -0.3}), texts, config, seed=3)[0]
    assert a.sizes == b.sizes and a.sampled_from_k == 2
    assert 1 <= a.sizes[3] <= 30
    stats = a.partners[0].by_k[3]
    assert sum(count for _, count in stats.histogram) == stats.count == a.sizes[3]
    c = measure(biased_victim({"she": 0.1}), texts, config, seed=4)[0]
    assert c.sizes[1] == a.sizes[1]  # the exact part does not depend on the seed


def test_table_markdown_histograms_and_figures(tmp_path: Path) -> None:
    victim = biased_victim({"she": 0.2}, when="movie")
    records = measure(victim, ["he liked the film", "he liked the good film"],
                      BiasSettings(max_k=2, exact_up_to=2, samples=20))
    rows = bias_table(records, max_k=2)
    text = markdown_table(rows, max_k=2)
    assert text.splitlines()[0].startswith("| pair |") and "he,she" in text
    edges, counts = pair_histogram(records, "he,she", 1, subset="filter")
    assert len(edges) == len(counts) + 1 and counts.sum() == rows[0].texts["filter"][1]
    files = write_bias_report(records, tmp_path / "report", max_k=2, title="toy")
    for name in ("json", "markdown", "bias_vs_k_png", "bias_vs_k_svg", "histograms_png", "histograms_svg"):
        assert Path(files[name]).is_file() and Path(files[name]).stat().st_size > 0


# ---- the analysis on the protocol, and the CLI ---------------------------------------------------
BIAS_TEXTS = ("he liked the film", "his film", "nothing", "he liked the good film")


def bias_data() -> Dataset:
    return Dataset("toy", tuple(examples(*BIAS_TEXTS)), ("negative", "positive"), "test")


@pytest.fixture
def table_fill_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis loads its fill-in by name: point it at the table."""
    monkeypatch.setattr("textrobust.fill_in.neighbourhood.load_fill_in", lambda name=None, placement=None: WordFillIn(FILL))


def test_analysis_units_records_and_codec(table_fill_in: None) -> None:
    import json

    from textrobust.analyses.bias.analysis import BiasAnalysis, BiasRecord
    from textrobust.analyses.protocol import WorkerContext
    from textrobust.records import decode, encode

    analysis = BiasAnalysis({"n": None, "max_k": 2, "exact_up_to": 1, "samples": 10})
    units = analysis.units(bias_data())
    assert [uid for uid, _ in units] == ["e0@0", "e1@0", "e3@0"]
    analyse = analysis.worker(WorkerContext(QueryLayer(biased_victim({"she": 0.1, "her": 0.05})),
                                            ("negative", "positive"), seed=3))
    records = [analyse(anchor) for _, anchor in units]
    assert records[0].example_id == "e0@0" and records[0].queries == records[0].measure.queries > 0
    for record in records:
        back = decode(BiasRecord, json.loads(json.dumps(encode(record))))
        assert back == record and isinstance(back.measure, AnchorMeasure)
    # the analysis measures what the method does with the analysis's own settings and the run's seed
    direct = measure_anchor(units[0][1], QueryLayer(biased_victim({"she": 0.1, "her": 0.05})),
                            Neighbourhood(WordFillIn(FILL)), analysis.settings,
                            protected_words(protected_groups(["all"])), seed=3)
    assert direct.partners == records[0].measure.partners and direct.sizes == records[0].measure.sizes
    s = analysis.summarise(records, [])
    pairs = {row.pair: row for row in s.pairs}
    assert pairs["he,she"].b["test"][1] == pytest.approx(0.1) and pairs["his,her"].b["test"][0] == pytest.approx(0.05)
    assert s.units == 3 and s.soft_class == 1 and s.texts == sum(sum(r.measure.sizes) for r in records)
    section = analysis.section(s, records, [], ("negative", "positive")).to_dict()
    assert [t["title"] for t in section["tables"]] == ["B_(p,k) on X_filter, f_soft = P(positive)",
                                                        "B_(p,k) on X_test, f_soft = P(positive)"]
    assert section["tables"][1]["rows"][0][3] == "+0.1000" and section["figures"]
    # issue 27: B comes with its scale, and every figure with its meaning
    assert all("from -1 to +1" in t["note"] for t in section["tables"])
    assert all(h["note"] for h in section["headline"])


def test_describe_keeps_the_layout_runs_were_stored_with() -> None:
    # resuming compares the stored configuration key by key: the measurement's part keeps
    # the layout runs were stored with before there was one settings class
    from textrobust.analyses.bias.analysis import BiasAnalysis

    described = BiasAnalysis({"max_k": 2, "exact_up_to": 2, "samples": 5, "label": 0, "kappa": 4}).describe()
    assert described["bias"] == {"max_k": 2, "exact_up_to": 2, "samples": 5, "enumerate_limit": 200_000,
                                 "eps": 0.005, "label": 0, "both_directions": False, "bins": 2000, "seed": 0}
    assert described["settings"]["kappa"] == 4 and "exact_up_to" in described["settings"]


def test_summary_of_no_records_is_nan_not_zero() -> None:
    import math

    from textrobust.analyses.bias.analysis import BiasAnalysis

    analysis = BiasAnalysis()
    s = analysis.summarise([], [])
    assert s.units == 0 and s.pairs == () and s.soft_class is None
    assert math.isnan(s.largest_filter_bias)
    section = analysis.section(s, [], [], ("negative", "positive")).to_dict()
    values = {h["label"]: h["value"] for h in section["headline"]}
    assert values["in X_filter"] is None and values["largest |B| on X_filter at k=3"] is None
    assert section["figures"] == [] and section["tables"] == []  # nothing measured: no empty tables
    assert "raise --n" in section["point"]


def test_analysis_settings_are_validated() -> None:
    from textrobust.analyses.bias.analysis import BiasAnalysis

    with pytest.raises(ConfigError, match="'group'"):
        BiasAnalysis({"group": ("gender", "colour")})
    with pytest.raises(ConfigError, match="'eps'"):
        BiasAnalysis({"eps": 0})
    with pytest.raises(ConfigError, match="'fill_in'"):
        BiasAnalysis({"fill_in": "bert"})
    assert BiasAnalysis({"group": ["all"]}).settings.group == ("all",)
    from textrobust.analyses.protocol import WorkerContext

    with pytest.raises(ConfigError, match="'label'.*from 0 to 1"):
        BiasAnalysis({"label": 2}).worker(WorkerContext(QueryLayer(biased_victim({})), ("negative", "positive")))


def test_audit_run_resumes_the_bias_analysis(tmp_path: Path, table_fill_in: None) -> None:
    from textrobust import audit

    settings = {"n": 2, "max_k": 2, "exact_up_to": 1, "samples": 10}
    first = audit.run(biased_victim({"she": 0.1}), bias_data(), {"bias": settings}, tmp_path, progress=False,
                      report=False)
    assert first["bias"].computed == 2 and (tmp_path / "store.sqlite").is_file()
    resumed = audit.run(biased_victim({"she": 0.1}), bias_data(), {"bias": settings}, tmp_path, progress=False,
                        report=False, resume=True)
    assert resumed["bias"].computed == 0 and resumed["bias"].resumed == 2
    assert resumed["bias"].summary.to_dict() == first["bias"].summary.to_dict()  # NaN != NaN: compare as JSON


def test_cli_runs_the_analysis_into_a_store_and_report(tmp_path: Path, table_fill_in: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli.app import app

    real = audit.run
    monkeypatch.setattr(audit, "run", lambda victim, data, *args, **kw: real(biased_victim({"she": 0.1}),
                                                                            bias_data(), *args, **kw))
    out = tmp_path / "bias"
    result = CliRunner().invoke(app, ["bias", "--n", "2", "--max-k", "2", "--exact-up-to", "1", "--samples", "10",
                                      "--quiet", "--out", str(out)], terminal_width=80, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert (out / "store.sqlite").is_file() and (out / "report.json").is_file()
    assert max(len(line) for line in result.output.splitlines()
               if not line.startswith(("store: ", "report: "))) <= 80  # paths print whole (issue 49)
    assert "he,she" in result.output and "+0.1000" in result.output
    report = json.loads((out / "report.json").read_text())
    section = next(s for s in report["analyses"] if s["name"] == "bias")
    assert section["counts"]["units"] == 2  # the anchors of "he liked the film" and "his film"
    again = CliRunner().invoke(app, ["bias", "--quiet", "--out", str(out), "--resume"], terminal_width=80, env={"COLUMNS": "80"})
    assert again.exit_code == 0 and "0 units computed now, 2 resumed" in again.output, again.output
    bad = CliRunner().invoke(app, ["bias", "--group", "colour", "--out", str(tmp_path / "bad")], terminal_width=200)
    assert bad.exit_code == 2 and "--group" in bad.output


# ---- debiasing by gender swap -------------------------------------------------------------------
def test_gender_swap() -> None:
    swap = GenderSwap()
    out = swap(Example("1", Text.from_string("The Actor and his wife."), 0))
    assert [str(e.text) for e in out] == ["The Actor and his wife.", "The Actress and her husband."]
    assert out[1].id == "1+swap" and out[1].label == 0
    assert swap(Example("2", Text.from_string("A dull film."), 1)) == [Example("2", Text.from_string("A dull film."), 1)]
    assert [str(e.text) for e in GenderSwap(keep_original=False)(Example("3", Text.from_string("she"), 1))] == ["he"]


def test_gender_swap_through_the_zoo_hook(tmp_path: Path) -> None:
    from textrobust.zoo import TrainingData, train_victim

    def split(name: str, n: int) -> Dataset:
        rows = [Example(f"{name}{i}", Text.from_string(f"{'he' if i % 2 else 'she'} was {'good' if i % 2 else 'bad'}"),
                        i % 2) for i in range(n)]
        return Dataset("toy", tuple(rows), ("negative", "positive"), name)

    data = TrainingData(split("train", 12), split("dev", 4), split("test", 4))
    trained = train_victim("bow", data, out=tmp_path / "bow", config={"embed_dim": 4},
                           training={"epochs": 1, "extra_words": 0, "max_length": 8, "vectors": "random"},
                           augment=GenderSwap())
    assert trained.card.splits["train_used"] == 24
    assert trained.card.augment.startswith("GenderSwap(")


def test_exports_and_light_import() -> None:
    import subprocess
    import sys

    import textrobust.analyses.bias as package

    public = {n for n in dir(package) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(package, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(package.__all__)
    code = ("import sys, textrobust.analyses.bias\n"
            "print(','.join(m for m in ('torch', 'transformers', 'matplotlib', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# ---- issue 27, item 9: a run without anchors says why; --label is checked against the victim ---------
NO_ANCHOR_TEXTS = ("a fine film", "he said he liked it", "she liked it", "he and she liked it")


def no_anchor_data() -> Dataset:
    return Dataset("toy", tuple(examples(*NO_ANCHOR_TEXTS)), ("negative", "positive"), "test")


def test_scan_counts_every_filter_that_removed_a_protected_word() -> None:
    from textrobust.analyses.bias import scan_anchors

    groups = protected_groups(["gender"])
    scan = scan_anchors(no_anchor_data(), groups)
    assert (scan.examples, scan.with_word, scan.with_anchor, scan.anchors) == (4, 3, 0, 0)
    # "he said he": repeated; "she liked": a pair's second word; "he and she": both words next to their partner
    assert (scan.repeated, scan.second_word, scan.partner_present, scan.frozen) == (1, 1, 2, 0)
    assert scan.anchors == len(find_anchors(no_anchor_data(), groups))
    both = scan_anchors(no_anchor_data(), groups, both_directions=True)
    assert both.anchors == len(find_anchors(no_anchor_data(), groups, both_directions=True)) == 1  # "she liked it"
    assert both.reason() is None
    reason = scan.reason()
    assert reason is not None and "4 examples scanned" in reason and "3 hold a gender word" in reason
    assert "--n" in reason and "--both-directions" in reason
    nothing = scan_anchors(no_anchor_data().take(1), groups)
    assert "none holds a gender word" in (nothing.reason() or "") and "--n" in (nothing.reason() or "")
    # the scan counts exactly what find_anchors finds, on the bias test sentences too
    assert scan_anchors(bias_data(), groups).anchors == len(find_anchors(bias_data(), groups)) == 3


def test_cli_without_anchors_says_why_and_how_to_get_some(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's case: ``bias --n 4`` over sentences with no usable protected word. The
    old run reported 0 anchors, empty tables and no reason."""
    import json

    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli.app import app

    real = audit.run
    monkeypatch.setattr(audit, "run", lambda victim, data, *args, **kw: real(biased_victim({"she": 0.1}),
                                                                            no_anchor_data(), *args, **kw))
    out = tmp_path / "bias"
    result = CliRunner().invoke(app, ["bias", "--n", "4", "--quiet", "--out", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "examples scanned" in said and "4 examples scanned, 3 hold a gender word" in said
    assert "1 repeated in its sentence" in said and "2 next to its pair's other word" in said
    assert "--both-directions" in said and "Raise --n" in said
    assert "B_(p,k) on X_test" not in said  # no empty tables
    summary = json.loads((out / "summary.json").read_text())["analyses"]["bias"]["summary"]
    assert summary["units"] == 0
    assert summary["scan"] == {"examples": 4, "with_word": 3, "with_anchor": 0, "anchors": 0, "repeated": 1,
                               "second_word": 1, "frozen": 0, "partner_present": 2, "groups": ["gender"],
                               "both_directions": False}
    report = json.loads((out / "report.json").read_text())
    section = next(s for s in report["analyses"] if s["name"] == "bias")
    assert "4 examples scanned" in section["point"] and "--n" in section["point"]
    assert "4 examples scanned" in (out / "report.html").read_text()
    # the report rebuilt from the store says the same (the scan is stored with the run)
    from textrobust.audit import rebuild_report

    rebuild_report(out)
    rebuilt = json.loads((out / "report.json").read_text())
    assert next(s for s in rebuilt["analyses"] if s["name"] == "bias")["point"] == section["point"]


def test_cli_rejects_a_label_outside_the_victims_classes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``bias --n 2 --label 5`` on a two-class victim printed "f_soft = P(5)" and exited 0."""
    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli.app import app

    real = audit.run
    monkeypatch.setattr(audit, "run", lambda victim, data, *args, **kw: real(biased_victim({"she": 0.1}),
                                                                            no_anchor_data(), *args, **kw))
    out = tmp_path / "bias"
    result = CliRunner().invoke(app, ["bias", "--n", "2", "--label", "5", "--quiet", "--out", str(out)],
                                terminal_width=200)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "--label" in said and "Got 5" in said and "0 (negative) or 1 (positive)" in said
    assert "P(5)" not in said and "Traceback" not in said
    assert not (out / "store.sqlite").exists()  # refused before any work
    ok = CliRunner().invoke(app, ["bias", "--n", "2", "--label", "1", "--quiet", "--out", str(out)],
                            terminal_width=200)
    assert ok.exit_code == 0, ok.output


def test_audit_checks_the_label_before_running_anything(tmp_path: Path) -> None:
    from textrobust import audit

    with pytest.raises(ConfigError, match=r"'label'.*0 \(negative\) or 1 \(positive\)\. Got 2"):
        audit.run(biased_victim({}), bias_data(), {"bias": {"n": 2, "label": 2}}, tmp_path / "run", progress=False,
                  report=False)
    assert not (tmp_path / "run").exists()


def test_an_audit_without_anchors_loads_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: ``audit --n 3`` spent minutes in bias to find no anchor. Anchors are a
    word-list match on the sentences' words; with none, no fill-in is loaded and the
    victim is never asked (the scan says why there are none)."""
    from textrobust import audit
    from textrobust.fill_in import neighbourhood

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fill-in was loaded although there is no anchor")

    monkeypatch.setattr(neighbourhood, "load_fill_in", no_model)
    result = audit.run(biased_victim({}), no_anchor_data(), {"bias": {"n": 4}}, tmp_path, progress=False,
                       report=False, threads=None)
    bias = result["bias"]
    assert bias.summary.units == 0 and bias.queries == 0 and bias.computed == 0
    assert bias.summary.scan is not None and "4 examples scanned" in (bias.summary.scan.reason() or "")
