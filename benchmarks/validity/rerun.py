"""Rerun the analyses that depend on the substitutes, with the paper's and the validated ones.

Issue 28, item 5: first-order success (TextFooler, PWWS) on zoo victims, second-order
success, the radius (falsified at r = 1) and PR, and TEF's attribution change, each with
``--candidates paper`` and ``--candidates validated`` on the same examples of the Rotten
Tomatoes test split. Every run goes through the ``textrobust`` command line, as a user's
would; figures are read back from each run's ``summary.json``.

Rerun (tens of minutes on 2 quiet cores; ``--victims default`` and a smaller ``--n`` for a
quick look)::

    .venv/bin/python benchmarks/validity/rerun.py --out runs/validity-rerun \\
        --markdown benchmarks/results/validity_rerun.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: (analysis command, extra options, figures read from summary.json: label -> key path)
RUNS: dict[str, tuple[list[str], dict[str, tuple[str, ...]]]] = {
    "textfooler": (["attack", "--recipe", "textfooler", "--no-quality"],
                   {"success": ("success_rate",), "acc. under attack": ("accuracy_under_attack",),
                    "words changed": ("words_perturbed",)}),
    "pwws": (["attack", "--recipe", "pwws", "--no-quality"],
             {"success": ("success_rate",), "acc. under attack": ("accuracy_under_attack",),
              "words changed": ("words_perturbed",)}),
    "second-order": (["second-order", "--no-quality"],
                     {"success": ("success_rate",), "skipped (no patch)": ("skipped",)}),
    "radius": (["radius", "--methods", "pdp,greedy", "--time-limit", "10"],
               {"falsified r=1": ("falsified_r1",), "certified r=1": ("certified_r1",)}),
    "pr": (["pr", "--samples", "500"], {"mean PR": ("pr", "mean_pr")}),
    "tef": (["attribution", "--attacks", "tef", "--no-perplexity", "--no-grammar", "--no-semantic"],
            {"PCC at rho 0.2 (1 = unmoved)": ("__tef__",)}),
}


def _figure(summary: dict[str, Any], path: tuple[str, ...]) -> Any:
    if path == ("__tef__",):  # TEF's explanation change at rho_max = 0.2: mean PCC of the attributions
        for point in summary.get("points") or []:
            if point.get("attack") == "tef" and abs(point.get("rho_max", 0) - 0.2) < 1e-9:
                return point.get("pcc_mean")
        return None
    value: Any = summary
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def run(command: list[str], victim: str, candidates: str, n: int, out: Path) -> tuple[dict[str, Any], float]:
    folder = out / f"{command[0]}-{'-'.join(command[1:3]) if command[0] == 'attack' else ''}-{victim}-{candidates}"
    args = [str(Path(sys.executable).with_name("textrobust")), *command, "--victim", victim, "--n", str(n),
            "--candidates", candidates, "--out", str(folder), "--quiet"]
    began = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "TEXTROBUST_NO_PROGRESS": "1"})
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    summary = json.loads((folder / "summary.json").read_text())
    analysis = next(iter(summary["analyses"].values()))
    return analysis["summary"], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--victims", default="default", help="comma-separated zoo names or victim folders")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated of {', '.join(RUNS)}")
    parser.add_argument("--n", type=int, default=30, help="examples per run (attacks); others use n / 3")
    parser.add_argument("--out", type=Path, default=Path("runs/validity-rerun"))
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    for victim in [v for v in args.victims.split(",") if v]:
        for name in [r for r in args.runs.split(",") if r]:
            command, figures = RUNS[name]
            n = args.n if command[0] == "attack" else max(3, args.n // 3)
            found = {}
            for candidates in ("paper", "validated"):
                summary, seconds = run(command, victim, candidates, n, args.out)
                found[candidates] = ({label: _figure(summary, path) for label, path in figures.items()}, seconds)
                print(name, victim, candidates, found[candidates], flush=True)
            for label in figures:
                paper, validated = (found[c][0][label] for c in ("paper", "validated"))
                rows.append((victim, name, n, label, paper, validated, found["paper"][1], found["validated"][1]))
    load = os.getloadavg()[0]
    lines = ["| victim | analysis | n | figure | paper | validated | s (paper) | s (validated) |",
             "|---|---|---|---|---|---|---|---|"]
    for victim, name, n, label, paper, validated, s_paper, s_valid in rows:
        lines.append(f"| {victim} | {name} | {n} | {label} | {_fmt(paper)} | {_fmt(validated)} | {s_paper:.0f} | "
                     f"{s_valid:.0f} |")
    lines.append(f"\nLoad average at the end: {load:.1f}.")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if value != value else f"{value:.3f}"
    return str(value)


if __name__ == "__main__":
    main()
