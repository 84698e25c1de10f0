"""``--device`` and ``--dtype`` (issue 31): resolving a placement, victims on it, the
float32 agreement check of a reduced-precision run, and the CLI's exit 2 for an absent
device. Tests marked ``gpu`` run where torch sees CUDA and are skipped elsewhere."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from cli_helpers import reviews_csv
from textrobust.cli.app import app
from textrobust.devices import (
    MIN_AGREEMENT,
    Placement,
    agreement,
    resolve_device,
    resolve_placement,
    texts_sample,
    torch_dtype,
)
from textrobust.errors import ConfigError
from textrobust.text import Text

runner = CliRunner()
NO_CUDA = not torch.cuda.is_available()
no_cuda_only = pytest.mark.skipif(not NO_CUDA, reason="checks the error on a machine without CUDA")


# ---- resolving ----------------------------------------------------------------------------------
def test_cpu_and_auto_resolve_without_a_gpu() -> None:
    assert resolve_device("cpu") == "cpu"
    assert resolve_device(" CPU ") == "cpu"
    assert resolve_device("auto") == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert resolve_device(None) == resolve_device("auto")
    assert resolve_placement("cpu", "bfloat16") == Placement("cpu", "bfloat16")
    assert resolve_placement("cpu", None) == Placement("cpu", "float32")


@no_cuda_only
@pytest.mark.parametrize("spec", ["cuda", "cuda:1", "CUDA:0"])
def test_an_absent_cuda_device_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"torch sees no CUDA device on this machine.*--device cpu or auto"):
        resolve_device(spec)


def test_absent_mps_and_bad_names_are_config_errors() -> None:
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        with pytest.raises(ConfigError, match="no Apple GPU"):
            resolve_device("mps")
    with pytest.raises(ConfigError, match="cuda or cuda:N"):
        resolve_device("cuda:x")
    with pytest.raises(ConfigError, match="auto, cpu, cuda, cuda:N or mps"):
        resolve_device("tpu")
    with pytest.raises(ConfigError, match="float32, bfloat16, float16"):
        resolve_placement("cpu", "float64")


def test_float16_on_the_cpu_is_refused() -> None:
    with pytest.raises(ConfigError, match="float16 needs a GPU"):
        resolve_placement("cpu", "float16")


def test_a_placement_moves_and_casts_a_module_and_pickles() -> None:
    placement = Placement("cpu", "bfloat16")
    module = placement.place(torch.nn.Linear(3, 2))
    assert module.weight.dtype == torch.bfloat16 and placement.reduced
    assert torch_dtype("float32") is torch.float32 and not Placement().reduced
    assert pickle.loads(pickle.dumps(placement)) == placement
    assert placement.to_dict() == {"device": "cpu", "dtype": "bfloat16"}


def test_agreement_and_the_sample() -> None:
    a = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.4, 0.6]])
    b = np.array([[0.8, 0.2], [0.3, 0.7], [0.4, 0.6], [0.4, 0.6]])
    assert agreement(a, b) == 0.75
    assert agreement(np.empty((0, 2)), np.empty((0, 2))) == 1.0
    with pytest.raises(ValueError, match="one shape"):
        agreement(a, b[:3])
    items = list(range(1000))
    sample = texts_sample(items, 200)
    assert len(sample) == 200 and sample[0] == 0 and sample == texts_sample(items, 200)
    assert texts_sample(items[:5]) == items[:5]


# ---- victims on a placement ---------------------------------------------------------------------
def _bow_folder(out: Path, *, tied: bool) -> Path:
    """A bag-of-words victim folder over negative/positive. ``tied``: logits 1.0 and 1.001
    for every text, which float32 tells apart (positive) and bfloat16 (8 bits of mantissa)
    rounds to a tie (argmax: negative); else 'good' and 'great' push to positive, 'dull'
    and 'weak' to negative, with margins bfloat16 keeps."""
    from textrobust.zoo.bow import BowClassifier, BowConfig
    from textrobust.zoo.io import save_victim
    from textrobust.zoo.vocab import WordVocab

    words = sorted({w for text, _ in _rows() for w in text.split()})
    vocab = WordVocab(words, max_length=16)
    config = BowConfig(embed_dim=2, dropout=0.0)
    module = BowClassifier(config, len(vocab), 2)
    with torch.no_grad():
        module.embedding.weight.zero_()
        module.head.weight.zero_()
        if tied:
            module.head.bias.copy_(torch.tensor([1.0, 1.001]))
        else:
            for word, sign in (("good", 1.0), ("great", 1.0), ("dull", -1.0), ("weak", -1.0)):
                module.embedding.weight[vocab.word_ids([word])[0], 0] = sign
            module.head.weight.copy_(torch.tensor([[-8.0, 0.0], [8.0, 0.0]]))
            module.head.bias.copy_(torch.tensor([0.25, 0.0]))
    return save_victim(out, module=module, vocab=vocab, architecture="bow", model_config=config,
                       label_names=("negative", "positive"))


def _rows() -> list[tuple[str, str]]:
    from cli_helpers import ROWS

    return ROWS


def test_a_victim_loads_on_its_placement_and_returns_float_probabilities(tmp_path: Path) -> None:
    from textrobust.zoo import load_victim

    folder = _bow_folder(tmp_path / "bow", tied=False)
    texts = [Text.from_string(t) for t, _ in _rows()]
    full = load_victim(folder)
    half = load_victim(folder, placement=Placement("cpu", "bfloat16"))
    assert full.placement == Placement() and next(full.module.parameters()).dtype == torch.float32
    assert next(half.module.parameters()).dtype == torch.bfloat16
    p32, p16 = full.probabilities(texts), half.probabilities(texts)
    assert p16.dtype == np.float64 and p16.shape == (6, 2)
    assert agreement(p32, p16) == 1.0
    np.testing.assert_allclose(p32, p16, atol=2e-2)
    grads = half.word_gradients(texts[:2], [1, 0])
    assert grads[0].dtype == np.float32 and grads[0].shape == (len(texts[0]), 2)


def test_the_process_cache_keeps_one_victim_per_placement(tmp_path: Path) -> None:
    from textrobust.audit.sources import VictimSource

    source = VictimSource.of(_bow_folder(tmp_path / "bow", tied=False))
    assert source.load() is source.load(Placement())
    assert source.load(Placement("cpu", "bfloat16")) is not source.load()
    assert source.load(cache=False) is source.load()  # a cached one is reused
    fresh = source.load(Placement("cpu", "float32"), cache=False)
    assert fresh is source.load()


# ---- the audit and the CLI ----------------------------------------------------------------------
@no_cuda_only
def test_cli_device_cuda_without_a_gpu_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--out", str(tmp_path / "run"),
                                 "--device", "cuda", "--quiet"])
    assert result.exit_code == 2, result.output
    assert "torch sees no CUDA device" in result.output
    assert not (tmp_path / "run" / "store.sqlite").exists()  # refused before any work


def test_cli_float16_on_the_cpu_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--out", str(tmp_path / "run"),
                                 "--device", "cpu", "--dtype", "float16", "--quiet"])
    assert result.exit_code == 2, result.output
    assert "float16 needs a GPU" in result.output


def _evaluate(tmp_path: Path, victim: Path, *extra: str) -> tuple[object, Path]:
    out = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
    result = runner.invoke(app, ["evaluate", "--victim", str(victim), "--data", str(reviews_csv(tmp_path)),
                                 "--out", str(out), "--device", "cpu", "--quiet", *extra], terminal_width=200)
    return result, out


def test_cli_bfloat16_runs_and_records_device_dtype_and_agreement(tmp_path: Path) -> None:
    folder = _bow_folder(tmp_path / "bow", tied=False)
    result, out = _evaluate(tmp_path, folder, "--dtype", "bfloat16")
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    facts = {"device": "cpu", "dtype": "bfloat16", "agreement": 1.0, "agreement_sample": 6}
    assert summary["placement"] == facts and summary["victim"]["placement"] == facts
    html = (out / "report.html").read_text()
    assert "bfloat16" in html and "agreement with float32" in html
    full, out32 = _evaluate(tmp_path, folder)
    assert full.exit_code == 0, full.output
    assert json.loads((out32 / "summary.json").read_text())["placement"] == {
        "device": "cpu", "dtype": "float32", "agreement": None, "agreement_sample": None}


def test_cli_refuses_a_victim_that_disagrees_in_bfloat16_unless_allowed(tmp_path: Path) -> None:
    folder = _bow_folder(tmp_path / "tied", tied=True)
    refused, out = _evaluate(tmp_path, folder, "--dtype", "bfloat16")
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert "only 0.0% of 6 texts" in said and "--allow-precision-change" in said
    assert not (out / "store.sqlite").exists()
    allowed, out = _evaluate(tmp_path, folder, "--dtype", "bfloat16", "--allow-precision-change")
    assert allowed.exit_code == 0, allowed.output
    assert json.loads((out / "summary.json").read_text())["placement"]["agreement"] == 0.0
    assert MIN_AGREEMENT == 0.99


def test_resume_may_change_device_but_not_dtype(tmp_path: Path) -> None:
    from textrobust import audit
    from textrobust.errors import StoreError

    folder = _bow_folder(tmp_path / "bow", tied=False)
    data = reviews_csv(tmp_path)
    out = tmp_path / "run"
    audit.run(str(folder), str(data), ["evaluate"], out, progress=False, device="cpu", dtype="bfloat16")
    audit.run(str(folder), str(data), ["evaluate"], out, progress=False, resume=True, device="auto",
              dtype="bfloat16")
    with pytest.raises(StoreError, match=r"dtype: stored \"bfloat16\", now \"float32\""):
        audit.run(str(folder), str(data), ["evaluate"], out, progress=False, resume=True, dtype="float32")
    # the command line takes the stored dtype when --dtype is not given
    resumed = runner.invoke(app, ["evaluate", "--victim", str(folder), "--data", str(data), "--out", str(out),
                                  "--resume", "--quiet"])
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "summary.json").read_text())["placement"]["dtype"] == "bfloat16"


def test_a_victim_object_is_refused_in_reduced_precision(tmp_path: Path) -> None:
    from textrobust import audit
    from textrobust.audit.testing import keyword_scores
    from textrobust.victims.function import FunctionVictim

    victim = FunctionVictim(keyword_scores, ("negative", "positive"))
    with pytest.raises(ConfigError, match="needs a victim folder"):
        audit.run(victim, str(reviews_csv(tmp_path)), ["evaluate"], tmp_path / "run", progress=False,
                  device="cpu", dtype="bfloat16")


# ---- on a GPU -----------------------------------------------------------------------------------
@pytest.mark.gpu
def test_gpu_victim_predicts_as_on_the_cpu(tmp_path: Path) -> None:
    from textrobust.zoo import load_victim

    placement = resolve_placement("cuda", "float32")
    assert placement.device == "cuda:0"
    folder = _bow_folder(tmp_path / "bow", tied=False)
    texts = [Text.from_string(t) for t, _ in _rows()]
    on_gpu = load_victim(folder, placement=placement)
    assert next(on_gpu.module.parameters()).device.type == "cuda"
    np.testing.assert_allclose(on_gpu.probabilities(texts), load_victim(folder).probabilities(texts), atol=1e-5)
    half = load_victim(folder, placement=resolve_placement("cuda", "float16"))
    assert agreement(load_victim(folder).probabilities(texts), half.probabilities(texts)) == 1.0


@pytest.mark.gpu
def test_gpu_audit_records_the_cuda_device(tmp_path: Path) -> None:
    result, out = _evaluate(tmp_path, _bow_folder(tmp_path / "bow", tied=False), "--device", "cuda")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["placement"]["device"] == "cuda:0"


# ---- training -----------------------------------------------------------------------------------
def _toy_training_data() -> object:
    from textrobust.data.examples import Dataset, Example
    from textrobust.zoo import TrainingData

    def split(name: str, n: int) -> Dataset:
        rows = [Example(f"{name}{i}", Text.from_string("a good film" if i % 2 else "a dull film"), i % 2)
                for i in range(n)]
        return Dataset("toy", tuple(rows), ("negative", "positive"), name)

    return TrainingData(split("train", 8), split("dev", 4), split("test", 4))


def test_training_records_its_device_and_refuses_reduced_precision(tmp_path: Path) -> None:
    from textrobust.zoo import train_victim

    training = {"epochs": 1, "extra_words": 0, "max_length": 8, "vectors": "random"}
    trained = train_victim("bow", _toy_training_data(), out=tmp_path / "bow", config={"embed_dim": 4},
                           training=training, device="cpu")
    assert trained.card.device == "cpu" and trained.victim.placement == Placement()
    assert json.loads((tmp_path / "bow" / "card.json").read_text())["device"] == "cpu"
    with pytest.raises(ConfigError, match="Training runs in float32 only"):
        train_victim("bow", _toy_training_data(), out=tmp_path / "half", training=training, dtype="bfloat16")
    assert not (tmp_path / "half").exists()


def test_cli_train_refuses_an_absent_device_and_a_reduced_dtype(tmp_path: Path) -> None:
    half = runner.invoke(app, ["train", "bow", "--out", str(tmp_path / "v"), "--dtype", "bfloat16"])
    assert half.exit_code == 2 and "float32 only" in " ".join(half.output.split())
    if NO_CUDA:
        absent = runner.invoke(app, ["train", "bow", "--out", str(tmp_path / "v"), "--device", "cuda"])
        assert absent.exit_code == 2 and "torch sees no CUDA device" in " ".join(absent.output.split())
    assert not (tmp_path / "v").exists()


def test_gradient_attributions_run_on_a_bfloat16_victim(tmp_path: Path) -> None:
    from textrobust.attribution.methods import IntegratedGradients, Saliency
    from textrobust.zoo import load_victim

    folder = _bow_folder(tmp_path / "bow", tied=False)
    texts = [Text.from_string(t) for t, _ in _rows()[:3]]
    labels = [1, 1, 0]
    for method in (Saliency, IntegratedGradients):
        full = method(load_victim(folder)).attribute(texts, labels)
        half = method(load_victim(folder, placement=Placement("cpu", "bfloat16"))).attribute(texts, labels)
        for a, b in zip(full, half):
            np.testing.assert_allclose(a, b, rtol=5e-2, atol=5e-2)


@pytest.mark.gpu
def test_gpu_bounds_equal_the_cpu_ones() -> None:
    from test_bounds import _bow, _cnn, _lstm

    from textrobust.bounds.certify import Verifier
    from textrobust.bounds.region import Norm

    for make in (_cnn, _bow, _lstm):
        model = make(3)
        ids = [1, 2, 3, 4]
        cpu, gpu = Verifier(model), Verifier(make(3).to("cuda"))
        assert gpu.device.type == "cuda"
        label = int(cpu.logits(cpu.embed(ids)).argmax())
        for method in ("crown", "ibp"):
            on_cpu, used = cpu.margin_lower(cpu.ball(ids, [1], 0.3, Norm.LINF), label, method)
            on_gpu, used_gpu = gpu.margin_lower(gpu.ball(ids, [1], 0.3, Norm.LINF), label, method)
            assert used == used_gpu
            np.testing.assert_allclose(on_gpu.cpu().numpy(), on_cpu.numpy(), rtol=1e-9, atol=1e-9)
        assert gpu.lower_radius(ids, (1,)).eps == pytest.approx(cpu.lower_radius(ids, (1,)).eps, rel=1e-6)


@pytest.mark.gpu
def test_gpu_causal_lm_scores_as_on_the_cpu() -> None:
    from test_constraints import tiny_causal_lm

    from textrobust.lm import CausalLM

    cpu = tiny_causal_lm()
    gpu = CausalLM(Placement("cuda:0").place(tiny_causal_lm().model), cpu.tokenizer, batch_size=4)
    assert gpu.device.type == "cuda"
    texts = ["the film is good .", "a man sleeps", "the movie is very well made ."]
    np.testing.assert_allclose(gpu.sentence_log_prob(texts), cpu.sentence_log_prob(texts), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
def test_gpu_attributions_and_training(tmp_path: Path) -> None:
    from textrobust.attribution.methods import IntegratedGradients
    from textrobust.zoo import load_victim, train_victim

    folder = _bow_folder(tmp_path / "bow", tied=False)
    texts = [Text.from_string(t) for t, _ in _rows()[:3]]
    on_gpu = IntegratedGradients(load_victim(folder, placement=Placement("cuda:0"))).attribute(texts, [1, 1, 0])
    on_cpu = IntegratedGradients(load_victim(folder)).attribute(texts, [1, 1, 0])
    for a, b in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    trained = train_victim("bow", _toy_training_data(), out=tmp_path / "trained", config={"embed_dim": 4},
                           training={"epochs": 1, "extra_words": 0, "max_length": 8, "vectors": "random"},
                           device="cuda")
    assert trained.card.device == "cuda:0"


def test_the_config_file_takes_device_dtype_and_the_override(tmp_path: Path) -> None:
    folder = _bow_folder(tmp_path / "tied", tied=True)
    out = tmp_path / "run"
    config = tmp_path / "audit.toml"
    config.write_text(f'[victim]\npath = "{folder}"\n[data]\nname = "{reviews_csv(tmp_path)}"\n'
                      f'[run]\nout = "{out}"\ndevice = "cpu"\ndtype = "bfloat16"\nallow_precision_change = true\n',
                      encoding="utf-8")
    result = runner.invoke(app, ["audit", "--config", str(config), "--analyses", "evaluate", "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["placement"]["dtype"] == "bfloat16"


def test_steady_attention_is_a_no_op_off_cuda_and_picks_plan_free_backends_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CUDA the victim's attention avoids cuDNN's per-shape plans (H200: 75 ms -> 10 ms per new shape)."""
    import torch.nn.attention as attention

    from textrobust.devices import steady_attention

    asked: list[object] = []

    class Record:
        def __init__(self, backends: object) -> None:
            asked.append(backends)

        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(attention, "sdpa_kernel", Record)
    with steady_attention("cpu"), steady_attention(torch.device("cpu")):
        pass
    assert asked == []
    with steady_attention("cuda:0"):
        pass
    assert len(asked) == 1
    chosen = set(asked[0])  # type: ignore[call-overload]
    assert attention.SDPBackend.CUDNN_ATTENTION not in chosen
    assert {attention.SDPBackend.FLASH_ATTENTION, attention.SDPBackend.MATH} <= chosen
