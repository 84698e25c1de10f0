"""The ``textrobust`` command line.

Commands are thin: they parse options, build components from the registries (never with
``eval``), run an analysis with a progress bar and print a summary table. Each command
lives in its own module with a ``register(app)`` function; this module only joins them.
"""

from __future__ import annotations

import os
import sys

from textrobust.cli import (
    accs,
    assets,
    attack,
    attribution,
    audit,
    compare,
    components,
    data,
    evaluate,
    export,
    gate,
    msr,
    radius,
    report,
    second_order,
    train,
)
from textrobust.cli.common import App, Group, Terminated, err_console, stop_on_sigterm

app = App(
    name="textrobust",
    cls=Group,
    help="Audit how robust an English text classifier is to word substitutions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (audit, report, compare, gate, assets, components, data, train, evaluate, attack, second_order, radius,
               accs, export, attribution, msr):
    module.register(app)


def threads_for_this_machine() -> int:
    """Intra-op threads for torch and BLAS: ``TEXTROBUST_THREADS`` when set, else the
    cores this process may run on (its CPU affinity, which in a container can be fewer
    than the machine's cores that torch would count)."""
    given = os.environ.get("TEXTROBUST_THREADS", "").strip()
    if given.isdigit() and int(given) >= 1:
        return int(given)
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not on Linux
        return max(os.cpu_count() or 1, 1)


def main() -> None:
    """Console entry point."""
    # Model loading bars of huggingface libraries would interleave with our own bars.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    # Chosen once, at start-up, before torch is imported (read by torch and BLAS when they
    # load); a value the user set wins.
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, str(threads_for_this_machine()))
    stop_on_sigterm()  # SIGTERM ends a run as Ctrl-C does: what is saved, how to resume
    try:
        app()
    except KeyboardInterrupt as exc:
        what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        err_console.print(f"{what}: finished results are in the run store; rerun with --resume")
        sys.exit(Terminated.exit_code if isinstance(exc, Terminated) else 130)


if __name__ == "__main__":  # pragma: no cover
    main()
