"""The ``textrobust`` command line.

Commands are thin: they parse options, build components from the registries (never with
``eval``), run an analysis with a progress bar and print a summary table. Each command
lives in its own module with a ``register(app)`` function; this module only joins them. The
analysis commands are generated from the analyses' settings (:mod:`textrobust.cli.generated`):
adding an analysis to :data:`textrobust.analyses.ANALYSES` adds its command.
"""

from __future__ import annotations

import os
import sys

from textrobust.cli import assets, audit, compare, components, data, export, gate, generated, report, review, train
from textrobust.cli.common import App, Group, Terminated, err_console, stop_on_sigterm, threads_for_this_machine
from textrobust.cli.sigterm import stop_ended, stop_requested
from textrobust.threads import passive_waits

app = App(
    name="textrobust",
    cls=Group,
    help="Audit how robust an English text classifier is to word substitutions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# one command per registered analysis, generated from its settings (textrobust.cli.generated)
for module in (audit, report, review, compare, gate, assets, components, data, train, generated, export):
    module.register(app)


def main() -> None:
    """Console entry point."""
    # Model loading bars of huggingface libraries would interleave with our own bars.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    # Chosen once, at start-up, before torch is imported (read by torch and BLAS when they
    # load); a value the user set wins.
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, str(threads_for_this_machine()))
    # idle OpenMP threads sleep instead of spinning: spinning threads made audits many
    # times slower on busy cores (issue 31; textrobust.threads says why)
    passive_waits()
    try:
        # SIGTERM ends a run as Ctrl-C does, every time (textrobust.cli.sigterm); installed
        # inside the try, so a stop that lands right after the installation is handled too
        stop_on_sigterm()
        app()
    except KeyboardInterrupt as exc:
        stop_ended()
        what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        # a command ends a stop itself (Group.invoke): this one came before a command started
        err_console.print(f"{what} before the command started: nothing is saved; run the same command again")
        sys.exit(Terminated.exit_code if isinstance(exc, Terminated) or stop_requested() else 130)
    except SystemExit as exc:
        stop_ended()
        if stop_requested() and exc.code in (None, 0, 130):  # typer's 130: a stop while it parsed the options
            err_console.print("terminated (SIGTERM)" + (" before the command started: nothing is saved; run the "
                                                        "same command again" if exc.code == 130 else ""))
            sys.exit(Terminated.exit_code)
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
