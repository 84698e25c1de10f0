"""Where torch components run and in what float type: ``--device`` and ``--dtype``.

One :class:`Placement` (a device and a dtype, both checked) is chosen per run and handed to
every torch component that the run builds: victims, the causal language model, fill-in
models, sentence encoders; attributions and bounds follow the victim's own device. A
device that is asked for and absent is a :class:`~textrobust.errors.ConfigError` (exit 2
from the CLI), never a silent fallback to the CPU: an audit that was asked to run on a GPU
and quietly ran on a CPU would misreport its own timings.

``auto`` means CUDA when torch sees a CUDA device, else the CPU (never MPS: Apple's
backend lacks some operations the bounds use, so it must be asked for by name).

Reduced precision changes the model being audited. :func:`agreement` measures how often
the reduced-precision victim predicts the same class as the float32 one on a sample of
the data; the orchestrator refuses below :data:`MIN_AGREEMENT` unless told otherwise.

torch is imported only when a placement is resolved, never when this module is imported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from textrobust.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["DEVICE_HELP", "DTYPES", "DTYPE_HELP", "MIN_AGREEMENT", "Placement", "agreement", "device_name",
           "dtype_name", "resolve_device", "resolve_placement", "steady_attention", "torch_dtype"]

#: The float types a run may use, by their CLI names.
DTYPES = ("float32", "bfloat16", "float16")

#: The least share of a sample on which a reduced-precision victim must predict the same
#: class as its float32 self before an audit runs on it (issue 31: "an audit must audit
#: the user's model, not a different one").
MIN_AGREEMENT = 0.99

DEVICE_HELP = ("Where torch models run: auto (CUDA when torch sees a GPU, else the CPU), cpu, cuda, cuda:N or "
               "mps. A device that is absent is an error, not a fallback.")
DTYPE_HELP = ("Float type of the victim and helper models: float32, bfloat16 or float16 (a GPU's). Below "
              "float32 the victim's predictions are first compared with float32 on a sample; the run refuses "
              "below 99% agreement unless --allow-precision-change.")


@dataclass(frozen=True)
class Placement:
    """A checked device (``"cpu"``, ``"cuda:0"``, ``"mps"``) and float type name."""

    device: str = "cpu"
    dtype: str = "float32"

    @property
    def reduced(self) -> bool:
        """True below float32."""
        return self.dtype != "float32"

    def torch_device(self) -> torch.device:
        """The device as a ``torch.device``."""
        import torch

        return torch.device(self.device)

    def torch_dtype(self) -> torch.dtype:
        """The float type as a ``torch.dtype``."""
        return torch_dtype(self.dtype)

    def place(self, module: Any) -> Any:
        """``module`` moved to the device and cast to the float type (in place, returned)."""
        return module.to(device=self.torch_device(), dtype=self.torch_dtype())

    def to_dict(self) -> dict[str, str]:
        """JSON-ready: what the model card and ``summary.json`` record."""
        return {"device": self.device, "dtype": self.dtype}


#: Who names the device and the float type, for messages (Python callers too: the options).
DEVICE_SUBJECT = "The '--device' option"
DTYPE_SUBJECT = "The '--dtype' option"


def device_name(spec: object, subject: str = DEVICE_SUBJECT) -> str:
    """``spec`` trimmed and in lower case when it has the form of a device textrobust
    knows: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` (N a GPU number: 0, 1, ...) or ``mps``
    (None is ``auto``); anything else, an empty string or a value that is not a string
    included, is a ConfigError naming ``subject``. Only the name is checked, without
    torch: :func:`resolve_device` checks that the device is there.

    >>> device_name(" CUDA:1 ")
    'cuda:1'
    """
    if spec is None:
        return "auto"
    text = spec.strip().lower() if isinstance(spec, str) else None
    if text in ("auto", "cpu", "cuda", "mps"):
        return text
    if text is not None and text.startswith("cuda:"):
        index = text.partition(":")[2]
        if index.isascii() and index.isdigit():  # not "-1", nor "²", which int() would not read
            return text
        raise ConfigError(f"{subject} must be cuda or cuda:N with N a GPU number (0, 1, ...). Got {spec!r} instead.")
    raise ConfigError(f"{subject} must be auto, cpu, cuda, cuda:N or mps. Got {spec!r} instead.")


def dtype_name(name: object, subject: str = DTYPE_SUBJECT) -> str:
    """``name`` trimmed and in lower case when it is one of :data:`DTYPES` (None is
    ``float32``), else a ConfigError naming ``subject``.

    >>> dtype_name("BFloat16")
    'bfloat16'
    """
    if name is None:
        return "float32"
    text = name.strip().lower() if isinstance(name, str) else None
    if text not in DTYPES:
        raise ConfigError(f"{subject} must be one of {', '.join(DTYPES)}. Got {name!r} instead.")
    return text


def torch_dtype(name: str) -> torch.dtype:
    """The ``torch.dtype`` of a :data:`DTYPES` name."""
    import torch

    checked = dtype_name(name)
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[checked]


def resolve_device(spec: str | None = "auto") -> str:
    """The device named by ``spec`` (``auto``, ``cpu``, ``cuda``, ``cuda:N``, ``mps``:
    :func:`device_name`), checked to exist on this machine; ``cuda`` becomes ``cuda:0``.

    >>> resolve_device("cpu")
    'cpu'
    """
    text = device_name(spec)
    import torch

    if text == "auto":
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    if text == "cpu":
        return "cpu"
    if text == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ConfigError("The '--device' option asks for mps, but torch sees no Apple GPU (MPS) on this "
                              "machine. Use --device cpu or auto.")
        return "mps"
    # cuda or cuda:N (device_name let nothing else through)
    index_text = text.partition(":")[2] or "0"
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        raise ConfigError(f"The '--device' option asks for {text}, but torch sees no CUDA device on this "
                          f"machine (torch {torch.__version__}, {build}). Use --device cpu or auto.")
    count = torch.cuda.device_count()
    if int(index_text) >= count:
        raise ConfigError(f"The '--device' option asks for cuda:{int(index_text)}, but this machine has {count} "
                          f"CUDA device(s): cuda:0 to cuda:{count - 1}.")
    return f"cuda:{int(index_text)}"


def resolve_placement(device: str | None = "auto", dtype: str | None = "float32") -> Placement:
    """A checked :class:`Placement`. float16 needs a GPU: on the CPU torch lacks half
    kernels for several layers the victims use, so it is refused (bfloat16 is the CPU's
    reduced precision)."""
    name = dtype_name(dtype)  # both names checked before torch looks for the device
    where = resolve_device(device)
    if name == "float16" and where == "cpu":
        raise ConfigError("The '--dtype' option float16 needs a GPU; on the CPU use bfloat16 (or float32).")
    return Placement(device=where, dtype=name)


def agreement(reference: np.ndarray, reduced: np.ndarray) -> float:
    """The share of rows on which two probability matrices (float32 and reduced precision,
    same texts) predict the same class."""
    a, b = np.asarray(reference), np.asarray(reduced)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"agreement() needs two [n, classes] matrices of one shape; got {a.shape} and {b.shape}.")
    if len(a) == 0:
        return 1.0
    return float(np.mean(a.argmax(axis=1) == b.argmax(axis=1)))


def texts_sample(texts: Sequence[Any], n: int = 200) -> list[Any]:
    """An evenly spread sample of at most ``n`` of ``texts`` (deterministic), for the
    precision check."""
    if len(texts) <= n:
        return list(texts)
    step = len(texts) / n
    return [texts[int(i * step)] for i in range(n)]


@contextlib.contextmanager
def steady_attention(device: Any) -> Iterator[None]:
    """Run a transformer's attention on the CUDA backends that need no per-shape plan.

    Measured on an H200 (torch 2.11, 2026-11-28, ``benchmarks/gpu/dtype_probe.py``): in
    bfloat16 and float16 torch picks cuDNN's fused attention, which builds an execution plan
    for every new (batch, length) shape, about 2.5 ms per layer: BERT-base over 640 texts
    of new lengths took 4.2 s the first time and 0.19 s the second. A victim sees new
    shapes on every call (each batch is padded to its own longest text), so those plans
    were most of its time. Flash and memory-efficient attention compile nothing per shape
    and give the same probabilities within float tolerance. A no-op off CUDA.
    """
    kind = getattr(device, "type", str(device).split(":")[0])
    if kind != "cuda":
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield
