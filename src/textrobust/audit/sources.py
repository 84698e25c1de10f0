"""Where an audit's victim and data come from, in a form a worker process can rebuild.

A :class:`VictimSource` is ``"default"``, a victim folder, or (in-process only) a victim
object; a :class:`DataSource` is a bundled data set name, a file or folder path with its
column options, or a :class:`~textrobust.data.examples.Dataset` object. Both describe
themselves as JSON for the run store (resuming checks it) and the report.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textrobust.devices import Placement
from textrobust.errors import ConfigError

__all__ = ["DataSource", "VictimSource"]

# Victims loaded in this process, by folder and placement: every analysis of an audit (and
# every worker spec built in a process-pool worker) shares one loaded model per device and
# float type.
_LOADED: dict[tuple[str, Placement], Any] = {}


@dataclass(frozen=True)
class VictimSource:
    """A victim by folder (``"default"`` resolves to the default victim's folder, and a
    zoo architecture's name that is not a path, such as ``"lstm"``, to the folder
    ``textrobust train lstm`` saved in the cache), or an in-memory victim object (``obj``)."""

    path: str | None = None
    obj: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, victim: Any) -> VictimSource:
        if isinstance(victim, VictimSource):
            return victim
        if isinstance(victim, (str, os.PathLike)):
            if str(victim) == "default":
                from textrobust.zoo import ensure_default_victim

                return cls(path=str(ensure_default_victim()))
            path = Path(victim).expanduser()
            if isinstance(victim, str) and not path.exists():
                from textrobust.zoo import cached_victim

                cached = cached_victim(victim)
                if cached is not None:
                    return cls(path=str(cached))
            return cls(path=str(path))
        if hasattr(victim, "probabilities") and hasattr(victim, "label_names"):
            return cls(path=None, obj=victim)
        raise ConfigError(
            f"The 'victim' must be 'default', a victim folder or a Victim object (with probabilities() "
            f"and label_names). Got {type(victim).__name__}."
        )

    @property
    def name(self) -> str:
        if self.path is not None:
            return Path(self.path).name
        return getattr(self.obj, "name", None) or type(self.obj).__name__

    def describe(self) -> str:
        return self.path if self.path is not None else f"<{type(self.obj).__name__} object>"

    def load(self, placement: Placement | None = None, *, cache: bool = True) -> Any:
        """The victim: the object as given, or the folder's victim loaded on ``placement``
        (``None``: the CPU in float32), once per process, folder and placement
        (``cache=False``: a fresh copy that is not kept, such as the float32 reference of
        a reduced-precision run)."""
        if self.obj is not None:
            return self.obj
        from textrobust.zoo import load_victim

        where = placement or Placement()
        key = (self.path or "", where)
        if not cache:
            return _LOADED[key] if key in _LOADED else load_victim(key[0], placement=where)
        if key not in _LOADED:
            _LOADED[key] = load_victim(key[0], placement=where)
        return _LOADED[key]

    def portable(self) -> VictimSource:
        """This source for another process: a folder, or a victim object that pickles
        (e.g. a :class:`~textrobust.victims.function.FunctionVictim` of a module-level
        function)."""
        if self.path is not None:
            return VictimSource(path=self.path)
        import pickle

        try:
            pickle.dumps(self.obj)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means the same thing
            raise ConfigError(
                f"The victim object cannot be sent to worker processes ({type(exc).__name__}: {exc}); save it "
                "as a victim folder (textrobust.zoo) or use the local executor."
            ) from None
        return self

    def absolute(self, cwd: str | os.PathLike[str] | None = None) -> VictimSource:
        """This source with its folder as an absolute path, a relative one taken from
        ``cwd`` (default: this process's working directory), ``..`` removed but symbolic
        links kept (the path must name the folder on other machines too, where a link may
        not point where it points here); itself when it has no folder or an absolute one.
        For workers that may start in another directory: Ray actors on other nodes."""
        if self.path is None or os.path.isabs(self.path):
            return self
        base = os.fspath(cwd) if cwd is not None else os.getcwd()
        return VictimSource(path=os.path.normpath(os.path.join(base, self.path)))

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "obj": None if self.path is not None else self.obj}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "path", state["path"])
        object.__setattr__(self, "obj", state["obj"])


@dataclass(frozen=True)
class DataSource:
    """A data set by name or path with its split and column options, or a Dataset object."""

    ref: str | None
    split: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    obj: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, data: Any, *, split: str | None = None, options: Mapping[str, Any] | None = None) -> DataSource:
        from textrobust.data.examples import Dataset

        if isinstance(data, DataSource):
            return data
        if isinstance(data, Dataset):
            return cls(ref=None, split=data.split, obj=data)
        if isinstance(data, (str, os.PathLike)):
            return cls(ref=str(data), split=split, options=dict(options or {}))
        raise ConfigError(
            f"The 'data' must be a bundled data set name, a file or folder path, or a Dataset. "
            f"Got {type(data).__name__}."
        )

    def describe(self) -> dict[str, Any]:
        if self.obj is not None:
            return {"dataset": self.obj.name, "split": self.obj.split, "examples": len(self.obj)}
        return {"dataset": self.ref, "split": self.split, "options": dict(self.options)}

    def load(self) -> Any:
        if self.obj is not None:
            return self.obj
        from textrobust.data import DATASETS, load_dataset

        if self.ref in DATASETS and self.options:
            raise ConfigError(
                f"'{self.ref}' is a bundled data set with fixed columns and labels; the column options "
                f"{sorted(self.options)} apply to your own files only."
            )
        return load_dataset(self.ref or "", split=self.split, **dict(self.options))
