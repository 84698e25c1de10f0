"""Hostile values of the run options of issue 31 (--device, --dtype, --threads,
--gpus-per-worker, train --max-train), on the command line and as [run] keys of a --config
file: each is exit 2 with one message that names the option (or the key and the file) and
says what is allowed; never a traceback, never a silent fallback, never any work done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_helpers import reviews_csv, use_toy_victim
from textrobust.cli.app import app

runner = CliRunner()

DEVICES = "must be auto, cpu, cuda, cuda:N or mps"
GPU_NUMBER = "must be cuda or cuda:N with N a GPU number (0, 1, ...)"
DTYPES = "must be one of float32, bfloat16, float16"
THREADS = "must be 'auto' or a thread count from 1 to 2, the CPUs this process may run on"
GPUS = "must be a number >= 0, e.g. 1 or 0.5"
MAX_TRAIN = "must be between 1 and 2^53"

#: (command line after the command, what the message must say); "train" cases run `textrobust train bow`.
OPTIONS: dict[str, tuple[list[str], list[str]]] = {
    "device cuda:abc": (["--device", "cuda:abc"], ["'--device' option", GPU_NUMBER, "'cuda:abc'"]),
    "device cuda:-1": (["--device", "cuda:-1"], ["'--device' option", GPU_NUMBER, "'cuda:-1'"]),
    "device tpu": (["--device", "tpu"], ["'--device' option", DEVICES, "'tpu'"]),
    "device empty": (["--device", ""], ["'--device' option", DEVICES, "Got ''"]),
    "device a unicode digit": (["--device", "cuda:²"], ["'--device' option", GPU_NUMBER]),
    "dtype float8": (["--dtype", "float8"], ["'--dtype' option", DTYPES, "'float8'"]),
    # names are read in any case (as --device's): FLOAT16 is float16, which the CPU lacks
    "dtype FLOAT16 on the cpu": (["--device", "cpu", "--dtype", "FLOAT16"],
                                 ["'--dtype' option", "float16 needs a GPU; on the CPU use bfloat16 (or float32)"]),
    "threads 0": (["--threads", "0"], ["'--threads' option", THREADS, "'0'"]),
    "threads -3": (["--threads", "-3"], ["'--threads' option", THREADS, "'-3'"]),
    "threads 10000": (["--threads", "10000"], ["'--threads' option", THREADS, "'10000'"]),
    "threads a word": (["--threads", "two"], ["'--threads' option", THREADS, "'two'"]),
    "gpus-per-worker -1": (["--gpus-per-worker", "-1"], ["'--gpus-per-worker' option", GPUS, "-1.0"]),
    "gpus-per-worker nan": (["--gpus-per-worker", "nan"], ["'--gpus-per-worker' option", GPUS, "nan"]),
    "gpus-per-worker nan with ray": (["--executor", "ray", "--gpus-per-worker", "nan"],
                                     ["'--gpus-per-worker' option", GPUS]),
    "gpus-per-worker 1.5 with ray": (["--executor", "ray", "--gpus-per-worker", "1.5"],
                                     ["'--gpus-per-worker' option", "a whole number of GPUs", "give 1 or 2"]),
    "train max-train 0": (["train", "--max-train", "0"], ["'--max-train' option", MAX_TRAIN, "Got 0"]),
    "train max-train -5": (["train", "--max-train", "-5"], ["'--max-train' option", MAX_TRAIN, "Got -5"]),
    "train device tpu": (["train", "--device", "tpu"], ["'--device' option", DEVICES]),
    "train device empty": (["train", "--device", ""], ["'--device' option", DEVICES]),
}

#: ([run] line of a --config file, what the message must say besides the key and the file).
CONFIG_KEYS: dict[str, tuple[str, list[str]]] = {
    "device a number": ("device = 3", ['a string naming a device: "auto", "cpu", "cuda", "cuda:N" or "mps"',
                                       "Got 3"]),
    "device tpu": ('device = "tpu"', [DEVICES, "'tpu'"]),
    "device empty": ('device = ""', [DEVICES]),
    "device cuda:-1": ('device = "cuda:-1"', [GPU_NUMBER]),
    "dtype a number": ("dtype = 16", ['"float32", "bfloat16" or "float16"', "Got 16"]),
    "dtype float8": ('dtype = "float8"', [DTYPES]),
    "threads a word": ('threads = "two"', [THREADS, "'two'"]),
    "threads 0": ("threads = 0", [THREADS, "Got 0"]),
    "threads 10000": ("threads = 10000", [THREADS]),
    "threads a float": ("threads = 2.5", ['"auto" or a thread count (an integer)', "Got 2.5"]),
    "threads true": ("threads = true", ['"auto" or a thread count (an integer)', "Got true"]),
    "gpus_per_worker a word": ('gpus_per_worker = "one"', ["a number (as --gpus-per-worker takes)"]),
    "gpus_per_worker -1": ("gpus_per_worker = -1", [GPUS, "Got -1"]),
    "gpus_per_worker nan": ("gpus_per_worker = nan", [GPUS, "Got nan"]),
    "allow_precision_change a word": ('allow_precision_change = "yes"', ["true or false"]),
}

CASES = [pytest.param("option", args, said, id=name) for name, (args, said) in OPTIONS.items()]
CASES += [pytest.param("config", line, said, id=f"config {name}") for name, (line, said) in CONFIG_KEYS.items()]


@pytest.mark.parametrize("how, given, said", CASES)
def test_a_hostile_run_option_exits_2_naming_it_and_what_is_allowed(
        how: str, given: Any, said: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import textrobust.threads
    import textrobust.zoo

    monkeypatch.setattr(textrobust.threads, "affinity_cpus", lambda: 2)  # the message's range, on any machine
    monkeypatch.delenv("TEXTROBUST_THREADS", raising=False)
    use_toy_victim(monkeypatch)

    def no_training(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("training started despite a bad option")

    monkeypatch.setattr(textrobust.zoo, "train_victim", no_training)
    out = tmp_path / "out"
    if how == "config":
        config = tmp_path / "audit.toml"
        config.write_text(f'[data]\nname = "{reviews_csv(tmp_path).as_posix()}"\n[run]\n{given}\n', encoding="utf-8")
        key = given.split("=")[0].strip()
        said = [f"The key '{key}' in [run] of {config}", *said]
        args = ["audit", "--config", str(config), "--analyses", "evaluate", "--n", "2", "--quiet", "--out", str(out)]
    elif given[0] == "train":
        args = ["train", "bow", "--out", str(out), *given[1:]]
    else:
        args = ["evaluate", "--data", str(reviews_csv(tmp_path)), "--n", "2", "--quiet", "--out", str(out), *given]
    result = runner.invoke(app, args, terminal_width=400)
    message = " ".join(result.output.split())
    assert result.exit_code == 2, f"{args}: exit {result.exit_code}\n{result.output[-2000:]}"
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output, result.output
    assert message.startswith("error: ") and message.count("error: ") == 1, message
    for part in said:
        assert part in message, (part, message)
    assert not out.exists() or not any(out.iterdir())  # refused before any work
