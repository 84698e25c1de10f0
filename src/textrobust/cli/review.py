"""``textrobust review RUN``: a person confirms or rejects each finding, and the figures follow.

Issue 40. Without options it serves the review page (:mod:`textrobust.report.review_server`)
on 127.0.0.1 with a random token, prints the address and opens the browser where a graphical
session is (``--no-browser`` skips it); Ctrl-C or SIGTERM stops it and rebuilds the report
and ``summary.json`` with the reviewed figures. ``--judge`` judges without the page (for
scripts), every judgement checked before the first is stored, then rebuilds them too;
``--report`` only rebuilds them (no server); ``--export FILE`` writes the judgements as
labelled substitutions (:mod:`textrobust.validity.overrides`) for ``--labelled``, through
the guard of ``textrobust export`` (:func:`textrobust.audit.export.check_target`: never a
file of a run, another existing file only with ``--force``). A judgement stored any other
way (the page of a server killed with ``kill -9``, Python) leaves ``summary.json`` behind
the store: ``textrobust gate`` then refuses it, naming ``review RUN --report``.
"""

from __future__ import annotations

import getpass
import os
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from textrobust.cli.common import Terminated, console, fail
from textrobust.errors import ConfigError, TextRobustError

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
    judge: Annotated[Optional[list[str]], typer.Option("--judge", metavar="ITEM=VERDICT", help="Judge without the page, then "
                     "rebuild the report and summary.json and exit: ITEM=valid, ITEM=skip or ITEM=invalid:REASON, "
                     "with @POS,POS... to blame only those swaps as the page's ticks do (ITEM: a finding's id as "
                     "the page shows it, or 'next', your first finding not yet judged; REASON 'neighbour' for a "
                     "second-order finding whose neighbour is not natural); repeatable, all checked first, then "
                     "applied in order.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Let --export replace a file that exists (a run's own "
                                                        "files, store.sqlite, summary.json, report.*, never).")
                     ] = False,
) -> None:
    """Confirm or reject each finding of a run in the browser (keys v, x, s, u); the report follows."""
    try:
        if judge or export is not None or report:
            if export is not None:  # the target first: a refused --export stores no judgement either
                _check_export(run_dir, export, force)
            if judge:
                _judge(run_dir, reviewer or _default_reviewer(), judge)
            if export is not None:
                _export(run_dir, export, force)
            if report or judge:  # every judgement reaches the report, summary.json and the gate
                _report(run_dir)
            return
        _serve(run_dir, reviewer or _default_reviewer(), port, not no_browser)
    except TextRobustError as exc:
        fail(exc)


def _parse_judgement(given: str) -> tuple[str, str, str | None, tuple[int, ...]]:
    """``ITEM=VERDICT[:REASON][@POS,POS...]`` as (item, verdict, reason, blamed positions)."""
    item, sep, said = given.partition("=")
    said, at, where = said.partition("@")
    verdict, colon, reason = said.partition(":")
    blamed: tuple[int, ...] = ()
    try:
        blamed = tuple(int(p) for p in where.split(",")) if at else ()
    except ValueError:
        at = "bad"
    if (not sep or not item or verdict not in ("valid", "invalid", "skip") or (colon and verdict != "invalid")
            or at == "bad" or (at and (verdict != "invalid" or not blamed))):
        raise ConfigError(f"The '--judge' option reads ITEM=valid, ITEM=skip or ITEM=invalid:REASON, with "
                          "@POS,POS... after the reason to blame only those swaps (only an invalid judgement "
                          f"takes a reason and blamed swaps). Got {given!r} instead.")
    return item, verdict, reason if colon else None, blamed


def _judge(run_dir: Path, reviewer: str, judgements: list[str]) -> None:
    from textrobust.report.review_server import ReviewSession

    session = ReviewSession(run_dir, reviewer)
    parsed = [(given, *_parse_judgement(given)) for given in judgements]
    for given, item, verdict, reason, blamed in parsed:  # every one checked before the first is stored
        try:
            session.check(None if item == "next" else item, verdict, reason, blamed)
        except ConfigError as exc:
            raise ConfigError(f"--judge {given}: {exc} Nothing was stored.") from None
    for given, item, verdict, reason, blamed in parsed:
        if item == "next":
            found = session.next_item(session.current())
            if found is None:
                console.print(f"--judge {given}: every finding already has your judgement", highlight=False)
                continue
            item = found
        judged = session.judge(item, verdict, reason, blamed)
        console.print(f"judged: {judged.item} {judged.verdict.value}" + (f" ({judged.reason})" if judged.reason
                                                                         else "")
                      + (f", blamed word(s) {', '.join(map(str, judged.blamed))}" if judged.blamed else "")
                      + f" by {judged.reviewer}", highlight=False)


def _check_export(run_dir: Path, path: Path, force: bool) -> None:
    """Refuse an --export target as ``textrobust export`` refuses its --to (one guard)."""
    from textrobust.audit.export import check_target, run_files

    check_target(path, force=force, protected=run_files(run_dir), option="--export", example="labels.tsv")


def _export(run_dir: Path, path: Path, force: bool = False) -> None:
    from textrobust.report.reviewed import run_findings
    from textrobust.store import RunStore
    from textrobust.validity.overrides import review_labels, write_labels
    from textrobust.validity.reviews import ReviewLog, Verdict

    _check_export(run_dir, path, force)
    found = run_findings(run_dir)
    with RunStore(run_dir / "store.sqlite") as store:
        current = ReviewLog(store).current(found.run_ids)
    rows, left_out = review_labels(found.findings, current, found.data_name)
    written = write_labels(rows, path, origin=str(run_dir))
    valid = sum(row.valid for row in rows)
    judged = {item for (item, _), j in current.items() if j.verdict in (Verdict.VALID, Verdict.INVALID)}
    console.print(f"labels: {path} ({written} substitution(s): {valid} valid, {written - valid} invalid, from "
                  f"{len(judged)} judged finding(s) of {len(found)})", highlight=False, soft_wrap=True)
    for line in left_out.lines():
        console.print(f"left out: {line}", highlight=False)


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
    if not session.findings:  # nothing to judge: no page to serve
        console.print(f"review: {run_dir} has no findings to review (no successful attack, second-order finding, "
                      "radius adversarial example or misclassified PR sample); nothing to judge", highlight=False,
                      soft_wrap=True)
        return
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
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
        # rebuilt here, while the stop is being handled: a SIGTERM's redelivery leaves the
        # clean-up alone (textrobust.cli.sigterm), so the summary follows every judgement
        _stopped(server, opener, run_dir, "terminated (SIGTERM)" if isinstance(exc, Terminated) else "stopped")
        if isinstance(exc, Terminated):
            raise
        return
    except BaseException:
        _close(server, opener)
        raise
    _stopped(server, opener, run_dir, "stopped")


def _close(server: Any, opener: threading.Thread | None) -> None:
    server.server_close()
    if opener is not None:
        opener.join(timeout=1.0)


def _stopped(server: Any, opener: threading.Thread | None, run_dir: Path, how: str) -> None:
    """Close the server, then rebuild the report and summary.json with every judgement."""
    _close(server, opener)
    console.print(f"{how}: the judgements are in the run store", highlight=False)
    try:
        _report(run_dir)
    except TextRobustError as exc:
        console.print(f"report not rebuilt: {exc} (`textrobust gate` refuses the summary until "
                      f"`textrobust review {run_dir} --report` rebuilds it)", highlight=False)
