"""Certified (IBP) training as a defense: a normally trained model, fine-tuned on the hulls.

:func:`~textrobust.bounds.certified_training.certified_train` (Jia et al. 2019; read its
docstring for the schedule and why the first version collapsed to one class) run on a
copy of a normally trained victim of the same architecture, as
``benchmarks/msr.py certified`` does. That victim is ``base`` when given (a victim
folder, or ``default``), else one trained first, normally, with the same seed and
training options (in a temporary folder, not kept). The substitution sets are
:meth:`~textrobust.attack.candidates.checked.CheckedSynonyms.table` over the words of the
train, dev and test splits that the vocabulary knows, so that the card can give the
IBP-certified accuracy on the whole test split (``defense_settings["certified_test_accuracy"]``)
beside the clean one. Only the architectures bound propagation covers (CNN, bag of
words, LSTM: :data:`~textrobust.bounds.support.SUPPORTED`).

Not resumable: ``certified_train`` keeps its optimiser and its eps/kappa ramp inside one
call; a restart starts from the base model again (259 s for 8 epochs on the whole Rotten
Tomatoes train split, ``benchmarks/results/msr.md``).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from textrobust.config import Config
from textrobust.errors import ConfigError

__all__ = ["CertifiedSettings", "train_certified"]


class CertifiedSettings(Config):
    """Certified (IBP) training (``--defense certified``)."""

    base: str | None = Field(default=None, description="normally trained victim of the same architecture to start "
                                                       "from: a victim folder or 'default' (none: train one first)")
    training: dict[str, Any] = Field(default_factory=dict, description=(
        "overrides of textrobust.bounds.certified_training.CertifiedTrainingConfig (epochs, ramp_epochs, "
        "kappa, lr, embedding_lr, batch_size, max_substitutes ...); its defaults are those measured in "
        "benchmarks/results/msr.md"))
    neighbours: int = Field(default=10, ge=1, description="counter-fitted neighbours of each word checked for the "
                                                          "substitution table")


def _base_folder(base: str) -> Path:
    from textrobust.zoo.default import ensure_default_victim
    from textrobust.zoo.io import is_victim_folder

    if base == "default":
        return Path(ensure_default_victim())
    folder = Path(base).expanduser()
    if not is_victim_folder(folder):
        raise ConfigError(f"The 'base' setting of certified training must be a victim folder or 'default'. "
                          f"{folder} is not a victim folder.")
    return folder


def _train_subset(examples: Sequence[Any], training: Any, seed: int) -> list[Any]:
    """The training examples of the certified phase: all of them, or the seeded subset of
    ``training``'s ``max_train_examples`` (a TrainingConfig or a mapping), the same subset
    :func:`~textrobust.zoo.train_victim` draws for the base model with that seed."""
    import numpy as np

    if training is None:
        limit = None
    elif isinstance(training, Mapping):
        limit = training.get("max_train_examples")
    else:
        limit = getattr(training, "max_train_examples", None)
    if limit is None:
        return list(examples)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"The 'max_train_examples' training setting must be an int of at least 1. "
                          f"Got {limit!r} instead.")
    if limit >= len(examples):
        return list(examples)
    keep = np.sort(np.random.default_rng(seed).permutation(len(examples))[:limit])
    return [examples[int(i)] for i in keep]


def train_certified(arch: str, dataset: Any, *, settings: CertifiedSettings, out: Path, seed: int = 0,
                    epochs: int | None = None, config: Any = None, training: Any = None, vectors: Any = None,
                    progress: Any = None, checkpoint: bool = False, resume: bool = False,
                    table: Mapping[str, Sequence[str]] | None = None, device: str = "auto") -> Any:
    """Train ``arch`` with certified (IBP) training (see the module docstring); ``table``:
    the substitution sets (default: the checked synonym table). ``epochs``, ``config``,
    ``training``, ``vectors`` and ``checkpoint`` apply to the normal training of the base
    model (when no ``base`` is given), and ``training``'s ``max_train_examples`` to the
    certified phase as well (the same seeded subset); ``device``: where both trainings run (recorded on
    the card)."""
    import copy

    import torch

    from textrobust.bounds.certified_training import (
        CertifiedTrainingConfig,
        certified_train,
        ibp_evaluate,
        substitution_table,
    )
    from textrobust.bounds.support import SUPPORTED
    from textrobust.versions import package_versions
    from textrobust.zoo import ZOO, TrainingData, train_victim
    from textrobust.zoo.cards import VictimCard, now_iso
    from textrobust.zoo.io import CONFIG_FILE, check_victim_target, load_victim, read_card, save_victim
    from textrobust.zoo.training import TrainingEvent

    if resume:
        raise ConfigError("Certified training cannot be resumed: certified_train keeps its optimiser and its eps/kappa "
                          "ramp inside one call. Run it again without --resume (it restarts from the base model).")
    if arch not in SUPPORTED:
        raise ConfigError(f"Certified training needs bound propagation, which covers the architectures "
                          f"{', '.join(SUPPORTED)}. Got '{arch}'.")
    from textrobust.devices import resolve_placement

    placement = resolve_placement(device, "float32")
    cert = CertifiedTrainingConfig(**{"seed": seed, **settings.training})
    data = TrainingData.bundled(dataset) if isinstance(dataset, str) else dataset
    out = check_victim_target(out)
    started = time.perf_counter()

    if settings.base is not None:
        folder = _base_folder(settings.base)
        base_card = read_card(folder)
        described = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
        if described.get("architecture") != arch:
            raise ConfigError(f"The base victim {folder} is a '{described.get('architecture')}', not a '{arch}'.")
        if base_card is not None and base_card.dataset != data.name:
            raise ConfigError(f"The base victim {folder} was trained on '{base_card.dataset}', not '{data.name}'.")
        victim = load_victim(folder, placement=placement)
        base_name = str(folder)
    else:
        with tempfile.TemporaryDirectory(prefix="textrobust-certified-base-") as tmp:
            trained = train_victim(arch, data, out=Path(tmp) / "base", seed=seed, epochs=epochs, config=config,
                                   training=training, vectors=vectors, progress=progress, device=placement.device)
        victim, base_card, base_name = trained.victim, trained.card, "trained first (same seed and options)"
        described = {"model_config": trained.card.model_config}
    base_seconds = time.perf_counter() - started

    vocab = victim.tokenizer
    module = copy.deepcopy(victim.module)
    if table is None:
        from textrobust.defenses.augment import checked_table, table_progress

        words = {w.lower() for split in (data.train, data.dev, data.test) for e in split.examples for w in e.text.words}
        built = checked_table(sorted(words), cert.max_substitutes, settings.neighbours,
                              table_progress(progress, started))
        table = {w: s for w, s in built.items() if w in vocab}
    used = _train_subset(data.train.examples, training, seed)  # --max-train applies to this phase too
    texts = [e.text for e in used]
    labels = [e.label for e in used]
    steps = -(-len(texts) // cert.batch_size)

    def on_step(step: int, total: int) -> None:
        if progress is not None:
            epoch, within = (step - 1) // steps + 1, (step - 1) % steps + 1
            progress(TrainingEvent("step", epoch, cert.epochs, within, steps, None, None, None,
                                   time.perf_counter() - started))

    def on_epoch(log: Any) -> None:
        if progress is not None and log.dev is not None:
            progress(TrainingEvent("epoch", log.epoch, cert.epochs, steps, steps, None, log.dev.clean, None,
                                   time.perf_counter() - started))

    logs = certified_train(module, vocab, texts, labels, table, cert, progress=on_epoch,
                           dev=(data.dev.texts, data.dev.labels), on_step=on_step)
    train_seconds = time.perf_counter() - started
    ids = substitution_table(vocab, table, cert.max_substitutes)
    test = ibp_evaluate(module, vocab, data.test.texts, data.test.labels, ids)  # clean, certified, shares
    label_names = tuple(data.label_names)
    last = logs[-1].dev
    if last is None:  # pragma: no cover - dev is always given above
        raise ConfigError("Certified training logged no dev evaluation.")
    architecture = ZOO.get(arch)
    model_config = architecture.make_config(described["model_config"])
    recorded = {
        **settings.to_dict(), "base": base_name, "base_test_accuracy": None if base_card is None else
        base_card.test_accuracy, "base_seconds": round(base_seconds, 2), "table_words": len(table),
        "certified_test_accuracy": round(test.certified, 6), "certified_dev_accuracy": round(last.certified, 6),
        "config": cert.to_dict(),
    }
    card = VictimCard(
        architecture=arch, dataset=data.name, label_names=label_names,
        splits={"train": len(data.train), "dev": len(data.dev), "test": len(data.test), "train_used": len(texts)},
        seed=seed, dev_accuracy=round(last.clean, 6),
        test_accuracy=round(test.clean, 6),
        train_seconds=round(train_seconds, 2), parameters=sum(p.numel() for p in module.parameters()),
        epochs_run=len(logs), best_epoch=len(logs), vocab_size=len(vocab), model_config=model_config.to_dict(),
        training=cert.to_dict(), torch_threads=torch.get_num_threads(), device=placement.device,
        package_versions=package_versions(),
        created=now_iso(), notes=f"certified (IBP) fine-tuning of a normally trained {arch} ({base_name})"
        + (f" on a seeded subset of {len(texts)} of {len(data.train)} training examples"
           if len(texts) < len(data.train) else ""),
        extra={"dev_history": [{"epoch": log.epoch, "eps": log.eps, "kappa": log.kappa,
                                "clean": None if log.dev is None else round(log.dev.clean, 6),
                                "certified": None if log.dev is None else round(log.dev.certified, 6)}
                               for log in logs]},
        test_predictions={label_names[i]: round(share, 6) for i, share in test.predicted_share.items()},
        defense="certified", defense_settings=recorded,
    )
    path = save_victim(out, module=module, vocab=vocab, architecture=arch, model_config=model_config,
                       label_names=label_names, card=card)
    if progress is not None:
        progress(TrainingEvent("done", len(logs), cert.epochs, 0, 0, None, card.dev_accuracy, card.dev_accuracy,
                               time.perf_counter() - started))
    from textrobust.zoo.training import TrainedVictim

    return TrainedVictim(path, card, load_victim(path))
