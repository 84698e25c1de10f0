"""The audit configuration file (``textrobust audit --config audit.toml``), read the same
way from Python and from the command line.

The file chooses the victim, the data, the run options and the analyses with their
settings; its format is the annotated :data:`CONFIG_EXAMPLE` (which ends ``textrobust audit
--help`` and is in the README). :func:`load_config` reads it with the standard library's
``tomllib`` and checks it: a key of the wrong type, an unknown key or section, a folder
given as the file, or an ``[analyses.NAME]`` table that is not NAME's settings is a
:class:`~textrobust.errors.ConfigError` naming the key and the file.
:func:`choose_analyses` picks the analyses as ``textrobust audit`` does (the file's tables,
a profile's sizes, ``--analyses``, ``--n``, ``--candidates``); :func:`run_config` runs the
file from Python through :func:`textrobust.audit.run`, keyword arguments winning over the
file as command-line options do.

>>> import pathlib, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     path = pathlib.Path(d) / "audit.toml"
...     _ = path.write_text(CONFIG_EXAMPLE)
...     sorted(run_arguments(load_config(path)))
['analyses', 'data', 'data_options', 'executor', 'label_map', 'labels_by_position', 'out', 'profile', 'seed', \
'split', 'title', 'victim']
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError, SettingsError

__all__ = ["CONFIG_EXAMPLE", "KEY_TYPES", "SECTIONS", "choose_analyses", "load_config", "run_arguments",
           "run_config"]

#: The sections of the file and their keys (``analyses``: one table per analysis, any name).
SECTIONS: Mapping[str, frozenset[str] | None] = {
    "victim": frozenset({"path"}),
    "data": frozenset({"name", "split", "text_column", "label_column", "pair_column", "id_column", "label_names",
                       "skip_bad_rows", "encoding", "file_format", "label_map", "labels_by_position", "max_words",
                       "length_policy"}),
    "run": frozenset({"out", "executor", "workers", "address", "gpus_per_worker", "seed", "title", "require",
                      "junit", "device", "dtype", "allow_precision_change", "threads", "labelled"}),
    "analyses": None,
}

#: The type of each key's value: the type of the command-line option it stands for (a test
#: checks them against the CLI's shared options); every other key is a string.
KEY_TYPES: Mapping[str, type] = {"skip_bad_rows": bool, "labels_by_position": bool, "workers": int, "seed": int,
                                 "gpus_per_worker": float, "allow_precision_change": bool, "max_words": int}

#: Keys that are not command-line options of ``textrobust audit`` (they have no ``--`` flag).
FILE_ONLY = frozenset({"title", "require", "junit"})

#: Keys not named as their command-line option.
KEY_OPTIONS: Mapping[tuple[str, str], str] = {("victim", "path"): "victim", ("data", "name"): "data"}

#: The format of the file: an annotated example (``textrobust audit --help`` ends with it;
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
label_column = "verdict"    #   pair_column, id_column (and label_names,
                            #   encoding, file_format, skip_bad_rows = true)
label_map = { fresh = "positive", rotten = "negative" }   # data = victim
labels_by_position = false
# max_words = 200           # --max-words: longest text, in words per column
# length_policy = "truncate"  # --length-policy: truncate or error

[run]
out = "runs/audit-reviews"  # --out: the run folder
executor = "local"          # local, lockstep, process or ray (+ address)
# workers = 2               # --workers, with process, lockstep or ray
# address = "auto"          # --address, with ray: "auto" or a head address
# gpus_per_worker = 0.5     # --gpus-per-worker: GPUs each Ray actor reserves
# device = "auto"           # --device: auto, cpu, cuda, cuda:N or mps
# dtype = "float32"         # --dtype: float32, bfloat16 or float16 (GPU only)
# allow_precision_change = false  # true: audit a dtype below 99% agreement
# threads = "auto"          # --threads: torch threads, "auto" or a count
# labelled = "runs/labels.tsv"  # --labelled: your labels (textrobust review --export)
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


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The TOML audit configuration at ``path``, checked for unknown sections and keys, for
    values of the wrong type, and each ``[analyses.NAME]`` table as NAME's settings."""
    path = Path(path)
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
        if section not in SECTIONS:
            raise ConfigError(f"Unknown section [{section}] in {path}. Known: {', '.join(SECTIONS)}.")
        allowed = SECTIONS[section]
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
        from textrobust.audit.requirements import parse_requirements

        parse_requirements(config["run"]["require"] or (), f"The key 'require' in [run] of {path}")
    return config


def _check_type(path: Path, section: str, key: str, value: Any) -> None:
    """A ConfigError unless ``value`` has the type of the option that ``key`` stands for."""
    option = KEY_OPTIONS.get((section, key), key)
    kind = KEY_TYPES.get(option, str)
    flag = "" if option in FILE_ONLY else f" (as --{option.replace('_', '-')} takes)"
    if kind is bool:
        ok, what = isinstance(value, bool), "true or false"
    elif kind is int:
        ok, what = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif kind is float:
        ok, what = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
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
    elif option == "device":
        what = 'a string naming a device: "auto", "cpu", "cuda", "cuda:N" or "mps"'
    elif option == "dtype":
        what = 'a string naming a float type: "float32", "bfloat16" or "float16"'
    elif option == "threads":  # --threads takes "auto" or a count: in the file, a string or an integer
        ok = ok or (isinstance(value, int) and not isinstance(value, bool))
        what = '"auto" or a thread count (an integer)'
    if not ok:
        got = json.dumps(value) if isinstance(value, (bool, int, float, str, list, dict)) else repr(value)  # as TOML
        raise ConfigError(f"The key '{key}' in [{section}] of {path} must be {what}{flag}. Got {got} instead.")
    if section in ("run", "data"):
        _check_value(f"The key '{key}' in [{section}] of {path}", key, value)


def _check_value(subject: str, key: str, value: Any) -> None:
    """A ConfigError naming ``subject`` when a [run] or [data] ``value`` of the right type is out of
    its option's range or choices, checked as the run checks the option (a device's name,
    not whether it is there: that is the run's check)."""
    from textrobust.audit.executors import check_gpus_per_worker, check_workers
    from textrobust.devices import device_name, dtype_name
    from textrobust.threads import check_threads

    if key in ("max_words", "length_policy"):
        from textrobust.audit.limits import check_length_policy, check_max_words

        option = "--" + key.replace("_", "-")
        try:
            check_max_words(value) if key == "max_words" else check_length_policy(value)
        except ConfigError as exc:  # worded for the option: say the key and the file instead
            raise ConfigError(str(exc).replace(f"The '{option}' option", subject, 1)) from None
    elif key == "device":
        device_name(value, subject)
    elif key == "dtype":
        dtype_name(value, subject)
    elif key == "threads":
        check_threads(value, subject)
    elif key in ("workers", "gpus_per_worker"):
        option = "--" + key.replace("_", "-")
        try:
            (check_workers if key == "workers" else check_gpus_per_worker)(value, option)
        except ConfigError as exc:  # worded for the option: say the key and the file instead
            raise ConfigError(str(exc).replace(f"The '{option}' option", subject, 1)) from None


def _check_settings(path: Path, config: Mapping[str, Any]) -> None:
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


def choose_analyses(file_analyses: Mapping[str, Mapping[str, Any] | None] | None = None, *,
                    profile: str | None = None, names: str | None = None, n: int | None = None,
                    candidates: str | None = None) -> dict[str, dict[str, Any]]:
    """The analyses an audit runs, name -> settings, as ``textrobust audit`` chooses them:
    the file's ``[analyses.NAME]`` tables (``file_analyses``), at ``profile``'s sizes
    (:mod:`textrobust.audit.profiles`) unless a table sets them; without tables, or with
    ``names`` (comma-separated), the named analyses (default: the profile's) at the
    profile's sizes. ``profile`` defaults to ``quick``. ``n`` caps each analysis's own
    ``n``; ``candidates`` sets the substitutes of every analysis that has them."""
    from textrobust.analyses import ANALYSES
    from textrobust.audit.profiles import Profile, profile_settings

    chosen: dict[str, dict[str, Any]] = {name: dict(settings or {}) for name, settings in (file_analyses or {}).items()}
    sizes = profile_settings(profile or Profile.QUICK)
    if names is not None or not chosen:
        listed = [a.strip() for a in (names or ",".join(sizes)).split(",") if a.strip()]
        chosen = {name: {**sizes.get(name, {}), **chosen.get(name, {})} for name in listed}
    elif profile is not None:  # the file's analyses, at the profile's sizes unless the file sets them
        chosen = {name: {**sizes.get(name, {}), **settings} for name, settings in chosen.items()}
    unknown = [name for name in chosen if name not in ANALYSES]
    if unknown:
        raise ConfigError(f"Unknown analyses {unknown}. Known: {', '.join(ANALYSES.names())}.")
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"The '--n' option must be an int >= 1 (it caps each analysis's own n; with 0 the "
                              f"audit would run nothing). Got {n!r} instead.")
        for name, settings in chosen.items():
            fields = ANALYSES.get(name).settings_type.model_fields
            if "n" in fields:
                current = settings.get("n", fields["n"].get_default(call_default_factory=True))
                settings["n"] = n if current is None else min(n, current)
    if candidates is not None:
        from textrobust.attack.candidates.choice import check_choice

        check_choice(candidates)
        for name, settings in chosen.items():
            if "candidates" in ANALYSES.get(name).settings_type.model_fields:
                settings["candidates"] = candidates
    return chosen


def run_arguments(config: Mapping[str, Any], *, profile: str | None = None) -> dict[str, Any]:
    """The keyword arguments of :func:`textrobust.audit.run` that the checked ``config``
    (:func:`load_config`) sets: victim, data and its options, the run options, the title
    and the analyses (:func:`choose_analyses` with ``profile``). ``require`` and ``junit``
    are the gate's (:mod:`textrobust.audit.requirements`), not the run's."""
    from textrobust.audit.labels import parse_label_map

    arguments: dict[str, Any] = {}
    if "path" in config.get("victim", {}):
        arguments["victim"] = str(config["victim"]["path"])
    data = dict(config.get("data", {}))
    if "name" in data:
        arguments["data"] = str(data.pop("name"))
    for key in ("split", "labels_by_position", "max_words", "length_policy"):  # run()'s own arguments
        if key in data:
            arguments[key] = data.pop(key)
    if "label_map" in data:
        given = data.pop("label_map")
        arguments["label_map"] = dict(given) if isinstance(given, dict) else parse_label_map(given)
    if isinstance(data.get("label_names"), str):
        data["label_names"] = [n.strip() for n in data["label_names"].split(",") if n.strip()]
    if data.pop("skip_bad_rows", False):
        data["on_bad_rows"] = "skip"
    if data:
        arguments["data_options"] = data
    run = {k: v for k, v in config.get("run", {}).items() if k not in ("require", "junit")}
    if "out" in run:
        run["out"] = Path(run["out"])
    arguments.update(run)
    arguments["analyses"] = choose_analyses(config.get("analyses"), profile=profile)
    arguments["profile"] = str(getattr(profile, "value", profile) or "quick")  # the report lists those not run
    return arguments


def run_config(path: str | os.PathLike[str], *, profile: str | None = None, **overrides: Any) -> Any:
    """Run the audit that the file at ``path`` describes, as ``textrobust audit --config
    PATH`` does: keyword arguments of :func:`textrobust.audit.run` in ``overrides`` win
    over the file's. Returns the :class:`~textrobust.audit.orchestrator.AuditResult`
    (check the file's ``require`` with :mod:`textrobust.audit.requirements`)."""
    from textrobust.audit.orchestrator import run

    arguments = {**run_arguments(load_config(path), profile=profile), **overrides}
    return run(**arguments)
