"""``report.html`` and ``report.json`` from a ``textrobust.report/1`` dict.

The page is one self-contained file: inline CSS, no script, no external address, and a
Content-Security-Policy that forbids scripts and remote loads anyway. Every string of the
report is escaped by Jinja2's autoescaping; charts are embedded as
``<img src="data:image/svg+xml;base64,...">``, where an SVG cannot run script.

Python shapes the data for the page (formatted numbers, marked tokens); the template
(``templates/report.html.j2``) only lays it out. Jinja2 is imported on first use.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from textrobust.errors import MissingDependencyError
from textrobust.report.schema import json_ready, validate_report

__all__ = ["format_value", "render_html", "write_report"]

NA = "n/a"
#: Headline figures of each analysis shown in the at-a-glance table.
GLANCE_FIGURES = 3
#: Card keys shown at a glance, in this order, with their labels (the rest are folded).
CARD_KEYS = {"architecture": "architecture", "dataset": "trained on", "test_accuracy": "test accuracy",
             "dev_accuracy": "dev accuracy", "parameters": "parameters", "defense": "defense"}


# ---- numbers ------------------------------------------------------------------------------------
def _float(value: float) -> str:
    """Three decimals from 1 up, three significant digits below 1."""
    if value == 0:
        return "0"
    if abs(value) >= 1:
        return f"{value:,.3f}"
    return f"{value:#.3g}"


def format_value(value: Any, fmt: str = "float") -> str:
    """A headline or cell value as text: ``None`` and NaN are ``n/a`` (never 0); ``%``
    takes a fraction (0.123 -> ``12.3%``), ``int`` groups thousands (``1,234``), ``float``
    keeps three decimals (three significant digits below 1), ``text`` is ``str``. A string
    is shown as it is whatever the format."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return NA
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) or fmt == "text" or not isinstance(value, (int, float)):
        return str(value)
    if fmt == "%":
        return f"{value:.1%}"
    if fmt == "int":
        return f"{round(value):,}"
    if isinstance(value, int):
        return f"{value:,}"
    return _float(value)


def _cell(value: Any) -> dict[str, Any]:
    """A table cell: its text and whether it is a number (right-aligned) or n/a."""
    text = format_value(value, "int" if isinstance(value, int) else "float")
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {"text": text, "num": numeric, "na": text == NA}


# ---- the page's data ----------------------------------------------------------------------------
def _card_value(key: str, value: Any) -> str:
    if isinstance(value, float) and "accuracy" in key and 0 <= value <= 1:
        return format_value(value, "%")
    if isinstance(value, (Mapping, list)):
        return json.dumps(value, ensure_ascii=False)
    return format_value(value, "int" if isinstance(value, int) else "float")


def _card(card: Mapping[str, Any] | None) -> dict[str, Any]:
    card = card or {}
    shown = [(label, _card_value(key, card[key])) for key, label in CARD_KEYS.items() if key in card]
    from textrobust.zoo.cards import one_class_warning

    shares = card.get("test_predictions")
    warning = one_class_warning(shares) if isinstance(shares, Mapping) else None
    if warning is not None:  # a one-class model: said at a glance, not folded away (issue 30)
        shown.append(("warning", warning))
    rest = [(key, _card_value(key, value)) for key, value in card.items() if key not in CARD_KEYS]
    return {"known": bool(card), "shown": shown, "rest": rest}


def _placement(placement: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """The model facts of where the victim ran (``--device``, ``--dtype``) and, below
    float32, how often it agreed with its float32 self."""
    if not placement:
        return []
    rows = [("device", str(placement["device"])), ("float type", str(placement["dtype"]))]
    if placement.get("agreement") is not None:
        rows.append(("agreement with float32",
                     f"{format_value(placement['agreement'], '%')} of {placement.get('agreement_sample')} texts"))
    return rows


def _segments(tokens: Sequence[str], changed: set[int]) -> list[dict[str, Any]]:
    """The tokens in order, each marked changed or not. When no token carries whitespace
    (words without their gaps), a space is put between words."""
    spaced = not any(t != t.strip() or not t for t in tokens)
    out: list[dict[str, Any]] = []
    for i, token in enumerate(tokens):
        if spaced and i:
            out.append({"text": " ", "changed": False})
        out.append({"text": token, "changed": i in changed})
    return out


def _status_class(status: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", status.lower()).strip("-") or "none"


def _example(row: Mapping[str, Any]) -> dict[str, Any]:
    changed = set(row["changed"])
    before, after = row.get("prediction_before"), row.get("prediction_after")
    return {
        "id": row["id"], "status": row["status"], "status_class": _status_class(row["status"]),
        "label": row["label"], "before": NA if before is None else before, "before_na": before is None,
        "after": NA if after is None else after, "after_na": after is None,
        "flipped": before is not None and after is not None and before != after,
        "original": _segments(row["original"], changed),
        "perturbed": _segments(row["perturbed"], changed), "note": row.get("note"),
        "same": list(row["original"]) == list(row["perturbed"]),
    }


def _headline(item: Mapping[str, Any]) -> dict[str, Any]:
    text = format_value(item.get("value"), item["format"])
    return {"label": item["label"], "value": text, "na": text == NA, "note": item.get("note")}


def _table(table: Mapping[str, Any]) -> dict[str, Any]:
    """A table's cells; a column whose every value is a number (or n/a) is right-aligned,
    heading included."""
    rows = [[_cell(c) for c in row] for row in table["rows"]]
    columns = [{"text": name, "num": bool(rows) and all(row[i]["num"] or row[i]["na"] for row in rows)
                and any(row[i]["num"] for row in rows)} for i, name in enumerate(table["columns"])]
    return {"title": table["title"], "columns": columns, "rows": rows, "note": table.get("note")}


def _reviewed(section: Mapping[str, Any]) -> dict[str, Any] | None:
    """The reviewed figures of a section (``textrobust review``, issue 40) beside the
    automatic ones of its headline; None for a section without findings."""
    from textrobust.report.reviewed import FIGURES, review_rule

    block = section.get("reviewed")
    if not block or not block.get("findings"):
        return None
    automatic = {h["label"]: h.get("value") for h in section["headline"]}
    rows = [{"label": label, "automatic": format_value(automatic.get(label), fmt),
             "reviewed": format_value(block.get(name), fmt),
             "interval": f"{format_value(block.get(name + '_low'), fmt)} .. {format_value(block.get(name + '_high'), fmt)}"}
            for name, label, fmt in FIGURES.get(section["name"], ())]
    agreement = (f"{format_value(block['agreement'], '%')} on {format_value(block['agreement_items'], 'int')} "
                 "item(s) judged by two or more reviewers" if block.get("agreement") is not None
                 else "no item judged by two reviewers yet")
    if block.get("kappa") is not None:
        agreement += f" (Cohen's kappa {format_value(block['kappa'])})"
    return {"rows": rows, "findings": block["findings"], "judged": block["judged"],
            "confirmed": block["confirmed"], "rejected": block["rejected"], "disputed": block["disputed"],
            "share": format_value(block.get("reviewed_share"), "%"),
            "reviewers": ", ".join(block.get("reviewers") or []) or "none yet", "agreement": agreement,
            "rule": review_rule(section["name"], block)}


def _svg_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _analysis(section: Mapping[str, Any]) -> dict[str, Any]:
    counts = section["counts"]
    return {
        "name": section["name"], "anchor": f"analysis-{section['name']}", "title": section["title"],
        "paper": section["paper"],
        "counts": {key: format_value(value, "int") for key, value in counts.items()},
        "errors_n": counts["errors"], "budget_n": counts["budget_exhausted"],
        "headline": [_headline(h) for h in section["headline"]],
        "reviewed": _reviewed(section),
        "tables": [_table(t) for t in section["tables"]],
        "figures": [{"title": f["title"], "caption": f["caption"], "src": _svg_uri(f["svg"])}
                    for f in section["figures"]],
        "examples": [_example(e) for e in section["examples"]],
        "errors": section["errors"],
        "settings": json.dumps(section["settings"], indent=2, ensure_ascii=False, allow_nan=False),
    }


def _data_notes(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Rows of the data box: how many analysed texts the length limit cut or rejected, and
    which rows ``--skip-bad-rows`` skipped."""
    notes: list[tuple[str, str]] = []
    limit = data.get("length_limit")
    if limit:
        words = format_value(limit["max_words"], "int")
        parts = []
        if limit["truncated"]:
            parts.append(f"{format_value(limit['truncated'], 'int')} analysed text(s) cut to their first {words} "
                         "words (--max-words; the ids are in summary.json)")
        if limit["rejected"]:
            parts.append(f"{format_value(limit['rejected'], 'int')} analysed text(s) longer than {words} words "
                         "counted as errors (--length-policy error)")
        notes.append(("long texts", "; ".join(parts) or f"none cut (limit {words} words per text)"))
    skipped = data.get("skipped_rows")
    if skipped:
        more = skipped["count"] - len(skipped["shown"])
        shown = "; ".join(skipped["shown"]) + (f"; and {format_value(more, 'int')} more" if more > 0 else "")
        notes.append(("rows skipped", f"{format_value(skipped['count'], 'int')} bad row(s) (--skip-bad-rows): "
                                      f"{shown}"))
    return notes


def _page(report: Mapping[str, Any]) -> dict[str, Any]:
    data, run = report["data"], report["run"]
    run_rows = [("time", f"{run['seconds']:,.1f} s"),
                ("model queries", format_value(run["queries"], "int")),
                ("executor", f"{run['executor']} ({format_value(run['workers'], 'int')} workers"
                             + (f", {run['gpus_per_worker']:g} GPU each)" if run.get("gpus_per_worker") else ")")),
                ("resumed from the store", format_value(run["resumed"])),
                ("seed", format_value(run.get("seed"), "text")),
                ("run store", run["store"]),
                ("textrobust", report["textrobust_version"]),
                ("created", report["created_at"])]
    return {
        "title": report["title"],
        "victim": {"name": report["victim"]["name"], "path": report["victim"]["path"],
                   "card": _card(report["victim"].get("card")),
                   "placement": _placement(report["victim"].get("placement"))},
        "data": {"name": data["name"], "split": data["split"], "examples": format_value(data["examples"], "int"),
                 "labels": data["label_names"], "notes": _data_notes(data)},
        "verdict": report["verdict"],
        "analyses": [_analysis(s) for s in report["analyses"]],
        "glance_figures": GLANCE_FIGURES,
        "not_run": list(report.get("not_run") or []),
        "run": run_rows,
        "schema": report["schema"], "version": report["textrobust_version"], "created_at": report["created_at"],
    }


# ---- rendering and writing ----------------------------------------------------------------------
@lru_cache(maxsize=1)
def _environment() -> Any:
    """The Jinja2 environment of the package's templates (autoescaping every value)."""
    try:
        import jinja2
    except ImportError:  # pragma: no cover - jinja2 is a core dependency
        raise MissingDependencyError("jinja2", "The HTML report", "pip install 'jinja2>=3.1'") from None
    return jinja2.Environment(loader=jinja2.PackageLoader("textrobust.report", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _template() -> Any:
    return _environment().get_template("report.html.j2")


def render_html(report: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML page (validated first; NaN shows as n/a)."""
    clean = json_ready(report)
    validate_report(clean)
    return str(_template().render(**_page(clean)))


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and
    ``os.replace``, so a reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(report: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Validate ``report`` and write ``report.html`` and ``report.json`` (indented, NaN
    and infinities as null) into ``out_dir``, each atomically; return both paths."""
    clean = json_ready(report)
    validate_report(clean)
    page = str(_template().render(**_page(clean)))
    data = json.dumps(clean, indent=2, sort_keys=False, allow_nan=False, ensure_ascii=False) + "\n"
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    html_path, json_path = folder / "report.html", folder / "report.json"
    _write_atomic(json_path, data)
    _write_atomic(html_path, page)
    return html_path, json_path
