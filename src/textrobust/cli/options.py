"""The options every analysis command shares, declared once.

Commands list these annotated types in their signatures (typer reads options from the
signature) and hand the values to :func:`textrobust.cli.running.run_analyses`, which does
the rest: validation, resume, the audit call, printing. No command parses data, victim or
run options itself.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from textrobust.devices import DEVICE_HELP, DTYPE_HELP

__all__ = [
    "Address", "Data", "Executor", "IdColumn", "LabelColumn", "LabelMap", "LabelNames", "LabelsByPosition", "Out",
    "PairColumn", "Resume", "Seed", "SkipBadRows", "Split", "TextColumn", "VictimOpt", "Workers", "Encoding",
    "FileFormatOpt", "Quiet", "ThreadsOpt", "Device", "Dtype", "AllowPrecisionChange", "Labelled", "SHARED", "with_shared_options", "Require", "Junit",
]

_DATA = "data"
_RUN = "run"

VictimOpt = Annotated[str, typer.Option("--victim", help="'default' (the embedded word CNN), a zoo architecture "
                                        "trained into the cache by `textrobust train <arch>` (e.g. lstm), or a "
                                        "victim folder.", rich_help_panel=_DATA)]
Data = Annotated[str, typer.Option("--data", help="A bundled data set (rotten_tomatoes, bbc_news, tweets) or a "
                                   "CSV/JSONL/parquet file or datasets folder.", rich_help_panel=_DATA)]
Split = Annotated[Optional[str], typer.Option(
    "--split", help="Split to use: train, dev, test or all. Default: test for bundled sets, all rows for your "
    "own file.", rich_help_panel=_DATA)]
TextColumn = Annotated[Optional[str], typer.Option("--text-column", help="Your file's text column (default: "
                                                   "text, sentence, review...).", rich_help_panel=_DATA)]
LabelColumn = Annotated[Optional[str], typer.Option("--label-column", help="Your file's label column "
                                                    "(default: label).", rich_help_panel=_DATA)]
IdColumn = Annotated[Optional[str], typer.Option("--id-column", help="Your file's id column (default: row "
                                                "numbers); a repeated id is a bad row.", rich_help_panel=_DATA)]
PairColumn = Annotated[Optional[str], typer.Option("--pair-column", help="Your file's second-sentence column, "
                                                   "for sentence pairs.", rich_help_panel=_DATA)]
LabelNames = Annotated[Optional[str], typer.Option("--label-names", help="Comma-separated label names of your "
                                                   "file, in index order (e.g. negative,positive).",
                                                   rich_help_panel=_DATA)]
SkipBadRows = Annotated[bool, typer.Option("--skip-bad-rows", help="Skip (and report) rows with an empty text or "
                                           "an unknown label instead of stopping.", rich_help_panel=_DATA)]
Encoding = Annotated[Optional[str], typer.Option("--encoding", help="Text encoding of your file (default utf-8).",
                                                 rich_help_panel=_DATA)]
FileFormatOpt = Annotated[Optional[str], typer.Option("--file-format", help="csv, tsv, jsonl, json or parquet "
                                                      "(default: from the file name).", rich_help_panel=_DATA)]
LabelMap = Annotated[Optional[str], typer.Option("--label-map", help="Map your labels to the victim's classes "
                                                 "by name: fresh=positive,rotten=negative.", rich_help_panel=_DATA)]
LabelsByPosition = Annotated[bool, typer.Option("--labels-by-position", help="Match labels to the victim's "
                                                "classes by position, not by name.", rich_help_panel=_DATA)]
Seed = Annotated[int, typer.Option("--seed", help="Random seed (0 to 2^63-1).", rich_help_panel=_RUN)]
Resume = Annotated[bool, typer.Option("--resume", help="Continue the run stored in --out; options you do not "
                                      "give are taken from it.", rich_help_panel=_RUN)]
Executor = Annotated[str, typer.Option("--executor", help="local (in this process), lockstep (in this process, "
                                       "--workers examples sharing each forward pass: faster on small models), "
                                       "process (a pool of --workers processes) or ray (--address).",
                                       rich_help_panel=_RUN)]
Workers = Annotated[Optional[int], typer.Option("--workers", help="Worker processes or Ray actors (default: the "
                                                "number of cores); with lockstep, examples at a time (default 8).",
                                                rich_help_panel=_RUN)]
Address = Annotated[Optional[str], typer.Option("--address", help="Ray cluster: 'auto' or a head address; "
                                                "default: a local Ray instance.", rich_help_panel=_RUN)]
GpusPerWorker = Annotated[Optional[float], typer.Option(
    "--gpus-per-worker", help="GPUs each Ray actor reserves (e.g. 1, or 0.5: two actors share a GPU); the "
    "instance must have room for --workers of them. Default: none (docs/ray.md).", rich_help_panel=_RUN)]
MaxWords = Annotated[Optional[int], typer.Option("--max-words", help="Longest text analysed, in words per "
                                                "column (default: what the victim reads, e.g. 128).",
                                                rich_help_panel=_DATA)]
LengthPolicyOpt = Annotated[str, typer.Option("--length-policy", help="Longer texts: truncate (cut, noted in "
                                              "summary.json) or error (an error record each).",
                                              rich_help_panel=_DATA)]
Quiet = Annotated[bool, typer.Option("--quiet", help="No progress bars.", rich_help_panel=_RUN)]
ThreadsOpt = Annotated[str, typer.Option("--threads", help="torch threads: auto (the CPUs this process may use, by "
                                         "affinity and cgroup quota; TEXTROBUST_THREADS overrides) or a count.",
                                         rich_help_panel=_RUN)]
Device = Annotated[str, typer.Option("--device", help=DEVICE_HELP, rich_help_panel=_RUN)]
Dtype = Annotated[str, typer.Option("--dtype", help=DTYPE_HELP, rich_help_panel=_RUN)]
Labelled = Annotated[Optional[str], typer.Option(
    "--labelled", help="Your labelled substitutions (the file `textrobust review RUN --export` writes, in the "
    "labelled set's format): the validated synonyms never propose a pair you rejected, and keep one you confirmed "
    "in its sentence.", rich_help_panel=_RUN)]
AllowPrecisionChange = Annotated[bool, typer.Option(
    "--allow-precision-change", help="Audit a --dtype below float32 even when its predictions agree with "
    "float32 on less than 99% of a sample (the agreement is reported).", rich_help_panel=_RUN)]

_GATE = "gate"
#: The robustness gate (:mod:`textrobust.audit.requirements`): ``audit`` and ``gate`` take these.
Require = Annotated[Optional[list[str]], typer.Option(
    "--require", help="A figure of summary.json that must hold, 'ANALYSIS.FIGURE>=VALUE' or '<=VALUE' (e.g. "
    "'attack.accuracy_under_attack>=0.30'); repeatable. Exit 3 when one fails.", rich_help_panel=_GATE)]
Junit = Annotated[Optional[Path], typer.Option("--junit", help="Also write the --require checks to this file as "
                                               "JUnit XML, one test case each.", rich_help_panel=_GATE)]


Out = Annotated[Path, typer.Option("--out", help="Run folder: store.sqlite, summary.json, report.json, "
                                  "report.html.", rich_help_panel=_RUN)]


#: The shared options, in the order --help lists them: name -> (type, default).
SHARED: dict[str, tuple[Any, Any]] = {
    "victim": (VictimOpt, "default"), "data": (Data, "rotten_tomatoes"), "split": (Split, None),
    "text_column": (TextColumn, None), "label_column": (LabelColumn, None), "pair_column": (PairColumn, None), "id_column": (IdColumn, None),
    "label_names": (LabelNames, None), "skip_bad_rows": (SkipBadRows, False), "encoding": (Encoding, None),
    "file_format": (FileFormatOpt, None), "label_map": (LabelMap, None),
    "labels_by_position": (LabelsByPosition, False), "max_words": (MaxWords, None),
    "length_policy": (LengthPolicyOpt, "truncate"),
    "resume": (Resume, False), "seed": (Seed, 0), "executor": (Executor, "local"), "workers": (Workers, None),
    "address": (Address, None), "gpus_per_worker": (GpusPerWorker, None), "quiet": (Quiet, False),
    "threads": (ThreadsOpt, "auto"),
    "device": (Device, "auto"), "dtype": (Dtype, "float32"), "allow_precision_change": (AllowPrecisionChange, False),
    "labelled": (Labelled, None),
}


def with_shared_options(out: str, *, skip: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the shared data and run options (and ``--out`` defaulting to ``out``) to a
    command whose first parameter is the click context. The command itself receives only
    its own options; :func:`textrobust.cli.running.run_analyses` reads the shared ones
    from the context."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(command, include_extras=True)
        own = [p.replace(annotation=hints.get(p.name, p.annotation))
               for p in inspect.signature(command).parameters.values()]
        names = {p.name for p in own}
        clash = sorted(names & (set(SHARED) | {"out"}) - set(skip))
        if clash:  # a command option must never shadow a shared one (msr's --max-words once cut every text)
            raise TypeError(f"The options {clash} of `{command.__name__}` have the names of shared data/run "
                            "options; rename them (or list them in skip= to drop the shared one).")
        shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
                  for name, (kind, default) in {**SHARED, "out": (Out, Path(out))}.items()
                  if name not in names and name not in skip]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return command(*args, **{k: v for k, v in kwargs.items() if k in names})

        parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if i else p for i, p in enumerate(own)]
        wrapper.__signature__ = inspect.Signature(parameters + shared)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters + shared}
        return wrapper

    return decorate
