"""The analysis commands generated from the settings (issue 29, part 2): every registered
analysis has its command, each option is a settings field with the field's default and its
description as help, a field named like a shared option fails at import, and a new
analysis gets a working command from one registry line, without a cli/ file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field
from typer.testing import CliRunner

from cli_helpers import reviews_csv, use_toy_victim
from textrobust.analyses import ANALYSES
from textrobust.analyses.evaluate.analysis import EvaluateAnalysis, EvaluateSettings
from textrobust.analyses.protocol import Settings
from textrobust.cli import generated
from textrobust.cli.app import app
from textrobust.cli.common import App
from textrobust.registry import Entry

NAMES = ANALYSES.names()
WIDE = {"COLUMNS": "200", "TEXTROBUST_NO_PROGRESS": "1"}


def _words(text: str) -> str:
    """Help text with the panels' borders removed and lines joined (as one reads it)."""
    return " ".join(text.replace("│", " ").split())


def test_every_registered_analysis_has_its_generated_command() -> None:
    commands = {c.name: c.callback for c in app.registered_commands}
    for name in NAMES:
        assert name in commands, f"analysis {name!r} has no `textrobust {name}` command"
        assert commands[name].__name__ == name.replace("-", "_") + "_cmd"
        assert ANALYSES.get(name).title.rstrip(".") in (commands[name].__doc__ or "")


@pytest.mark.parametrize("name", NAMES)
def test_help_lists_every_settings_field_with_its_description(name: str) -> None:
    result = CliRunner().invoke(app, [name, "--help"], env=WIDE, terminal_width=200)
    assert result.exit_code == 0, result.output
    shown = _words(result.output)
    for field, info in ANALYSES.get(name).settings_type.model_fields.items():
        assert "--" + field.replace("_", "-") in shown
        if info.description:  # a missing one fails the contract test; here: shown as it is
            assert _words(generated._help(info.description)) in shown, (name, field)
    assert "--max-words" in shown and "--out" in shown  # the shared options too


def test_msr_help_says_how_the_radii_are_normalised() -> None:
    """The note the hand-written `msr` command had before the CLI was generated (1670231)."""
    result = CliRunner().invoke(app, ["msr", "--help"], env=WIDE, terminal_width=200)
    assert result.exit_code == 0, result.output
    shown = _words(result.output)
    assert ("Radii are shown divided by d (Definition 1: the distance to the farthest corner of the normalised "
            "embedding cube) and by sqrt(D) (the embedding's diameter, the paper's tables).") in shown
    assert shown.index("Radii are shown") < shown.index("--n ")  # in the command's help, above its options
    assert ANALYSES.get("evaluate").help_note == ""  # an analysis without a note: title and paper only


def test_a_field_named_like_a_shared_option_is_an_error_at_import() -> None:
    class Shadowing(Settings):
        max_words: int = Field(default=3, description="Words perturbed together.")

    class ShadowingAnalysis(EvaluateAnalysis):
        name = "shadowing"
        settings_type = Shadowing  # type: ignore[assignment]

    with pytest.raises(TypeError, match="max_words"):
        generated.analysis_command(ShadowingAnalysis)
    with pytest.raises(TypeError, match="has no command-line form"):
        class Nested(Settings):
            table: dict[str, int] = Field(default_factory=dict)

        ShadowingAnalysis.settings_type = Nested  # type: ignore[assignment]
        generated.analysis_command(ShadowingAnalysis)


class ToySettings(EvaluateSettings):
    """Clean accuracy, with one setting of each kind an option can take."""

    words: tuple[str, ...] = Field(default=("good", "great"), description="words to look for")
    scales: tuple[float, ...] = Field(default=(0.5, 1.0), description="Scales, comma-separated.")
    mode: Literal["fast", "slow"] = Field(default="fast", description="How: fast or slow.")
    scale: float | None = Field(default=None, description="One scale (default: none).")
    loud: bool = Field(default=False, description="Say more.")


class ToyAnalysis(EvaluateAnalysis):
    """A new analysis, added in this test with one registry line and no cli/ file."""

    name = "toy-accuracy"
    title = "Toy accuracy"
    paper = "None: a test analysis."
    settings_type = ToySettings  # type: ignore[assignment]


def test_a_new_registered_analysis_gets_a_working_command_without_a_cli_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.store import RunStore

    monkeypatch.setitem(ANALYSES._entries, ToyAnalysis.name, Entry(ToyAnalysis.name, ToyAnalysis, ToyAnalysis.title))
    use_toy_victim(monkeypatch)
    toy_app = App()
    generated.register(toy_app)
    runner = CliRunner()
    helped = runner.invoke(toy_app, ["toy-accuracy", "--help"], env=WIDE, terminal_width=200)
    shown = _words(helped.output)
    assert helped.exit_code == 0 and "Toy accuracy." in shown and "None: a test analysis." in shown
    assert "words to look for." in shown and "[fast|slow]" in shown and "--loud" in shown and "--no-loud" in shown
    assert "[default: 0.5, 1.0]" in shown
    out = tmp_path / "toy"
    result = runner.invoke(toy_app, ["toy-accuracy", "--data", str(reviews_csv(tmp_path)), "--n", "4",
                                     "--words", "bad,dull", "--words", "flat", "--scales", "0.1,2",
                                     "--mode", "slow", "--loud", "--quiet", "--out", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run("toy-accuracy")
        assert run is not None
        settings = run.config["settings"]
    assert settings == {"n": 4, "batch_size": 64, "words": ["bad", "dull", "flat"], "scales": [0.1, 2.0],
                        "mode": "slow", "scale": None, "loud": True}
    assert json.loads((out / "summary.json").read_text())["analyses"]["toy-accuracy"]["summary"]["examples"] == 4
    bad = runner.invoke(toy_app, ["toy-accuracy", "--scales", "0.1,x", "--out", str(tmp_path / "bad")], env=WIDE)
    assert bad.exit_code == 2 and "The '--scales' option must be comma-separated numbers such as 0.5,1.0" in bad.output
    bad = runner.invoke(toy_app, ["toy-accuracy", "--mode", "medium", "--out", str(tmp_path / "bad")], env=WIDE)
    assert bad.exit_code == 2 and "--mode" in bad.output and "fast" in bad.output
    assert not (tmp_path / "bad" / "store.sqlite").exists()


def _msr_victim() -> Any:
    import torch

    from textrobust.victims.torch import TorchVictim
    from textrobust.zoo.cnn import CnnClassifier, CnnConfig
    from textrobust.zoo.vocab import WordVocab

    torch.manual_seed(0)
    vocab = WordVocab(["good", "bad", "film", "plot", "great", "awful", "movie", "story", "the", "a", "was", "and"],
                      max_length=16)
    model = CnnClassifier(CnnConfig(embed_dim=4, filters=4, widths=(2, 3)), len(vocab), 2)
    return TorchVictim(model, vocab, ("neg", "pos"))


def test_msr_n_3_analyses_whole_texts_through_the_command_line(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Done means (issue 29): `textrobust msr --n 3` analyses whole texts. --n is the number
    of texts; no option of msr can shadow the shared --max-words again (tested above)."""
    from textrobust import audit
    from textrobust.data.examples import Dataset, Example
    from textrobust.store import RunStore
    from textrobust.text import Text

    texts = ["the film was good and the story was great", "a bad plot and an awful movie",
             "the story was good", "a great film"]
    examples = tuple(Example(f"e{i}", Text.from_string(t), i % 2) for i, t in enumerate(texts))
    data = Dataset("toy", examples, ("neg", "pos"), "test")
    real = audit.run
    monkeypatch.setattr(audit, "run", lambda _victim, _data, *args, **kw: real(_msr_victim(), data, *args, **kw))
    out = tmp_path / "msr"
    result = CliRunner().invoke(app, ["msr", "--n", "3", "--candidates", "paper", "--no-pos-filter", "--no-lime",
                                      "--simulations", "2", "--iterations", "2", "--multi-sets", "1",
                                      "--max-set-size", "2", "--quiet", "--out", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["length_limit"]["truncated"] == [] and summary["length_limit"]["max_words"] > 3
    with RunStore(out / "store.sqlite") as store:
        rows = store.latest_run("msr").results()
    assert len(rows) == 3
    for row in rows:
        original = texts[int(row.example_id[1:])]
        assert len(original.split()) > 3 and len(row.payload["words"]) == len(original.split())
