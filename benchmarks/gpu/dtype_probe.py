"""Why is a reduced-precision victim slower than float32 at small batches on a GPU?

The first GPU check (H200, 2026-11-28, ``gpu_check.json``) timed BERT-base at 2,123
texts/s in float32 but 302 in bfloat16 at batch 32, and about 100 ms per call in
bfloat16 whatever the batch size. This probe separates the suspects:

1. the same victim over the same texts twice (a per-new-shape cost falls in pass 2);
2. the bare model on one fixed shape, 20 calls (no tokenizer, no wrapper, no new shapes);
3. the profiler's top operators for 10 bfloat16 calls of new shapes;
4. the bare model on 20 new lengths with :func:`textrobust.devices.steady_attention`
   (flash and memory-efficient attention only) and with torch's default choice.

Finding: cuDNN's fused attention builds a plan per new shape (the victim now runs under
``steady_attention`` on CUDA; pass 1 below is therefore the fixed victim).

    python benchmarks/gpu/dtype_probe.py --out OUT.json    # on a GPU machine
    TEXTROBUST_FAKE_CUDA=1 python benchmarks/gpu/dtype_probe.py --out /tmp/p.json  # CPU stand-in
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from textrobust.devices import steady_attention  # noqa: E402
from throughput import FAKE, SENTENCES, SHAPES, classifier, sync, tokenizer_from, victim  # noqa: E402


def timed(device: str, run: Any) -> float:
    sync(device)
    started = time.perf_counter()
    run()
    sync(device)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--texts", type=int, default=None)
    args = parser.parse_args(argv)
    import torch

    from textrobust.text import Text

    device = "cpu" if FAKE else "cuda"
    dtypes = ("float32", "bfloat16") if FAKE else ("float32", "bfloat16", "float16")
    sentences = SENTENCES.read_text(encoding="utf-8").splitlines()
    texts = [Text.from_string(s) for s in sentences[: args.texts or (24 if FAKE else 640)]]
    tokenizer = tokenizer_from(sentences)
    batch = 4 if FAKE else 32
    out: dict[str, Any] = {"device": device, "gpu": torch.cuda.get_device_name(0) if device == "cuda" else None,
                           "torch": torch.__version__, "texts": len(texts), "batch_size": batch,
                           "passes": [], "fixed_shape": [], "new_shapes": [], "profile": {}}
    for name in SHAPES:
        model = classifier(name, len(tokenizer))
        for dtype in dtypes:
            v = victim(model, tokenizer, device, dtype, batch, True)
            first = timed(device, lambda v=v: v.probabilities(texts))
            second = timed(device, lambda v=v: v.probabilities(texts))
            out["passes"].append({"model": name, "dtype": dtype, "pass1_s": round(first, 4),
                                  "pass2_s": round(second, 4), "calls": -(-len(texts) // batch)})
            inner = v.model
            ids = torch.randint(5, len(tokenizer), (batch, 40), device=inner.device)
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                inner(input_ids=ids, attention_mask=mask)
                seconds = timed(device, lambda: [inner(input_ids=ids, attention_mask=mask) for _ in range(20)])
            out["fixed_shape"].append({"model": name, "dtype": dtype, "shape": [batch, 40],
                                       "ms_per_call": round(1000 * seconds / 20, 3)})
            # 20 new lengths, first with the steady backends, then the same lengths with
            # torch's own choice (cuDNN's plans are not built by the first loop)
            lengths = range(41, 61) if FAKE else range(130, 150)
            fresh = [torch.randint(5, len(tokenizer), (batch, n), device=inner.device) for n in lengths]
            for label, context in (("steady_attention", steady_attention(inner.device)), ("torch default", nullcontext())):
                with torch.inference_mode(), context:
                    seconds = timed(device, lambda: [inner(input_ids=x, attention_mask=torch.ones_like(x)) for x in fresh])
                out["new_shapes"].append({"model": name, "dtype": dtype, "backends": label, "calls": len(fresh),
                                          "ms_per_call": round(1000 * seconds / len(fresh), 3)})
                print(json.dumps(out["new_shapes"][-1]), flush=True)
            if dtype == "bfloat16" and name == "BERT-base":
                fresh = victim(model, tokenizer, device, dtype, batch, True)
                activities = [torch.profiler.ProfilerActivity.CPU]
                if device == "cuda":
                    activities.append(torch.profiler.ProfilerActivity.CUDA)
                with torch.profiler.profile(activities=activities) as prof:
                    fresh.probabilities(texts[: 10 * batch])
                    sync(device)
                out["profile"]["by_self_cpu"] = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)
                if device == "cuda":
                    out["profile"]["by_cuda"] = prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=12)
            print(json.dumps(out["passes"][-1]), json.dumps(out["fixed_shape"][-1]), flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
