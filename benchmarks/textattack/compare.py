"""One command: textrobust against TextAttack 0.3.11, same victim, examples, candidates,
constraints and search; writes benchmarks/results/textattack.md.

    python benchmarks/textattack/compare.py --n 50            # project environment

Steps: build TextAttack's venv if needed (``setup.sh``), write the shared inputs
(``prepare.py``), then for each search run TextAttack's side (in its venv) and ours (here)
one after the other on the same examples, optionally profile ours (``--profile``, a
separate run that does not feed the table), and write the side-by-side report. The
report embeds ``analysis.md`` (hand-written reading of the latest run) when present.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common

TARGET_SPEEDUP = 3.0
TARGET_OVERHEAD = 0.15


def _run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, env=env)


def _env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(common.OFFLINE_ENV)
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[key] = str(threads)
    return env


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _agreement(ta: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    same = sum(1 for k, v in ta["candidates"].items() if ours["candidates"].get(k) == v)
    ta_status = {r["id"]: r["status"] for r in ta["records"]}
    both = sum(1 for r in ours["records"] if ta_status.get(r["id"]) == r["status"])
    only_ours = sum(
        1
        for r in ours["records"]
        if r["status"] == "succeeded" and ta_status.get(r["id"]) == "failed"
    )
    only_ta = sum(
        1
        for r in ours["records"]
        if r["status"] == "failed" and ta_status.get(r["id"]) == "succeeded"
    )
    differing = [
        k for k, v in ta["candidates"].items() if ours["candidates"].get(k) != v
    ]
    return {
        "candidate_sets_equal": same,
        "examples": len(ta["candidates"]),
        "differing": differing[:5],
        "candidates_total": sum(len(v) for v in ta["candidates"].values()),
        "status_equal": both,
        "only_ours": only_ours,
        "only_ta": only_ta,
    }


def _table(ta: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    a, b = ta["summary"], ours["summary"]

    def ratio(x: float, y: float) -> str:
        return (
            f"{y / x:.2f}x" if x and not math.isnan(x) and not math.isnan(y) else "n/a"
        )

    rows = [
        (
            "examples / second",
            a["examples_per_second"],
            b["examples_per_second"],
            ratio(a["examples_per_second"], b["examples_per_second"]),
            3,
        ),
        ("wall seconds", a["wall_seconds"], b["wall_seconds"], "", 1),
        (
            "examples / CPU second (less sensitive to other load)",
            a["examples_per_cpu_second"],
            b["examples_per_cpu_second"],
            ratio(a["examples_per_cpu_second"], b["examples_per_cpu_second"]),
            3,
        ),
        ("attacked (not skipped)", a["attacked"], b["attacked"], "", 0),
        ("success rate", a["success_rate"], b["success_rate"], "", 3),
        (
            "queries / attacked example, each side's own count (TextAttack counts cache hits)",
            a["queries_per_example"],
            b["queries_per_example"],
            ratio(a["queries_per_example"], b["queries_per_example"]),
            1,
        ),
        (
            "texts sent to the victim / attacked example",
            a["model_texts_per_example"],
            b["model_texts_per_example"],
            ratio(a["model_texts_per_example"], b["model_texts_per_example"]),
            1,
        ),
        (
            "words perturbed (successes)",
            a["perturbed_words"],
            b["perturbed_words"],
            "",
            2,
        ),
        (
            "share of words perturbed (successes)",
            a["perturbed_share"],
            b["perturbed_share"],
            "",
            3,
        ),
        (
            "seconds in the victim's forward pass",
            a["forward_seconds"],
            b["forward_seconds"],
            "",
            1,
        ),
        (
            "CPU seconds in the victim's forward pass",
            a["forward_cpu_seconds"],
            b["forward_cpu_seconds"],
            "",
            1,
        ),
        ("CPU seconds in all", a["cpu_seconds"], b["cpu_seconds"], "", 1),
        (
            "share of wall time outside the forward pass",
            a["overhead_share"],
            b["overhead_share"],
            "",
            3,
        ),
        (
            "share of CPU time outside the forward pass",
            a["cpu_overhead_share"],
            b["cpu_overhead_share"],
            "",
            3,
        ),
    ]
    out = [
        "| | TextAttack 0.3.11 | textrobust | textrobust / TextAttack |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, x, y, r, d in rows:
        out.append(f"| {name} | {_fmt(x, d)} | {_fmt(y, d)} | {r} |")
    return out


def _verdict(ta: dict[str, Any], ours: dict[str, Any]) -> str:
    a, b = ta["summary"], ours["summary"]
    speed = b["examples_per_second"] / a["examples_per_second"]
    checks = [
        f"speed {speed:.2f}x (target >= {TARGET_SPEEDUP:.0f}x): {'met' if speed >= TARGET_SPEEDUP else 'MISSED'}",
        (
            f"success {b['success_rate']:.3f} vs {a['success_rate']:.3f} (target: equal or better): "
            f"{'met' if b['success_rate'] >= a['success_rate'] - 1e-9 else 'MISSED'}"
        ),
        (
            f"overhead {b['overhead_share']:.1%} (target < {TARGET_OVERHEAD:.0%}): "
            f"{'met' if b['overhead_share'] < TARGET_OVERHEAD else 'MISSED'}"
        ),
    ]
    return "; ".join(checks)


def _profile_excerpt(profile: str | None, lines: int = 45) -> list[str]:
    if not profile:
        return []
    kept = [line.rstrip() for line in profile.splitlines() if line.strip()]
    return kept[:lines]


def _card(card: dict[str, Any]) -> str:
    if not card:
        return "no card"
    return (
        f"{card['architecture']} trained on {card['dataset']}, test accuracy {card['test_accuracy']:.3f}, "
        f"{card['parameters']:,} parameters, created {card['created']}"
    )


def _victim_folder(spec: str) -> tuple[str, Path]:
    """A victim given as a zoo name (a folder of ``<cache>/victims``) or a path."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.name, path.resolve()
    from textrobust.assets import cache_dir

    return spec, cache_dir() / "victims" / spec


def _parse_victims(specs: list[str], n: int) -> list[tuple[str, Path, int]]:
    """``name`` or ``name:N`` -> (label, folder, number of examples)."""
    out = []
    for spec in specs:
        name, _, count = spec.partition(":")
        label, folder = _victim_folder(name)
        out.append((label, folder, int(count) if count else n))
    return out


def _victim_sections(
    work: Path, searches: list[str]
) -> tuple[list[str], list[str], dict[str, Any] | None]:
    """The report sections of one victim's run, its headline rows, and the machine."""
    inputs = common.read_json(work / "inputs.json")
    machine = None
    headline: list[str] = []
    sections = [
        f"- victim: `{inputs['victim']}` ({_card(inputs.get('victim_card') or {})})",
        (
            f"- data: {inputs['dataset']}, the first {len(inputs['examples'])} examples that both libraries split "
            f"into the same words ({inputs['passed_over']} passed over)"
        ),
        (
            f"- vectors: {inputs['vectors']} ({inputs['space']}); TextAttack gets the same unit vectors "
            f"({inputs['vocab']} words) and, as its `nn_matrix`, the project's candidate lists"
        ),
        "",
    ]
    for search in searches:
        ta_file, ours_file = (
            work / f"textattack-{search}.json",
            work / f"ours-{search}.json",
        )
        if not (ta_file.exists() and ours_file.exists()):
            continue
        ta, ours = common.read_json(ta_file), common.read_json(ours_file)
        machine = machine or ours["machine"]
        agree = _agreement(ta, ours)
        a, b = ta["summary"], ours["summary"]
        headline.append(
            f"| {Path(inputs['victim']).name} | {search} | {len(inputs['examples'])} | "
            f"{a['examples_per_second']:.2f} | {b['examples_per_second']:.2f} | "
            f"{b['examples_per_second'] / a['examples_per_second']:.2f}x | "
            f"{b['examples_per_cpu_second'] / a['examples_per_cpu_second']:.2f}x | "
            f"{a['success_rate']:.3f} / {b['success_rate']:.3f} | {b['overhead_share']:.1%} |"
        )
        sections += [
            f"### {search}",
            "",
            "Settings: "
            + ", ".join(f"{k}={v}" for k, v in ours["settings"].items())
            + ".",
            "",
            *_table(ta, ours),
            "",
            f"Targets: {_verdict(ta, ours)}.",
            "",
            f"Same search space: the candidate sets (position, word) of the start texts after the "
            f"constraints are identical on {agree['candidate_sets_equal']} of {agree['examples']} examples "
            f"({agree['candidates_total']} candidates on TextAttack's side)"
            + (
                f"; differing: {', '.join(agree['differing'])}"
                if agree["differing"]
                else ""
            )
            + f". Same outcome on {agree['status_equal']} of {agree['examples']} examples "
            f"(succeeded only here: {agree['only_ours']}, only in TextAttack: {agree['only_ta']}). "
            f"Load average at the end of each side: TextAttack {ta['machine']['loadavg_1m']}, "
            f"textrobust {ours['machine']['loadavg_1m']}.",
            "",
            "<details><summary>Pipelines</summary>",
            "",
            "```",
            ta["attack"],
            "```",
            "",
            "```",
            ours["attack"],
            "```",
            "",
            "</details>",
            "",
        ]
        for side, label in (("ours", "textrobust"), ("textattack", "TextAttack")):
            profile_file = work / f"{side}-{search}-profile.json"
            if not profile_file.exists():
                continue
            prof = common.read_json(profile_file)
            sections += [
                (
                    f"<details><summary>cProfile of {label} ({search}; a separate run on the first "
                    f"{prof['summary']['examples']} examples, {prof['summary']['wall_seconds']:.1f} s under the "
                    "profiler)</summary>"
                ),
                "",
                "```",
                *_profile_excerpt(prof.get("profile"), 70),
                "```",
                "",
                "</details>",
                "",
            ]
    return sections, headline, machine


def write_report(
    args: argparse.Namespace, command: str, build_seconds: float | None, when: str
) -> Path:
    victims = _parse_victims(args.victims, args.n)
    body: list[str] = []
    headline: list[str] = []
    machine = None
    threads = None
    for label, _folder, _n in victims:
        work = args.work / label
        if not (work / "inputs.json").exists():
            continue
        threads = common.read_json(work / "inputs.json")["torch_threads"]
        sections, rows, found = _victim_sections(work, args.searches)
        machine = machine or found
        headline += rows
        body += [f"## victim `{label}`", "", *sections]
    if machine is None:
        raise SystemExit("no search was run: nothing to report")
    lines = [
        "# textrobust vs TextAttack 0.3.11",
        "",
        (
            f"Produced by `{command}` started {when}, one run, both sides "
            "one after the other on the same machine."
        ),
        "",
        (
            f"- machine: {machine['cores']} cores ({machine['cpu']}), Python {machine['python']}, no GPU, shared "
            f"with other jobs (load averages below); torch (and BLAS) threads {threads} on both sides"
        ),
        (
            "- victims: the project's own models, loaded by `textrobust.zoo.load_victim`; TextAttack calls them "
            "through a `ModelWrapper` that runs `victim.probabilities` (the time inside that call is the forward "
            "pass on both sides)"
        ),
        (
            "- candidates: the project's `EmbeddingNeighbours` lists, given to TextAttack as its `nn_matrix`; "
            "distances on the same unit vectors on both sides"
        ),
        (
            "- stop words: the project's list (407 words) on both sides; no POS, sentence-encoder or LM "
            "constraint (TextAttack's would download models)"
        ),
        (
            "- both sides batch the victim 64 texts at a time and cache its answers; no query budget; "
            "TextAttack runs `Attack.attack` per example (its core loop, without the `Attacker`'s logging)"
        ),
    ]
    if build_seconds is not None:
        lines.append(
            f"- TextAttack's venv was (re)built in this run in {build_seconds:.0f} s"
        )
    lines += [
        "",
        (
            "| victim | search | N | TextAttack ex/s | textrobust ex/s | speed-up (wall) | speed-up (CPU) | "
            "success TA / ours | ours outside forward |"
        ),
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *headline,
        "",
        *body,
    ]
    notes = common.HERE / "analysis.md"
    if notes.exists():
        lines += [notes.read_text(encoding="utf-8").rstrip(), ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return args.out


def _started_from_file(command_file: Path) -> str:
    """When the last run started, for a run whose ``command.json`` predates the saved start
    time: the file's modification time (a run writes it first, before any victim's files)."""
    return dt.datetime.fromtimestamp(command_file.stat().st_mtime).strftime("%Y-%m-%d %H:%M")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--n", type=int, default=50, help="examples per victim (unless given as name:N)"
    )
    parser.add_argument(
        "--searches",
        nargs="+",
        default=["greedy", "genetic"],
        choices=sorted(common.SETTINGS),
    )
    parser.add_argument(
        "--victims",
        nargs="+",
        default=["default"],
        help="zoo names (folders of <cache>/victims) or paths, each optionally with :N examples",
    )
    parser.add_argument(
        "--space", choices=["counterfitted", "glove"], default="counterfitted"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads on both sides"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also profile both sides (separate runs)"
    )
    parser.add_argument(
        "--profile-limit", type=int, default=100, help="examples in each profiled run"
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite the report from the last run",
    )
    parser.add_argument("--work", type=Path, default=common.WORK)
    parser.add_argument(
        "--out", type=Path, default=common.RESULTS, help="the report (Markdown)"
    )
    args = parser.parse_args(argv)
    command = "python benchmarks/textattack/compare.py " + " ".join(
        shlex.quote(a) for a in (argv or sys.argv[1:])
    )

    build_seconds = None
    when = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    command_file = args.work / "command.json"
    if args.report_only:
        if (
            command_file.exists()
        ):  # the report shows the command that produced the numbers
            saved = common.read_json(command_file)
            command, build_seconds = saved["command"], saved.get("build_seconds")
            when = saved.get("started") or _started_from_file(command_file)
        print("wrote", write_report(args, command, build_seconds, when))
        return 0
    here = common.HERE
    ta_python = str(common.VENV / "bin" / "python")
    if not (common.VENV / ".textattack-ready").exists():
        start = time.perf_counter()
        _run(["bash", str(here / "setup.sh")])
        build_seconds = time.perf_counter() - start
    env = _env(args.threads)
    common.write_json(
        command_file,
        {"command": command, "build_seconds": build_seconds, "started": when},
    )
    for label, folder, n in _parse_victims(args.victims, args.n):
        work = args.work / label
        for old in work.glob(
            "*.json"
        ):  # no stale output of an earlier run may reach the report
            old.unlink()
        _run(
            [
                sys.executable,
                str(here / "prepare.py"),
                "--n",
                str(n),
                "--space",
                args.space,
                "--threads",
                str(args.threads),
                "--work",
                str(work),
                "--victim",
                str(folder),
            ],
            env,
        )
        for search in args.searches:
            _run(
                [
                    ta_python,
                    str(here / "run_textattack.py"),
                    "--search",
                    search,
                    "--work",
                    str(work),
                ],
                env,
            )
            _run(
                [
                    sys.executable,
                    str(here / "run_ours.py"),
                    "--search",
                    search,
                    "--work",
                    str(work),
                ],
                env,
            )
            if args.profile:
                limit = ["--limit", str(args.profile_limit)]
                _run(
                    [
                        ta_python,
                        str(here / "run_textattack.py"),
                        "--search",
                        search,
                        "--work",
                        str(work),
                        "--profile",
                        *limit,
                    ],
                    env,
                )
                _run(
                    [
                        sys.executable,
                        str(here / "run_ours.py"),
                        "--search",
                        search,
                        "--work",
                        str(work),
                        "--profile",
                        *limit,
                    ],
                    env,
                )
    print("wrote", write_report(args, command, build_seconds, when))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
