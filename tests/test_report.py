"""The HTML/JSON report: schema validation, escaping, formatting, files, charts, and a
render in headless Chromium (skipped when Chromium is not installed)."""

from __future__ import annotations

import copy
import json
import math
import pkgutil
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import textrobust.report as report_pkg
from textrobust.errors import TextRobustError
from textrobust.analyses.figures import bar_chart, line_chart, stacked_bar_chart, violin_chart
from textrobust.report import (
    SCHEMA_VERSION,
    ReportError,
    load_report,
    render_html,
    validate_report,
    write_report,
)
from textrobust.report.html import format_value

EVIL = '<script>alert(1)</script><img src=x onerror=alert(1)>"quotes" &amp;'

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "header", "section", "footer", "h1", "h2", "h3",
    "p", "div", "span", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "figure", "figcaption", "img",
    "details", "summary", "pre", "code", "del", "ins", "dl", "dt", "dd", "a", "b", "br",
}


def make_report(evil: str = EVIL) -> dict[str, Any]:
    """A report with two analyses, one chart from each helper, examples, errors, n/a values
    and ``evil`` in every user-supplied string slot."""
    figures = [
        {"title": f"Outcomes {evil}", "caption": f"bars {evil}",
         "svg": bar_chart(["succeeded", "failed", "skipped"], [0.42, 0.5, 0.08], title="How attacks ended",
                          ylabel="share of examples", percent=True)},
        {"title": "Yield per radius", "caption": "",
         "svg": line_chart({"PDP": ([1, 2, 3], [0.6, 0.35, 0.2]), "greedy": ([1, 2, 3], [0.7, 0.5, 0.3])},
                           title="Regions not yielding", xlabel="radius r", ylabel="share", percent=True)},
    ]
    figures_2 = [
        {"title": "PR per victim", "caption": "one value shows as a point",
         "svg": violin_chart({"cnn": [0.9, 0.95, 0.7, 0.99, 0.85], "lstm": [0.8]}, title="PR_hat", ylabel="PR")},
        {"title": "Verdicts per radius", "caption": "",
         "svg": stacked_bar_chart(["1", "2", "3"], {"certified": [0.5, 0.3, 0.1], "unknown": [0.3, 0.4, 0.5],
                                                    "falsified": [0.2, 0.3, 0.4]},
                                  title="Verdicts", ylabel="share", percent=True)},
    ]
    attack = {
        "name": "attack", "title": f"Word-substitution attacks {evil}",
        "paper": f"Jin et al. (2020), Is BERT Really Robust? {evil}",
        "settings": {"recipe": "textfooler", "budget": 2000, "note": evil, "nested": {"k": [1, 2.5, None]}},
        "counts": {"units": 1200, "ok": 1180, "errors": 3, "budget_exhausted": 17},
        "headline": [
            {"label": f"clean accuracy {evil}", "value": 0.9123, "format": "%", "note": None},
            {"label": "accuracy under attack", "value": 0.123, "format": "%", "note": f"n = 1,200 {evil}"},
            {"label": "attack success rate", "value": None, "format": "%", "note": "nothing attacked"},
            {"label": "queries per example", "value": 3.14159, "format": "float", "note": None},
            {"label": "queries", "value": 1234567, "format": "int", "note": None},
            {"label": "recipe", "value": "textfooler", "format": "text", "note": None},
        ],
        "tables": [{"title": f"Per class {evil}", "columns": ["class", "accuracy", "n", f"col {evil}"],
                    "rows": [[evil, 0.91, 600, None], ["positive", None, 600, True]]}],
        "figures": figures,
        "examples": [
            {"id": "ex-1", "status": "succeeded", "label": "positive", "prediction_before": "positive",
             "prediction_after": "negative",
             "original": ["a", " ", "truly", " ", "wonderful", " ", "film", " ", evil],
             "perturbed": ["a", " ", "truly", " ", "marvellous", " ", "film", " ", evil + "!"],
             "changed": [4, 8], "note": f"1 word {evil}"},
            {"id": evil, "status": "failed", "label": evil, "prediction_before": "negative",
             "prediction_after": None, "original": ["dull", "and", "slow"], "perturbed": ["dull", "and", "slow"],
             "changed": [], "note": None},
        ],
        "errors": [{"id": "ex-9", "error": "VictimError", "message": f"model crashed {evil}"}],
        "risk": 0.42, "point": "42% of attacked examples flipped.",
    }
    radius = {
        "name": "radius", "title": "Robustness radius", "paper": "Yang et al. (2022)",
        "settings": {}, "counts": {"units": 50, "ok": 50, "errors": 0, "budget_exhausted": 0},
        "headline": [{"label": "certified at r = 1", "value": 0.3, "format": "%", "note": None}],
        "tables": [], "figures": figures_2, "examples": [], "errors": [], "risk": None, "point": None,
    }
    return {
        "schema": SCHEMA_VERSION, "textrobust_version": "0.1.0", "created_at": "2025-11-23T12:00:00+00:00",
        "title": f"Robustness audit {evil}",
        "victim": {"name": f"cnn-sst2 {evil}", "path": "/models/cnn-sst2",
                   "card": {"architecture": "cnn", "dataset": "sst2", "test_accuracy": 0.8512,
                            "parameters": 1234567, "seed": 0, "notes": evil}},
        "data": {"name": f"sst2 {evil}", "split": "test", "examples": 872, "label_names": ["negative", evil]},
        "verdict": {"level": "fair", "headline": f"Partly robust {evil}", "points": [f"point {evil}"]},
        "run": {"seconds": 12.5, "queries": 45678, "executor": "local", "workers": 2,
                "store": "/runs/a/store.sqlite", "resumed": False, "seed": 0},
        "analyses": [attack, radius],
    }


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return make_report()


@pytest.fixture(scope="module")
def page(report: dict[str, Any]) -> str:
    return render_html(report)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _start_tags(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(page)
    parser.close()
    return parser.tags


# ---- the package --------------------------------------------------------------------------------
def test_all_lists_the_public_names() -> None:
    # submodules are set on the package once imported
    submodules = {m.name for m in pkgutil.iter_modules(report_pkg.__path__)}
    public = {name for name in vars(report_pkg) if not name.startswith("_")} - {"annotations", *submodules}
    assert set(report_pkg.__all__) == public
    assert issubclass(ReportError, TextRobustError)


def test_import_loads_neither_jinja2_nor_matplotlib() -> None:
    code = ("import sys, textrobust.report; "
            "print(sorted(m for m in ('jinja2', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


# ---- escaping and self-containment --------------------------------------------------------------
def test_every_user_string_is_escaped(page: str) -> None:
    assert "<script" not in page.lower()
    assert "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&#34;quotes&#34;" in page
    assert "&amp;amp;" in page
    # every slot got the payload (the escaped form appears once per slot at least)
    assert page.count("&lt;script&gt;") >= 20


def test_only_allowed_tags_and_no_event_attributes(page: str) -> None:
    tags = _start_tags(page)
    assert {tag for tag, _ in tags} <= ALLOWED_TAGS
    images = 0
    for tag, attrs in tags:
        for name, value in attrs:
            assert not name.lower().startswith("on"), (tag, name, value)
        if tag == "img":
            images += 1
            src = dict(attrs)["src"] or ""
            assert src.startswith("data:image/svg+xml;base64,")
    assert images == 4


def test_page_is_self_contained(page: str) -> None:
    lowered = page.lower()
    for forbidden in ('src="http', "src='http", 'href="http', "href='http", "<link", "<script", "url(",
                      "@import", "<iframe", "<object", "<embed"):
        assert forbidden not in lowered, forbidden
    assert "Content-Security-Policy" in page


def test_layout_has_glance_sections_and_footer(page: str, report: dict[str, Any]) -> None:
    assert 'id="at-a-glance"' in page
    for section in report["analyses"]:
        assert f'<section class="panel analysis" id="analysis-{section["name"]}">' in page
        assert f'href="#analysis-{section["name"]}"' in page
    assert '<div class="verdict fair">' in page
    assert "<details class=\"settings\">" in page
    assert "<del>wonderful</del>" in page and "<ins>marvellous</ins>" in page
    assert "45,678" in page and "local (2 workers)" in page and "/runs/a/store.sqlite" in page
    assert "85.1%" in page  # the card's test accuracy


# ---- formatting ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "fmt", "expected"), [
    (None, "%", "n/a"), (None, "int", "n/a"), (None, "float", "n/a"), (math.nan, "float", "n/a"),
    (math.inf, "%", "n/a"), (0.123, "%", "12.3%"), (1.0, "%", "100.0%"), (0, "%", "0.0%"),
    (1234, "int", "1,234"), (1234.6, "int", "1,235"), (0, "int", "0"), (3.14159, "float", "3.142"),
    (0.0123456, "float", "0.0123"), (0.5, "float", "0.500"), (0.0, "float", "0"), (12345.678, "float", "12,345.678"),
    (7, "float", "7"), ("textfooler", "%", "textfooler"), (2, "text", "2"), (True, "text", "yes"),
])
def test_format_value(value: Any, fmt: str, expected: str) -> None:
    assert format_value(value, fmt) == expected


def test_none_is_na_never_zero(page: str) -> None:
    assert '<div class="v na">n/a</div>' in page            # headline value None
    assert '<td class=" na">n/a</td>' in page               # table cell None
    assert "12.3%" in page and "91.2%" in page and "1,234,567" in page and "3.142" in page
    assert "<del>" in page


# ---- validation ---------------------------------------------------------------------------------
def _broken(report: dict[str, Any], edit: Any) -> dict[str, Any]:
    bad = copy.deepcopy(report)
    edit(bad)
    return bad


@pytest.mark.parametrize(("edit", "path"), [
    (lambda r: r["analyses"][1]["counts"].pop("ok"), "analyses[1].counts.ok"),
    (lambda r: r.pop("title"), "title"),
    (lambda r: r["analyses"][0]["headline"][2].update(format="pct"), "analyses[0].headline[2].format"),
    (lambda r: r["analyses"][0]["tables"][0]["rows"][1].pop(), "analyses[0].tables[0].rows[1]"),
    (lambda r: r["analyses"][0]["examples"][0].update(changed=[99]), "analyses[0].examples[0].changed[0]"),
    (lambda r: r["analyses"][0].update(figure=[]), "analyses[0].figure"),
    (lambda r: r["run"].update(seconds=math.nan), "run.seconds"),
    (lambda r: r["run"].update(workers=True), "run.workers"),
    (lambda r: r["verdict"].update(level="great"), "verdict.level"),
    (lambda r: r["analyses"][1].update(name="attack"), "analyses[1].name"),
    (lambda r: r["analyses"][1].update(name="has space"), "analyses[1].name"),
    (lambda r: r["analyses"][0]["figures"][0].update(svg="not a picture"), "analyses[0].figures[0].svg"),
    (lambda r: r["data"].update(label_names="neg,pos"), "data.label_names"),
])
def test_validate_report_names_the_bad_key(report: dict[str, Any], edit: Any, path: str) -> None:
    bad = _broken(report, edit)
    for check in (validate_report, render_html):
        with pytest.raises(ReportError) as info:
            check(bad)
        assert f"'{path}'" in str(info.value)


def test_validate_report_rejects_another_schema(report: dict[str, Any]) -> None:
    with pytest.raises(ReportError, match=r"'schema'.*textrobust\.report/1"):
        validate_report({**report, "schema": "textrobust.report/2"})
    with pytest.raises(ReportError, match="'schema' is missing"):
        validate_report({k: v for k, v in report.items() if k != "schema"})
    with pytest.raises(ReportError, match="must be an object"):
        validate_report([report])


def test_optional_keys_may_be_left_out(report: dict[str, Any]) -> None:
    def strip(r: dict[str, Any]) -> None:
        del r["victim"]["card"], r["run"]["seed"], r["analyses"][0]["risk"], r["analyses"][0]["point"]
        del r["analyses"][0]["headline"][0]["note"], r["analyses"][0]["examples"][0]["prediction_after"]

    page = render_html(_broken(report, strip))
    assert "model card" in page


# ---- files --------------------------------------------------------------------------------------
def test_write_report_writes_both_files_and_round_trips(report: dict[str, Any], tmp_path: Path) -> None:
    with_nan = _broken(report, lambda r: r["analyses"][0]["headline"][0].update(value=math.nan))
    html_path, json_path = write_report(with_nan, tmp_path / "out")
    assert html_path == tmp_path / "out" / "report.html" and json_path == tmp_path / "out" / "report.json"
    text = json_path.read_text(encoding="utf-8")
    assert "NaN" not in text and text.startswith('{\n  "schema"')
    loaded = load_report(json_path)
    assert loaded["analyses"][0]["headline"][0]["value"] is None
    assert loaded["analyses"][0]["figures"][0]["svg"] == report["analyses"][0]["figures"][0]["svg"]
    assert list(loaded) == list(report)
    assert render_html(loaded) == html_path.read_text(encoding="utf-8")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html", "report.json"]
    write_report(report, tmp_path / "out")  # overwrites in place
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html", "report.json"]


def test_write_report_writes_nothing_for_an_invalid_report(report: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(ReportError):
        write_report({**report, "title": None}, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_load_report_errors(tmp_path: Path, report: dict[str, Any]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ReportError, match="not valid JSON"):
        load_report(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**report, "schema": "textrobust.report/0"}), encoding="utf-8")
    with pytest.raises(ReportError, match="textrobust.report/0"):
        load_report(other)
    with pytest.raises(ReportError, match="Cannot read"):
        load_report(tmp_path / "missing.json")


# ---- charts -------------------------------------------------------------------------------------
def test_charts_are_deterministic_svg() -> None:
    first = bar_chart(["a", "b $x$"], [1, 2], title="t", xlabel="x", ylabel="y")
    assert first == bar_chart(["a", "b $x$"], [1, 2], title="t", xlabel="x", ylabel="y")
    assert first.startswith("<?xml") and "<svg" in first and "<dc:date>" not in first


def test_charts_cope_with_small_and_empty_data() -> None:
    for svg in (violin_chart({"one": [0.5], "same": [1, 1], "empty": [], "gap": [None, 0.2, 0.4]}, title="v"),
                bar_chart([], [], title="nothing"), bar_chart(["a"], [None], title="n/a bar"),
                line_chart({}, title="no lines"), stacked_bar_chart([], {}, title="no stacks")):
        assert "<svg" in svg
    with pytest.raises(TextRobustError, match="one value per label"):
        bar_chart(["a", "b"], [1], title="t")


# ---- a real browser -----------------------------------------------------------------------------
def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    browser = shutil.which("chromium")
    assert browser is not None
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
               "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="headless Chromium is not installed (scripts/install-system.sh installs it)")
def test_chromium_renders_the_page_without_complaint(report: dict[str, Any], tmp_path: Path) -> None:
    html_path, _ = write_report(report, tmp_path / "out")
    url = html_path.resolve().as_uri()
    png = tmp_path / "shot.png"
    shot = _chromium(["--virtual-time-budget=2000", f"--screenshot={png}", "--window-size=1280,2000", url], tmp_path)
    assert png.is_file() and png.stat().st_size > 10_000, shot.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    complaints = [line for line in shot.stderr.splitlines()
                  if "Uncaught" in line or "CONSOLE" in line or "Refused to" in line]
    assert complaints == []
    dom = _chromium(["--dump-dom", url], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section in report["analyses"]:
        assert f'id="analysis-{section["name"]}"' in dom.stdout
    assert "<script" not in dom.stdout.lower()
