"""PR's kept misclassified samples as review findings (issue 40, items 1-4).

The PR analysis (Yang et al. 2022, equations 6-9) keeps the first misclassified texts it
draws for each example; ``textrobust review`` shows each as a finding; the reviewed
figure (the share of examples falsified by a confirmed sample) follows the judgements
with an interval; a run written before the samples were kept still loads, reviews and
reports; ``audit --require`` takes the reviewed keys, read at their interval's hardest end.
Tiny word-list victims and hand-written synonym tables: no model is loaded.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from textrobust.analyses.radius.analysis import FALSIFIED_LABEL, PRMetricAnalysis, PRRecord
from textrobust.analyses.radius.method import PRAnalysis, PRResult
from textrobust.analyses.radius.pr import PRConfig, PREstimate, PRSample, PRSwap, estimate_pr
from textrobust.analyses.radius.settings import PRMetricSettings
from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.searches.search_testing import DictSource
from textrobust.attack.space import PerturbationSpace
from textrobust.audit.requirements import check, check_keys, declared_figures, parse_requirements, \
    reviewed_figure_keys
from textrobust.cli.app import app
from textrobust.data.examples import Example
from textrobust.errors import ConfigError
from textrobust.records import decode, encode
from textrobust.report.reviewed import FIGURES, ReviewState, findings, reviewed_figures, run_findings
from textrobust.store import RunStore
from textrobust.text import Text
from textrobust.validity.reviews import ReviewLog
from textrobust.victims.query import QueryLayer
from textrobust.victims.testing import WordListVictim

LABELS = ["negative", "positive"]
VICTIM = WordListVictim(["good", "great", "fine"], ["bad", "dull", "awful", "poor"])
runner = CliRunner()


def _space() -> PerturbationSpace:
    """A planted space: 'good', 'great' and 'fine' each have a substitute that keeps the
    label and one or two that flip it."""
    x = Text.from_string("a good film with great acting and a fine plot")
    return PerturbationSpace(x, (1, 4, 8), (("nice", "bad"), ("grand", "dull", "awful"), ("okay", "poor")))


def _misclassified(texts: list[Text], label: int) -> list[Text]:
    return [t for t in texts if int(VICTIM.probabilities([t])[0].argmax()) != label]


# ---- item 1: the samples kept ---------------------------------------------------------------------
@pytest.mark.parametrize("batch", [1, 4, 1024])
def test_an_exact_estimate_keeps_the_first_misclassified_texts_enumerated(batch: int) -> None:
    space, label = _space(), 1
    goal = UntargetedClassification(QueryLayer(VICTIM, cache_size=0), label)
    estimate = estimate_pr(space, goal.evaluate, random.Random(0), PRConfig(batch_size=batch), radius=2)
    ball = list(space.ball(2))
    wrong = _misclassified(ball, label)
    assert estimate.exact and estimate.evaluated - estimate.robust == len(wrong) > 3
    assert [s.text(space.original) for s in estimate.samples] == wrong[:3]  # the first three, in order
    assert [s.draw for s in estimate.samples] == [ball.index(t) for t in wrong[:3]]
    for sample in estimate.samples:
        text = sample.text(space.original)
        assert [(w.position, w.word, w.substitute) for w in sample.swaps] == \
            [(p, space.original.words[p], text.words[p]) for p in space.original.diff(text)]
        assert sample.probabilities == pytest.approx(tuple(VICTIM.probabilities([text])[0]))
        assert sample.probabilities[label] <= 0.5  # the victim's probability of the true class (0.5: a tie)


def test_a_sampled_estimate_keeps_the_first_misclassified_draws() -> None:
    space, label = _space(), 1
    config = PRConfig(samples=300, exact_limit=0, batch_size=7, keep=4)
    goal = UntargetedClassification(QueryLayer(VICTIM), label)
    estimate = estimate_pr(space, goal.evaluate, random.Random(11), config, radius=3)
    rng, size = random.Random(11), space.size(3)
    drawn = [space.text(space.unrank(rng.randrange(size), 3)) for _ in range(300)]  # the same draws
    first = [i for i, t in enumerate(drawn) if t in set(_misclassified(drawn, label))][:4]
    assert not estimate.exact and [s.draw for s in estimate.samples] == first
    assert [s.text(space.original) for s in estimate.samples] == [drawn[i] for i in first]
    again = estimate_pr(space, goal.evaluate, random.Random(11), config, radius=3)
    assert again.samples == estimate.samples  # deterministic
    none = estimate_pr(space, goal.evaluate, random.Random(11), config.model_copy(update={"keep": 0}), radius=3)
    assert none.samples == () and none.pr == estimate.pr  # keeping samples changes no figure


@pytest.mark.parametrize("samples", [None, 200])
def test_the_word_id_path_keeps_the_same_samples(samples: int | None) -> None:
    from test_prover_ids import _space as id_space
    from test_prover_ids import _victim as id_victim

    from textrobust.attack.searches.exhaustive import WordIdPath
    from textrobust.attack.space import space_rng

    for seed in range(3):
        victim = id_victim("bow", seed)
        space = id_space("a good film and the very good cast was fun")
        label = int(victim.probabilities([space.original]).argmax())
        config = PRConfig(samples=samples, exact_limit=0, batch_size=16, keep=5) if samples else \
            PRConfig(batch_size=16, keep=5)
        kept = []
        for fast in (False, True):
            goal = UntargetedClassification(QueryLayer(victim, cache_size=0), label)
            estimate = estimate_pr(space, goal.evaluate, space_rng(seed, space.original), config, radius=3,
                                   ids=WordIdPath.of(goal) if fast else None)
            kept.append([(s.draw, s.swaps, np.round(s.probabilities, 5).tolist()) for s in estimate.samples])
        assert kept[0] == kept[1]
        assert len(kept[0]) == min(5, estimate.evaluated - estimate.robust)


def test_the_analysis_stores_the_text_its_probabilities_and_the_samples() -> None:
    source = DictSource({"good": ["nice", "bad"], "great": ["grand", "dull"], "fine": ["okay", "poor"]})
    example = Example("e", Text.from_string("a good film with great acting and a fine plot"), 1)
    result = PRAnalysis(VICTIM, PRMetricSettings(keep=2), source=source).analyse(example)
    assert result.text == example.text and result.falsified and result.estimate is not None
    assert result.probabilities == pytest.approx(tuple(VICTIM.probabilities([example.text])[0]))
    assert len(result.estimate.samples) == 2
    record = PRRecord("e", "scored", result.queries, 0.1, result)
    assert decode(PRRecord, json.loads(json.dumps(encode(record)))) == record  # stored and read back whole
    assert PRMetricSettings(keep=5).pr_config().keep == 5 and PRMetricSettings().keep == 3
    with pytest.raises(ConfigError):
        PRMetricSettings(keep=-1)
    with pytest.raises(ConfigError):
        PRMetricAnalysis({"keep": 101})


def test_the_report_section_shows_the_falsified_share_and_the_samples() -> None:
    analysis = PRMetricAnalysis({"candidates": "paper"})
    records = [_record("a", [_sample(0, 1)], 10, 7), _record("b", [], 10, 10)]
    summary = analysis.summarise(records, [])
    assert (summary.pr.falsified, summary.pr.falsified_share) == (1, 0.5)
    section = analysis.section(summary, records, [], LABELS)
    heads = {h.label: h.value for h in section.headline}
    assert heads[FALSIFIED_LABEL] == 0.5 and FIGURES["pr"][0][1] == FALSIFIED_LABEL  # the twin's label
    [row] = section.examples
    assert row.id == "a" and row.status == "misclassified sample" and row.prediction_after == "negative"
    assert "sample 1 of 10 drawn; 3 misclassified" in (row.note or "")


# ---- a PR run, as the analysis stores it ----------------------------------------------------------
TEXT = Text.from_string("a good film with great acting")


def _sample(draw: int, *positions: int) -> PRSample:
    subs = {1: "bad", 4: "dull"}
    return PRSample(draw, tuple(PRSwap(p, TEXT.words[p], subs[p]) for p in positions), (0.7, 0.3))


def _record(example_id: str, samples: list[PRSample], evaluated: int, robust: int, *,
            skipped: bool = False) -> PRRecord:
    if skipped:
        return PRRecord(example_id, "skipped", 1, 0.1, PRResult(example_id, 1, 6, 0, 1))
    estimate = PREstimate(1, 40, evaluated, robust, robust / evaluated, robust / evaluated, robust / evaluated, 0.0,
                          0.005, True, 0.1, tuple(samples))
    return PRRecord(example_id, "scored", evaluated + 1, 0.1,
                    PRResult(example_id, 1, 6, 1, evaluated + 1, 2, estimate, TEXT, (0.2, 0.8)))


def _old(data: dict[str, Any]) -> dict[str, Any]:
    """A record as a store written before the samples were kept holds it."""
    result = dict(data["result"])
    for key in ("text", "probabilities"):
        result.pop(key)
    if result.get("estimate") is not None:
        result["estimate"] = {k: v for k, v in result["estimate"].items() if k != "samples"}
    return {**data, "result": result}


def _pr_run(folder: Path, records: list[PRRecord], *, old: bool = False) -> Path:
    from textrobust.audit import rebuild_report

    folder.mkdir(parents=True, exist_ok=True)
    settings = PRMetricSettings(candidates="paper").to_dict()
    if old:
        settings.pop("keep")
    with RunStore(folder / "store.sqlite") as store:
        run = store.start_run("pr", {"analysis": "pr", "settings": settings, "victim": "toy", "data_name": "toy",
                                     "data_split": "all", "label_names": LABELS, "data_examples": len(records)},
                              seed=0)
        for i, record in enumerate(records):
            data = encode(record)
            run.record(record.example_id, _old(data) if old else data, position=i, queries=record.queries,
                       seconds=record.seconds)
    summary = PRMetricAnalysis({"candidates": "paper"}).summarise(records, []).to_dict()
    (folder / "summary.json").write_text(json.dumps(encode({"schema": "textrobust.summary/1", "verdict": {},
                                                            "analyses": {"pr": {"run_id": run.run_id,
                                                                                "summary": summary}}})))
    rebuild_report(folder)
    return folder


RECORDS = [
    _record("A", [_sample(2, 1), _sample(5, 4)], 40, 30),  # one sample confirmed: falsified
    _record("B", [_sample(1, 1), _sample(3, 1, 4)], 40, 35),  # both rejected, 5 misclassified: unsettled
    _record("C", [_sample(0, 4)], 40, 39),  # its one sample unreviewed: open
    _record("D", [], 40, 38),  # falsified, no sample kept (keep = 0): open, unstored
    _record("E", [], 40, 40),  # robust on every draw
    _record("F", [], 1, 1, skipped=True),  # misclassified: not scored
]


def _judge(folder: Path, item: str, reviewer: str, verdict: str, reason: str | None = None) -> None:
    found = {f.item: f for f in run_findings(folder).findings}
    with RunStore(folder / "store.sqlite") as store:
        ReviewLog(store).record(found[item].run_id, item, reviewer, verdict, reason)


# ---- item 2: the findings and the page -------------------------------------------------------------
def test_each_kept_sample_is_a_finding_with_its_swaps_and_probabilities(tmp_path: Path) -> None:
    found = run_findings(_pr_run(tmp_path / "run", RECORDS)).findings
    assert [f.item for f in found] == ["pr/A/1", "pr/A/2", "pr/B/1", "pr/B/2", "pr/C/1"]
    first = found[0]
    assert first.kind == "PR misclassified sample" and first.original == TEXT
    assert str(first.perturbed) == "a bad film with great acting" and first.among == 10
    assert [(s.position, s.before, s.after, s.kind) for s in first.swaps] == [(1, "good", "bad", "substitution")]
    lines = dict(first.lines)
    assert lines["probability of the label (positive)"] == "0.800 -> 0.300"
    assert lines["prediction"] == "positive -> negative"
    assert "text 3 of 40 enumerated" in lines["sample"] and "10 of them misclassified" in lines["sample"]


def test_the_review_page_shows_a_pr_sample_and_stores_its_judgement(tmp_path: Path) -> None:
    from review_fixtures import serving
    from test_review_server import _page, _request

    run = _pr_run(tmp_path / "run", RECORDS)
    with serving(run, "ann") as server:
        page = _page(server, item="pr/B/2")
        assert "PR misclassified sample" in page and "a misclassified text drawn from its perturbation space" in page
        assert "<ins><bdi>bad</bdi></ins>" in page and "<ins><bdi>dull</bdi></ins>" in page  # each swap marked
        assert "probability of the label (positive)" in page and "0 / 5" in page
        status, _, _ = _request(server.port, "POST", "/judge", {"token": server.token, "item": "pr/B/2",
                                                                "verdict": "invalid", "reason": "antonym",
                                                                "blamed": ["4"]})
        assert status == 303
        assert "1 / 5" in _page(server)
    with RunStore(run / "store.sqlite") as store:
        [judged] = ReviewLog(store).judgements()
    assert (judged.item, judged.reason, judged.blamed) == ("pr/B/2", "antonym", (4,))


# ---- item 3: the reviewed figure ------------------------------------------------------------------
def test_the_reviewed_falsified_share_follows_the_rule(tmp_path: Path) -> None:
    run = _pr_run(tmp_path / "run", RECORDS)
    _judge(run, "pr/A/1", "ann", "invalid", "antonym")
    _judge(run, "pr/A/2", "ann", "valid")
    _judge(run, "pr/B/1", "ann", "invalid", "antonym")
    _judge(run, "pr/B/2", "ann", "invalid", "sentiment")
    result = runner.invoke(app, ["review", str(run), "--report"])
    assert result.exit_code == 0, result.output
    entry = json.loads((run / "summary.json").read_text())["analyses"]["pr"]
    block = entry["reviewed"]
    # 5 scored (F skipped); automatic: A, B, C, D falsified = 4 / 5
    assert entry["summary"]["pr"]["falsified_share"] == pytest.approx(0.8)
    assert (block["findings"], block["judged"], block["confirmed"], block["rejected"]) == (5, 4, 1, 3)
    assert (block["examples_confirmed"], block["examples_rejected"], block["unsettled"], block["unstored"]) == \
        (1, 1, 1, 1)
    assert block["falsified_share"] == block["falsified_share_low"] == pytest.approx(1 / 5)  # A
    assert block["falsified_share_high"] == pytest.approx(3 / 5)  # A, C (open), D (unstored)
    html = (run / "report.html").read_text()
    assert "4 of 5 findings judged" in html and "has no confirmed counter-example among those kept" in html
    assert "<td class=\"num\">80.0%</td><td class=\"num\">20.0%</td><td class=\"num\">20.0% .. 60.0%</td>" in html
    gate = runner.invoke(app, ["gate", str(run), "--require", "pr.reviewed.falsified_share_high<=0.6",
                               "--require", "pr.reviewed.unsettled<=0"])
    assert gate.exit_code == 3, gate.output
    assert "pr.reviewed.falsified_share_high = 0.60" in gate.output and "pr.reviewed.unsettled = 1" in gate.output


def test_every_sample_of_an_example_confirmed_or_rejected_settles_it(tmp_path: Path) -> None:
    records = [_record("A", [_sample(0, 1)], 3, 2), _record("B", [_sample(0, 4)], 3, 2)]  # all draws kept
    found = findings("pr", "run", records, LABELS)
    state = ReviewState({(f.item, "ann"): _said(f.item, ok) for f, ok in zip(found, (True, False))})
    block = reviewed_figures("pr", PRMetricAnalysis({"candidates": "paper"}).summarise(records, []), found, state)
    assert block is not None and block["unsettled"] == 0  # B's one misclassified draw was read and rejected
    assert block["falsified_share"] == block["falsified_share_high"] == 0.5


def _said(item: str, valid: bool) -> Any:
    from textrobust.validity.reviews import Judgement, Verdict

    return Judgement(1, "run", item, "ann", Verdict.VALID if valid else Verdict.INVALID,
                     None if valid else "sense", (), "")


def test_confirmed_pr_swaps_are_exported_as_labels(tmp_path: Path) -> None:
    run = _pr_run(tmp_path / "run", RECORDS)
    _judge(run, "pr/A/2", "ann", "valid")
    out = tmp_path / "labels.tsv"
    result = runner.invoke(app, ["review", str(run), "--export", str(out)])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in out.read_text().splitlines() if line and not line.startswith("#")]
    assert any("great" in row and "dull" in row and "a good film with great acting" in row for row in rows[1:])


# ---- a run stored before the samples were kept ------------------------------------------------------
def test_a_run_stored_before_the_samples_loads_reviews_and_reports(tmp_path: Path) -> None:
    run = _pr_run(tmp_path / "run", RECORDS, old=True)
    with RunStore(run / "store.sqlite") as store:
        stored = store.latest_run("pr")
        assert stored is not None
        payload = next(iter(stored.results())).payload
    assert "text" not in payload["result"] and "samples" not in payload["result"]["estimate"]  # the old layout
    found = run_findings(run)
    assert len(found) == 0 and found.run_ids  # read, with nothing to review
    result = runner.invoke(app, ["review", str(run), "--report"])
    assert result.exit_code == 0, result.output
    entry = json.loads((run / "summary.json").read_text())["analyses"]["pr"]
    assert entry["summary"]["pr"]["falsified"] == 4
    block = entry["reviewed"]
    assert (block["findings"], block["unstored"], block["falsified_share_low"]) == (0, 4, 0.0)
    assert block["falsified_share_high"] == pytest.approx(0.8)  # nothing to read: every falsified one open
    section = next(s for s in json.loads((run / "report.json").read_text())["analyses"] if s["name"] == "pr")
    assert section["examples"] == []  # no sample to show
    assert runner.invoke(app, ["review", str(run), "--judge", "next=valid"]).exit_code == 0  # nothing to judge


# ---- item 4: audit --require takes the reviewed keys ------------------------------------------------
def test_the_audit_knows_the_reviewed_keys_before_the_run() -> None:
    keys, prefixes = declared_figures(["attack", "pr"])
    reviewed = reviewed_figure_keys(["attack", "pr", "evaluate"])
    assert {"attack.reviewed.accuracy_under_attack_low", "pr.reviewed.falsified_share", "pr.reviewed.unsettled"} \
        <= reviewed and not any(k.startswith("evaluate.") for k in reviewed)
    check_keys(parse_requirements(["attack.reviewed.accuracy_under_attack>=0.3"]), keys | reviewed, prefixes)
    with pytest.raises(ConfigError, match="not a figure"):
        check_keys(parse_requirements(["attack.reviewed.accuracy_under_attack>=0.3"]), keys, prefixes)


def test_the_audit_reads_a_reviewed_figure_at_its_hardest_end() -> None:
    values = {"attack.units": 6, "attack.reviewed.accuracy_under_attack": 0.8,
              "attack.reviewed.accuracy_under_attack_low": 0.2, "attack.reviewed.accuracy_under_attack_high": 0.8}
    at_least, at_most, low = parse_requirements(["attack.reviewed.accuracy_under_attack>=0.5",
                                                 "attack.reviewed.accuracy_under_attack<=0.5",
                                                 "attack.reviewed.accuracy_under_attack_low>=0.1"])
    audit = check([at_least, at_most, low], values, reviewed_end=True)
    assert [o.value for o in audit] == [0.2, 0.8, 0.2] and not any(o.passed for o in audit[:2]) and audit[2].passed
    assert "(at its interval's low end, attack.reviewed.accuracy_under_attack_low" in audit[0].message
    assert "at its interval's high end" in audit[1].message
    bare = check([at_least, at_most], values)  # without reviewed_end: the confirmed-only value
    assert [o.value for o in bare] == [0.8, 0.8] and bare[0].passed
    done = {**values, "attack.reviewed.accuracy_under_attack_low": 0.8}  # every finding reviewed: the ends meet
    reviewed = check([at_least, at_most], done, reviewed_end=True)
    assert [o.value for o in reviewed] == [0.8, 0.8] and reviewed[0].passed and "interval" not in reviewed[0].message


def _use_toy_pr_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pr analysis of an audit on the word-list victim over a hand-written synonym table."""
    from textrobust import audit
    from textrobust.analyses import ANALYSES
    from textrobust.data.examples import Dataset

    source = DictSource({"good": ["nice", "bad"], "great": ["grand", "dull"], "fine": ["okay", "poor"]})
    texts = ["a good film with great acting and a fine plot", "a good film", "great and fine, a good film"]
    data = Dataset("toy", tuple(Example(f"ex{i}", Text.from_string(t), 1) for i, t in enumerate(texts)),
                   tuple(LABELS), split="test")
    real = audit.run

    def run(_victim: Any, _data: Any, analyses: Any, *args: Any, **kwargs: Any) -> Any:
        built = [ANALYSES.get(name)(settings, source=source) for name, settings in analyses.items()]
        return real(VICTIM, data, built, *args, **kwargs)

    monkeypatch.setattr(audit, "run", run)


def test_audit_require_takes_a_reviewed_key_and_reads_its_hardest_end(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_pr_world(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["audit", "--analyses", "pr", "--out", str(out), "--quiet",
                                 "--require", "pr.reviewed.falsified_share>=0.5",
                                 "--require", "pr.reviewed.falsified_share<=0.9"], terminal_width=400)
    said = " ".join(result.output.split())
    assert result.exit_code == 3, said  # accepted before the run; the low end (nothing confirmed) misses
    entry = json.loads((out / "summary.json").read_text())["analyses"]["pr"]
    block = entry["reviewed"]
    assert block["findings"] >= 1 and block["judged"] == 0 and block["falsified_share_low"] == 0.0
    # before a review the high end is the automatic figure: every kept sample may be real
    assert block["falsified_share_high"] == pytest.approx(entry["summary"]["pr"]["falsified_share"]) == 1 / 3
    assert "pr.reviewed.falsified_share (at its interval's low end, pr.reviewed.falsified_share_low" in said
    assert "= 0.00, required >= 0.50 (short by 0.50)" in said
    assert "at its interval's high end, pr.reviewed.falsified_share_high" in said
    assert "= 0.3333, required <= 0.90 (passed by 0.5667)" in said
    assert "Gate failed: 1 of 2 requirement(s) not met." in said


def test_a_pr_run_stored_before_keep_existed_resumes_keeping_none(tmp_path: Path) -> None:
    """A run from before the samples were kept continues as it ran: ``keep = 0``
    (:data:`textrobust.audit.run_folder.LEGACY_SETTINGS`), not a refused resume."""
    import sqlite3

    from textrobust import audit
    from textrobust.audit.run_folder import resumed_analyses
    from textrobust.data.examples import Dataset

    source = DictSource({"good": ["nice", "bad"], "great": ["grand", "dull"], "fine": ["okay", "poor"]})
    texts = ["a good film with great acting and a fine plot", "one good scene with great acting and a fine cast"]
    data = Dataset("toy", tuple(Example(f"ex{i}", Text.from_string(t), 1) for i, t in enumerate(texts)),
                   tuple(LABELS), split="test")

    def pr(n: int) -> list[Any]:
        return [PRMetricAnalysis({"n": n, "candidates": "paper"}, source=source)]

    first = audit.run(VICTIM, data, pr(1), tmp_path, progress=False, report=False)
    with sqlite3.connect(tmp_path / "store.sqlite") as db:  # the store as written before 'keep' existed
        (config,) = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (first["pr"].run_id,)).fetchone()
        old = json.loads(config)
        del old["settings"]["keep"]
        db.execute("UPDATE runs SET config_json = ? WHERE run_id = ?", (json.dumps(old), first["pr"].run_id))
    settings = resumed_analyses(tmp_path, {"pr": {"n": 2}})["pr"]  # as the command line resumes it
    assert settings["keep"] == 0 and settings["candidates"] == "paper"
    resumed = [PRMetricAnalysis(settings, source=source)]
    again = audit.run(VICTIM, data, resumed, tmp_path, progress=False, report=False, resume=True)
    assert again["pr"].run_id == first["pr"].run_id and again["pr"].settings["keep"] == 0
    assert again["pr"].resumed == 1 and again["pr"].computed == 1
    [new] = [r for r in again["pr"].records if r.example_id == "ex1"]
    assert new.result.falsified and new.result.estimate.samples == ()  # computed now, as the old run did
