"""Victim folders: save a trained zoo model, load any victim folder back.

A word-model folder holds ``config.json`` (format marker, architecture name, model
config, label names, vocabulary size), ``model.safetensors`` (weights, written with
``safetensors.torch.save_file``; never pickle), ``vocab.json`` and ``card.json``. A
fine-tuned MiniLM folder is a Hugging Face folder (``save_pretrained``: its own
``config.json``, ``model.safetensors`` and tokenizer files) plus ``card.json``.

Folders are written beside the target and renamed into place, so an interrupted save
never leaves a half-written victim behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from textrobust.config import Config
from textrobust.devices import Placement
from textrobust.errors import RegistryError, TextRobustError, VictimError
from textrobust.zoo.cards import CARD_FILE, VictimCard

__all__ = [
    "CONFIG_FILE",
    "FORMAT",
    "VOCAB_FILE",
    "WEIGHTS_FILE",
    "check_victim_target",
    "is_victim_folder",
    "load_victim",
    "read_card",
    "save_victim",
    "write_victim_folder",
]

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
VOCAB_FILE = "vocab.json"
#: written into a victim folder after every epoch of a training (``zoo.training``), removed
#: when the finished victim replaces the folder
CHECKPOINT_FILE = "training-checkpoint.pt"
FORMAT = "textrobust-victim"
FORMAT_VERSION = 1


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise VictimError(f"{path} could not be read as JSON: {exc}.") from None
    if not isinstance(data, dict):
        raise VictimError(f"{path} must hold a JSON object. Got {type(data).__name__}.")
    return data


def _folder_kind(folder: Path) -> str | None:
    """"word", "huggingface" or None (not a victim folder)."""
    config = folder / CONFIG_FILE
    if not config.is_file():
        return None
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return "word"
    if isinstance(data, dict) and "model_type" in data:
        return "huggingface"
    return None


def is_victim_folder(path: Path) -> bool:
    """True when ``path`` is a folder holding a victim this module can load."""
    path = Path(path)
    return path.is_dir() and _folder_kind(path) is not None and (path / WEIGHTS_FILE).is_file()


def check_victim_target(out: Path) -> Path:
    """``out`` resolved, if a victim may be saved there: a new folder, an empty one or a
    victim folder (replaced); else :class:`VictimError`. Check it before a long training,
    not only when saving."""
    out = Path(out).expanduser().resolve()
    if out.exists():
        if not out.is_dir():
            raise VictimError(f"Cannot save a victim to {out}: it exists and is not a folder.")
        # a folder holding only an interrupted training's checkpoint is ours to replace
        ours = (CHECKPOINT_FILE, f".{CHECKPOINT_FILE}.")  # the file, or its copy being written
        if any(not p.name.startswith(ours) for p in out.iterdir()) and _folder_kind(out) is None:
            raise VictimError(
                f"Cannot save a victim to {out}: the folder is not empty and is not a victim folder "
                f"(no {CONFIG_FILE} of a victim). Choose an empty or new folder."
            )
    return out


def write_victim_folder(out: Path, write: Callable[[Path], None]) -> Path:
    """Run ``write(tmp)`` on a fresh folder beside ``out``, then move it to ``out``.

    An existing ``out`` is replaced only when it is an empty folder or a victim folder;
    anything else raises :class:`VictimError` so no unrelated data is ever deleted.
    """
    out = check_victim_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        write(tmp)
        _default_permissions(tmp)
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _default_permissions(folder: Path) -> None:
    """mkdtemp makes a private (0700) folder: give the tree the modes the umask allows."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for path in folder.rglob("*"):
        path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def save_victim(
    out: Path,
    *,
    module: Any,
    vocab: Any,
    architecture: str,
    model_config: Config,
    label_names: Sequence[str],
    card: VictimCard | None = None,
) -> Path:
    """Save a word model (a :class:`~textrobust.zoo.base.ZooModule`) and its
    :class:`~textrobust.zoo.vocab.WordVocab` as a victim folder at ``out``."""
    from safetensors.torch import save_file

    def write(folder: Path) -> None:
        config = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "architecture": architecture,
            "model_config": model_config.to_dict(),
            "label_names": list(label_names),
            "num_labels": len(label_names),
            "vocab_size": len(vocab),
            "max_length": vocab.max_length,
        }
        (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        state = {k: v.detach().cpu().contiguous() for k, v in module.state_dict().items()}
        save_file(state, str(folder / WEIGHTS_FILE), metadata={"format": FORMAT, "architecture": architecture})
        vocab.save(folder / VOCAB_FILE)
        if card is not None:
            card.save(folder)

    return write_victim_folder(out, write)


def read_card(path: Path) -> VictimCard | None:
    """The card of the victim folder ``path``, or None when it has none."""
    path = Path(path).expanduser()
    return VictimCard.load(path) if (path / CARD_FILE).is_file() else None


def load_victim(path: Path | str, *, batch_size: int = 64, placement: Placement | None = None) -> Any:
    """Load the victim saved in the folder ``path``: a
    :class:`~textrobust.victims.torch.TorchVictim` for a zoo word model, a
    :class:`~textrobust.victims.huggingface.HuggingFaceVictim` for a Hugging Face folder
    (such as the fine-tuned MiniLM). The card, when present, is ``victim.card``.
    ``placement``: the device and float type the model runs in (``None``: the CPU in
    float32; see :mod:`textrobust.devices`)."""
    folder = Path(path).expanduser()
    expected = (
        f"a victim folder holds {CONFIG_FILE} and {WEIGHTS_FILE} (plus {VOCAB_FILE} for a zoo word "
        f"model, and {CARD_FILE}); train one with `textrobust train cnn --out FOLDER` "
        "(Python: textrobust.zoo.train_victim)"
    )
    if not folder.exists():
        raise VictimError(f"Victim folder {folder} does not exist: {expected}.")
    if not folder.is_dir():
        raise VictimError(f"{folder} is not a folder: {expected}.")
    if not (folder / CONFIG_FILE).is_file():
        raise VictimError(f"{folder} is not a victim folder: {CONFIG_FILE} is missing; {expected}.")
    try:
        json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VictimError(f"{folder / CONFIG_FILE} is not valid JSON (truncated or damaged?): {exc}.") from None
    kind = _folder_kind(folder)
    if kind is None:
        raise VictimError(
            f"{folder / CONFIG_FILE} is neither a textrobust victim config (format '{FORMAT}') nor a "
            f"Hugging Face model config (with 'model_type'); {expected}."
        )
    if not (folder / WEIGHTS_FILE).is_file():
        raise VictimError(f"{folder} is not a complete victim folder: {WEIGHTS_FILE} is missing; {expected}.")
    if (folder / WEIGHTS_FILE).stat().st_size == 0:
        raise VictimError(f"{folder / WEIGHTS_FILE} is empty (0 bytes): the weights were not saved completely; "
                          "save or train the victim again.")
    card = read_card(folder)
    if kind == "huggingface":
        return _load_huggingface(folder, card, batch_size, placement)
    return _load_word_model(folder, card, batch_size, expected, placement)


def _load_word_model(folder: Path, card: VictimCard | None, batch_size: int, expected: str,
                     placement: Placement | None = None) -> Any:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from textrobust.victims.torch import TorchVictim
    from textrobust.zoo.architectures import ZOO
    from textrobust.zoo.vocab import WordVocab

    config = _read_json(folder / CONFIG_FILE)
    for key in ("architecture", "model_config", "label_names", "vocab_size"):
        if key not in config:
            raise VictimError(f"{folder / CONFIG_FILE} lacks the key '{key}'; {expected}.")
    weights = folder / WEIGHTS_FILE
    try:
        arch = ZOO.get(str(config["architecture"]))
    except RegistryError as exc:
        raise VictimError(f"{folder / CONFIG_FILE}: {exc}") from None
    label_names = tuple(str(x) for x in config["label_names"])
    try:
        model_config = arch.make_config(_as_mapping(config["model_config"]))
    except TextRobustError as exc:
        raise VictimError(f"{folder / CONFIG_FILE} holds an invalid model config: {exc}") from None
    vocab = WordVocab.load(folder / VOCAB_FILE)
    if len(vocab) != int(config["vocab_size"]):
        raise VictimError(
            f"{folder / VOCAB_FILE} has {len(vocab)} tokens but {CONFIG_FILE} says vocab_size "
            f"{config['vocab_size']}: the files do not belong together."
        )
    module = arch.build(model_config, len(vocab), len(label_names))
    try:
        state = load_file(str(weights))
        module.load_state_dict(state, strict=True)
    except (SafetensorError, RuntimeError, OSError) as exc:
        raise VictimError(
            f"The weights in {weights} do not fit a '{arch.name}' model with the saved config: {exc}"
        ) from None
    return TorchVictim(module, vocab, label_names, batch_size=batch_size, name=arch.name, card=card,
                       placement=placement)


def _load_huggingface(folder: Path, card: VictimCard | None, batch_size: int,
                      placement: Placement | None = None) -> Any:
    from textrobust.victims.huggingface import HuggingFaceVictim

    label_names = list(card.label_names) if card is not None else None
    # read texts as the fine-tuning did: same truncation length
    max_length = int((card.model_config if card is not None else {}).get("max_length", 256))
    victim = HuggingFaceVictim.from_folder(folder, label_names=label_names, batch_size=batch_size, max_length=max_length,
                                           placement=placement)
    victim.card = card
    return victim


def _as_mapping(value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise VictimError(f"'model_config' must be a JSON object. Got {type(value).__name__}.")
    return value
