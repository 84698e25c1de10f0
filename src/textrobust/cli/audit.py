"""``textrobust audit``: every analysis in one run, one store, one report.

With no arguments it audits the default victim on the Rotten Tomatoes test split with
:data:`textrobust.audit.DEFAULT_ANALYSES`, sized to finish in minutes on 2 cores.
``--config audit.toml`` chooses the victim, the data and the analyses with their
settings (read with the standard library's ``tomllib``)::

    [victim]
    path = "default"                 # or a victim folder

    [data]
    name = "rotten_tomatoes"         # or a file: "reviews.csv"
    split = "test"
    text_column = "review"           # column options for your own file
    label_map = "fresh=positive,rotten=negative"

    [run]
    out = "runs/audit"
    executor = "process"
    workers = 2
    seed = 0

    [analyses.evaluate]
    [analyses.attack]
    recipe = "pwws"
    n = 20

Options given on the command line win over the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from textrobust.cli import options as o
from textrobust.cli.common import fail
from textrobust.errors import ConfigError

__all__ = ["load_config", "register"]

_SECTIONS = {"victim": {"path"}, "data": {"name", "split", "text_column", "label_column", "pair_column",
                                          "label_names", "skip_bad_rows", "encoding", "file_format", "label_map",
                                          "labels_by_position"},
             "run": {"out", "executor", "workers", "address", "seed", "title"}, "analyses": None}


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_cmd)
    app.command("demo", help="The main job: `textrobust audit` on the embedded default (same options).")(audit_cmd)


def load_config(path: Path) -> dict[str, Any]:
    """The TOML audit configuration at ``path``, checked for unknown sections and keys."""
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"The '--config' file {path} does not exist.") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"The '--config' file {path} is not valid TOML: {exc}.") from None
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
    return config


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
    config: Annotated[Optional[Path], typer.Option(help="An audit.toml: victim, data, analyses and their "
                                                        "settings (see `textrobust audit --help`).")] = None,
    analyses: Annotated[Optional[str], typer.Option(help="Comma-separated analyses (default: evaluate, attack "
                                                          "(n=20), second-order, radius, pr (n=5 each); see "
                                                          "`textrobust list`).")] = None,
    n: Annotated[Optional[int], typer.Option(help="Examples per analysis (caps each analysis's own n).")] = None,
) -> None:
    """Audit a victim: every chosen analysis into one store and one report.html."""
    from textrobust.analyses import ANALYSES
    from textrobust.audit import DEFAULT_ANALYSES
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
        if analyses is not None or not chosen:
            names = [a.strip() for a in (analyses or ",".join(DEFAULT_ANALYSES)).split(",") if a.strip()]
            chosen = {name: {**DEFAULT_ANALYSES.get(name, {}), **chosen.get(name, {})} for name in names}
        unknown = [name for name in chosen if name not in ANALYSES]
        if unknown:
            raise ConfigError(f"Unknown analyses {unknown}. Known: {', '.join(ANALYSES.names())}.")
        if n is not None:
            if n < 0:
                raise ConfigError(f"The '--n' option must be >= 0. Got {n} instead.")
            for name, settings in chosen.items():
                if "n" in ANALYSES.get(name).settings_type.model_fields:
                    current = settings.get("n", ANALYSES.get(name).settings_type().n)  # type: ignore[attr-defined]
                    settings["n"] = n if current is None else min(n, current)
    except ConfigError as exc:
        fail(exc)
    run_analyses(ctx, chosen, title=file_config.get("run", {}).get("title"))
