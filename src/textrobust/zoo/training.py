"""Train a zoo victim: fit on the train split, select on dev accuracy, report test accuracy.

>>> from textrobust.zoo import train_victim                       # doctest: +SKIP
>>> trained = train_victim("cnn", out=Path("victims/cnn"))        # doctest: +SKIP
>>> trained.card.test_accuracy                                    # doctest: +SKIP

Training is deterministic for a given seed and thread count: the seed sets torch's
generator (initialisation, dropout), the shuffling order and the random vectors of words
GloVe lacks. The epoch with the best dev accuracy is kept; training stops early after
``patience`` epochs without improvement. torch is imported only inside the functions.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.config import Config
from textrobust.data.examples import Dataset, Example
from textrobust.devices import Placement, resolve_placement
from textrobust.errors import ConfigError
from textrobust.text import WORD_PATTERN
from textrobust.zoo.architectures import ZOO, Architecture
from textrobust.zoo.cards import VictimCard, now_iso, prediction_shares
from textrobust.zoo.io import CHECKPOINT_FILE

__all__ = [
    "CHECKPOINT_FILE",
    "EpochExamples",
    "TrainedVictim",
    "TrainingConfig",
    "TrainingData",
    "TrainingEvent",
    "VectorInit",
    "accuracy",
    "rich_progress",
    "train_victim",
    "training_settings",
]


class VectorInit(str, Enum):
    """Where word models' initial embeddings come from."""

    GLOVE = "glove"  # GloVe 6B 50d for the words it has, small random vectors for the rest
    RANDOM = "random"  # torch's default initialisation


class TrainingConfig(Config):
    """How a zoo model is trained. Each architecture overrides some defaults (see
    :data:`~textrobust.zoo.architectures.ZOO`)."""

    lr: float = Field(1e-3, gt=0)
    epochs: int = Field(10, ge=1)
    batch_size: int = Field(64, ge=1)
    patience: int = Field(3, ge=1)  # epochs without a better dev accuracy before stopping
    weight_decay: float = Field(0.0, ge=0)  # AdamW's decoupled decay; 0 is plain Adam
    clip: float | None = Field(5.0, gt=0)  # gradient-norm clipping
    warmup_ratio: float = Field(0.0, ge=0, lt=1)
    linear_decay: bool = False
    # word models only:
    min_count: int = Field(1, ge=1)  # training-split count for a word to enter the vocabulary
    max_length: int = Field(128, ge=1)  # tokens kept per text
    vectors: VectorInit = VectorInit.GLOVE
    extra_words: int = Field(20_000, ge=0)  # most frequent vector-set words added to the vocabulary
    max_train_examples: int | None = Field(None, ge=1)  # a seeded subset of the train split
    eval_batch_size: int = Field(256, ge=1)


@dataclass(frozen=True)
class TrainingData:
    """Train, dev and test splits of one data set (same label names)."""

    train: Dataset
    dev: Dataset
    test: Dataset

    def __post_init__(self) -> None:
        names = {self.train.label_names, self.dev.label_names, self.test.label_names}
        if len(names) != 1:
            raise ConfigError(f"The train, dev and test splits must share label names. Got {sorted(names)}.")
        empty = [s for s, d in (("train", self.train), ("dev", self.dev), ("test", self.test)) if len(d) == 0]
        if empty:
            raise ConfigError(f"The {', '.join(empty)} split(s) of '{self.train.name}' are empty.")

    @property
    def name(self) -> str:
        return self.train.name

    @property
    def label_names(self) -> tuple[str, ...]:
        return self.train.label_names

    @classmethod
    def bundled(cls, name: str) -> TrainingData:
        """The fixed seeded splits of a bundled data set (``textrobust.data.load_bundled``)."""
        from textrobust.data import load_bundled

        return cls(*(load_bundled(name, split=s) for s in ("train", "dev", "test")))


@dataclass(frozen=True)
class TrainingEvent:
    """A progress report: ``stage`` is "step" (after each batch), "epoch" (after the dev
    evaluation), "extra" (while an epoch's extra examples are made: ``step`` of ``steps``),
    "table" (a defense's synonym table, before training: ``step`` of ``steps`` words) or
    "done"."""

    stage: str
    epoch: int
    epochs: int
    step: int
    steps: int
    loss: float | None = None
    dev_accuracy: float | None = None
    best_dev_accuracy: float | None = None
    elapsed: float = 0.0


@dataclass(frozen=True)
class TrainedVictim:
    """A trained and saved victim: its folder, its card and the victim loaded back from it."""

    path: Path
    card: VictimCard
    victim: Any

    @property
    def architecture(self) -> str:
        return self.card.architecture


Progress = Callable[[TrainingEvent], None]
Augment = Callable[[Example], list[Example]]
Vectors = tuple[Sequence[str], np.ndarray]
#: ``(epoch, victim, report) -> examples`` added to that epoch's training data only;
#: ``victim`` is a :class:`~textrobust.victims.torch.TorchVictim` around the model being
#: trained (as it is after the previous epoch), ``report(done, total)`` draws progress.
EpochExamples = Callable[[int, Any, Callable[[int, int], None]], Sequence[Example]]



def train_victim(
    arch: str,
    dataset: str | TrainingData = "rotten_tomatoes",
    *,
    out: Path,
    config: Config | Mapping[str, Any] | None = None,
    training: TrainingConfig | Mapping[str, Any] | None = None,
    seed: int = 0,
    epochs: int | None = None,
    vectors: Vectors | None = None,
    progress: Progress | None = None,
    augment: Augment | None = None,
    epoch_examples: EpochExamples | None = None,
    select_from: int = 1,
    defense: str = "none",
    defense_settings: Mapping[str, Any] | None = None,
    checkpoint: bool = False,
    resume: bool = False,
    device: str = "auto",
    dtype: str = "float32",
) -> TrainedVictim:
    """Train the zoo architecture ``arch`` and save it as a victim folder at ``out``.

    - ``dataset``: a bundled data set name (its fixed train/dev/test splits) or a
      :class:`TrainingData`.
    - ``config``: the model config, or a mapping of overrides of its defaults.
    - ``training``: a :class:`TrainingConfig`, or a mapping of overrides of the
      architecture's training defaults; ``epochs`` is a shortcut for ``training.epochs``.
    - ``vectors``: ``(words, matrix)`` to initialise word embeddings instead of GloVe
      (``training.vectors`` must then be "glove", the default, for them to be used).
    - ``progress``: called with a :class:`TrainingEvent` after every batch and epoch
      (see :func:`rich_progress`).
    - ``augment``: called once per training example before training; the examples it
      returns *replace* that example (return ``[example, variant]`` to add a variant,
      ``[]`` to drop it). The vocabulary is built after augmentation.
    - ``epoch_examples``: called before every epoch (see :data:`EpochExamples`); what it
      returns is added to that epoch's training data (adversarial training). Their words
      outside the vocabulary (built before training) are ``<unk>``.
    - ``select_from``: the first epoch whose dev accuracy may select the kept model (and
      counts for early stopping): an adversarially trained model is not replaced by one of
      its clean warm-up epochs.
    - ``defense``, ``defense_settings``: recorded on the card (``textrobust.defenses``).
    - ``checkpoint``: write :data:`CHECKPOINT_FILE` into ``out`` after every epoch (model,
      optimiser, scheduler, random states, best epoch so far); ``resume``: continue from it
      (the same arguments are required: a fingerprint of them is checked).
    - ``device``: where the model trains (``auto``, ``cpu``, ``cuda``, ``cuda:N``, ``mps``;
      :mod:`textrobust.devices`), recorded on the card; an absent device is a
      ConfigError. ``dtype``: float32 only (reduced precision is for auditing, not training).
    """
    import torch

    architecture = ZOO.get(arch)
    model_config = architecture.make_config(config)
    settings = _training_config(architecture, training, epochs)
    data = TrainingData.bundled(dataset) if isinstance(dataset, str) else dataset
    if not isinstance(data, TrainingData):
        raise ConfigError(
            f"The 'dataset' parameter of train_victim must be a bundled data set name or a TrainingData. "
            f"Got {type(dataset).__name__} instead."
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"The 'seed' parameter of train_victim must be an int. Got {seed!r} instead.")
    if out is None:
        raise ConfigError("The 'out' parameter of train_victim is required: the folder to save the victim in.")
    from textrobust.zoo.io import check_victim_target

    check_victim_target(out)  # before the training, not after it
    placement = training_placement(device, dtype)
    if isinstance(select_from, bool) or not isinstance(select_from, int) or not 1 <= select_from <= settings.epochs:
        raise ConfigError(f"The 'select_from' parameter of train_victim must be an epoch from 1 to {settings.epochs}. "
                          f"Got {select_from!r} instead.")

    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    train = _augmented(data.train, augment)
    if settings.max_train_examples is not None and settings.max_train_examples < len(train):
        keep = np.sort(rng.permutation(len(train))[: settings.max_train_examples])
        train = [train[i] for i in keep]
    label_names = data.label_names

    torch.manual_seed(seed)
    module, tokenizer, vocab_size = _prepare(architecture, model_config, settings, train, label_names, vectors, rng)
    module = module.to(placement.torch_device())  # once (its float types kept): batches are created there
    fingerprint = {"architecture": architecture.name, "dataset": data.name, "seed": seed,
                   "model_config": model_config.to_dict(), "training": settings.to_dict(), "train_used": len(train),
                   "vocab_size": vocab_size, "defense": defense, "defense_settings": dict(defense_settings or {}),
                   "select_from": select_from}
    where = Path(out).expanduser().resolve() / CHECKPOINT_FILE
    state = _read_checkpoint(where, fingerprint) if resume else None
    if state is not None:
        started -= float(state["elapsed"])
    history = _fit(module, tokenizer, train, data.dev, settings, seed, progress, started,
                   label_names=label_names, epoch_examples=epoch_examples, select_from=select_from,
                   checkpoint=where if checkpoint else None, state=state, fingerprint=fingerprint,
                   placement=placement)
    train_seconds = time.perf_counter() - started
    test_predicted = _predict(module, tokenizer, data.test.texts, settings.eval_batch_size)
    test_accuracy = float(np.mean(test_predicted == np.asarray(data.test.labels)))

    from textrobust.versions import package_versions

    card = VictimCard(
        architecture=architecture.name,
        dataset=data.name,
        label_names=tuple(label_names),
        splits={"train": len(data.train), "dev": len(data.dev), "test": len(data.test), "train_used": len(train)},
        seed=seed,
        dev_accuracy=round(history["best_dev_accuracy"], 6),
        test_accuracy=round(test_accuracy, 6),
        train_seconds=round(train_seconds, 2),
        parameters=sum(p.numel() for p in module.parameters()),
        epochs_run=history["epochs_run"],
        best_epoch=history["best_epoch"],
        vocab_size=vocab_size,
        model_config=model_config.to_dict(),
        training=settings.to_dict(),
        augment=None if augment is None else getattr(augment, "__qualname__", repr(augment)),
        torch_threads=torch.get_num_threads(),
        device=placement.device,
        package_versions=package_versions(),
        created=now_iso(),
        notes=_notes(settings, data, len(train)),
        extra={"dev_history": history["dev_history"],
               **({"extra_examples": history["extra_examples"]} if epoch_examples is not None else {})},
        test_predictions=prediction_shares(test_predicted.tolist(), label_names),
        defense=defense,
        defense_settings=dict(defense_settings or {}),
    )
    path = _save(out, architecture, module, tokenizer, model_config, label_names, card)
    if progress is not None:
        progress(TrainingEvent("done", history["epochs_run"], settings.epochs, 0, 0, None,
                               card.dev_accuracy, card.dev_accuracy, time.perf_counter() - started))
    from textrobust.zoo.io import load_victim

    return TrainedVictim(path, card, load_victim(path, placement=placement))


def training_placement(device: str | None = "auto", dtype: str | None = "float32") -> Placement:
    """The checked device of a training (:func:`~textrobust.devices.resolve_placement`);
    a ``dtype`` other than float32 is a ConfigError: reduced precision is for auditing."""
    name = "float32" if dtype is None else str(dtype).strip().lower()
    if name != "float32":
        raise ConfigError(f"Training runs in float32 only; got --dtype {dtype}. Train in float32 and audit in "
                          f"{dtype} with `textrobust audit --dtype {dtype}` (its predictions are compared with "
                          "float32 first).")
    return resolve_placement(device, "float32")


def accuracy(module: Any, tokenizer: Any, dataset: Dataset, batch_size: int = 256) -> float:
    """Accuracy of ``module`` on ``dataset`` (eval mode, no gradients)."""
    preds = _predict(module, tokenizer, dataset.texts, batch_size)
    return float(np.mean(preds == np.asarray(dataset.labels))) if len(dataset) else float("nan")


@contextmanager
def rich_progress(description: str = "training") -> Iterator[Progress]:
    """A progress callback that draws a rich progress bar of the training steps (epoch and
    batch) on stderr; without a terminal (CI, a pipe), one line at every tenth of an
    epoch's batches and one per finished epoch instead; nothing when
    ``TEXTROBUST_NO_PROGRESS=1``.

    >>> with rich_progress("cnn") as progress:                      # doctest: +SKIP
    ...     train_victim("cnn", out=path, progress=progress)
    """
    import os

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as RichProgress

    console = Console(stderr=True)
    off = os.environ.get("TEXTROBUST_NO_PROGRESS", "") not in ("", "0")
    if not off and not console.is_terminal:
        yield _progress_lines(description, console)
        return
    bar = RichProgress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console,
        disable=off,
    )
    task = bar.add_task(description, total=None, info="")
    state = {"dev": ""}

    def update(event: TrainingEvent) -> None:
        if event.stage == "step":
            loss = f"loss {event.loss:.3f}" if event.loss is not None else ""
            bar.update(task, total=event.steps * event.epochs, completed=(event.epoch - 1) * event.steps + event.step,
                       info=f"epoch {event.epoch}/{event.epochs} batch {event.step}/{event.steps} {loss} "
                            f"{state['dev']}")
        elif event.stage == "epoch":
            best = "" if event.best_dev_accuracy is None else f" (best {event.best_dev_accuracy:.3f})"
            state["dev"] = f"dev {event.dev_accuracy:.3f}{best}"
            bar.update(task, info=f"epoch {event.epoch}/{event.epochs} {state['dev']}")
        elif event.stage == "extra":
            bar.update(task, info=f"epoch {event.epoch}/{event.epochs} extra examples {event.step}/{event.steps} "
                                  f"{state['dev']}")
        elif event.stage == "table":
            bar.update(task, total=event.steps, completed=event.step, info="synonym table: words checked")
        else:
            bar.update(task, total=1, completed=1, info=f"done: dev {event.dev_accuracy:.3f}")

    with bar:
        yield update


def _progress_lines(description: str, console: Any) -> Progress:
    """The callback of :func:`rich_progress` without a terminal: plain lines."""

    def say(line: str) -> None:
        console.print(f"{description}: {line}", markup=False, highlight=False, soft_wrap=True)

    def update(event: TrainingEvent) -> None:
        if event.stage == "step":
            if event.epoch == 1 and event.step == 1:
                say(f"{event.epochs} epoch(s) of {event.steps:,} batches")
            tenth = max(1, -(-event.steps // 10))
            if event.step % tenth == 0 and event.step < event.steps:
                loss = "" if event.loss is None else f", loss {event.loss:.3f}"
                say(f"epoch {event.epoch}/{event.epochs}, batch {event.step:,}/{event.steps:,}{loss} "
                    f"({event.elapsed:,.0f} s)")
        elif event.stage == "epoch":
            best = "" if event.best_dev_accuracy is None else f" (best {event.best_dev_accuracy:.3f})"
            say(f"epoch {event.epoch}/{event.epochs} done: dev accuracy {event.dev_accuracy:.3f}{best} "
                f"({event.elapsed:,.0f} s)")
        elif event.stage == "table":
            say(f"synonym table: {event.step:,}/{event.steps:,} words checked ({event.elapsed:,.0f} s)")
        elif event.stage == "extra":
            tenth = max(1, -(-event.steps // 10))
            if event.step == event.steps or event.step % tenth == 0:
                say(f"epoch {event.epoch}/{event.epochs}: extra examples {event.step:,}/{event.steps:,} "
                    f"({event.elapsed:,.0f} s)")
        else:
            say(f"done: dev accuracy {event.dev_accuracy:.3f} ({event.elapsed:,.0f} s)")

    return update


def training_settings(arch: str, training: TrainingConfig | Mapping[str, Any] | None = None,
                      epochs: int | None = None) -> TrainingConfig:
    """The :class:`TrainingConfig` that :func:`train_victim` uses for ``arch`` with these
    ``training`` overrides and ``epochs``."""
    return _training_config(ZOO.get(arch), training, epochs)


# ---- internals -------------------------------------------------------------------------
def _training_config(
    architecture: Architecture, training: TrainingConfig | Mapping[str, Any] | None, epochs: int | None
) -> TrainingConfig:
    if isinstance(training, TrainingConfig):
        settings = training
    elif training is None or isinstance(training, Mapping):
        settings = TrainingConfig(**{**dict(architecture.training), **dict(training or {})})
    else:
        raise ConfigError(
            f"The 'training' parameter of train_victim must be a TrainingConfig or a mapping. Got {training!r} instead."
        )
    if epochs is not None:
        settings = settings.replace(epochs=epochs)
    return settings


def _augmented(train: Dataset, augment: Augment | None) -> list[Example]:
    if augment is None:
        return list(train.examples)
    out: list[Example] = []
    n = train.num_labels
    for example in train.examples:
        produced = augment(example)
        if not isinstance(produced, (list, tuple)) or not all(isinstance(e, Example) for e in produced):
            raise ConfigError(
                f"The 'augment' callable must return a list of Example. For example {example.id!r} it "
                f"returned {type(produced).__name__}."
            )
        bad = [e.id for e in produced if not 0 <= e.label < n]
        if bad:
            raise ConfigError(f"The 'augment' callable returned examples with labels outside [0, {n}): {bad[:5]}.")
        out.extend(produced)
    if not out:
        raise ConfigError("The 'augment' callable dropped every training example.")
    return out


def _prepare(
    architecture: Architecture,
    model_config: Config,
    settings: TrainingConfig,
    train: list[Example],
    label_names: Sequence[str],
    vectors: Vectors | None,
    rng: np.random.Generator,
) -> tuple[Any, Any, int]:
    """The fresh module, its tokenizer and the vocabulary size."""
    if architecture.kind == "huggingface":
        from textrobust.zoo.minilm import MiniLMClassifier, MiniLMTokenizer, minilm_path

        hf_config: Any = model_config
        tokenizer = MiniLMTokenizer(minilm_path(hf_config), hf_config.max_length)
        module = MiniLMClassifier(hf_config, len(label_names), label_names)
        return module, tokenizer, len(tokenizer.hf)

    from textrobust.zoo.vocab import WordVocab

    max_positions = getattr(model_config, "max_positions", None)
    if max_positions is not None and settings.max_length > max_positions:
        raise ConfigError(
            f"The 'max_length' training parameter ({settings.max_length}) exceeds the '{architecture.name}' "
            f"model's max_positions ({max_positions}). Lower max_length or raise max_positions."
        )
    source = None
    if settings.vectors is VectorInit.GLOVE:
        source = vectors if vectors is not None else _glove()
        words, matrix = source
        if len(words) != len(matrix):
            raise ConfigError(f"The 'vectors' parameter has {len(words)} words but {len(matrix)} vectors.")
        dim = int(model_config.model_dump()["embed_dim"])
        if matrix.shape[1] != dim:
            raise ConfigError(
                f"The '{architecture.name}' model's embed_dim is {dim} but the initial vectors have "
                f"{matrix.shape[1]} dimensions. Set embed_dim={matrix.shape[1]} or training vectors='random'."
            )
    extra: list[str] = []
    if source is not None and settings.extra_words:
        for word in source[0]:
            if len(extra) >= settings.extra_words:
                break
            if WORD_PATTERN.fullmatch(word):
                extra.append(word)
    vocab = WordVocab.build(
        (e.text for e in train), min_count=settings.min_count, max_length=settings.max_length, extra_words=extra
    )
    module = architecture.build(model_config, len(vocab), len(label_names))
    if source is not None:
        module.load_vectors(_initial_matrix(vocab.words, source, rng))
    return module, vocab, len(vocab)


def _glove() -> Vectors:
    from textrobust.assets import load_glove

    return load_glove()


def _initial_matrix(tokens: Sequence[str], source: Vectors, rng: np.random.Generator) -> np.ndarray:
    """GloVe rows for the tokens it has, N(0, 0.1^2) for the rest, zeros for <pad> and <unk>."""
    words, matrix = source
    index = {w: i for i, w in enumerate(words)}
    out = rng.normal(0.0, 0.1, size=(len(tokens), matrix.shape[1])).astype(np.float32)
    rows = [(t, index.get(w)) for t, w in enumerate(tokens)]
    found = [(t, i) for t, i in rows if i is not None]
    if found:
        targets, sources = zip(*found)
        out[list(targets)] = np.asarray(matrix)[list(sources)]
    out[:2] = 0.0
    return out


def _schedule(settings: TrainingConfig, total: int) -> Callable[[int], float]:
    warmup = int(settings.warmup_ratio * total)

    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        if settings.linear_decay:
            return max(0.0, (total - step) / max(1, total - warmup))
        return 1.0

    return factor


def _fit(
    module: Any,
    tokenizer: Any,
    train: list[Example],
    dev: Dataset,
    settings: TrainingConfig,
    seed: int,
    progress: Progress | None,
    started: float,
    *,
    label_names: Sequence[str] = (),
    epoch_examples: EpochExamples | None = None,
    select_from: int = 1,
    checkpoint: Path | None = None,
    state: Mapping[str, Any] | None = None,
    fingerprint: Mapping[str, Any] | None = None,
    placement: Placement | None = None,
) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    placement = placement or Placement()
    device = placement.torch_device()

    params = [p for p in module.parameters() if p.requires_grad]
    try:  # the fused CPU kernel is several times faster on large embedding tables
        optimizer = torch.optim.AdamW(params, lr=settings.lr, weight_decay=settings.weight_decay, fused=True)
    except (RuntimeError, TypeError):  # pragma: no cover - older torch or unsupported device
        optimizer = torch.optim.AdamW(params, lr=settings.lr, weight_decay=settings.weight_decay)
    steps = math.ceil(len(train) / settings.batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(settings, steps * settings.epochs))
    generator = torch.Generator().manual_seed(seed)
    texts = [e.text for e in train]
    labels = torch.as_tensor([e.label for e in train], dtype=torch.long, device=device)

    best, best_epoch, stale, epoch, first = -1.0, 0, 0, 0, 1
    best_state: dict[str, Any] = {}
    dev_history: list[float] = []
    extra_counts: list[int] = []
    if state is not None:  # resume after the checkpoint's epoch
        module.load_state_dict(state["module"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        best, best_epoch, stale = float(state["best"]), int(state["best_epoch"]), int(state["stale"])
        best_state, dev_history = dict(state["best_state"]), list(state["dev_history"])
        extra_counts = list(state["extra_examples"])
        epoch = int(state["epoch"])
        first = settings.epochs + 1 if stale >= settings.patience else epoch + 1
    for epoch in range(first, settings.epochs + 1):
        epoch_texts, epoch_labels = texts, labels
        if epoch_examples is not None:
            extra = _epoch_extra(epoch_examples, epoch, settings, module, tokenizer, label_names, progress, started,
                                 placement)
            extra_counts.append(len(extra))
            if extra:
                epoch_texts = texts + [e.text for e in extra]
                epoch_labels = torch.cat([labels, torch.as_tensor([e.label for e in extra], dtype=torch.long,
                                                                  device=device)])
        steps = math.ceil(len(epoch_texts) / settings.batch_size)
        module.train()
        order = torch.randperm(len(epoch_texts), generator=generator)  # the CPU generator: same order anywhere
        for step in range(steps):
            rows = order[step * settings.batch_size : (step + 1) * settings.batch_size]
            encoded = tokenizer.encode([epoch_texts[i] for i in rows.tolist()])
            ids = torch.as_tensor(encoded.ids, device=device)
            mask = torch.as_tensor(encoded.mask, device=device)
            loss = F.cross_entropy(module(ids, mask), epoch_labels[rows.to(device)])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if settings.clip is not None:
                torch.nn.utils.clip_grad_norm_(params, settings.clip)
            optimizer.step()
            # the fused kernel updates in place without bumping the version counters that
            # caches of the weights key on (zoo.cnn_edits' stacked kernels): bump them
            torch.autograd.graph.increment_version(params)
            scheduler.step()
            if progress is not None:
                progress(TrainingEvent("step", epoch, settings.epochs, step + 1, steps, float(loss.detach()),
                                       None, best if best >= 0 else None, time.perf_counter() - started))
        dev_accuracy = accuracy(module, tokenizer, dev, settings.eval_batch_size)
        dev_history.append(round(dev_accuracy, 6))
        if epoch < select_from:
            pass  # a warm-up epoch: never the kept model, no count towards early stopping
        elif dev_accuracy > best:
            best, best_epoch, stale = dev_accuracy, epoch, 0
            best_state = {k: v.detach().clone() for k, v in module.state_dict().items()}
        else:
            stale += 1
        if checkpoint is not None:
            _write_checkpoint(checkpoint, {
                "fingerprint": dict(fingerprint or {}), "epoch": epoch, "module": module.state_dict(),
                "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "generator": generator.get_state(), "torch_rng": torch.get_rng_state(), "best": best,
                "best_epoch": best_epoch, "stale": stale, "best_state": best_state, "dev_history": dev_history,
                "extra_examples": extra_counts, "elapsed": time.perf_counter() - started})
        if progress is not None:
            progress(TrainingEvent("epoch", epoch, settings.epochs, steps, steps, None, dev_accuracy,
                                   best if best >= 0 else None, time.perf_counter() - started))
        if stale >= settings.patience:
            break
    module.load_state_dict(best_state)
    module.eval()
    return {"best_dev_accuracy": best, "best_epoch": best_epoch, "epochs_run": epoch, "dev_history": dev_history,
            "extra_examples": extra_counts}


def _epoch_extra(epoch_examples: EpochExamples, epoch: int, settings: TrainingConfig, module: Any, tokenizer: Any,
                 label_names: Sequence[str], progress: Progress | None, started: float,
                 placement: Placement | None = None) -> list[Example]:
    """The examples ``epoch_examples`` adds to ``epoch``, checked; progress as "extra" events."""
    from textrobust.victims.torch import TorchVictim

    module.eval()
    victim = TorchVictim(module, tokenizer, label_names, batch_size=settings.eval_batch_size, placement=placement)

    def report(done: int, total: int) -> None:
        if progress is not None:
            progress(TrainingEvent("extra", epoch, settings.epochs, done, total, None, None, None,
                                   time.perf_counter() - started))

    produced = list(epoch_examples(epoch, victim, report))
    if not all(isinstance(e, Example) and 0 <= e.label < len(label_names) for e in produced):
        raise ConfigError(f"The 'epoch_examples' callable must return Examples with labels in [0, {len(label_names)}) "
                          f"(epoch {epoch}).")
    return produced


def _write_checkpoint(path: Path, state: Mapping[str, Any]) -> None:
    """``state`` to ``path`` atomically (a temporary file beside it, then renamed)."""
    import os

    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(dict(state), tmp)
    os.replace(tmp, path)


def _read_checkpoint(path: Path, fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """The checkpoint at ``path`` when it was written by a training with ``fingerprint``."""
    import torch

    if not path.is_file():
        raise ConfigError(f"Nothing to resume: {path.parent} holds no {CHECKPOINT_FILE} (a finished training "
                          "leaves none). Run without --resume to train from the start.")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a truncated or foreign file
        raise ConfigError(f"{path} could not be read as a training checkpoint: {exc}. Delete it to train from "
                          "the start.") from None
    saved = state.get("fingerprint", {}) if isinstance(state, dict) else {}
    differ = sorted(k for k in {*saved, *fingerprint} if saved.get(k) != fingerprint.get(k))
    if differ:
        raise ConfigError(f"The checkpoint in {path.parent} was written by a training with other settings "
                          f"({', '.join(differ)} differ). Resume with the same options, or run without --resume "
                          "to train from the start.")
    return state


def _predict(module: Any, tokenizer: Any, texts: Sequence[Any], batch_size: int) -> np.ndarray:
    import torch

    module.eval()
    device = next(module.parameters()).device  # the batches are created where the module is
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    preds = np.empty(len(texts), dtype=np.int64)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            encoded = tokenizer.encode([texts[i] for i in rows])
            logits = module(torch.as_tensor(encoded.ids, device=device), torch.as_tensor(encoded.mask, device=device))
            preds[rows] = logits.argmax(dim=1).cpu().numpy()
    return preds


def _notes(settings: TrainingConfig, data: TrainingData, used: int) -> str:
    if settings.max_train_examples is not None and used < len(data.train):
        return f"trained on a seeded subset of {used} of {len(data.train)} training examples"
    return ""


def _save(
    out: Path,
    architecture: Architecture,
    module: Any,
    tokenizer: Any,
    model_config: Config,
    label_names: Sequence[str],
    card: VictimCard,
) -> Path:
    from textrobust.zoo.io import save_victim, write_victim_folder

    if architecture.kind == "huggingface":

        def write(folder: Path) -> None:
            module.save(folder)
            tokenizer.save(folder)
            card.save(folder)

        return write_victim_folder(out, write)
    return save_victim(
        out, module=module, vocab=tokenizer, architecture=architecture.name, model_config=model_config,
        label_names=label_names, card=card,
    )
