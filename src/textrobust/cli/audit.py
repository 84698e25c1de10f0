"""``textrobust audit``: every analysis in one run, one store, one report.

With no arguments it audits the default victim on the Rotten Tomatoes test split with
the ``quick`` profile (:data:`textrobust.audit.DEFAULT_ANALYSES`), sized to finish in
minutes on 2 cores; ``--profile full`` adds every other analysis at small sizes and
``--profile paper`` uses the papers' sizes (:mod:`textrobust.audit.profiles`). It prints
the verdict and one overview table, the details with ``--verbose``, the report's path last.
``--config audit.toml`` chooses the victim, the data, the run options and the analyses
with their settings; the file is read and checked by :mod:`textrobust.audit.config_file`
(also :func:`~textrobust.audit.config_file.run_config` from Python), its format the
annotated :data:`CONFIG_EXAMPLE`, which ends ``textrobust audit --help`` and is in the
README. Options given on the command line win over the file. A key of the wrong type, an
unknown key or section, or a folder given as the file is a usage error naming the key and
the file. ``--require 'attack.accuracy_under_attack>=0.30'`` (repeatable, or ``require`` in
``[run]``) makes the audit a CI gate: the keys are checked before the run, the figures after
it, exit 3 when one misses (``--junit FILE`` writes the checks as JUnit XML); ``textrobust
gate RUN_DIR`` checks a finished run (:mod:`textrobust.cli.gate`). A reviewed figure
(``attack.reviewed.accuracy_under_attack``) is read at the end of its interval hardest to
meet, since nobody has reviewed the findings yet (:mod:`textrobust.audit.requirements`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional, get_args

import typer
from rich.markup import escape

from textrobust.attack.candidates.choice import CandidateChoice
from textrobust.audit.config_file import CONFIG_EXAMPLE, choose_analyses, load_config
from textrobust.audit.profiles import PROFILES, Profile
from textrobust.cli import options as o
from textrobust.cli.common import fail
from textrobust.errors import ConfigError

__all__ = ["CONFIG_EXAMPLE", "load_config", "register"]


def register(app: typer.Typer) -> None:
    epilog = "[bold]The --config file[/], an annotated example:\n\n" + escape(CONFIG_EXAMPLE)
    app.command("audit", epilog=epilog)(audit_cmd)
    app.command("demo", help="The main job: `textrobust audit` on the embedded default (same options).",
                epilog=epilog)(audit_cmd)


def _config_params(config: dict[str, Any]) -> dict[str, Any]:
    """The checked file ``config`` as the values of this command's options (a list of label
    names, a label-map table as the comma-separated strings the options take)."""
    params: dict[str, Any] = {}
    if "path" in config.get("victim", {}):
        params["victim"] = str(config["victim"]["path"])
    data = dict(config.get("data", {}))
    if "name" in data:
        params["data"] = str(data.pop("name"))
    if isinstance(data.get("label_names"), list):
        data["label_names"] = ",".join(data["label_names"])
    if isinstance(data.get("label_map"), dict):
        data["label_map"] = ",".join(f"{k}={v}" for k, v in data["label_map"].items())
    params.update(data)
    run = dict(config.get("run", {}))
    if "out" in run:
        run["out"] = Path(run["out"])
    params.update(run)
    return params


@o.with_shared_options("runs/audit")
def audit_cmd(
    ctx: typer.Context,
    config: Annotated[Optional[Path], typer.Option(help="A TOML file with the victim, the data, the run "
                                                        "options and the analyses to run with their settings "
                                                        "(options given here win); an annotated example ends "
                                                        "this help.")] = None,
    profile: Annotated[Optional[Profile], typer.Option(
        help="Which analyses, at what sizes: " + "; ".join(f"{k}: {v}" for k, v in PROFILES.items())
        + ". Default: quick.")] = None,
    analyses: Annotated[Optional[str], typer.Option(help="Comma-separated analyses, with the profile's sizes "
                                                          "(default: the profile's analyses; see "
                                                          "`textrobust list`).")] = None,
    n: Annotated[Optional[int], typer.Option(help="Examples per analysis (caps each analysis's own n).")] = None,
    candidates: Annotated[Optional[str], typer.Option(
        metavar="[" + "|".join(get_args(CandidateChoice)) + "]", help="The substitutes of every analysis that substitutes synonyms (attack, attribution's TEF, msr, pr, "
             "radius, second-order): validated (the default of each; synonyms checked in context) or paper (each "
             "paper's own source, to reproduce its numbers; the verdict's level then ignores them).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Print every analysis's figures and tables after "
                                          "the overview.")] = False,
    require: o.Require = None,
    junit: o.Junit = None,
) -> None:
    """Audit a victim: every chosen analysis into one store and one report.html."""
    from textrobust.audit.requirements import check_keys, declared_figures, reviewed_figure_keys
    from textrobust.cli.gate import apply_gate, parse_require
    from textrobust.cli.running import _given, run_analyses

    try:
        file_config = load_config(config) if config is not None else {}
        for key, value in _config_params(file_config).items():
            if key == "title":
                continue
            if key not in ctx.params or not _given(ctx, key):
                ctx.params[key] = value
        chosen = choose_analyses(file_config.get("analyses"), profile=profile, names=analyses, n=n,
                                 candidates=candidates)
        # the gate: --require (or the file's require) checked before anything runs
        subject = ("The '--require' option" if _given(ctx, "require") or config is None
                   else f"The key 'require' in [run] of {config}")
        requirements = parse_require(ctx.params.get("require"), subject)
        keys, prefixes = declared_figures(chosen)  # and textrobust review's figures, read at their hardest end
        check_keys(requirements, keys | reviewed_figure_keys(chosen), prefixes,
                   where=f"the analyses run ({', '.join(chosen)})", subject=subject)
        if ctx.params.get("junit") is not None:  # its folder must exist: said now, not after the run
            from textrobust.audit.requirements import check_junit_target

            check_junit_target(Path(ctx.params["junit"]))
    except ConfigError as exc:
        fail(exc)
    if not ctx.params.get("quiet"):  # the plan before anything loads: a paper-size audit takes hours
        from textrobust.audit.profiles import describe_plan
        from textrobust.cli.common import err_console

        named = profile.value if profile else (Profile.QUICK.value if config is None else None)
        for line in describe_plan(chosen, profile=named, n=n):
            err_console.print(escape(line), highlight=False, soft_wrap=True)
    result = run_analyses(ctx, chosen, title=file_config.get("run", {}).get("title"),
                          profile=(profile or Profile.QUICK).value, overview=True, verbose=verbose)
    gate_junit = ctx.params.get("junit")
    apply_gate(result.out, requirements, Path(gate_junit) if gate_junit is not None else None, reviewed_end=True)

