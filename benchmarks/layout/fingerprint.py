"""Records and summaries of every registered analysis on a fixed sample, timing fields
removed: run before and after a refactoring and diff the two files (issue 29: "numbers
must not change").

    python benchmarks/layout/fingerprint.py /tmp/before.json
    python benchmarks/layout/fingerprint.py /tmp/after.json
    python benchmarks/layout/fingerprint.py --compare /tmp/before.json /tmp/after.json

The sample is the ``full`` profile (every analysis at small sizes) with the default victim
on the first test examples of rotten_tomatoes, seed 0, in one process.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from typing import Any

#: Fields that measure time (or speed, or a share of time), not results.
TIMING = re.compile(r"seconds|per_second|elapsed|duration|throughput|forward_share|attribution_share|(^|_)time$")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in sorted(value.items())
                if not TIMING.search(k)}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, float):
        return round(value, 9)
    return value


def fingerprint() -> dict[str, Any]:
    from textrobust import audit
    from textrobust.audit.profiles import profile_settings
    from textrobust.records import encode

    settings = profile_settings("full")
    settings["radius"] = {**settings["radius"], "time_limit": 600.0}  # no timing-dependent "unknown"
    with tempfile.TemporaryDirectory() as out:
        result = audit.run("default", "rotten_tomatoes", settings, out, progress=False, report=False)
    return {name: {"settings": _strip(dict(r.settings)), "summary": _strip(r.summary.to_dict()),
                   "records": [_strip(encode(rec)) for rec in r.records],
                   "failures": [_strip(encode(f)) for f in r.failures]}
            for name, r in sorted(result.results.items())}


def _differences(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


def compare(before: dict[str, Any], after: dict[str, Any]) -> int:
    bad = 0
    for name in sorted(set(before) | set(after)):
        a, b = _strip(before.get(name)), _strip(after.get(name))
        if a is None or b is None:
            print(f"{name}: only in {'after' if a is None else 'before'}")
            bad += 1
            continue
        for part in ("summary", "records", "failures"):
            same = a[part] == b[part]
            bad += not same
            count = len(a[part]) if isinstance(a[part], list) else ""
            print(f"{name:13s} {part:9s} {count!s:>3s} {'identical' if same else 'DIFFERENT'}")
            if not same:
                for path, x, y in _differences(a[part], b[part])[:5]:
                    print(f"    {path}: {x!r} -> {y!r}")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.compare:
        with open(args.paths[0]) as f, open(args.paths[1]) as g:
            return 1 if compare(json.load(f), json.load(g)) else 0
    result = fingerprint()  # the file is written only when the whole run succeeded
    with open(args.paths[0], "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
