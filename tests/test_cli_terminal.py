"""What the terminal shows (issue 27, items 13-16 and 22): the verdict first, figures with
their meaning, no dependency warnings, progress without a terminal, audit profiles.

The commands run in-process on toy victims (``audit.run`` is wrapped so the victim and,
for radius and PR, the synonym source resolve to closed-form test doubles): fast, offline.
CliRunner's streams are not terminals, as in CI or behind a pipe.
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from textrobust import audit
from textrobust.cli.app import app

from cli_helpers import reviews_csv, use_toy_victim  # noqa: E402

runner = CliRunner()

_csv = reviews_csv


_use_toy_victim = use_toy_victim


def _use_toy_radius_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """radius and pr on a word-list victim over a hand-written synonym table."""
    from textrobust.analyses import ANALYSES
    from textrobust.attack.searches.search_testing import DictSource
    from textrobust.data.examples import Dataset, Example
    from textrobust.text import Text
    from textrobust.victims.testing import WordListVictim

    victim = WordListVictim(["good", "great", "fine", "superb", "lovely"], ["bad", "awful", "dull", "poor", "weak"])
    source = DictSource({"good": ["nice", "bad", "decent"], "great": ["grand", "awful"], "fine": ["okay", "poor"],
                         "superb": ["dull", "super"], "film": ["movie", "picture"], "plot": ["story"]})
    texts = ["A good film with great acting and a fine plot, superb.", "A good film.",
             "Good, great and fine: a superb and lovely film with good acting.",
             "The plot is fine but the acting is good and the film is great."]
    data = Dataset("toy", tuple(Example(f"ex{i}", Text.from_string(t), 1) for i, t in enumerate(texts)),
                   ("negative", "positive"), split="test")
    real = audit.run

    def run(_victim: Any, _data: Any, analyses: Any, *args: Any, **kwargs: Any) -> Any:
        built = [ANALYSES.get(name)(settings, source=source) for name, settings in analyses.items()]
        return real(victim, data, built, *args, **kwargs)

    monkeypatch.setattr(audit, "run", run)


AUDIT_TOML = """
[analyses.evaluate]
[analyses.attack]
n = 4
quality = false
budget = 200
"""


def _audit(tmp_path: Path, *extra: str) -> Any:
    config = tmp_path / "audit.toml"
    config.write_text(AUDIT_TOML, encoding="utf-8")
    out = tmp_path / "run"
    result = runner.invoke(app, ["audit", "--config", str(config), "--data", str(_csv(tmp_path)), "--out", str(out),
                                 "--quiet", *extra], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result, out


# ---- item 13: the verdict first, details behind --verbose, the report's path last ----------------
def test_audit_prints_the_verdict_first_and_the_report_path_last(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    monkeypatch.setenv("COLUMNS", "200")  # the report's path on one line, however long tmp_path is
    result, out = _audit(tmp_path)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    report = json.loads((out / "report.json").read_text())
    assert lines[0].startswith(f"Verdict: {report['verdict']['level']}."), lines[:3]
    assert report["verdict"]["headline"] in " ".join(" ".join(lines[:3]).split())
    assert any(line.startswith("Overview") for line in lines[:12])
    assert lines[-1] == f"report: {out / 'report.html'}"
    assert "outcomes and cost" not in result.stdout  # the details wait for --verbose
    assert "clean accuracy" in result.stdout and "attack success rate" in result.stdout
    verbose, _ = _audit(tmp_path, "--verbose")
    vlines = [line for line in verbose.stdout.splitlines() if line.strip()]
    assert vlines[0].startswith("Verdict:") and vlines[-1].startswith("report: ")
    assert "outcomes and cost" in verbose.stdout


def test_every_figure_the_audit_prints_has_a_meaning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    monkeypatch.setenv("COLUMNS", "200")  # a note on one line of its cell
    result, out = _audit(tmp_path)
    for section in json.loads((out / "report.json").read_text())["analyses"]:
        for item in section["headline"]:
            assert item.get("note"), (section["name"], item["label"])
    first = json.loads((out / "report.json").read_text())["analyses"][1]["headline"][0]
    assert first["note"] in " ".join(result.stdout.split())  # printed next to the figure


# ---- item 22: profiles, and the analyses not run -------------------------------------------------
def test_profiles_quick_is_the_default_full_and_paper_cover_every_analysis() -> None:
    from textrobust.analyses import ANALYSES
    from textrobust.audit import DEFAULT_ANALYSES
    from textrobust.audit.profiles import PROFILES, profile_settings
    from textrobust.errors import ConfigError

    assert list(PROFILES) == ["quick", "full", "paper"]
    assert profile_settings("quick") == {k: dict(v) for k, v in DEFAULT_ANALYSES.items()}
    for name in ("full", "paper"):
        analyses = profile_settings(name)
        assert sorted(analyses) == sorted(ANALYSES.names()), name
        for analysis, settings in analyses.items():
            ANALYSES.get(analysis)(settings)  # every size is a valid setting
    full, paper = profile_settings("full"), profile_settings("paper")
    assert all((full[a].get("n") or 0) <= 20 for a in full if a != "evaluate")
    assert paper["pr"]["n"] == 1000 and paper["radius"]["n"] == 200 and paper["second-order"]["n"] == 872
    with pytest.raises(ConfigError, match="--profile"):
        profile_settings("fast")


def test_audit_profile_picks_the_analyses_and_their_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.audit.profiles import profile_settings
    from textrobust.errors import TextRobustError

    seen: dict[str, Any] = {}

    def run(victim: Any, data: Any, analyses: Any, out: Any, **kwargs: Any) -> Any:
        seen.update(analyses=analyses, profile=kwargs.get("profile"))
        raise TextRobustError("stop here")

    monkeypatch.setattr(audit, "run", run)
    result = runner.invoke(app, ["audit", "--profile", "full", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "stop here" in result.output
    assert seen["analyses"] == profile_settings("full") and seen["profile"] == "full"
    runner.invoke(app, ["audit", "--profile", "paper", "--analyses", "pr,bias", "--n", "7",
                        "--out", str(tmp_path / "o")])
    assert seen["analyses"] == {"pr": {"n": 7}, "bias": {"n": 7, "exact_up_to": 2}}
    runner.invoke(app, ["audit", "--out", str(tmp_path / "o")])
    assert seen["analyses"] == profile_settings("quick") and seen["profile"] == "quick"
    assert runner.invoke(app, ["audit", "--profile", "fast"]).exit_code == 2
    help_text = " ".join(runner.invoke(app, ["audit", "--help"], terminal_width=100).output.split())
    for name in ("quick", "full", "paper", "--profile", "--verbose"):
        assert name in help_text


def test_the_report_and_the_terminal_list_the_analyses_not_run(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.analyses import ANALYSES

    _use_toy_victim(monkeypatch)
    result, out = _audit(tmp_path)
    report = json.loads((out / "report.json").read_text())
    missing = {m["name"]: m for m in report["not_run"]}
    assert sorted(missing) == sorted(set(ANALYSES.names()) - {"evaluate", "attack"})
    assert missing["bias"]["command"].startswith(f"textrobust bias --data {tmp_path / 'reviews.csv'} --n ")
    text = " ".join(result.stdout.split())
    assert "Not run: second-order, radius, pr, accs, attribution, bias, msr." in text
    assert "--profile full" in text
    for m in missing.values():
        assert m["command"] in result.stdout  # whole, on one line: it can be copied
    html = (out / "report.html").read_text()
    assert "Not run" in html and "textrobust audit --profile full" in html and "textrobust msr" in html


# ---- item 15: figures a newcomer can read --------------------------------------------------------
def test_radius_bounds_compare_the_same_examples_and_tables_say_what_columns_mean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_radius_world(monkeypatch)
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "radius"
    result = runner.invoke(app, ["radius", "--pso-pop", "8", "--pso-iters", "4", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    section = json.loads((out / "report.json").read_text())["analyses"][0]
    heads = {h["label"]: h for h in section["headline"]}
    summary = json.loads((out / "summary.json").read_text())["analyses"]["radius"]["summary"]["bounds"]
    both = summary["with_upper"]
    lower = heads[f"mean lower bound on R, the {both} example(s) with both bounds"]["value"]
    upper = heads[f"mean upper bound on R, the same {both} example(s)"]["value"]
    assert both >= 1 and lower <= upper  # the lower bound never exceeds the upper on one example
    assert all(h["note"] for h in section["headline"])
    notes = {t["title"].split(":")[0]: t.get("note", "") for t in section["tables"]}
    assert "%S" in notes["Table 2"] and "s F, s C, s U" in notes["Table 3"]
    text = " ".join(result.stdout.split())
    assert "s F, s C, s U: mean seconds" in text and "%S: mean share" in text


def test_pr_says_exact_when_every_example_was_computed_exactly(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_radius_world(monkeypatch)
    out = tmp_path / "pr"
    result = runner.invoke(app, ["pr", "--out", str(out), "--quiet"], terminal_width=100)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())["analyses"]["pr"]["summary"]
    assert summary["pr"]["exact"] == summary["pr"]["scored"] > 0  # the toy spaces are small
    section = json.loads((out / "report.json").read_text())["analyses"][0]
    labels = [h["label"] for h in section["headline"]]
    assert "PR computed exactly on every example" in labels
    assert not any(label.startswith("eps") for label in labels)
    assert "computed exactly" in section["point"] and "+-" not in section["point"]
    assert all(h["note"] for h in section["headline"])


def test_a_wide_table_is_printed_in_parts_never_letter_by_letter(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from textrobust.cli import running

    monkeypatch.setenv("COLUMNS", "80")
    columns = ["attack", "rho_max", "rho (true)", "runs", "PCC", "PCC std", "STS (MiniLM)", "relative PP",
               "grammar errors +", "k MiniLM", "k MiniLM std", "k PP", "seconds", "share in attribution"]
    rows = [["tea", 0.1, 0.0625, 3, 0.8123, 0.1012, 0.9312, 0.2541, 0.0, 1.2345, 0.4321, 3.2101, 12.5, 0.41],
            ["tef", 0.4, 0.2500, 3, 0.5123, 0.2012, 0.8312, 1.2541, 1.0, 2.2345, 1.4321, 1.2101, 2.5, 0.11]]
    running._print_table({"title": "Figure 2: metrics per rho_max", "columns": columns, "rows": rows,
                          "note": "PCC: Pearson correlation of the attributions."})
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 80
    words = set(re.findall(r"[A-Za-z_]+", printed))
    for heading in columns:
        for word in re.findall(r"[A-Za-z_]+", heading):
            assert word in words, word  # each heading word whole, not folded into pieces
    assert "(1/" in printed and "PCC: Pearson correlation" in printed


# ---- item 14: dependency warnings ----------------------------------------------------------------
def test_transformers_cache_deprecation_is_silenced_and_nothing_else() -> None:
    from textrobust.assets.offline import hf_offline

    logger = logging.getLogger("transformers.utils.generic")
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        hf_offline()
        message = ("`past_key_values` is deprecated and will be removed in version 5.40.0 for "
                   "`Gemma3TextModel.forward`. Use `cache` instead.")
        warnings.warn_explicit(message, FutureWarning, "output_capturing.py", 361,
                               module="transformers.utils.output_capturing")
        warnings.warn_explicit("`foo` is deprecated", FutureWarning, "output_capturing.py", 362,
                               module="transformers.utils.output_capturing")
        warnings.warn_explicit(message, FutureWarning, "mine.py", 1, module="mypackage.mine")
    assert [str(w.message) for w in shown] == ["`foo` is deprecated", message]  # only transformers' own one
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        logger.warning("`past_key_values`/`cache_params` are deprecated. Use `cache` instead.")
        logger.warning("something else")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in records] == ["something else"]


def test_rays_token_auth_notice_is_silenced(monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.audit import executor_ray

    executor_ray._quiet_token_auth_notice()
    logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        logger.warning("Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE=disabled to "
                       "opt out.")
        logger.warning("Token authentication is disabled for this Ray cluster. Anyone with network access...")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage()[:40] for r in records] == ["Token authentication is disabled for thi"]


@pytest.mark.heavy
def test_a_real_second_order_run_shows_no_dependency_warning(tmp_path: Path) -> None:
    """As a user runs it: a separate process with Python's default warning filters, Gemma
    in a process-pool worker (whose stderr is the command's); stderr holds no warning."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "TEXTROBUST_NO_PROGRESS": "1", "TEXTROBUST_THREADS": "1", "COLUMNS": "300"}
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run([sys.executable, "-m", "textrobust.cli.app", "second-order", "--n", "1", "--executor",
                           "process", "--workers", "1", "--out", str(tmp_path / "so")],
                          capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    noise = [line for line in done.stderr.splitlines() if re.search(r"warning|deprecat", line, re.IGNORECASE)]
    assert not noise, done.stderr
    assert done.stdout.splitlines()[-1].startswith("report: ")


# ---- item 16: progress -----------------------------------------------------------------------------
def test_without_a_terminal_each_analysis_prints_lines_in_its_own_unit(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _use_toy_victim(monkeypatch)
    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)
    result = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--batch-size", "2",
                                 "--out", str(tmp_path / "e")], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert "evaluate: 3 batches" in result.stderr
    assert "evaluate: done, 3/3 batches in" in result.stderr
    assert "ex/s" not in result.output
    quiet = runner.invoke(app, ["evaluate", "--data", str(_csv(tmp_path)), "--out", str(tmp_path / "q"), "--quiet"])
    assert "evaluate:" not in quiet.stderr


def test_the_progress_bar_names_the_unit_it_counts() -> None:
    import io

    from rich.console import Console

    from textrobust.audit.progress import make_progress

    bar = make_progress(console=Console(file=io.StringIO(), force_terminal=True, width=120))
    assert type(bar).__name__ == "Progress"
    task = bar.add_task("evaluate", total=4, unit="batches", queries=0)
    bar.update(task, advance=2)
    rate = bar.columns[4]
    assert "batches/s" in str(rate.render(bar.tasks[task]))
    examples = bar.add_task("attack", total=4)
    assert " ex/s" in str(rate.render(bar.tasks[examples]))


def _fake_training(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Any]:
    import textrobust.zoo
    from textrobust.zoo.cards import VictimCard
    from textrobust.zoo.training import TrainedVictim, TrainingEvent

    calls: list[Any] = []

    def train_victim(arch: str, data: str, *, out: Path, progress: Any = None, **kwargs: Any) -> Any:
        calls.append(out)
        for epoch in (1, 2):
            for step in range(1, 21):
                progress(TrainingEvent("step", epoch, 2, step, 20, 0.5, None, None, float(step)))
            progress(TrainingEvent("epoch", epoch, 2, 20, 20, None, 0.7, 0.7, 30.0 * epoch))
        progress(TrainingEvent("done", 2, 2, 0, 0, None, 0.7, 0.7, 61.0))
        card = VictimCard(architecture=arch, dataset=data, label_names=("negative", "positive"),
                          splits={"train": 8}, seed=0, dev_accuracy=0.7, test_accuracy=0.5, train_seconds=1.0,
                          parameters=10, epochs_run=2, best_epoch=1, vocab_size=5, model_config={}, training={})
        return TrainedVictim(Path(out), card, None)

    monkeypatch.setattr(textrobust.zoo, "train_victim", train_victim)
    return calls


def test_train_prints_epochs_and_batches_without_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_training(monkeypatch, tmp_path)
    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)
    monkeypatch.setenv("TEXTROBUST_THREADS", "1")
    result = runner.invoke(app, ["train", "bow", "--out", str(tmp_path / "bow")], terminal_width=100)
    assert result.exit_code == 0, result.output
    assert calls == [tmp_path / "bow"]
    assert "training bow: 2 epoch(s) of 20 batches" in result.stderr
    assert "training bow: epoch 1/2, batch 10/20, loss 0.500" in result.stderr
    assert "training bow: epoch 2/2 done: dev accuracy 0.700" in result.stderr
    assert "warning" not in result.stderr


@pytest.mark.parametrize("wait_policy", [None, "PASSIVE"])
def test_train_follows_the_thread_policy_of_an_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     wait_policy: str | None) -> None:
    """Spinning OpenMP waits on a busy machine: fewer threads and a warning; passive waits
    (as the command line sets them): the load does not lower the count (textrobust.threads)."""
    import torch

    import textrobust.threads

    _fake_training(monkeypatch, tmp_path)
    threads: list[int] = []
    monkeypatch.delenv("TEXTROBUST_THREADS", raising=False)
    monkeypatch.setenv("TEXTROBUST_NO_PROGRESS", "1")
    if wait_policy is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", wait_policy)
    monkeypatch.setattr(textrobust.threads, "affinity_cpus", lambda: 2)
    monkeypatch.setattr(textrobust.threads, "cgroup_cpu_quota", lambda: None)
    monkeypatch.setattr(textrobust.threads, "others_load", lambda cpus: 64.0)
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    monkeypatch.setattr(torch, "set_num_interop_threads", lambda n: None)
    result = runner.invoke(app, ["train", "bow", "--out", str(tmp_path / "bow")], terminal_width=200)
    assert result.exit_code == 0, result.output
    if wait_policy is None:
        assert "the machine is busy (load average 64.0" in result.stderr and threads == [1]
    else:
        assert "busy" not in result.stderr and threads == [2]


@pytest.mark.parametrize("value", ["zero", "0", "-1", "1.5", "²", "10000"])
def test_train_refuses_a_bad_textrobust_threads_as_an_audit_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 value: str) -> None:
    import textrobust.threads

    calls = _fake_training(monkeypatch, tmp_path)
    monkeypatch.setenv("TEXTROBUST_THREADS", value)
    monkeypatch.setattr(textrobust.threads, "affinity_cpus", lambda: 2)
    trained = runner.invoke(app, ["train", "bow", "--out", str(tmp_path / "bow")], terminal_width=200)
    audited = runner.invoke(app, ["evaluate", "--out", str(tmp_path / "run"), "--quiet"], terminal_width=200)
    for result in (trained, audited):
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        said = " ".join(result.stderr.split())
        assert "The environment variable TEXTROBUST_THREADS must be a thread count from 1 to 2" in said, said
        assert f"Got '{value}' instead" in said
    assert calls == []  # refused before any training


def test_train_refuses_a_non_victim_folder_before_training(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import textrobust.zoo.training as training

    def no_training(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("training started before --out was checked")

    monkeypatch.setattr(training, "_prepare", no_training)
    monkeypatch.setattr(training, "_fit", no_training)
    out = tmp_path / "notes"
    out.mkdir()
    (out / "todo.txt").write_text("mine", encoding="utf-8")
    result = runner.invoke(app, ["train", "bow", "--out", str(out), "--epochs", "1"], terminal_width=200)
    assert result.exit_code == 2, result.output
    assert "not empty and is not a victim folder" in result.output
    assert (out / "todo.txt").read_text(encoding="utf-8") == "mine"


def test_the_not_run_commands_name_the_default_victim_by_its_name_not_its_cache_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.audit import profiles
    from textrobust.zoo import default as zoo_default

    monkeypatch.setattr(zoo_default, "default_victim_dir", lambda: tmp_path / "victims" / "default")
    by_path = profiles.not_run(["evaluate"], victim=tmp_path / "victims" / "default")
    assert all("--victim" not in m["command"] for m in by_path)
    other = profiles.not_run(["evaluate"], victim=tmp_path / "victims" / "lstm")
    assert all(f"--victim {tmp_path / 'victims' / 'lstm'}" in m["command"] for m in other)
