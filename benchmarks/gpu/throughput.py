"""The GPU check's measurements (issue 41, item 3); run by ``benchmarks/gpu/run.sh``.

One JSON (``--out``) with:

- ``victims``: texts/s of ``HuggingFaceVictim`` for BERT-base and MiniLM shapes (random
  weights from a config; a WordPiece tokenizer trained here on the shipped sentences) in
  float32, bfloat16 and float16, with and without length buckets, at 3 batch sizes, on
  the 1,276 Rotten Tomatoes test sentences (``sentences.txt``), with the padding share;
- ``attack_shapes``: the attack's query shapes: per example (one victim call per
  example's ~25 queries), 8 examples merged (as the lockstep gate merges them), and all
  in one call;
- ``cnn`` and ``bounds``: the zoo's word CNN forward, and CROWN/IBP margin bounds
  (:class:`textrobust.bounds.certify.Verifier`, float64), on the GPU and on the CPU,
  with the largest difference between them;
- ``precision``: the agreement check of ``--dtype`` (:func:`textrobust.devices.agreement`
  of float32 and each reduced type, and the largest probability difference);
- ``gpu_tests``: the outcome of the ``gpu``-marked tests (from run.sh's JUnit file).

It imports torch, transformers, tokenizers, numpy and textrobust's victims, devices and
bounds only (the GPU machine has no pydantic, NLTK, spaCy, wordfreq or Captum); the CNN
and the bounds need ``textrobust.zoo``, hence pydantic, which run.sh supplies from the
carried wheels (without it those rows say why they are missing). Nothing is downloaded.

``TEXTROBUST_FAKE_CUDA=1`` runs every path on the CPU with tiny models and few texts
(the CPU stands in for the GPU): CI runs it (tests/test_gpu_script.py); its numbers mean
nothing. ``--budget-s`` bounds the timed part: rows left when it runs out are listed as
skipped, so the whole check stays within its time limit.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SENTENCES = HERE / "sentences.txt"
FAKE = os.environ.get("TEXTROBUST_FAKE_CUDA", "") not in ("", "0")
DTYPES = ("float32", "bfloat16", "float16")

#: (name, BertConfig overrides): the real shapes, and the tiny ones of the fake mode
SHAPES: dict[str, dict[str, int]] = {
    "BERT-base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072},
    "MiniLM": {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536},
}
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


class Budget:
    """Seconds left for the timed part; a row started before the end runs to its end."""

    def __init__(self, seconds: float) -> None:
        self.end = time.perf_counter() + seconds
        self.skipped: list[str] = []

    def allows(self, what: str) -> bool:
        if time.perf_counter() < self.end:
            return True
        self.skipped.append(what)
        return False


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def tokenizer_from(sentences: Sequence[str]) -> Any:
    """A BERT-style (uncased WordPiece) fast tokenizer trained here on ``sentences``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(list(sentences), trainers.WordPieceTrainer(vocab_size=8000, special_tokens=specials, show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=512)


def classifier(name: str, vocab_size: int) -> Any:
    """A randomly initialised ``BertForSequenceClassification`` of shape ``name`` (float32, CPU)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab_size, num_labels=2, **(TINY if FAKE else SHAPES[name]))
    return BertForSequenceClassification(config).eval()


def victim(model: Any, tokenizer: Any, device: str, dtype: str, batch_size: int, bucket: bool) -> Any:
    from textrobust.devices import Placement
    from textrobust.victims.huggingface import HuggingFaceVictim

    return HuggingFaceVictim(copy.deepcopy(model), tokenizer, batch_size=batch_size, max_length=256, bucket=bucket,
                             placement=Placement(device, dtype))


def timed(device: str, run: Callable[[], Any]) -> tuple[float, Any]:
    sync(device)
    started = time.perf_counter()
    out = run()
    sync(device)
    return time.perf_counter() - started, out


def attack_calls(texts: Sequence[Any], examples: int, seed: int = 0) -> list[list[Any]]:
    """Per example: the text, up to 12 leave-one-out deletions and 12 substitutions of one
    word by other words of the set (the attack's word ranking and candidates)."""
    rng = np.random.default_rng(seed)
    pool = [w for t in texts[:200] for w in t.words if w.isalpha()]
    out = []
    for text in texts[:examples]:
        n = len(text.words)
        positions = rng.permutation(n)[:12]
        queries = [text] + [text.without(int(i)) for i in positions if n > 1]
        queries += [text.replace(int(positions[0]), str(w)) for w in rng.choice(pool, size=12)]
        out.append(queries)
    return out


def victims_section(texts: list[Any], tokenizer: Any, device: str, batch_sizes: Sequence[int],
                    budget: Budget) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The victim rows, the attack-shape rows and the precision rows."""
    rows: list[dict[str, Any]] = []
    shapes: list[dict[str, Any]] = []
    precision: list[dict[str, Any]] = []
    examples = 8 if FAKE else 64
    calls = attack_calls(texts, examples)
    for name in SHAPES:
        model = classifier(name, len(tokenizer))
        reference: np.ndarray | None = None
        for dtype in DTYPES:
            probs_of: dict[tuple[bool, int], np.ndarray] = {}
            for bucket in (False, True):
                for batch_size in batch_sizes:
                    what = f"victim {name} {dtype} bucket={bucket} batch={batch_size}"
                    if not budget.allows(what):
                        continue
                    v = victim(model, tokenizer, device, dtype, batch_size, bucket)
                    v.probabilities(texts[:batch_size])  # warm-up: kernels, allocator
                    before = v.padding_stats
                    seconds, probs = timed(device, lambda v=v: v.probabilities(texts))
                    stats = v.padding_stats.minus(before)
                    probs_of[(bucket, batch_size)] = probs
                    rows.append({"model": name, "dtype": dtype, "bucket": bucket, "batch_size": batch_size,
                                 "texts": len(texts), "seconds": round(seconds, 4),
                                 "texts_per_s": round(len(texts) / seconds, 1),
                                 "padding_share": round(stats.padded / max(1, stats.real + stats.padded), 4)})
            if probs_of:
                first = next(iter(probs_of.values()))
                spread = max(float(np.abs(p - first).max()) for p in probs_of.values())
                if dtype == "float32":
                    reference = first
                elif reference is not None:
                    from textrobust.devices import agreement

                    precision.append({"model": name, "dtype": dtype, "texts": len(texts),
                                      "agreement_with_float32": agreement(reference, first),
                                      "max_abs_dp_vs_float32": float(np.abs(reference - first).max()),
                                      "max_abs_dp_across_batchings": spread})
            for shape_name, shape_calls in (("per example", calls),
                                            ("8 examples merged", [sum(calls[i:i + 8], []) for i in range(0, len(calls), 8)]),
                                            ("one call", [sum(calls, [])])):
                what = f"attack shape {name} {dtype} {shape_name}"
                if dtype == "float16" or not budget.allows(what):
                    continue
                v = victim(model, tokenizer, device, dtype, 64, True)
                v.probabilities(shape_calls[0][:8])
                seconds, _ = timed(device, lambda v=v, c=shape_calls: [v.probabilities(call) for call in c])
                queries = sum(len(c) for c in shape_calls)
                shapes.append({"model": name, "dtype": dtype, "shape": shape_name, "examples": len(calls),
                               "victim_calls": len(shape_calls), "queries": queries, "seconds": round(seconds, 4),
                               "queries_per_s": round(queries / seconds, 1)})
    return rows, shapes, precision


def cnn_and_bounds(texts: list[Any], tokenizer: Any, device: str, budget: Budget) -> dict[str, Any]:
    """The word CNN's forward texts/s and CROWN/IBP bounds on ``device`` and on the CPU."""
    try:
        from textrobust.bounds.certify import Verifier
        from textrobust.bounds.region import Norm
        from textrobust.zoo.cnn import CnnClassifier, CnnConfig
    except ImportError as error:  # pydantic (textrobust.zoo's settings) not on this machine, no wheel carried
        return {"skipped": f"textrobust.zoo cannot be imported here: {error}"}
    import torch

    torch.manual_seed(0)
    config = CnnConfig(embed_dim=8, filters=4, widths=(2, 3)) if FAKE else CnnConfig()
    cpu_model = CnnClassifier(config, len(tokenizer), 2).eval()
    ids = [tokenizer(str(t), add_special_tokens=False)["input_ids"][:64] or [1] for t in texts]
    width = max(map(len, ids))
    batch = torch.zeros((len(ids), width), dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.bool)
    for i, row in enumerate(ids):
        batch[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = True
    out: dict[str, Any] = {"cnn": [], "bounds": []}
    logits: dict[str, np.ndarray] = {}
    for where in ("cpu", device) if device != "cpu" else ("cpu", "cpu (as the device)"):
        run_on = "cpu" if where.startswith("cpu") else where
        if not budget.allows(f"cnn on {where}"):
            continue
        model = copy.deepcopy(cpu_model).to(run_on)
        b, m = batch.to(run_on), mask.to(run_on)
        with torch.inference_mode():
            model.forward_embedded(model.embed(b[:8]), m[:8])
            seconds, value = timed(run_on, lambda: model.forward_embedded(model.embed(b), m))
        logits[where] = value.float().cpu().numpy()
        out["cnn"].append({"where": where, "texts": len(ids), "seconds": round(seconds, 4),
                           "texts_per_s": round(len(ids) / seconds, 1)})
    if len(logits) == 2:
        a, b2 = logits.values()
        out["cnn_max_abs_logit_diff"] = float(np.abs(a - b2).max())
    n_bounds = 3 if FAKE else 32
    bounds: dict[tuple[str, str], list[float]] = {}
    for where in ("cpu", device) if device != "cpu" else ("cpu", "cpu (as the device)"):
        run_on = "cpu" if where.startswith("cpu") else where
        verifier = Verifier(copy.deepcopy(cpu_model).to(run_on))
        for method in ("crown", "ibp"):
            if not budget.allows(f"bounds {method} on {where}"):
                continue
            values: list[float] = []

            def run(verifier: Any = verifier, method: str = method, values: list[float] = values) -> None:
                for row in ids[:n_bounds]:
                    label = int(verifier.logits(verifier.embed(row)).argmax())
                    positions = list(range(min(3, len(row))))
                    bound, _ = verifier.margin_lower(verifier.ball(row, positions, 0.1, Norm.LINF), label, method)
                    finite = bound[torch.isfinite(bound)]
                    values.append(float(finite.min()) if len(finite) else 0.0)

            seconds, _ = timed(run_on, run)
            bounds[(where, method)] = values
            out["bounds"].append({"where": where, "method": method, "texts": len(values), "seconds": round(seconds, 4),
                                  "texts_per_s": round(len(values) / seconds, 2)})
    for method in ("crown", "ibp"):
        pair = [v for (w, m), v in bounds.items() if m == method]
        if len(pair) == 2:
            out[f"bounds_{method}_max_abs_diff"] = float(np.abs(np.array(pair[0]) - np.array(pair[1])).max())
    return out


def gpu_tests(junit: Path | None, rc: int | None) -> dict[str, Any]:
    """The gpu-marked tests' outcome from run.sh's JUnit XML file."""
    if junit is None or not junit.is_file():
        return {"ran": False, "exit_code": rc, "why": "no JUnit file (pytest missing, or it was stopped)"}
    root = ET.parse(junit).getroot()
    cases = []
    for case in root.iter("testcase"):
        outcome = "passed"
        detail = ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                detail = (found.get("message") or "")[:300]
        cases.append({"test": f"{case.get('classname')}::{case.get('name')}", "outcome": outcome, "detail": detail})
    counts = {k: sum(c["outcome"] == k for c in cases) for k in ("passed", "failed", "error", "skipped")}
    return {"ran": True, "exit_code": rc, **counts, "cases": cases}


def environment(device: str) -> dict[str, Any]:
    import torch
    import transformers

    info: dict[str, Any] = {"python": sys.version.split()[0], "torch": torch.__version__,
                            "transformers": transformers.__version__, "machine": platform.machine(),
                            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                            "fake_cuda": FAKE, "device": device, "load_average": list(os.getloadavg())}
    if device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(0)
        info["cuda"] = torch.version.cuda
        info["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    return info


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--budget-s", type=float, default=170.0, help="seconds for the timed part (default 170)")
    parser.add_argument("--tests-junit", default=None, help="the gpu tests' JUnit XML (run.sh)")
    parser.add_argument("--tests-rc", type=int, default=None, help="pytest's exit code (run.sh)")
    parser.add_argument("--setup", default=None, help="wheels.py's report of the carried wheels (run.sh)")
    parser.add_argument("--texts", type=int, default=None, help="sentences to use (default: all 1,276; fake: 24)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    import torch

    from textrobust.text import Text

    if FAKE:
        device = "cpu"
    elif torch.cuda.is_available():
        device = "cuda"
    else:
        print("No CUDA device: run on a GPU machine, or set TEXTROBUST_FAKE_CUDA=1 for the CPU stand-in.",
              file=sys.stderr)
        return 2
    sentences = SENTENCES.read_text(encoding="utf-8").splitlines()
    n = args.texts or (24 if FAKE else len(sentences))
    texts = [Text.from_string(s) for s in sentences[:n]]
    tokenizer = tokenizer_from(sentences)
    budget = Budget(args.budget_s)
    batch_sizes = (2, 4, 8) if FAKE else (32, 128, 512)
    rows, shapes, precision = victims_section(texts, tokenizer, device, batch_sizes, budget)
    result = {
        "environment": environment(device),
        "note": ("FAKE CUDA: every path ran on the CPU with tiny models; the numbers are not GPU numbers."
                 if FAKE else "Random-weight models: texts/s are those of the shapes; their probabilities sit "
                 "near 0.5, so the agreement check is harsher than on a trained model."),
        "carried_wheels": json.loads(Path(args.setup).read_text(encoding="utf-8")) if args.setup else None,
        "gpu_tests": gpu_tests(Path(args.tests_junit) if args.tests_junit else None, args.tests_rc),
        "victims": rows,
        "attack_shapes": shapes,
        "precision": precision,
        "cnn_and_bounds": cnn_and_bounds(texts, tokenizer, device, budget),
        "skipped_for_time": budget.skipped,
        "seconds": round(time.perf_counter() - started, 1),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(rows)} victim rows, {len(shapes)} attack-shape rows, "
          f"{len(precision)} precision rows, {len(budget.skipped)} skipped for time, {result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
