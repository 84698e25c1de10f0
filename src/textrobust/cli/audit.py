"""``textrobust audit``: every analysis in one run, one store, one report.

With no arguments it audits the default victim on the Rotten Tomatoes test split with
the ``quick`` profile (:data:`textrobust.audit.DEFAULT_ANALYSES`), sized to finish in
minutes on 2 cores; ``--profile full`` adds every other analysis at small sizes and
``--profile paper`` uses the papers' sizes (:mod:`textrobust.audit.profiles`). It prints
the verdict and one overview table, the details with ``--verbose``, the report's path last.
``--config audit.toml`` chooses the victim, the data, the run options and the analyses
with their settings (read with the standard library's ``tomllib``); its format is the
annotated :data:`CONFIG_EXAMPLE`, which ends ``textrobust audit --help`` and is in the
README. Options given on the command line win over the file. A key of the wrong type, an
unknown key or section, or a folder given as the file is a usage error naming the key and
the file. ``--require 'attack.accuracy_under_attack>=0.30'`` (repeatable, or ``require`` in
``[run]``) makes the audit a CI gate: the keys are checked before the run, the figures after
it, exit 3 when one misses (``--junit FILE`` writes the checks as JUnit XML); ``textrobust
gate RUN_DIR`` checks a finished run (:mod:`textrobust.cli.gate`).
"""

from __future__ import annotations

import json
import tomllib
import typing
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape

from textrobust.audit.profiles import PROFILES, Profile
from textrobust.cli import options as o
from textrobust.cli.common import fail
from textrobust.errors import ConfigError, SettingsError

__all__ = ["load_config", "register"]

_SECTIONS = {"victim": {"path"}, "data": {"name", "split", "text_column", "label_column", "pair_column",
                                          "label_names", "skip_bad_rows", "encoding", "file_format", "label_map",
                                          "labels_by_position"},
             "run": {"out", "executor", "workers", "address", "seed", "title", "require", "junit"},
             "analyses": None}


#: The format of ``--config``: an annotated example (``textrobust audit --help`` ends with it;
#: the README shows it; a test loads it).
CONFIG_EXAMPLE = """\
# audit.toml: every section and key is optional; options given on the
# command line win over the file. Keys are named as the options, _ for -.

[victim]
path = "default"            # --victim: default, a zoo name or a victim folder

[data]
name = "examples/reviews.csv"   # --data: a bundled set or your file
split = "all"               # --split: train, dev, test or all
text_column = "review"      # your file's columns: text_column, label_column,
label_column = "verdict"    #   pair_column (and label_names, encoding,
                            #   file_format, skip_bad_rows = true)
label_map = { fresh = "positive", rotten = "negative" }   # data = victim
labels_by_position = false

[run]
out = "runs/audit-reviews"  # --out: the run folder
executor = "local"          # local, lockstep, process or ray (+ address)
# workers = 2               # --workers, with process, lockstep or ray
seed = 0
title = "Reviews audit"     # the report's title (only here)
# require = ["attack.accuracy_under_attack>=0.30"]  # --require: a CI gate,
# junit = "runs/audit-reviews/gate.xml"               # exit 3 when one fails

# One table per analysis to run, with the options of `textrobust NAME`
# (`textrobust list` names them); without any, the default analyses run.
[analyses.evaluate]

[analyses.attack]
recipe = "pwws"
n = 12
quality = false
"""


def register(app: typer.Typer) -> None:
    epilog = "[bold]The --config file[/], an annotated example:\n\n" + escape(CONFIG_EXAMPLE)
    app.command("audit", epilog=epilog)(audit_cmd)
    app.command("demo", help="The main job: `textrobust audit` on the embedded default (same options).",
                epilog=epilog)(audit_cmd)


def load_config(path: Path) -> dict[str, Any]:
    """The TOML audit configuration at ``path``, checked for unknown sections and keys, for
    values of the wrong type, and each ``[analyses.NAME]`` table as NAME's settings."""
    if path.is_dir():
        raise ConfigError(f"The '--config' option names a folder ({path}); give a TOML file such as "
                          "examples/audit.toml (an annotated example ends `textrobust audit --help`).")
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"The '--config' file {path} does not exist.") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"The '--config' file {path} is not valid TOML: {exc}.") from None
    except OSError as exc:
        raise ConfigError(f"The '--config' file {path} cannot be read: {exc.strerror or exc}.") from None
    for section, value in config.items():
        if section not in _SECTIONS:
            raise ConfigError(f"Unknown section [{section}] in {path}. Known: {', '.join(_SECTIONS)}.")
        allowed = _SECTIONS[section]
        if not isinstance(value, dict):
            raise ConfigError(f"[{section}] in {path} must be a table.")
        if allowed is not None:
            unknown = sorted(set(value) - allowed)
            if unknown:
                raise ConfigError(f"Unknown key(s) {unknown} in [{section}] of {path}. Known: {sorted(allowed)}.")
            for key, item in value.items():
                _check_type(path, section, key, item)
        else:
            for name, settings in value.items():
                if not isinstance(settings, dict):
                    raise ConfigError(f"[analyses.{name}] in {path} must be a table of settings (e.g. "
                                      f"[analyses.{name}] then n = 20 on the next line). Got {settings!r} instead.")
    _check_settings(path, config)
    if "require" in config.get("run", {}):
        from textrobust.cli.gate import parse_require

        parse_require(config["run"]["require"], f"The key 'require' in [run] of {path}")
    return config


#: TOML keys that are not named as their command-line option.
_KEY_OPTIONS = {("victim", "path"): "victim", ("data", "name"): "data"}


def _check_type(path: Path, section: str, key: str, value: Any) -> None:
    """A ConfigError unless ``value`` has the type of the option that ``key`` stands for."""
    option = _KEY_OPTIONS.get((section, key), key)
    kind: Any = str
    if option in o.SHARED or option == "out":
        declared = typing.get_args(o.Out if option == "out" else o.SHARED[option][0])[0]  # Annotated[T, ...]
        kind = next((k for k in typing.get_args(declared) if k is not type(None)), declared)  # Optional[T]
    flag = f" (as --{option.replace('_', '-')} takes)" if option in o.SHARED or option == "out" else ""
    if kind is bool:
        ok, what = isinstance(value, bool), "true or false"
    elif kind is int:
        ok, what = isinstance(value, int) and not isinstance(value, bool), "an integer"
    else:
        ok, what = isinstance(value, str), "a string"
    if option == "label_names":
        ok = ok or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        what = 'a string or a list of strings, e.g. ["negative", "positive"]'
    elif option == "require":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        what = 'a list of strings, e.g. ["attack.accuracy_under_attack>=0.30"]'
    elif option == "label_map":
        ok = ok or (isinstance(value, dict) and all(isinstance(v, str) for v in value.values()))
        what = 'a string or a table, e.g. { fresh = "positive", rotten = "negative" }'
    if not ok:
        got = json.dumps(value) if isinstance(value, (bool, int, float, str, list, dict)) else repr(value)  # as TOML
        raise ConfigError(f"The key '{key}' in [{section}] of {path} must be {what}{flag}. Got {got} instead.")


def _config_params(config: dict[str, Any]) -> dict[str, Any]:
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
        help="The substitutes of every analysis that substitutes synonyms (attack, attribution's TEF, msr, pr, "
             "radius, second-order): validated (the default of each; synonyms checked in context) or paper (each "
             "paper's own source, to reproduce its numbers; the verdict's level then ignores them).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Print every analysis's figures and tables after "
                                          "the overview.")] = False,
    require: o.Require = None,
    junit: o.Junit = None,
) -> None:
    """Audit a victim: every chosen analysis into one store and one report.html."""
    from textrobust.analyses import ANALYSES
    from textrobust.audit.profiles import profile_settings
    from textrobust.audit.requirements import check_keys, declared_figures
    from textrobust.cli.gate import apply_gate, parse_require
    from textrobust.cli.running import _given, run_analyses

    try:
        file_config = load_config(config) if config is not None else {}
        for key, value in _config_params(file_config).items():
            if key == "title":
                continue
            if key not in ctx.params or not _given(ctx, key):
                ctx.params[key] = value
        chosen: dict[str, dict[str, Any]] = {name: dict(settings or {})
                                             for name, settings in file_config.get("analyses", {}).items()}
        sizes = profile_settings(profile or Profile.QUICK)
        if analyses is not None or not chosen:
            names = [a.strip() for a in (analyses or ",".join(sizes)).split(",") if a.strip()]
            chosen = {name: {**sizes.get(name, {}), **chosen.get(name, {})} for name in names}
        elif profile is not None:  # the file's analyses, at the profile's sizes unless the file sets them
            chosen = {name: {**sizes.get(name, {}), **settings} for name, settings in chosen.items()}
        unknown = [name for name in chosen if name not in ANALYSES]
        if unknown:
            raise ConfigError(f"Unknown analyses {unknown}. Known: {', '.join(ANALYSES.names())}.")
        if n is not None:
            if n < 0:
                raise ConfigError(f"The '--n' option must be >= 0. Got {n} instead.")
            for name, settings in chosen.items():
                if "n" in ANALYSES.get(name).settings_type.model_fields:
                    current = settings.get("n", getattr(ANALYSES.get(name).settings_type(), "n"))  # a field (above)
                    settings["n"] = n if current is None else min(n, current)
        if candidates is not None:
            from textrobust.attack.candidates.choice import check_choice

            check_choice(candidates)
            for name, settings in chosen.items():
                if "candidates" in ANALYSES.get(name).settings_type.model_fields:
                    settings["candidates"] = candidates
        # the gate: --require (or the file's require) checked before anything runs
        subject = ("The '--require' option" if _given(ctx, "require") or config is None
                   else f"The key 'require' in [run] of {config}")
        requirements = parse_require(ctx.params.get("require"), subject)
        check_keys(requirements, *declared_figures(chosen), where=f"the analyses run ({', '.join(chosen)})",
                   subject=subject)
    except ConfigError as exc:
        fail(exc)
    result = run_analyses(ctx, chosen, title=file_config.get("run", {}).get("title"),
                          profile=(profile or Profile.QUICK).value, overview=True, verbose=verbose)
    gate_junit = ctx.params.get("junit")
    apply_gate(result.out, requirements, Path(gate_junit) if gate_junit is not None else None)


def _check_settings(path: Path, config: dict[str, Any]) -> None:
    """Each ``[analyses.NAME]`` table of the file at ``path`` validated as NAME's settings;
    a problem is a ConfigError naming the key, the table and the file."""
    from textrobust.analyses import ANALYSES

    for name, settings in config.get("analyses", {}).items():
        if name not in ANALYSES:
            raise ConfigError(f"Unknown analysis [analyses.{name}] in {path}. Known: {', '.join(ANALYSES.names())}.")
        try:
            ANALYSES.get(name).settings_type(**settings)
        except SettingsError as exc:
            raise ConfigError(exc.render(
                lambda key: f"The key '{key}' in [analyses.{name}] of {path}",  # called here, in this iteration
                f"Keys of [analyses.{name}]: {', '.join(exc.accepted)} (the options of `textrobust {name}`, "
                "_ for -).")) from None
