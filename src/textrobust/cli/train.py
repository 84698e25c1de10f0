"""``textrobust train``: train a victim of the zoo."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Optional

import typer
from rich.table import Table

from textrobust.cli import options as o
from textrobust.cli.common import console, fail
from textrobust.defenses import Defense
from textrobust.devices import DEVICE_HELP
from textrobust.defenses.adversarial import AdversarialSettings
from textrobust.defenses.augment import AugmentSettings
from textrobust.errors import ConfigError, TextRobustError

if TYPE_CHECKING:
    from textrobust.zoo.cards import VictimCard


def register(app: typer.Typer) -> None:
    app.command("train")(train)


def _about(settings: Any, name: str) -> str:
    """An option's help: the settings field's description and default (declared once)."""
    field = settings.model_fields[name]
    return f"{field.description[:1].upper()}{field.description[1:]} (default {field.default})."


#: CertifiedTrainingConfig's epochs, shown in --cert-epochs' help without importing torch
#: (tests/test_newcomer_37_training.py checks that they agree)
CERT_EPOCHS_DEFAULT = 8
#: The choices of --adv-candidates (textrobust.attack.candidates.choice.CandidateChoice)
CANDIDATE_CHOICES = "[validated|paper]"

#: CLI option -> (defense, settings field); options of another defense are refused
_DEFENSE_OPTIONS = {"--adv-recipe": ("adversarial", "recipe"), "--adv-candidates": ("adversarial", "candidates"),
                    "--adv-share": ("adversarial", "share"), "--adv-max": ("adversarial", "max_examples"),
                    "--adv-budget": ("adversarial", "budget"), "--adv-clean-epochs": ("adversarial", "clean_epochs"),
                    "--augment-share": ("augment", "share"), "--augment-p": ("augment", "swap_prob"),
                    "--base": ("certified", "base"), "--cert-epochs": ("certified", "epochs")}


def train(
    ctx: typer.Context,
    arch: Annotated[str, typer.Argument(help="Architecture from the zoo (see `textrobust list`).")],
    data: Annotated[str, typer.Option(help="Bundled data set to train on.")] = "rotten_tomatoes",
    out: Annotated[Optional[Path], typer.Option(help="Victim folder (default: the cache's victims/<arch>, "
                                                     "which --victim <arch> then finds).")] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    epochs: Annotated[Optional[int], typer.Option(help="Epochs (default: the architecture's; for certified, "
                                                       "those of the normal training it starts from).")] = None,
    max_train: Annotated[Optional[int], typer.Option(
        help="Train on a seeded subset of this many training examples: a quicker, somewhat less accurate victim "
             "(default: all).")] = None,
    defense: Annotated[Defense, typer.Option(help="Harden against word substitutions: none, adversarial (train "
                                                   "on attacks of the model as it trains), augment (synonym "
                                                   "copies) or certified (IBP training).")] = Defense.none,
    adv_recipe: Annotated[Optional[str], typer.Option(help=_about(AdversarialSettings, "recipe"))] = None,
    adv_candidates: Annotated[Optional[str], typer.Option(
        metavar=CANDIDATE_CHOICES, help="Where the attack's substitutes come from: paper (the recipe's own, the default: cheap) or validated "
             "(checked in context by the causal LM: slow).")] = None,
    adv_share: Annotated[Optional[float], typer.Option(help=_about(AdversarialSettings, "share"))] = None,
    adv_max: Annotated[Optional[int], typer.Option(help=_about(AdversarialSettings, "max_examples"))] = None,
    adv_budget: Annotated[Optional[int], typer.Option(help=_about(AdversarialSettings, "budget"))] = None,
    adv_clean_epochs: Annotated[Optional[int], typer.Option(help=_about(AdversarialSettings, "clean_epochs"))] = None,
    augment_share: Annotated[Optional[float], typer.Option(help=_about(AugmentSettings, "share"))] = None,
    augment_p: Annotated[Optional[float], typer.Option(help=_about(AugmentSettings, "swap_prob"))] = None,
    base: Annotated[Optional[str], typer.Option(help="Certified: the normally trained victim of the same "
                                                     "architecture to start from, a folder or 'default' (default: "
                                                     "train one first).")] = None,
    cert_epochs: Annotated[Optional[int], typer.Option(help=f"Certified: epochs of IBP training (default "
                                                            f"{CERT_EPOCHS_DEFAULT}).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted training from the checkpoint "
                                                          "it left in --out (not for certified).")] = False,
    device: Annotated[str, typer.Option("--device", help=DEVICE_HELP + " Recorded on the model card.")] = "auto",
    dtype: Annotated[str, typer.Option("--dtype", help="Training runs in float32 only (reduced precision is "
                                                       "for `textrobust audit --dtype`).")] = "float32",
    threads: o.ThreadsOpt = "auto",
) -> None:
    """Train a victim of the zoo and save it (safetensors + JSON config + model card),
    optionally hardened with a defense (--defense). A checkpoint is written into --out
    after every epoch; --resume continues from it."""
    from textrobust.zoo import ZOO, train_victim

    from textrobust.cli.running import check_out, check_seed

    if arch not in ZOO:
        fail(TextRobustError(f"Unknown architecture '{arch}'. Known: {', '.join(ZOO.names())}."))
    started = time.time()
    try:
        check_seed(seed)
        if seed > 2**32 - 1:  # numpy's and torch's seeding take 32 bits
            raise ConfigError(f"The '--seed' option of train must be from 0 to 2^32-1. Got {seed} instead.")
        if epochs is not None and not 1 <= epochs <= 10_000:
            raise ConfigError(f"The '--epochs' option must be from 1 to 10000. Got {epochs} instead.")
        if max_train is not None and not 1 <= max_train <= 2**53:
            raise ConfigError(f"The '--max-train' option must be between 1 and 2^53. Got {max_train} instead.")
        from textrobust.zoo.training import training_placement

        training_placement(device, dtype)  # an absent device or a reduced dtype: exit 2 before any work
        training = {"max_train_examples": max_train} if max_train is not None else None
        if out is None:  # the cache, where `--victim <arch>` finds it
            from textrobust.zoo import zoo_victim_dir

            out = zoo_victim_dir(arch)
        check_out(out)
        from textrobust.zoo.io import check_victim_target
        from textrobust.zoo.training import rich_progress

        check_victim_target(out)  # a non-empty folder that is not a victim: say so now, not after training
        chosen = _defense_settings(arch, defense.value, {
            "--adv-recipe": adv_recipe, "--adv-candidates": adv_candidates, "--adv-share": adv_share,
            "--adv-max": adv_max, "--adv-budget": adv_budget, "--adv-clean-epochs": adv_clean_epochs,
            "--augment-share": augment_share, "--augment-p": augment_p, "--base": base, "--cert-epochs": cert_epochs})
        _apply_threads(threads)  # the last check (a bad TEXTROBUST_THREADS: exit 2, as for an audit), then torch's threads
        label = f"training {arch}" if defense is Defense.none else f"training {arch} ({defense.value})"
        with rich_progress(label) as progress:
            if defense is Defense.none:
                trained = train_victim(arch, data, out=out, seed=seed, epochs=epochs, training=training,
                                       progress=progress, checkpoint=True, resume=resume, device=device, dtype=dtype)
            else:
                from textrobust.defenses import harden

                trained = harden(arch, data, out=out, defense=defense.value, settings=chosen, seed=seed,
                                 epochs=epochs, training=training, progress=progress, checkpoint=True, resume=resume,
                                 device=device)
    except TextRobustError as exc:
        fail(exc)
        return
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
        _stopped(exc, ctx, out, defense, started)
    _print_card(trained.card, trained.path)


def _stopped(exc: KeyboardInterrupt, ctx: typer.Context, out: Path | None, defense: Defense,
             started: float) -> NoReturn:
    """Say what a stopped training saved and how to go on, then exit 143 for SIGTERM
    (130 for Ctrl-C), as an analysis does (issue 37, item 3)."""
    from textrobust.cli.common import Terminated, command_line, err_console
    from textrobust.cli.sigterm import stop_ended
    from textrobust.zoo.io import CHECKPOINT_FILE

    stop_ended()
    what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
    checkpoint = None if out is None else Path(out) / CHECKPOINT_FILE
    again = command_line(ctx)
    if defense is Defense.certified:  # --resume is not for certified training
        message = f"{what}: a certified training cannot be resumed; start it again with: {again}"
    elif checkpoint is None or not checkpoint.is_file():
        message = f"{what} before the first epoch ended: nothing is saved; start again with: {again}"
    else:
        saved = ("the epochs finished so far are saved" if checkpoint.stat().st_mtime >= started
                 else "no epoch ended in this run; the checkpoint of an earlier training is")
        resume = command_line(ctx, "--resume")
        message = f"{what}: {saved} in {checkpoint}; continue with: {resume}"
    err_console.print(message, soft_wrap=True, highlight=False, markup=False)  # one line: the command can be copied
    raise typer.Exit(code=Terminated.exit_code if isinstance(exc, Terminated) else 130)


def _defense_settings(arch: str, defense: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of ``defense`` from the options given; an option of another defense is
    an error naming the defense it belongs to."""
    settings: dict[str, Any] = {}
    for option, value in given.items():
        if value is None:
            continue
        owner, field = _DEFENSE_OPTIONS[option]
        if owner != defense:
            raise ConfigError(f"The '{option}' option applies to --defense {owner}. Got --defense {defense}.")
        if option == "--cert-epochs":  # CertifiedSettings.training["epochs"]
            settings.setdefault("training", {})["epochs"] = value
        else:
            settings[field] = value
    from textrobust.errors import SettingsError

    options = {(owner, field): option for option, (owner, field) in _DEFENSE_OPTIONS.items()}
    try:  # checked now, not after a long training
        if defense == "certified":
            from textrobust.bounds.support import SUPPORTED

            if arch not in SUPPORTED:
                raise ConfigError(f"--defense certified needs bound propagation, which covers the architectures "
                                  f"{', '.join(SUPPORTED)}. Got '{arch}'.")
            if "training" in settings:
                from textrobust.bounds.certified_training import CertifiedTrainingConfig

                CertifiedTrainingConfig(**settings["training"])
        if defense != "none":
            from textrobust.defenses import settings_type

            kind = settings_type(defense)
            if kind is not None:
                kind(**settings)
    except SettingsError as exc:  # name the option the user typed
        raise ConfigError(exc.render(lambda name: f"The '{options.get((defense, name), name)}' option")) from None
    return settings


def _apply_threads(threads: str = "auto") -> None:
    """Torch's threads for training (``--threads``: a count, or ``auto``), by the policy an
    audit follows (:func:`textrobust.threads.apply_threads`); a count that is not one is a
    ConfigError. With ``auto``: ``TEXTROBUST_THREADS`` when
    set (a value that is not a thread count is a ConfigError), else the CPUs of the affinity
    and the cgroup quota; with spinning OpenMP waits only the cores other processes leave
    idle, with a warning: threads competing for busy cores made training many times slower
    (benchmarks/results/zoo.md)."""
    from textrobust.cli.common import err_console
    from textrobust.threads import apply_threads, check_threads, choose_threads

    plan = apply_threads(check_threads(threads, "The '--threads' option"))
    if plan.source == "auto" and plan.threads is not None and plan.load is not None:
        cores = choose_threads(plan.affinity, plan.quota, None)
        if plan.threads < cores:
            err_console.print(f"warning: the machine is busy (load average {plan.load:.1f} of other processes on "
                              f"{cores} core(s)): training uses {plan.threads} thread(s) and may take longer than "
                              "usual; set TEXTROBUST_THREADS to choose.", soft_wrap=True, highlight=False, markup=False)


def _print_card(card: VictimCard | Mapping[str, Any], path: Path) -> None:
    """The card's main fields as a table (a ``VictimCard`` or its ``to_dict()``)."""
    if not isinstance(card, Mapping):
        card = card.to_dict()
    table = Table(title=f"victim {card.get('architecture', '')} ({path})")
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key in ("architecture", "dataset", "parameters", "train_seconds", "dev_accuracy", "test_accuracy", "seed",
                "defense"):
        if key in card:
            value = card[key]
            if isinstance(value, float):
                value = f"{value:.4f}"
            table.add_row(key, str(value))
    shown = card.get("defense_settings") or {}
    if "certified_test_accuracy" in shown:
        table.add_row("certified_test_accuracy (IBP)", f"{shown['certified_test_accuracy']:.4f}")
    console.print(table)
    from textrobust.zoo.cards import one_class_warning

    warning = one_class_warning(card.get("test_predictions"))
    if warning is not None:
        from textrobust.cli.common import err_console

        err_console.print(f"warning: {warning}.", soft_wrap=True, highlight=False, markup=False)
