"""Reviews (issue 40): judgements in the run store, statuses, agreement, the reviewed figures,
the report, summary.json and the gate that follow, and the exported labels read back."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from review_fixtures import HOSTILE, LABELS, make_run
from typer.testing import CliRunner

from textrobust.analyses.radius.method import MethodOutcome, RadiusResult
from textrobust.attack.candidates import labelled
from textrobust.cli.app import app
from textrobust.errors import ConfigError, DataError
from textrobust.report.reviewed import ReviewState, findings, reviewed_figures, run_findings
from textrobust.store import RunStore
from textrobust.text import Text
from textrobust.validity import overrides
from textrobust.validity.overrides import UserLabels, read_labels
from textrobust.validity.reviews import REASONS, ReviewLog, Status, Verdict, agreement, item_status


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("review") / "run")


@pytest.fixture
def run(base_run: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(base_run, tmp_path / "run"))


def _judge(folder: Path, item: str, reviewer: str, verdict: str, reason: str | None = None,
           blamed: tuple[int, ...] = ()) -> None:
    found = {f.item: f for f in run_findings(folder).findings}
    with RunStore(folder / "store.sqlite") as store:
        ReviewLog(store).record(found[item].run_id, item, reviewer, verdict, reason, blamed)


# ---- the formats stay those of the labelled set ---------------------------------------------------
def test_reasons_and_columns_are_the_labelled_sets() -> None:
    assert set(REASONS) == set(labelled.REASONS) - {"same"}
    assert overrides.COLUMNS == labelled.COLUMNS


# ---- the log ------------------------------------------------------------------------------------
def test_judgements_are_kept_in_order_and_undo_is_a_row_too(tmp_path: Path) -> None:
    with RunStore(tmp_path / "store.sqlite") as store:
        log = ReviewLog(store)
        log.record("r", "attack/a", "ann", "valid")
        log.record("r", "attack/b", "ann", "invalid", "antonym", blamed=[2, 1])
        log.record("r", "attack/a", "bob", "invalid", "sense")
        assert log.undo("ann", ["r"]).item == "attack/b"
        current = log.current(["r"])
        assert set(current) == {("attack/a", "ann"), ("attack/a", "bob")}
        assert [j.verdict for j in log.judgements(["r"])] == [Verdict.VALID, Verdict.INVALID, Verdict.INVALID,
                                                              Verdict.UNDONE]
        assert log.judgements(["r"])[1].blamed == (1, 2)
        assert log.undo("ann", ["r"]).item == "attack/a" and log.undo("ann", ["r"]) is None
        assert log.current(["other"]) == {}
    with RunStore(tmp_path / "store.sqlite") as store:  # another connection sees everything
        assert len(ReviewLog(store).judgements()) == 5


@pytest.mark.parametrize(("verdict", "reason", "said"), [
    ("invalid", None, "needs a reason"), ("invalid", "ugly", "needs a reason"), ("valid", "sense", "takes a reason"),
    ("maybe", None, "must be one of valid, invalid, skip, undone")])
def test_a_malformed_judgement_is_refused(tmp_path: Path, verdict: str, reason: str | None, said: str) -> None:
    with RunStore(tmp_path / "store.sqlite") as store:
        with pytest.raises(ConfigError, match=said):
            ReviewLog(store).record("r", "attack/a", "ann", verdict, reason)
        with pytest.raises(ConfigError, match="reviewer"):
            ReviewLog(store).record("r", "attack/a", " \n", "valid")


def test_status_and_agreement_of_two_reviewers() -> None:
    assert item_status([]) is Status.UNREVIEWED and item_status([Verdict.SKIP]) is Status.UNREVIEWED
    assert item_status([Verdict.VALID, Verdict.SKIP]) is Status.CONFIRMED
    assert item_status([Verdict.INVALID]) is Status.REJECTED
    assert item_status([Verdict.VALID, Verdict.INVALID]) is Status.DISPUTED
    from textrobust.validity.reviews import Judgement

    said = {("a", "ann"): True, ("a", "bob"): True, ("b", "ann"): False, ("b", "bob"): False,
            ("c", "ann"): True, ("c", "bob"): False, ("d", "ann"): True}
    current = {key: Judgement(i, "r", key[0], key[1], Verdict.VALID if ok else Verdict.INVALID,
                              None if ok else "sense", (), "") for i, (key, ok) in enumerate(said.items())}
    result = agreement(current)
    assert (result.items, result.agreeing, result.reviewers) == (3, 2, ("ann", "bob"))
    assert result.share == pytest.approx(2 / 3)
    # observed 2/3; ann says yes 2 of 3 times, bob 1 of 3: chance 2/9 + 2/9; kappa = (2/3 - 4/9) / (5/9)
    assert result.kappa == pytest.approx(0.4)
    assert agreement(current, ["d"]).share is None


# ---- the reviewed figures -----------------------------------------------------------------------
def test_the_reviewed_figures_count_only_confirmed_flips_with_an_interval(run: Path) -> None:
    _judge(run, "attack/ex-0", "ann", "valid")
    _judge(run, "attack/ex-1", "ann", "invalid", "sense")
    _judge(run, "attack/ex-2", "ann", "valid")
    _judge(run, "attack/ex-2", "bob", "invalid", "related")  # disputed: stays open
    result = CliRunner().invoke(app, ["review", str(run), "--report"])
    assert result.exit_code == 0, result.output
    block = json.loads((run / "summary.json").read_text())["analyses"]["attack"]["reviewed"]
    # 6 examples: 1 failed, 1 skipped, 4 flips: ex-0 confirmed, ex-1 rejected, ex-2 disputed, ex-3 unreviewed
    assert (block["findings"], block["judged"], block["confirmed"], block["rejected"], block["disputed"],
            block["unreviewed"]) == (4, 3, 1, 1, 1, 1)
    assert block["accuracy_under_attack_low"] == pytest.approx(2 / 6)  # failed + rejected
    assert block["accuracy_under_attack"] == block["accuracy_under_attack_high"] == pytest.approx(4 / 6)
    assert block["success_rate"] == pytest.approx(1 / 5) and block["success_rate_high"] == pytest.approx(3 / 5)
    assert block["reviewed_share"] == pytest.approx(3 / 4) and block["agreement"] == 0.0
    assert block["reviewers"] == ["ann", "bob"]
    report = json.loads((run / "report.json").read_text())
    assert any("Reviewed by people (textrobust review): attack 3 of 4 (1 confirmed, 1 rejected, 1 disputed)" in p
               for p in report["verdict"]["points"])
    html = (run / "report.html").read_text()
    assert "Reviewed by people" in html and "3 of 4 findings judged" in html
    assert "<td class=\"num\">66.7%</td><td class=\"num\">33.3% .. 66.7%</td>" in html


def test_the_gate_reads_the_reviewed_figures(run: Path) -> None:
    _judge(run, "attack/ex-0", "ann", "invalid", "antonym")
    runner = CliRunner()
    assert runner.invoke(app, ["review", str(run), "--report"]).exit_code == 0
    passed = runner.invoke(app, ["gate", str(run), "--require", "attack.reviewed.accuracy_under_attack_low>=0.3"])
    assert passed.exit_code == 0, passed.output
    assert "attack.reviewed.accuracy_under_attack_low = 0.3333" in passed.output
    failed = runner.invoke(app, ["gate", str(run), "--require", "second-order.reviewed.success_rate>=0.5"])
    said = " ".join(failed.output.split())
    assert failed.exit_code == 3 and "second-order.reviewed.success_rate (at its interval's low end" in said
    assert ") = 0.00, required >= 0.50" in said
    # a bare reviewed key while findings are unreviewed: the end hardest to meet, never the
    # confirmed-only value (which would count every unreviewed flip as not real)
    bare = runner.invoke(app, ["gate", str(run), "--require", "attack.reviewed.accuracy_under_attack>=0.5"],
                         terminal_width=300)
    said = " ".join(bare.output.split())
    assert bare.exit_code == 3, bare.output
    assert "(at its interval's low end, attack.reviewed.accuracy_under_attack_low" in said and "= 0.3333" in said


def test_the_radius_finding_is_the_smallest_adversarial_example() -> None:
    text = Text.from_string("a fine and moving film")
    two = MethodOutcome(True, 2, 0.4, 0.1, 5, text.replace({1: "good", 3: "touching"}))
    one = MethodOutcome(True, 1, 0.2, 0.1, 5, text.replace(4, "movie"))
    result = RadiusResult("r-0", text, 1, 5, 1, 10, cap=2, methods={"pdp": two, "greedy": one})
    skipped = RadiusResult("r-1", text, 1, 5, 0, 1)
    record = SimpleNamespace(result=result)
    [found] = findings("radius", "run", [record, SimpleNamespace(result=skipped)], LABELS)
    assert found.perturbed == one.perturbed and [s.after for s in found.swaps] == ["movie"]
    assert ("found by", "greedy") in found.lines
    state = ReviewState({})
    block = reviewed_figures("radius", SimpleNamespace(attacked=2), [found], state)
    assert (block["falsified_r1_low"], block["falsified_r1_high"]) == (0.0, 0.5)
    assert findings("evaluate", "run", [record], LABELS) == [] and reviewed_figures("evaluate", None, [], state) is None


# ---- labels out and back in ---------------------------------------------------------------------
def test_export_writes_the_labelled_sets_format_and_reads_back(run: Path, tmp_path: Path) -> None:
    _judge(run, "attack/ex-0", "ann", "valid")
    _judge(run, "attack/ex-1", "ann", "invalid", "grammar", blamed=(4,))  # only "with -> by" is blamed
    _judge(run, "attack/ex-3", "ann", "invalid", "nonsense")
    _judge(run, "second-order/so-0", "ann", "valid")
    out = tmp_path / "mine.tsv"
    result = CliRunner().invoke(app, ["review", str(run), "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 substitution(s): 2 valid, 2 invalid" in " ".join(result.output.split())
    shipped = labelled.labelled_substitutions(path=out)  # the shipped loader reads it
    rows = {(r.word, r.substitute): r for r in shipped}
    hostile_word = Text.from_string(HOSTILE).words[3]
    assert set(rows) == {("good", "decent"), ("with", "by"), (hostile_word, "fine"), ("Good", "Decent")}
    assert rows[("with", "by")].reason == "grammar" and not rows[("with", "by")].valid
    assert {r.sentence for r in shipped if r.valid} == {"a good film with a fine cast",
                                                       "the film is Good but the actors are fine"}
    assert any(r.sentence == HOSTILE for r in shipped)
    labels = UserLabels.from_file(out)
    assert ("with", "by") in labels.rejected and len(labels.confirmed) == 2


def test_user_labels_reject_everywhere_and_confirm_in_their_sentence() -> None:
    from test_validity import light_source

    text = Text.from_string("The good film")
    plain = [s.word for s in light_source(min_zipf=0.0, min_context=-3.0).candidates(text, [2])[2]]
    assert "movie" in plain and "picture" not in plain  # the source's own checks: movie kept, picture dropped
    labels = UserLabels(rejected=frozenset({("film", "movie")}),
                        confirmed=frozenset({(text.words, 2, "picture")}), origin="mine.tsv")
    source = light_source(min_zipf=0.0, min_context=-3.0, user_labels=labels)
    found = [s.word for s in source.candidates(text, [2])[2]]
    assert "movie" not in found and "picture" in found  # movie rejected, picture confirmed in this sentence
    other = Text.from_string("The good film again")
    found = [s.word for s in source.candidates(other, [2])[2]]
    assert "movie" not in found and "picture" not in found  # rejected in any sentence; confirmed only in its own
    assert labels.allows(text, 2, "picture") and not labels.allows(other, 2, "Movie")
    assert "1 rejected pairs, 1 confirmed in context" in repr(labels)


def test_a_malformed_labels_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    header = "\t".join(overrides.COLUMNS)
    path.write_text(f"# mine\n{header}\nx\tdev\tc\ta good film\t1\tgood\tfine\treview\t0\tsame\n")
    with pytest.raises(DataError, match="line 3: reason 'same' does not fit label 0"):
        read_labels(path)
    path.write_text("id\tsentence\n")
    with pytest.raises(DataError, match="must be the header"):
        read_labels(path)


# ---- the command ----------------------------------------------------------------------------------
def test_judge_without_the_page(run: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["review", str(run), "--reviewer", "ann", "--judge", "next=valid",
                                 "--judge", "attack/ex-3=invalid:nonsense", "--judge", "next=skip"])
    assert result.exit_code == 0, result.output
    assert "judged: attack/ex-0 valid by ann" in result.output
    assert "judged: attack/ex-3 invalid (nonsense) by ann" in result.output
    assert "judged: attack/ex-1 skip by ann" in result.output
    for given, said in (("next=maybe", "reads ITEM=valid"), ("attack/nope=valid", "No finding 'attack/nope'"),
                        ("next=valid:sense", "only an invalid judgement takes a reason"),
                        ("next=invalid:ugly", "needs a reason, one of sense")):
        result = runner.invoke(app, ["review", str(run), "--judge", given])
        assert result.exit_code == 2 and said in result.output, result.output
    result = runner.invoke(app, ["review", str(run.parent / "nowhere"), "--report"])
    assert result.exit_code == 2 and "No run store" in result.output


def test_the_server_prints_its_address_opens_the_browser_and_rebuilds_the_report(
        run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import webbrowser

    from textrobust.report.review_server import ReviewServer

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    monkeypatch.setenv("DISPLAY", ":0")  # a graphical session: the browser is opened

    def stop(self: ReviewServer) -> None:  # a reviewer's Ctrl-C, at once
        raise KeyboardInterrupt

    monkeypatch.setattr(ReviewServer, "serve_forever", stop)
    (run / "report.html").unlink()
    result = CliRunner().invoke(app, ["review", str(run), "--reviewer", "ann"])
    assert result.exit_code == 0, result.output
    [url] = opened
    assert url.startswith("http://127.0.0.1:") and "token=" in url and f"open: {url}" in result.output
    assert "5 finding(s)" in result.output and (run / "report.html").is_file()
    opened.clear()
    assert CliRunner().invoke(app, ["review", str(run), "--no-browser"]).exit_code == 0 and opened == []
    monkeypatch.delenv("DISPLAY")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if sys.platform.startswith("linux"):  # no graphical session: a text browser would take the terminal
        assert CliRunner().invoke(app, ["review", str(run)]).exit_code == 0 and opened == []
