"""The review page in a real browser (issue 40): headless Chromium driven by Playwright.

Three findings labelled with the keys, a reload that keeps them, undo, a request without
the token refused, hostile text shown as text without breaking the layout, and the report
showing the reviewed figures. Skipped where the system's chromium (scripts/install-system.sh)
or the playwright package (the dev extra; it downloads no browser) is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from review_fixtures import HOSTILE, make_run, serving
from typer.testing import CliRunner

from textrobust.cli.app import app
from textrobust.report.review_server import ReviewServer
from textrobust.store import RunStore
from textrobust.validity.reviews import ReviewLog

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.slow  # a browser starts for each test (a few seconds)


@pytest.fixture
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/install-system.sh installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ReviewServer]:
    with serving(make_run(tmp_path / "run"), "ann") as server:
        yield server


def _press(page: Any, key: str) -> None:
    with page.expect_navigation():
        page.keyboard.press(key)


def test_label_three_with_the_keys_reload_and_see_them_kept(browser: Any, served: ReviewServer) -> None:
    page = browser.new_page(viewport={"width": 900, "height": 900})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(served.url)
    assert page.text_content("#progress") == "0 / 5"
    assert page.get_attribute("#finding", "data-item") == "attack/ex-0"
    _press(page, "v")
    assert page.text_content("#progress") == "1 / 5"
    page.keyboard.press("x")  # no reason yet: the page asks for one and stays
    assert "Pick a reason first" in page.text_content("#message")
    page.keyboard.press("2")  # antonym
    _press(page, "x")
    _press(page, "s")
    assert page.text_content("#progress") == "3 / 5"
    page.reload()
    assert page.text_content("#progress") == "3 / 5"
    assert page.get_attribute("#finding", "data-item") == "attack/ex-3"
    with RunStore(served.session.store_path) as store:
        kept = [(j.item, j.verdict.value, j.reason) for j in ReviewLog(store).judgements()]
    assert kept == [("attack/ex-0", "valid", None), ("attack/ex-1", "invalid", "antonym"),
                    ("attack/ex-2", "skip", None)]
    _press(page, "u")  # undo the skip: back to that finding
    assert page.get_attribute("#finding", "data-item") == "attack/ex-2"
    assert page.text_content("#progress") == "2 / 5"
    assert dialogs == []


def test_a_request_without_the_token_is_refused(browser: Any, served: ReviewServer) -> None:
    page = browser.new_page()
    response = page.goto(f"http://127.0.0.1:{served.port}/")
    assert response is not None and response.status == 403
    assert "needs the address printed" in page.text_content("body")


def test_hostile_text_is_text_and_keeps_the_layout(browser: Any, served: ReviewServer) -> None:
    page = browser.new_page(viewport={"width": 800, "height": 900})
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(served.url + "&item=attack%2Fex-3")
    assert page.text_content("#original") == HOSTILE  # shown as text, every character
    assert page.evaluate("document.querySelectorAll('#finding script').length") == 0
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width}"
    box = page.locator("#original").bounding_box()
    assert box is not None and box["x"] + box["width"] <= 800
    assert page.evaluate("getComputedStyle(document.querySelector('#original')).unicodeBidi") == "isolate"
    assert dialogs == []


def test_the_report_shows_the_reviewed_figures(browser: Any, served: ReviewServer) -> None:
    page = browser.new_page()
    page.goto(served.url)
    _press(page, "v")
    page.keyboard.press("3")
    _press(page, "x")
    folder = served.session.folder
    result = CliRunner().invoke(app, ["review", str(folder), "--report"])
    assert result.exit_code == 0, result.output
    page.goto((folder / "report.html").as_uri())
    reviewed = page.locator(".reviewed").first
    assert "2 of 4 findings judged" in reviewed.text_content()
    row = reviewed.locator("tbody tr").first.text_content()
    assert "accuracy under attack" in row and "16.7%" in row and "33.3% .. 66.7%" in row  # automatic, interval


def test_pr_samples_are_judged_with_the_same_keys_and_the_report_follows(browser: Any, tmp_path: Path) -> None:
    from test_pr_samples import RECORDS, _pr_run

    with serving(_pr_run(tmp_path / "run", RECORDS), "ann") as served:
        page = browser.new_page()
        page.goto(served.url)
        assert page.text_content("#progress") == "0 / 5"
        assert page.get_attribute("#finding", "data-item") == "pr/A/1"
        assert "PR misclassified sample" in page.text_content("#finding")
        assert page.text_content("#perturbed ins") == "bad"  # the swap marked
        page.keyboard.press("2")  # antonym
        _press(page, "x")
        _press(page, "v")  # pr/A/2 confirmed: A is falsified
        assert page.text_content("#progress") == "2 / 5"
        with RunStore(served.session.store_path) as store:
            kept = [(j.item, j.verdict.value, j.reason) for j in ReviewLog(store).judgements()]
        assert kept == [("pr/A/1", "invalid", "antonym"), ("pr/A/2", "valid", None)]
        folder = served.session.folder
    assert CliRunner().invoke(app, ["review", str(folder), "--report"]).exit_code == 0
    page.goto((folder / "report.html").as_uri())
    reviewed = page.locator(".reviewed").first
    assert "2 of 5 findings judged" in reviewed.text_content()
    row = reviewed.locator("tbody tr").first.text_content()
    assert "falsified (a misclassified text found in Omega_r)" in row and "80.0%" in row and "20.0% .. 80.0%" in row
