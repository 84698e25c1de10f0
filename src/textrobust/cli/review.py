"""``textrobust review RUN``: a person confirms or rejects each finding, and the figures follow.

Issue 40. Without options it serves the review page (:mod:`textrobust.report.review_server`)
on 127.0.0.1 with a random token, prints the address and opens the browser where a graphical
session is (``--no-browser`` skips it); Ctrl-C stops it and rebuilds the report with the reviewed figures. ``--judge`` judges
without the page (for scripts); ``--report``
only rebuilds the report and ``summary.json`` (no server); ``--export FILE`` writes the
judgements as labelled substitutions (:mod:`textrobust.validity.overrides`) for
``--labelled``.
"""

from __future__ import annotations

import getpass
import os
import sys
import threading
from pathlib import Path
from typing import Annotated, Optional

import typer

from textrobust.cli.common import console, fail
from textrobust.errors import TextRobustError

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("review")(review_cmd)


def _default_reviewer() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in this environment
        return "reviewer"


def review_cmd(
    run_dir: Annotated[Path, typer.Argument(metavar="RUN", help="A run folder (the --out of `textrobust audit` or "
                                                                "an analysis command).")],
    reviewer: Annotated[Optional[str], typer.Option("--reviewer", metavar="NAME", help="Your name, stored with each judgement "
                                                                       "(default: your login name).")] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The local port (default 0: any free "
                                                                      "one).")] = 0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the address only; do not open a "
                                                                  "browser.")] = False,
    export: Annotated[Optional[Path], typer.Option("--export", metavar="FILE", help="Write the judgements as labelled "
                                                   "substitutions (the format of the shipped labelled set; "
                                                   "--labelled reads it) and exit.")] = None,
    report: Annotated[bool, typer.Option("--report", help="Rebuild report.html, report.json and summary.json "
                                                          "with the reviewed figures and exit.")] = False,
    judge: Annotated[Optional[list[str]], typer.Option("--judge", metavar="ITEM=VERDICT", help="Judge without the page, then exit: "
                     "ITEM=valid, ITEM=skip or ITEM=invalid:REASON (ITEM: a finding's id as the page shows it, "
                     "or 'next', your first finding not yet judged); repeatable, applied in order.")] = None,
) -> None:
    """Confirm or reject each finding of a run in the browser (keys v, x, s, u); the report follows."""
    try:
        if judge or export is not None or report:
            if judge:
                _judge(run_dir, reviewer or _default_reviewer(), judge)
            if export is not None:
                _export(run_dir, export)
            if report:
                _report(run_dir)
            return
        _serve(run_dir, reviewer or _default_reviewer(), port, not no_browser)
    except TextRobustError as exc:
        fail(exc)


def _judge(run_dir: Path, reviewer: str, judgements: list[str]) -> None:
    from textrobust.errors import ConfigError
    from textrobust.report.review_server import ReviewSession

    session = ReviewSession(run_dir, reviewer)
    for given in judgements:
        item, sep, said = given.partition("=")
        verdict, _, reason = said.partition(":")
        if not sep or not item or verdict not in ("valid", "invalid", "skip") or (reason and verdict != "invalid"):
            raise ConfigError(f"The '--judge' option reads ITEM=valid, ITEM=skip or ITEM=invalid:REASON (only "
                              f"an invalid judgement takes a reason). Got {given!r} instead.")
        if item == "next":
            found = session.next_item(session.current())
            if found is None:
                console.print(f"--judge {given}: every finding already has your judgement", highlight=False)
                continue
            item = found
        judged = session.judge(item, verdict, reason or None)
        console.print(f"judged: {judged.item} {judged.verdict.value}" + (f" ({judged.reason})" if judged.reason
                                                                         else "") + f" by {judged.reviewer}",
                      highlight=False)


def _export(run_dir: Path, path: Path) -> None:
    from textrobust.report.reviewed import run_findings
    from textrobust.store import RunStore
    from textrobust.validity.overrides import review_labels, write_labels
    from textrobust.validity.reviews import ReviewLog

    found = run_findings(run_dir)
    with RunStore(run_dir / "store.sqlite") as store:
        current = ReviewLog(store).current(found.run_ids)
    rows, left_out = review_labels(found.findings, current, found.data_name)
    written = write_labels(rows, path, origin=str(run_dir))
    valid = sum(row.valid for row in rows)
    console.print(f"labels: {path} ({written} substitution(s): {valid} valid, {written - valid} invalid, from "
                  f"{len({key[0] for key in current})} judged finding(s) of {len(found)})", highlight=False)
    if left_out:
        console.print(f"left out: {left_out} swap(s) whose sentence holds a tab or a line break", highlight=False)


def _report(run_dir: Path) -> None:
    from textrobust.audit import rebuild_report

    html, data = rebuild_report(run_dir)
    console.print(f"report: {html}   data: {data}   summary: {run_dir / 'summary.json'}", highlight=False)


def _graphical() -> bool:
    """Whether a graphical browser can open here (a text-mode one would take over the terminal)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _open_browser(url: str) -> None:
    import webbrowser

    try:
        webbrowser.open(url)
    except webbrowser.Error:
        pass  # no browser on this machine: the address is printed


def _serve(run_dir: Path, reviewer: str, port: int, browser: bool) -> None:
    from textrobust.report.review_server import ReviewServer, ReviewSession

    session = ReviewSession(run_dir, reviewer)
    server = ReviewServer(session, port)
    console.print(f"review: {len(session.findings)} finding(s) of {run_dir}, reviewer {reviewer!r}", highlight=False)
    console.print(f"open: {server.url}", highlight=False, soft_wrap=True)
    console.print(f"port: {server.port}   (Ctrl-C stops the server and rebuilds the report; every judgement "
                  "is already saved)", highlight=False)
    opener = threading.Thread(target=_open_browser, args=(server.url,), daemon=True) if browser and _graphical() \
        else None
    if opener is not None:  # beside the server: a browser that waits for the page never holds it up
        opener.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped: the judgements are in the run store", highlight=False)
    finally:
        server.server_close()
        if opener is not None:
            opener.join(timeout=1.0)
    try:
        _report(run_dir)
    except TextRobustError as exc:
        console.print(f"report not rebuilt: {exc}", highlight=False)
