"""The review page: a local server that shows one finding at a time and stores each judgement.

Issue 40 (``textrobust review RUN``). The server listens on 127.0.0.1 only, on the port
given (0: one the system picks), and answers only requests that carry its random token
(``?token=`` on a page, a ``token`` field in a form); any other request gets 403, as does a
request whose ``Host`` is not the loopback address (a page from elsewhere cannot reach it
through a name that resolves to 127.0.0.1). The page is rendered by Jinja2 with
autoescaping (a finding's text is user data); its one inline script carries a fresh nonce
that the Content-Security-Policy requires, so nothing else on the page can run.

Each judgement is written to the run store (:class:`~textrobust.validity.reviews.ReviewLog`)
before the answer is sent, on a connection opened for that request: killing the server,
even with ``kill -9``, loses nothing, and the next session shows the first finding the
reviewer has not judged. One request at a time (HTTP/1.0, a connection per request).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from textrobust.errors import ConfigError, MissingDependencyError, TextRobustError
from textrobust.report.html import _environment  # one Jinja2 environment for every page
from textrobust.report.reviewed import RunFindings, run_findings
from textrobust.store import RunStore
from textrobust.text import Text
from textrobust.validity.reviews import NEIGHBOUR_REASON, REASONS, Finding, Judgement, ReviewLog, Status, Verdict, agreement, statuses

__all__ = ["ReviewServer", "ReviewSession", "render_review"]

#: The kind of a second-order finding (:func:`textrobust.report.reviewed.findings`): the one
#: that takes the neighbour reason.
SECOND_ORDER = "second-order finding"
#: The largest form a request may send (a judgement is a few hundred bytes).
MAX_BODY = 64 * 1024


def _segments(text: Text, changed: set[int]) -> list[dict[str, Any]]:
    from textrobust.analyses.sections import tokens

    parts, where = tokens(text)
    marked = {where[p] for p in changed if p in where}
    return [{"text": part, "changed": i in marked} for i, part in enumerate(parts)]


def _finding_view(finding: Finding, index: int) -> dict[str, Any]:
    first = {s.position for s in finding.swaps if s.kind != "patch"}
    patch = {s.position for s in finding.swaps if s.kind == "patch"}
    labels = {"second-order finding": ("x0, the test sentence", "its natural neighbour x~0 (words the fill-in changed "
                                                                  "marked)"),
              "PR misclassified sample": ("original (classified right)",
                                          "a misclassified text drawn from its perturbation space (each swap marked)")}
    before, after = labels.get(finding.kind, ("original", "perturbed (each swap marked)"))
    question = ("Valid when the neighbour reads as a sentence a person could write and the patch keeps its meaning "
                "(so the flip is a real second-order failure)." if finding.kind == "second-order finding" else
                "Valid when every swap keeps the meaning in this sentence (so the model should not have changed "
                "its answer).")
    return {"item": finding.item, "kind": finding.kind, "index": index, "question": question,
            "before_label": before, "after_label": after,
            "original": _segments(finding.original, first), "perturbed": _segments(finding.perturbed, first),
            "patched": None if finding.patched is None else _segments(finding.patched, patch),
            "lines": list(finding.lines),
            "swaps": [{"position": s.position, "before": s.before, "after": s.after, "kind": s.kind}
                      for s in finding.swaps]}


class ReviewSession:
    """One reviewer's review of one run folder: its findings, read once, and the
    judgements, read from the store on every call (another session may write too)."""

    def __init__(self, folder: str | Path, reviewer: str, *, found: RunFindings | None = None) -> None:
        self.folder = Path(folder)
        self.store_path = self.folder / "store.sqlite"
        self.found = found if found is not None else run_findings(self.folder)
        self.reviewer = reviewer.strip()
        with RunStore(self.store_path) as store:  # the table exists, and the name is checked
            ReviewLog(store)
        self.by_item = {f.item: f for f in self.found.findings}

    @property
    def findings(self) -> list[Finding]:
        return self.found.findings

    def current(self) -> dict[tuple[str, str], Judgement]:
        with RunStore(self.store_path) as store:
            return ReviewLog(store).current(self.found.run_ids)

    def check(self, item: str | None, verdict: str, reason: str | None = None, blamed: Sequence[int] = ()) -> None:
        """Refuse (:class:`ConfigError`) a judgement :meth:`judge` would refuse, storing
        nothing (``item`` None: any finding, as ``next`` picks one later)."""
        finding = None if item is None else self.by_item.get(item)
        if item is not None and finding is None:
            raise ConfigError(f"No finding {item!r} in this run's review.")
        if verdict not in (Verdict.VALID, Verdict.INVALID, Verdict.SKIP):
            raise ConfigError(f"A judgement is valid, invalid or skip. Got {verdict!r} instead.")
        if verdict == Verdict.INVALID:
            if reason not in REASONS and reason != NEIGHBOUR_REASON:
                said = "None was given." if reason is None else f"Got {reason!r} instead."
                raise ConfigError(f"An 'invalid' judgement needs a reason, one of {', '.join(REASONS)} (or "
                                  f"{NEIGHBOUR_REASON} for a second-order finding whose neighbour is not natural). "
                                  + said)
            if reason == NEIGHBOUR_REASON and finding is not None and finding.kind != SECOND_ORDER:
                raise ConfigError(f"The reason {NEIGHBOUR_REASON!r} (the neighbour is not natural) is for a "
                                  f"second-order finding; {item!r} is a {finding.kind}: pick another reason.")
        elif reason is not None or blamed:
            raise ConfigError(f"Only an 'invalid' judgement takes a reason or blamed swaps. Got {verdict!r} with "
                              f"{reason!r} and {list(blamed)}.")
        if finding is not None:
            known = {s.position for s in finding.swaps}
            if any(p not in known for p in blamed):
                raise ConfigError(f"The blamed positions {list(blamed)} are not swaps of {item!r} (its swaps are at "
                                  f"{sorted(known)}).")

    def judge(self, item: str, verdict: str, reason: str | None = None, blamed: Sequence[int] = ()) -> Judgement:
        """Store this reviewer's judgement of ``item`` (committed when this returns); a
        judgement :meth:`check` refuses stores nothing."""
        self.check(item, verdict, reason if verdict == Verdict.INVALID else None,
                   blamed if verdict == Verdict.INVALID else ())
        finding = self.by_item[item]
        with RunStore(self.store_path) as store:
            return ReviewLog(store).record(finding.run_id, item, self.reviewer, verdict,
                                           reason if verdict == Verdict.INVALID else None,
                                           blamed if verdict == Verdict.INVALID else ())

    def undo(self) -> Judgement | None:
        """Take back this reviewer's last judgement still standing."""
        with RunStore(self.store_path) as store:
            return ReviewLog(store).undo(self.reviewer, self.found.run_ids)

    def next_item(self, current: Mapping[tuple[str, str], Judgement]) -> str | None:
        """The first finding this reviewer has not judged (None when all are)."""
        return next((f.item for f in self.findings if (f.item, self.reviewer) not in current), None)

    def page(self, token: str, nonce: str, item: str | None = None, message: str = "") -> str:
        """The page for ``item`` (default: the next finding to judge)."""
        current = self.current()
        if item is None or item not in self.by_item:
            item = self.next_item(current)
        done = sum(1 for f in self.findings if (f.item, self.reviewer) in current)
        status = statuses(current)
        counts = {s.value: sum(status.get(f.item, Status.UNREVIEWED) is s for f in self.findings) for s in Status}
        agreed = agreement(current, [f.item for f in self.findings])
        if agreed.share is None:
            said = "no finding judged by two reviewers yet"
        else:
            said = f"{agreed.share:.0%} on {agreed.items} finding(s) judged by two or more"
            if agreed.kappa is not None:
                said += f", Cohen's kappa {agreed.kappa:.2f}"
        finding = view = None
        mine = None
        others: list[dict[str, Any]] = []
        if item is not None:
            finding = self.by_item[item]
            view = _finding_view(finding, self.findings.index(finding) + 1)
            for (judged, who), j in sorted(current.items(), key=lambda pair: pair[1].seq):
                if judged != item:
                    continue
                row = {"reviewer": who, "verdict": j.verdict.value, "reason": j.reason}
                if who == self.reviewer:
                    mine = row
                else:
                    others.append(row)
        reasons = REASONS + ((NEIGHBOUR_REASON,) if finding is not None and finding.kind == SECOND_ORDER else ())
        items = [{"item": f.item, "status": status.get(f.item, Status.UNREVIEWED).value,
                  "mine": current[(f.item, self.reviewer)].verdict.value if (f.item, self.reviewer) in current else ""}
                 for f in self.findings]
        return render_review(folder=str(self.folder), reviewer=self.reviewer, token=token, nonce=nonce,
                             progress={"done": done, "total": len(self.findings)}, finding=view, mine=mine,
                             others=others, reasons=reasons, message=message, counts=counts, agreement=said,
                             items=items)


def render_review(**page: Any) -> str:
    """The review page (``templates/review.html.j2``, autoescaped)."""
    return str(_environment().get_template("review.html.j2").render(**page))


class ReviewServer(HTTPServer):
    """The review page for ``session`` on 127.0.0.1:``port`` (0: a free one), guarded by a
    random token (:attr:`token`); :attr:`url` is the address to open."""

    def __init__(self, session: ReviewSession, port: int = 0) -> None:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ConfigError(f"The '--port' option must be a port number from 0 to 65535. Got {port!r} instead.")
        self.session = session
        self.token = secrets.token_urlsafe(24)
        try:
            super().__init__(("127.0.0.1", port), _Handler)
        except OSError as exc:  # the port is taken (or not ours to take)
            raise ConfigError(f"The '--port' option {port}: cannot listen on 127.0.0.1:{port} "
                              f"({exc.strerror or exc}); another program may be using it. Give another --port, "
                              "or leave it out (0: any free port).") from None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?{urlencode({'token': self.token})}"


def _first(values: Mapping[str, list[str]], key: str) -> str | None:
    """The first value of ``key`` in a parsed query or form, or None."""
    found = values.get(key)
    return found[0] if found else None


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer
    server_version = "textrobust-review"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return  # quiet: the terminal shows the address and the reviewer's progress, not each request

    # ---- guards ------------------------------------------------------------------------------------
    def _allowed(self, token: str | None) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host not in ("127.0.0.1", "localhost"):
            return False
        return token is not None and secrets.compare_digest(token.encode("utf-8", "replace"),
                                                            self.server.token.encode("ascii"))

    def _refuse(self) -> None:
        self._send(HTTPStatus.FORBIDDEN, "Forbidden: this review page needs the address printed by "
                                         "`textrobust review` (with its token).\n", "text/plain; charset=utf-8")

    def _send(self, status: HTTPStatus, body: str, kind: str = "text/html; charset=utf-8", nonce: str = "") -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; "
                         f"frame-ancestors 'none'; script-src 'nonce-{nonce}'" if nonce else "default-src 'none'")
        self.end_headers()
        self.wfile.write(data)

    def _redirect(self, item: str | None = None) -> None:
        query = {"token": self.server.token, **({} if item is None else {"item": item})}
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", "/?" + urlencode(query))
        self.send_header("Content-Length", "0")
        self.end_headers()

    # ---- requests ----------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if not self._allowed(_first(query, "token")):
            return self._refuse()
        if url.path != "/":
            return self._send(HTTPStatus.NOT_FOUND, "Not found.\n", "text/plain; charset=utf-8")
        nonce = secrets.token_urlsafe(16)
        page = self.server.session.page(self.server.token, nonce, _first(query, "item"))
        self._send(HTTPStatus.OK, page, nonce=nonce)

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            return self._send(HTTPStatus.BAD_REQUEST, "Bad request.\n", "text/plain; charset=utf-8")
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
        if not self._allowed(_first(form, "token")):
            return self._refuse()
        session = self.server.session
        path = urlsplit(self.path).path
        if path == "/undo":
            undone = session.undo()
            return self._redirect(None if undone is None else undone.item)
        if path != "/judge":
            return self._send(HTTPStatus.NOT_FOUND, "Not found.\n", "text/plain; charset=utf-8")
        item = (form.get("item") or [""])[0]
        verdict = (form.get("verdict") or [""])[0]
        reason = _first(form, "reason")
        try:
            blamed = [int(p) for p in form.get("blamed", [])]
            session.judge(item, verdict, reason, blamed)
        except (ValueError, TextRobustError) as exc:
            nonce = secrets.token_urlsafe(16)
            message = str(exc) if isinstance(exc, TextRobustError) else "The blamed positions must be numbers."
            return self._send(HTTPStatus.BAD_REQUEST, session.page(self.server.token, nonce, item or None, message),
                              nonce=nonce)
        self._redirect()
