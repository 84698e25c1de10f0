"""Issue 37, items 4 and 13 (train): --max-train applies to the certified phase of
``--defense certified`` too (the card's ``train_used`` says so), ``train`` takes
``--threads``, and ``--cert-epochs`` shows a readable default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from textrobust.data.examples import Dataset, Example
from textrobust.errors import ConfigError
from textrobust.text import Text

torch = pytest.importorskip("torch")

from textrobust.defenses import harden  # noqa: E402
from textrobust.defenses.certified import _train_subset  # noqa: E402
from textrobust.zoo import TrainingData  # noqa: E402

POSITIVE, NEGATIVE, NOUNS = ["good", "great"], ["bad", "dull"], ["film", "movie"]
SYNONYMS = {"good": ["great"], "great": ["good"], "bad": ["dull"], "dull": ["bad"], "film": ["movie"],
            "movie": ["film"]}
CNN = {"embed_dim": 8, "filters": 4}
TRAINING = {"epochs": 1, "extra_words": 0, "max_length": 16, "vectors": "random", "lr": 1e-2}
CERTIFIED = {"training": {"epochs": 1, "ramp_epochs": 1, "batch_size": 8, "lr": 1e-2, "embedding_lr": 5e-2}}


def _split(split: str, n: int) -> Dataset:
    rng = np.random.default_rng(len(split))
    examples = [Example(f"{split}-{i}", Text.from_string(
        f"The {NOUNS[int(rng.integers(2))]} was {(POSITIVE if i % 2 else NEGATIVE)[int(rng.integers(2))]}."), i % 2)
        for i in range(n)]
    return Dataset("toy", tuple(examples), ("negative", "positive"), split)


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_max_train_applies_to_the_certified_phase(tmp_path: Path) -> None:
    data = TrainingData(_split("train", 30), _split("dev", 6), _split("test", 6))
    trained = harden("cnn", data, out=tmp_path / "cert", defense="certified", settings=CERTIFIED, config=CNN,
                     training={**TRAINING, "max_train_examples": 10}, table=SYNONYMS)
    assert trained.card.splits["train_used"] == 10 and trained.card.splits["train"] == 30
    assert "seeded subset of 10 of 30" in trained.card.notes


def test_the_certified_subset_is_the_base_models_subset() -> None:
    examples = list(range(50))
    chosen = _train_subset(examples, {"max_train_examples": 7}, seed=3)
    keep = np.sort(np.random.default_rng(3).permutation(50)[:7])  # what train_victim draws with seed 3
    assert chosen == [int(i) for i in keep]
    assert _train_subset(examples, None, 3) == examples and _train_subset(examples, {"max_train_examples": 99}, 3) \
        == examples
    with pytest.raises(ConfigError, match="'max_train_examples' training setting must be an int of at least 1"):
        _train_subset(examples, {"max_train_examples": 0}, 3)


def test_train_help_shows_threads_choices_and_a_readable_cert_epochs_default() -> None:
    from typer.testing import CliRunner

    from textrobust.bounds.certified_training import CertifiedTrainingConfig
    from textrobust.cli.app import app
    from textrobust.cli.train import CERT_EPOCHS_DEFAULT

    assert CERT_EPOCHS_DEFAULT == CertifiedTrainingConfig().epochs  # the help's number is the config's
    text = " ".join(CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"}).output.split())
    assert f"epochs of IBP training (default {CERT_EPOCHS_DEFAULT})" in text and "CertifiedTrainingConfig" not in text
    assert "--threads" in text and "--adv-candidates [validated|paper]" in text


@pytest.mark.parametrize(("threads", "said"), [("0", "The '--threads' option must be 'auto' or a thread count"),
                                               ("many", "The '--threads' option must be 'auto' or a thread count")])
def test_train_threads_are_checked_before_training(threads: str, said: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from textrobust.cli.app import app

    result = CliRunner().invoke(app, ["train", "bow", "--threads", threads, "--out", str(tmp_path / "v")])
    assert result.exit_code == 2 and said in " ".join(result.output.split())
    assert not (tmp_path / "v").exists()


def test_train_applies_a_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.cli import train as cli_train

    before = torch.get_num_threads()
    try:
        cli_train._apply_threads("1")
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


# ---- item 14: the synonym table shows progress ------------------------------------------------------
class _FakeChecker:
    """CheckedSynonyms' table without its vectors: each alphabetic word not skipped -> its
    reversal; the calls are recorded (the chunks)."""

    calls: list[list[str]] = []

    def __init__(self, k: int) -> None:
        self.k = k

    def table(self, words: list[str], *, neighbours: int, skip: object) -> dict[str, tuple[str, ...]]:
        _FakeChecker.calls.append(list(words))
        keys = sorted({w.lower() for w in words if w.isalpha() and w.lower() not in skip})  # type: ignore[operator]
        return {w: (w[::-1],) for w in keys}


def test_the_synonym_table_is_built_in_chunks_with_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    import textrobust.attack.candidates.checked as checked
    from textrobust.defenses.augment import TABLE_CHUNKS, checked_table

    monkeypatch.setattr(checked, "CheckedSynonyms", _FakeChecker)
    _FakeChecker.calls = []
    words = [f"Word{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(100)] + ["the", "film", "Film", "x1"]
    seen: list[tuple[int, int]] = []
    built = checked_table(words, progress=lambda done, total: seen.append((done, total)))
    whole = _FakeChecker(8).table(sorted({w.lower() for w in words}), neighbours=10, skip={"the"})
    assert built == whole and list(built) == list(whole)  # the table of one call, in its order
    assert len(_FakeChecker.calls) - 1 == len(seen) <= TABLE_CHUNKS and len(seen) > 1
    assert seen[-1] == (103, 103) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_the_table_progress_is_a_training_event_the_progress_lines_show(capsys: pytest.CaptureFixture[str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.defenses.augment import table_progress
    from textrobust.zoo.training import rich_progress

    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)
    events: list[object] = []
    report = table_progress(events.append, 0.0)
    assert report is not None and table_progress(None, 0.0) is None
    report(5, 10)
    event = events[0]
    assert (getattr(event, "stage"), getattr(event, "step"), getattr(event, "steps")) == ("table", 5, 10)
    with rich_progress("training cnn (certified)") as progress:  # no terminal here: plain lines
        progress(events[0])  # type: ignore[arg-type]
    assert "synonym table: 5/10 words checked" in capsys.readouterr().err
