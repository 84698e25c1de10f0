"""Query-layer cache on a repeated batch, with the default victim.

Scores the Rotten Tomatoes test split twice through one QueryLayer and reports queries,
cache hits, hit rate and wall time of each pass, next to the victim called directly.

    python benchmarks/query_cache.py [--victim PATH] [--out benchmarks/results/query_cache.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--victim", default="default")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "query_cache.md")
    args = parser.parse_args()

    from textrobust.data import load_dataset
    from textrobust.victims.query import QueryLayer
    from textrobust.zoo import ensure_default_victim, load_victim

    victim = load_victim(ensure_default_victim() if args.victim == "default" else Path(args.victim))
    texts = load_dataset("rotten_tomatoes", split="test").texts
    start = time.perf_counter()
    for i in range(0, len(texts), 64):
        victim.probabilities(texts[i : i + 64])
    direct = time.perf_counter() - start

    layer = QueryLayer(victim, batch_size=64)
    rows = []
    for name in ("first pass", "second pass (same texts)"):
        before = layer.stats()
        start = time.perf_counter()
        layer.probabilities(texts)
        seconds = time.perf_counter() - start
        spent = layer.stats().minus(before)
        rows.append((name, spent.requested, spent.queries, spent.cache_hits, spent.hit_rate, seconds))
    total = layer.stats()
    lines = [
        "# Query-layer cache on a repeated batch",
        "",
        f"Command: `python benchmarks/query_cache.py --victim {args.victim}`  ",
        f"Machine: {platform.machine()}, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}; "
        f"victim: {args.victim}; "
        f"{len(texts)} texts (Rotten Tomatoes test split), batch 64.",
        "",
        "| pass | texts asked | queries sent | cache hits | hit rate | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, requested, queries, hits, rate, seconds in rows:
        lines.append(f"| {name} | {requested:,} | {queries:,} | {hits:,} | {rate:.1%} | {seconds:.3f} |")
    lines += [
        f"| victim called directly (no layer) | {len(texts):,} | {len(texts):,} | - | - | {direct:.3f} |",
        "",
        f"Over both passes: {total.requested:,} texts asked, {total.queries:,} sent, hit rate {total.hit_rate:.1%}; "
        f"{total.forward_seconds:.3f} s inside the victim.",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
