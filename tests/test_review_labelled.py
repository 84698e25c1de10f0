"""``--labelled FILE`` (issue 40): a user's labels reach the validated synonyms of every analysis,
from the command line and from an audit config, and are stored with the run."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import reviews_csv, use_toy_victim
from typer.testing import CliRunner

from textrobust.analyses.attack.analysis import AttackAnalysis
from textrobust.analyses.attribution.analysis import AttributionSettings, candidate_sources
from textrobust.analyses.radius.analysis import PRMetricAnalysis, RadiusBoundsAnalysis
from textrobust.analyses.second_order.analysis import patch_synonyms
from textrobust.attack.candidates.choice import validated_source
from textrobust.attack.recipes import RECIPES, build_attack
from textrobust.audit.orchestrator import AnalysisWorkerSpec
from textrobust.audit.sources import VictimSource
from textrobust.audit.testing import keyword_victim
from textrobust.cli.app import app
from textrobust.errors import DataError
from textrobust.store import RunStore
from textrobust.validity.overrides import COLUMNS, UserLabels
from textrobust.victims.query import QueryLayer

LABELS = UserLabels(frozenset({("good", "fine")}), frozenset({(("a", "great", "story"), 1, "grand")}), "mine.tsv")


def _labels_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.tsv"
    rows = ["r1\tdev\ttoy\ta good film\t1\tgood\tfine\treview\t0\tsentiment",
            "r2\tdev\ttoy\ta great story\t1\tgreat\tgrand\treview\t1\tsame"]
    path.write_text("# my labels\n" + "\t".join(COLUMNS) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _labels_of(source: Any) -> Any:
    """The user labels of the validated source inside ``source`` (under its wrappers)."""
    while not hasattr(source, "user_labels"):
        source = source.source
    return source.user_labels


def test_the_labels_reach_each_analysis_source() -> None:
    assert _labels_of(validated_source(user_labels=LABELS)) is LABELS
    assert _labels_of(validated_source()) is None  # another shared source, without them
    attack = build_attack(RECIPES.get("pwws")().with_source("validated"), QueryLayer(keyword_victim()),
                          user_labels=LABELS)
    assert _labels_of(attack.source) is LABELS
    assert _labels_of(patch_synonyms("validated", None, LABELS)) is LABELS
    assert patch_synonyms("paper", None, LABELS) is None
    assert _labels_of(candidate_sources(AttributionSettings(attacks=("tef",)), None, LABELS)["tef"]) is LABELS
    for analysis in (RadiusBoundsAnalysis(), PRMetricAnalysis()):
        assert _labels_of(analysis._method(keyword_victim(), 0, None, LABELS).source) is LABELS


def test_the_worker_context_carries_the_labels() -> None:
    seen: list[Any] = []

    class Probe(AttackAnalysis):
        def worker(self, context: Any) -> Any:
            seen.append(context.user_labels)
            return lambda example: None

    spec = AnalysisWorkerSpec(VictimSource.of(keyword_victim()), Probe({"recipe": "pwws"}), ("negative", "positive"),
                              0, user_labels=LABELS)
    spec.build()
    spec.build_group(2)
    assert seen == [LABELS, LABELS, LABELS]


def test_labelled_on_the_command_line_and_in_a_config_is_stored_with_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    labels, data = _labels_file(tmp_path), reviews_csv(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["evaluate", "--data", str(data), "--labelled", str(labels), "--out",
                                 str(tmp_path / "cli"), "--quiet"])
    assert result.exit_code == 0, result.output
    config = tmp_path / "audit.toml"
    config.write_text(f'[data]\nname = "{data}"\n[run]\nout = "{tmp_path / "file"}"\nlabelled = "{labels}"\n'
                      "[analyses.evaluate]\n", encoding="utf-8")
    result = runner.invoke(app, ["audit", "--config", str(config)])
    assert result.exit_code == 0, result.output
    for out in ("cli", "file"):
        with RunStore(tmp_path / out / "store.sqlite") as store:
            run = store.latest_run("evaluate")
            assert run is not None
            assert run.config["labelled"] == {"file": str(labels.resolve()), "rejected": 1, "confirmed": 1,
                                              "sha256": hashlib.sha256(labels.read_bytes()).hexdigest()}
    bad = tmp_path / "bad.tsv"
    bad.write_text("nothing\n")
    result = runner.invoke(app, ["evaluate", "--data", str(data), "--labelled", str(bad), "--out",
                                 str(tmp_path / "bad")])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "the first line after the comments must be the header" in said
    with pytest.raises(DataError):
        UserLabels.from_file(bad)
