"""Batching across examples: several searches in lockstep share one victim's forward passes.

A greedy search on a small victim sends batches of about 25 texts; a forward pass over 25
texts costs far more per text than one over a few hundred. A :class:`BatchingGate` lets
``members`` threads (each running its own example's search behind its own
:class:`~textrobust.victims.query.QueryLayer`, so budgets, caches and query counts stay per
example) submit their texts and wait; when every member still working is waiting, one
forward pass scores all of their texts, and each gets its own rows back. The Python work
of the searches (serialised by the GIL anyway) fills the time between forward passes.

Results do not depend on the merge for victims whose answer for a text does not depend
on the rest of its batch (every zoo model masks its padding; see
:class:`~textrobust.victims.torch.TorchVictim`). A merged call that raises, or returns the
wrong shape, is retried one member at a time, so a text that breaks the victim is charged
to its own example only, as without the gate.

Members take turns (one runs at a time; a member hands its turn on while it waits for
the model), so nothing the members share, the model included, is used by two threads at
once (Hugging Face fast tokenizers, for one, must not be).

Written here: no maintained library batches requests of cooperating threads for a Python
callable (Ray Serve's ``@serve.batch`` does it for deployments on a Ray cluster, which a
local run must not need).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.errors import CapabilityError, ConfigError, TextRobustError
from textrobust.text import Text
from textrobust.victims.protocol import (
    AttentionVictim,
    Capabilities,
    GradientVictim,
    Victim,
    WordIdVictim,
    as_texts,
)
from textrobust.victims.protocol import unwrap as unwrap_stand_in

__all__ = ["BatchingGate", "GateClosed", "GateMember", "unwrap"]


class GateClosed(TextRobustError):
    """The gate was closed (the run was interrupted) while a member waited."""


@dataclass
class _Request:
    texts: list[Text]
    result: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = False


class BatchingGate:
    """Merges the forward requests of cooperating member threads into one call.

    Members take turns: a member runs only while it holds the gate's *turn*, and hands it
    on when it waits for the model (or leaves), so the members' own code never runs
    concurrently (components shared between them need not be thread-safe); the interleaving
    changes only where each member waits. Each member thread calls :meth:`enter` before
    its first unit and :meth:`leave` after its last; :meth:`open` arms the gate for a map.

    >>> from textrobust.victims.function import FunctionVictim
    >>> v = FunctionVictim(lambda s: np.array([[0.5, 0.5]] * len(s)), ("neg", "pos"))
    >>> gate = BatchingGate(v)
    >>> gate.open(1); gate.enter()
    >>> gate.member().probabilities(["fine"]).shape
    (1, 2)
    >>> gate.leave(); gate.stats()
    {'calls': 1, 'texts': 1, 'requests': 1}
    """

    def __init__(self, victim: Victim) -> None:
        self.victim = victim
        self._active = 0
        self._pending: list[_Request] = []
        self._condition = threading.Condition()
        self._turn = threading.Lock()
        self._closed = True
        self._calls = 0
        self._texts = 0
        self._requests = 0

    def member(self) -> GateMember:
        """A victim for one member thread (give each member its own QueryLayer over it)."""
        return GateMember(self)

    # ---- the members' life cycle ------------------------------------------------------
    def open(self, members: int) -> None:
        """Arm the gate for ``members`` member threads (before they start)."""
        if isinstance(members, bool) or not isinstance(members, int) or members < 1:
            raise ConfigError(f"The 'members' parameter of BatchingGate.open must be an int >= 1. Got {members!r}.")
        with self._condition:
            if self._active:
                raise TextRobustError("The batching gate is still in use by an earlier map.")
            self._active = members
            self._pending = []
            self._closed = False

    def enter(self) -> None:
        """A member thread starts: it waits for its turn."""
        self._turn.acquire()

    def leave(self) -> None:
        """A member has no more work: the others no longer wait for it; its turn passes on."""
        with self._condition:
            self._active -= 1
            if self._pending and len(self._pending) >= self._active:
                self._flush()
        self._turn.release()

    def close(self) -> None:
        """Wake every waiting member with :class:`GateClosed` (an interrupted run)."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    # ---- what members call ------------------------------------------------------------
    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        """The victim's probabilities for ``texts``, scored together with the texts every
        other working member is waiting on. The caller must hold its turn."""
        request = _Request(as_texts(texts))
        with self._condition:
            if self._closed:
                raise GateClosed("The batching gate is closed: the run was interrupted.")
            self._pending.append(request)
            self._requests += 1
            if len(self._pending) >= self._active:
                self._flush()
        self._turn.release()  # let the other members run while this one waits
        try:
            with self._condition:
                while not request.done:
                    if self._closed:
                        raise GateClosed("The batching gate is closed: the run was interrupted.")
                    self._condition.wait()
        finally:
            self._turn.acquire()
        if request.error is not None:
            raise request.error
        if request.result is None:  # a flush always sets one of the two; never user input
            raise TextRobustError("The batching gate returned no answer (please report this bug).")
        return request.result

    def stats(self) -> dict[str, int]:
        """Forward calls made, texts scored and member requests merged into them."""
        return {"calls": self._calls, "texts": self._texts, "requests": self._requests}

    # ---- internals (the condition is held) ----------------------------------------------
    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        texts = [t for r in batch for t in r.texts]
        try:
            merged = self._score(texts)
            if merged.shape != (len(texts), len(self.victim.label_names)):
                raise ValueError("merged answer of the wrong shape")
        except Exception:  # noqa: BLE001 - retried per member below, each gets its own error
            merged = None
        if merged is not None:
            start = 0
            for request in batch:
                request.result = merged[start:start + len(request.texts)]
                start += len(request.texts)
                request.done = True
        else:
            for request in batch:
                try:
                    request.result = self._score(request.texts)
                except Exception as exc:  # noqa: BLE001 - handed to the member that asked
                    request.error = exc
                request.done = True
        self._condition.notify_all()

    def _score(self, texts: list[Text]) -> np.ndarray:
        probs = np.array(self.victim.probabilities(texts), dtype=np.float64, copy=True)
        self._calls += 1
        self._texts += len(texts)
        return probs


class GateMember:
    """One member's view of the victim: probabilities go through the gate. It declares
    what else it offers explicitly, no attribute is forwarded unseen: the victim's own
    ``capabilities`` and ``label_names``; gradients, attentions and word-id rows
    (:class:`~textrobust.victims.protocol.GradientVictim`, :class:`~textrobust.victims.
    protocol.WordIdVictim`) computed by the victim itself while the member holds its turn;
    ``sort_window`` (the query layer's call size); and, for white-box handles (an embedding
    layer, a tokenizer), :meth:`unwrap`, the victim itself
    (:func:`~textrobust.victims.protocol.embedding_victim` unwraps it)."""

    def __init__(self, gate: BatchingGate) -> None:
        self._gate = gate

    @property
    def victim(self) -> Victim:
        return self._gate.victim

    def unwrap(self) -> Victim:
        """The victim this member stands for (a :class:`~textrobust.victims.protocol.StandIn`)."""
        return self._gate.victim

    @property
    def label_names(self) -> tuple[str, ...]:
        return tuple(self._gate.victim.label_names)

    @property
    def capabilities(self) -> Capabilities:
        return self._gate.victim.capabilities

    def probabilities(self, texts: Sequence[Text | str]) -> np.ndarray:
        return self._gate.probabilities(texts)

    # ---- declared capabilities, computed by the victim itself ---------------------------
    def word_gradients(self, texts: Sequence[Text], labels: Sequence[int]) -> list[np.ndarray]:
        """The victim's :meth:`~textrobust.victims.protocol.GradientVictim.word_gradients`."""
        victim = self._gate.victim
        if not isinstance(victim, GradientVictim) or not victim.capabilities.gradients:
            raise CapabilityError(f"word_gradients needs the 'gradients' capability, which {victim!r} does not declare.")
        return victim.word_gradients(texts, labels)

    def attentions(self, texts: Sequence[Text]) -> list[np.ndarray]:
        """The victim's attention maps (the ``attention`` capability)."""
        victim = self._gate.victim
        if not isinstance(victim, AttentionVictim) or not victim.capabilities.attention:
            raise CapabilityError(f"attentions needs the 'attention' capability, which {victim!r} does not declare.")
        return victim.attentions(texts)

    @property
    def accepts_word_ids(self) -> bool:
        """Whether the victim takes texts as rows of word ids."""
        victim = self._gate.victim
        return isinstance(victim, WordIdVictim) and bool(victim.accepts_word_ids)

    def probabilities_of_ids(self, ids: np.ndarray) -> np.ndarray:
        """The victim's :meth:`~textrobust.victims.protocol.WordIdVictim.probabilities_of_ids`
        (not merged with the other members': a layer of id rows is one large call already)."""
        victim = self._gate.victim
        if not isinstance(victim, WordIdVictim) or not victim.accepts_word_ids:
            raise CapabilityError(f"{victim!r} does not take texts as word ids.")
        return victim.probabilities_of_ids(ids)

    @property
    def sort_window(self) -> int | None:
        """The victim's ``sort_window`` (see :attr:`~textrobust.victims.query.QueryLayer.call_size`)."""
        window = getattr(self._gate.victim, "sort_window", None)  # optional: bucketing victims only
        return window if isinstance(window, int) and not isinstance(window, bool) else None

    def __repr__(self) -> str:
        return repr(self._gate.victim)


def unwrap(victim: Any) -> Any:
    """The victim behind a :class:`GateMember` (the victim itself otherwise): for code
    that needs the concrete victim type, e.g. to reach a model's embeddings."""
    return unwrap_stand_in(victim)
