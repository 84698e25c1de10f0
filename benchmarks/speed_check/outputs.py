"""Speed work must change no output: record, then compare, the validated source's verdicts
and SO-Beam's findings (issues 39 item 3 and 38 item 5).

    python benchmarks/speed_check/outputs.py source --out /tmp/h39e/source_before.json
    python benchmarks/speed_check/outputs.py compare-source BEFORE AFTER
    python benchmarks/speed_check/outputs.py compare-so BEFORE.jsonl AFTER.jsonl

``source`` runs the validated source (default settings, a fresh verdict file, so every check
runs) on every content word of the 60 test sentences of ``benchmarks/validity/timing.py``
and writes every proposal's evidence (substitute, routes, each check's value, the judge's
probability, the reason) with the seconds per sentence and the load average.
``compare-source`` requires identical substitutes, reasons and kept/rejected decisions, and
every number within ``--tolerance`` (1e-5). ``compare-so`` compares two
``benchmarks/second_order_labels/generate.py run`` outputs the same way (status,
neighbour, patch, every probability, queries and fill-in requests); seconds are printed
side by side. The exit status is 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def record_source(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(HERE.parent / "validity"))
    from timing import test_sentences  # type: ignore[import-not-found]

    from textrobust.assets import stop_words
    from textrobust.attack.candidates.validated import ValidatedSynonyms
    from textrobust.text import Text

    texts = test_sentences(20)
    stops = {w.lower() for w in stop_words()}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        source = ValidatedSynonyms(verdict_cache=Path(folder) / "verdicts.sqlite")
        source.candidates(Text.from_string("A warm-up sentence about a quiet film and its patient director."), [3, 5])
        load = os.getloadavg()[0]
        start = time.perf_counter()
        for text in texts:
            positions = [i for i, w in enumerate(text.words) if w.isalpha() and len(w) >= 3 and w.lower() not in stops]
            kept = source.candidates(text, positions)
            for p in positions:
                rows.append({"sentence": str(text), "position": p,
                             "kept": [s.word for s in kept.get(p, [])],
                             "evidence": [e.as_dict() for e in source._judged[(tuple(text.words), p)]]})
        seconds = (time.perf_counter() - start) / len(texts)
    result = {"sentences": len(texts), "seconds_per_sentence": round(seconds, 3),
              "load_average": [round(load, 2), round(os.getloadavg()[0], 2)], "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=0), encoding="utf-8")
    print(f"{len(texts)} sentences, {seconds:.3f} s per sentence, load average {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}, {sum(len(r['evidence']) for r in rows)} verdicts")


def differences(a: Any, b: Any, tolerance: float, where: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ: numbers beyond ``tolerance``, anything else unequal."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        return [] if a == b else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return [] if abs(a - b) <= tolerance else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{where}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in differences(a[k], b[k], tolerance, f"{where}.{k}")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, tolerance, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def compare_source(args: argparse.Namespace) -> int:
    before = json.loads(Path(args.before).read_text(encoding="utf-8"))
    after = json.loads(Path(args.after).read_text(encoding="utf-8"))
    found = differences(before["rows"], after["rows"], args.tolerance, "rows")
    verdicts = sum(len(r["evidence"]) for r in before["rows"])
    print(f"{len(before['rows'])} positions, {verdicts} verdicts; seconds per sentence {before['seconds_per_sentence']} "
          f"(load {before['load_average']}) -> {after['seconds_per_sentence']} (load {after['load_average']})")
    for line in found[:40]:
        print(line)
    print("identical" if not found else f"{len(found)} differences")
    return 1 if found else 0


#: generate.py fields that may differ between two runs of the same search
_VOLATILE = ("seconds", "search_seconds", "load_average", "phase", "settings")


def compare_so(args: argparse.Namespace) -> int:
    def read(path: str) -> dict[str, dict[str, Any]]:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return {r["example_id"]: r for r in (json.loads(line) for line in lines if line.strip())}

    before, after = read(args.before), read(args.after)
    found: list[str] = [] if set(before) == set(after) else [f"sentences {sorted(set(before) ^ set(after))}"]
    for key in sorted(set(before) & set(after)):
        a = {k: v for k, v in before[key].items() if k not in _VOLATILE}
        b = {k: v for k, v in after[key].items() if k not in _VOLATILE}
        found += differences(a, b, args.tolerance, key)
        print(f"{key}: {before[key]['status']}, seconds {before[key]['seconds']} -> {after[key]['seconds']}")
    for line in found[:40]:
        print(line)
    print("identical" if not found else f"{len(found)} differences")
    return 1 if found else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("source")
    s.add_argument("--out", required=True)
    for name in ("compare-source", "compare-so"):
        c = sub.add_parser(name)
        c.add_argument("before")
        c.add_argument("after")
        c.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    if args.command == "source":
        record_source(args)
    elif args.command == "compare-source":
        sys.exit(compare_source(args))
    else:
        sys.exit(compare_so(args))


if __name__ == "__main__":
    main()
