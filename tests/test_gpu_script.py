"""The GPU check (benchmarks/gpu/run.sh, issue 41 item 3) keeps working without a GPU: its
fake-CUDA mode (TEXTROBUST_FAKE_CUDA=1) runs every path on the CPU with tiny models; the
throughput part needs none of the packages the GPU machine lacks; the carried wheels are
unpacked only where missing; and everything carried stays under 60 MiB. Not marked gpu:
CI runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / "benchmarks" / "gpu"
MIB = 2**20


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None, reason="needs bash and timeout")
def test_run_sh_in_fake_cuda_mode_runs_every_path_and_writes_one_json(tmp_path: Path) -> None:
    env = {**os.environ, "TEXTROBUST_FAKE_CUDA": "1", "PYTHON": sys.executable, "GPU_BUDGET_S": "120"}
    env.pop("CI", None)  # the nested pytest uses the suite's own profile either way
    done = subprocess.run(["bash", str(GPU / "run.sh"), str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "gpu_check.json").read_text(encoding="utf-8"))
    assert result["environment"]["fake_cuda"] is True and result["environment"]["device"] == "cpu"
    assert "not GPU numbers" in result["note"]
    rows = result["victims"]
    assert {(r["model"], r["dtype"], r["bucket"], r["batch_size"]) for r in rows} == {
        (m, d, b, s) for m in ("BERT-base", "MiniLM") for d in ("float32", "bfloat16", "float16")
        for b in (False, True) for s in (2, 4, 8)}
    assert all(r["texts"] == 24 and r["texts_per_s"] > 0 and 0 <= r["padding_share"] < 1 for r in rows)
    assert min(r["padding_share"] for r in rows if r["bucket"]) <= min(r["padding_share"] for r in rows if not r["bucket"])
    shapes = result["attack_shapes"]
    assert {r["shape"] for r in shapes} == {"per example", "8 examples merged", "one call"} and len(shapes) == 12
    assert {r["victim_calls"] for r in shapes if r["shape"] == "one call"} == {1}
    assert len({r["queries"] for r in shapes}) == 1  # the same queries, cut three ways
    precision = result["precision"]
    assert {(r["model"], r["dtype"]) for r in precision} == {(m, d) for m in ("BERT-base", "MiniLM")
                                                             for d in ("bfloat16", "float16")}
    assert all(0.0 <= r["agreement_with_float32"] <= 1.0 and r["max_abs_dp_vs_float32"] < 0.5 for r in precision)
    bounds = result["cnn_and_bounds"]
    assert {(r["where"], r["method"]) for r in bounds["bounds"]} == {
        (w, m) for w in ("cpu", "cpu (as the device)") for m in ("crown", "ibp")}
    assert bounds["cnn_max_abs_logit_diff"] == 0.0 and bounds["bounds_crown_max_abs_diff"] == 0.0
    tests = result["gpu_tests"]
    assert tests["ran"] and tests["failed"] == 0 and tests["error"] == 0
    names = {case["test"].rsplit("::", 1)[-1] for case in tests["cases"]}
    assert {"test_gpu_bounds_equal_the_cpu_ones", "test_gpu_victim_predicts_as_on_the_cpu"} <= names
    assert tests["skipped"] == len(tests["cases"])  # every gpu test, skipped without CUDA, with the reason
    assert all("needs a CUDA device" in case["detail"] for case in tests["cases"])
    assert all(v == "present" for v in result["carried_wheels"].values())  # this machine has them all
    assert result["skipped_for_time"] == []


def test_the_throughput_part_needs_none_of_the_packages_the_gpu_machine_lacks(tmp_path: Path) -> None:
    """Without pydantic, NLTK, spaCy, wordfreq and Captum it measures the victims; the CNN and
    the bounds (textrobust.zoo needs pydantic) say why they are missing."""
    wrapper = tmp_path / "blocked.py"
    wrapper.write_text(
        "import importlib.abc, runpy, sys\n"
        "BLOCK = {'pydantic', 'nltk', 'spacy', 'wordfreq', 'captum'}\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in BLOCK:\n"
        "            raise ImportError('not on the GPU machine: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"sys.argv = ['throughput.py', '--out', {str(tmp_path / 'out.json')!r}, '--texts', '6', '--budget-s', '60']\n"
        f"runpy.run_path({str(GPU / 'throughput.py')!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    env = {**os.environ, "TEXTROBUST_FAKE_CUDA": "1", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(wrapper)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert len(result["victims"]) == 36 and len(result["precision"]) == 4
    assert "pydantic" in result["cnn_and_bounds"]["skipped"]
    assert result["gpu_tests"]["ran"] is False


def test_without_cuda_and_without_the_fake_mode_it_refuses(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the real check would run")
    env = {k: v for k, v in os.environ.items() if k != "TEXTROBUST_FAKE_CUDA"}
    done = subprocess.run([sys.executable, str(GPU / "throughput.py"), "--out", str(tmp_path / "x.json")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "TEXTROBUST_FAKE_CUDA=1" in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_wheels_are_unpacked_only_for_missing_modules(tmp_path: Path) -> None:
    sys.path.insert(0, str(GPU))
    try:
        import wheels as carried
    finally:
        sys.path.remove(str(GPU))
    listing = tmp_path / "wheels.txt"
    listing.write_text("# test\nnot_here_module_41: not_here_module_41==1.0\njson: jsonwheel==2.0\n", encoding="utf-8")
    folder = tmp_path / "wheels"
    folder.mkdir()
    with zipfile.ZipFile(folder / "not_here_module_41-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("not_here_module_41/__init__.py", "VALUE = 41\n")
    target = tmp_path / "site"
    assert carried.main(folder, target, tmp_path / "report.json", listing) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["json"] == "present"  # importable here: its wheel is not even looked for
    assert report["not_here_module_41"] == {"unpacked": ["not_here_module_41-1.0-py3-none-any.whl"], "missing_wheels": []}
    assert (target / "not_here_module_41" / "__init__.py").read_text(encoding="utf-8") == "VALUE = 41\n"
    (folder / "not_here_module_41-1.0-py3-none-any.whl").unlink()
    carried.main(folder, tmp_path / "site2", tmp_path / "report2.json", listing)
    report2 = json.loads((tmp_path / "report2.json").read_text(encoding="utf-8"))
    assert report2["not_here_module_41"]["missing_wheels"] == ["not_here_module_41==1.0"]


def test_the_check_and_what_it_carries_stay_under_60_mib() -> None:
    """The device machine takes at most 64 MiB with a command: the checkout (tracked and
    untracked files that git does not ignore) plus the carried wheels must stay under 60."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    tree = sum((ROOT / p).stat().st_size for p in listed if p and (ROOT / p).is_file())
    wheel_dir = GPU / "wheels"
    wheels = sum(p.stat().st_size for p in wheel_dir.glob("*.whl")) if wheel_dir.is_dir() else 0
    assert tree + wheels < 60 * MIB, f"checkout {tree / MIB:.1f} MiB + wheels {wheels / MIB:.1f} MiB"
    if wheel_dir.is_dir():
        assert wheels < 8 * MIB
    sentences = (GPU / "sentences.txt").read_text(encoding="utf-8").splitlines()
    assert len(sentences) == 1276 and all(s.strip() for s in sentences)
    assert (GPU / "sentences.txt").stat().st_size < 200_000
