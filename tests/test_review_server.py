"""The review page's server (issue 40): the token, the judgements it stores, a second reviewer,
and nothing lost when the server is killed with ``kill -9`` mid-review."""

from __future__ import annotations

import contextlib
import html
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from review_fixtures import HOSTILE, make_run, serving

from textrobust.report.review_server import ReviewServer
from textrobust.store import RunStore
from textrobust.validity.reviews import ReviewLog, Verdict


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("review-server") / "run")


@pytest.fixture
def run(base_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(base_run, tmp_path / "run"))


@pytest.fixture
def server(run: Path) -> Iterator[ReviewServer]:
    with serving(run, "ann") as served:
        yield served


def _request(port: int, method: str, path: str, body: dict[str, str | list[str]] | None = None,
             host: str | None = None) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = None if body is None else urlencode(body, doseq=True)
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
    if host is not None:
        headers["Host"] = host
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    text = response.read().decode("utf-8")
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


def _page(server: ReviewServer, **query: str) -> str:
    status, _, text = _request(server.port, "GET", "/?" + urlencode({"token": server.token, **query}))
    assert status == 200
    return text


def _progress(page: str) -> str:
    found = re.search(r'id="progress">([^<]+)<', page)
    assert found is not None
    return found.group(1)


def _item(page: str) -> str:
    found = re.search(r'data-item="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def test_every_request_needs_the_token_and_a_loopback_host(server: ReviewServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    assert _request(server.port, "GET", "/")[0] == 403
    assert _request(server.port, "GET", "/?token=wrong")[0] == 403
    assert _request(server.port, "GET", f"/?token={server.token}", host="evil.example:80")[0] == 403
    assert _request(server.port, "POST", "/judge", {"item": "attack/ex-0", "verdict": "valid"})[0] == 403
    assert _request(server.port, "POST", "/undo", {"token": "nope"})[0] == 403
    status, headers, page = _request(server.port, "GET", f"/?token={server.token}")
    assert status == 200
    nonce = re.search(r"script-src 'nonce-([^']+)'", headers["content-security-policy"])
    assert nonce is not None and f'<script nonce="{nonce.group(1)}">' in page
    assert _request(server.port, "GET", f"/other?token={server.token}")[0] == 404
    with RunStore(server.session.store_path) as store:
        assert ReviewLog(store).judgements() == []  # nothing refused was stored


def test_judging_stores_at_once_and_the_page_moves_on(server: ReviewServer) -> None:
    page = _page(server)
    assert _progress(page) == "0 / 5" and _item(page) == "attack/ex-0"
    assert "evidence: good -&gt; decent" in page  # the validated source's evidence for the swap
    assert "proposed by wordnet, cosine 0.71, causal LM change -1.25, WordNet sense 0, verdict kept" in page
    status, headers, _ = _request(server.port, "POST", "/judge",
                                  {"token": server.token, "item": "attack/ex-0", "verdict": "valid"})
    assert status == 303 and headers["location"].startswith("/?token=")
    with RunStore(server.session.store_path) as store:
        [j] = ReviewLog(store).judgements()
    assert (j.item, j.reviewer, j.verdict) == ("attack/ex-0", "ann", Verdict.VALID)
    page = _page(server)
    assert _progress(page) == "1 / 5" and _item(page) == "attack/ex-1"
    status, _, page = _request(server.port, "POST", "/judge",
                               {"token": server.token, "item": "attack/ex-1", "verdict": "invalid"})
    assert status == 400 and "needs a reason" in page
    _request(server.port, "POST", "/judge", {"token": server.token, "item": "attack/ex-1", "verdict": "invalid",
                                             "reason": "sense", "blamed": ["4"]})
    status, headers, _ = _request(server.port, "POST", "/undo", {"token": server.token})
    assert status == 303 and "item=attack%2Fex-1" in headers["location"]
    assert _progress(_page(server)) == "1 / 5"
    page = _page(server, item="attack/ex-0")
    assert 'id="mine">Your judgement: valid' in page


def test_hostile_text_is_escaped(server: ReviewServer) -> None:
    page = _page(server, item="attack/ex-3")
    original = re.search(r'<div class="text" id="original">(.*?)</div>', page)
    assert original is not None and "<script" not in original.group(1) and "&lt;" in original.group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", original.group(1))) == HOSTILE  # every character shown, as text
    assert page.count("<script") == 1  # the page's own script, nothing from the finding
    assert "\u202e" in page and "overflow-wrap: anywhere" in page and "unicode-bidi: isolate" in page


def test_two_reviewers_at_once_are_both_kept_and_their_agreement_shown(run: Path) -> None:
    """Two sessions on the same run at the same time (two servers, one store)."""
    with contextlib.ExitStack() as stack:
        ann, bob = (stack.enter_context(serving(run, name)) for name in ("ann", "bob"))
        _request(ann.port, "POST", "/judge", {"token": ann.token, "item": "attack/ex-0", "verdict": "valid"})
        assert _item(_page(bob)) == "attack/ex-0"  # bob's own progress
        _request(bob.port, "POST", "/judge", {"token": bob.token, "item": "attack/ex-0", "verdict": "invalid",
                                              "reason": "antonym"})
        _request(ann.port, "POST", "/judge", {"token": ann.token, "item": "attack/ex-1", "verdict": "valid"})
        _request(bob.port, "POST", "/judge", {"token": bob.token, "item": "attack/ex-1", "verdict": "valid"})
        page = _page(bob, item="attack/ex-0")
        assert "<bdi>ann</bdi>: valid" in page and "50% on 2 finding(s) judged by two or more" in page
        assert "1 confirmed, 0 rejected, 1 disputed" in page
        assert _progress(_page(ann)) == _progress(_page(bob)) == "2 / 5"
    with RunStore(run / "store.sqlite") as store:
        assert sorted((j.item, j.reviewer) for j in ReviewLog(store).judgements()) == [
            ("attack/ex-0", "ann"), ("attack/ex-0", "bob"), ("attack/ex-1", "ann"), ("attack/ex-1", "bob")]


@pytest.mark.slow  # starts the command line in a process of its own
def test_kill_9_mid_review_loses_nothing_and_the_next_session_resumes(run: Path) -> None:
    command = [sys.executable, "-c", "from textrobust.cli.app import main; main()", "review", str(run),
               "--no-browser", "--reviewer", "ann"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env={**os.environ, "COLUMNS": "400"})
    try:
        assert child.stdout is not None
        url = ""
        deadline = time.monotonic() + 120
        while not url and time.monotonic() < deadline:
            line = child.stdout.readline()
            if line.startswith("open: "):
                url = line.split("open: ", 1)[1].strip()
        assert url, "the server printed no address"
        parts = urlsplit(url)
        port, token = int(parts.port or 0), parts.query.split("token=", 1)[1]
        for item, verdict, reason in (("attack/ex-0", "valid", None), ("attack/ex-1", "invalid", "grammar")):
            form = {"token": token, "item": item, "verdict": verdict, **({"reason": reason} if reason else {})}
            assert _request(port, "POST", "/judge", form)[0] == 303
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with RunStore(run / "store.sqlite") as store:
        kept = [(j.item, j.verdict.value, j.reason) for j in ReviewLog(store).judgements()]
    assert kept == [("attack/ex-0", "valid", None), ("attack/ex-1", "invalid", "grammar")]
    with serving(run, "ann") as server:
        page = _page(server)
        assert _progress(page) == "2 / 5" and _item(page) == "attack/ex-2"
