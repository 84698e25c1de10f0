"""The CNN's answer to a batch of *edits of one text*, computed without re-running the
convolution over the words the edits leave alone.

An attack sends the victim batches of near-copies: every candidate of greedy search is the
current text with one word changed, every member of a genetic population differs from
the original in a few words. In a convolution of width w, a changed word at position p
only changes the w windows that start in ``[p - w + 1, p]``; every other window's
activation is that of the shared text, and by linearity a window holding an edit at
offset k differs from the shared text's window by ``(E[new] - E[old]) . W_k`` before the
ReLU. So the batch's *reference* row (the most common id in every column) is convolved
once (pre-activations ``z_ref``), each edit costs one product of its embedding change with
the kernels, and the max over time is the larger of the edited windows' maximum and the
reference's maximum over the untouched windows (a prefix/suffix maximum for one edit, a
range-maximum table for more). A leave-one-out batch (each row the text with one word
deleted, as the delete word-importance ranking sends) keeps the full text's windows before
the gap and, shifted by one, after it; only the w - 1 windows over the gap are new. The
convolutions of all widths run as one of the widest width (narrower kernels padded with
zero weights).

Same numbers as :meth:`CnnClassifier.forward_embedded` up to float32 rounding (about
1e-6 on the logits: the same dot products, summed in another order); the tests compare the
two on random batches. Written here because no library offers incremental evaluation of
a convolution over edited inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, cast

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["MAX_EDITS", "MIN_ROWS", "CnnLike", "edited_forward", "grouped_edited_forward"]

#: Rows may differ from the reference in at most this many positions (more on long texts:
#: as long as the recomputed windows cover at most half of them).
MAX_EDITS = 3
#: Below this many rows the full forward pass is as cheap.
MIN_ROWS = 4


class CnnLike(Protocol):
    """What this module reads of a :class:`textrobust.zoo.cnn.CnnClassifier` (a protocol
    rather than an import: the classifier imports this module)."""

    config: Any  # its ``widths``
    embedding: nn.Embedding
    convs: nn.ModuleList
    dropout: nn.Dropout
    out: nn.Linear

    def embed(self, ids: torch.Tensor) -> torch.Tensor: ...

    def forward_embedded(self, embeddings: torch.Tensor, mask: torch.Tensor) -> torch.Tensor: ...


def edited_forward(model: CnnLike, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
    """Logits ``[B, L]`` of ``ids`` ``[B, T]`` when the rows are edits of one text (same
    mask, at most :data:`MAX_EDITS` positions off the column-wise most common id, or
    more when their windows cover at most half of the text; or the text's leave-one-out
    deletions); None when they are not, and the caller
    runs the full forward pass."""
    rows = ids.shape[0]
    if rows < MIN_ROWS:
        return None
    if not bool((mask == mask[0]).all()):
        return None
    mask0 = mask[0]
    n = int(mask0.sum())
    if n == 0 or not bool(mask0[:n].all()):
        return None
    widest = max(model.config.widths)
    reference = torch.mode(ids, dim=0).values  # [T]
    diff = (ids != reference) & mask0  # padding columns are masked out of every row anyway
    edits = int(diff.sum(dim=1).max())
    if edits > MAX_EDITS and 2 * edits * widest > n:
        found = _deleted_from(ids[:, :n])
        if found is None:
            return None
        return _deletions_forward(model, ids[:, :n], *found, widest)
    edits = max(edits, 1)
    # positions of each row's edits, in order; a row with fewer edits pads with a
    # non-edit ("real" False), whose embedding change is zero
    order = torch.sort(diff.to(torch.int8), dim=1, descending=True, stable=True)
    positions = order.indices[:, :edits]  # [B, m]
    real = order.values[:, :edits].bool()

    kernels = _stacked_kernels(model, widest)
    z_ref = _reference(model, kernels, reference[:n])  # [n, F], before the ReLU
    # what each edit adds to a window that holds it at offset k: (E[new] - E[old]) . W_k
    change = model.embedding(ids.gather(1, positions)) - model.embedding(reference[positions])  # [B, m, D]
    change = change * real.unsqueeze(-1)
    delta = (change.reshape(rows * edits, -1) @ kernels.by_offset).reshape(rows, edits, widest, -1)  # [B, m, w, F]
    new = _edited_windows(z_ref, delta, positions, real, widest)  # [B, F]
    a_ref = F.relu(z_ref).T  # [F, n]
    if edits == 1:
        kept = _outside_one_window(a_ref, positions[:, 0], widest)
    else:
        kept = _outside_windows(a_ref, positions, widest)
    return model.out(model.dropout(torch.maximum(new, kept)))


def grouped_edited_forward(model: CnnLike, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
    """Logits ``[B, L]`` of a batch that mixes the edits of *several* texts (the lockstep
    executor merges the requests of several attacks into one forward pass): the rows are
    cut into runs of consecutive rows of the same length, each within ``2 * MAX_EDITS``
    words (and half the text) of the row before it (the batch's rows keep their request
    order within one length, so one attack's candidates are one run); each run of at least
    :data:`MIN_ROWS` rows goes through :func:`edited_forward` (which checks it), the other
    rows through one full forward pass. None when no run is evaluated incrementally (the
    caller runs the full pass)."""
    rows = ids.shape[0]
    if rows < 2 * MIN_ROWS:
        return None
    lengths = mask.sum(dim=1)
    prefix = mask.to(torch.int8).cumprod(dim=1).sum(dim=1)
    if not bool((prefix == lengths).all()):
        return None  # a mask with holes: not a batch of plain texts
    if bool((lengths == lengths[0]).all()) and int(((ids != ids[0]) & mask).sum(dim=1).max()) * 2 <= int(lengths[0]):
        return None  # one text's family (e.g. a population with many edits): nothing to split
    # a run continues while a row has its predecessor's length and differs from it in at
    # most 2 * MAX_EDITS words (and at most half of them: two short texts are not one)
    limit = torch.clamp(lengths[1:] // 2, min=1).clamp(max=2 * MAX_EDITS)
    close = ((ids[1:] != ids[:-1]) & mask[1:]).sum(dim=1) <= limit
    breaks = (~((lengths[1:] == lengths[:-1]) & close)).nonzero().flatten().add(1).tolist()
    if not breaks:
        return None  # one run: the batch edited_forward has already declined
    bounds = [0, *breaks, rows]
    runs = [(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    if all(b - a < MIN_ROWS for a, b in runs):
        return None
    lengths_list = lengths.tolist()
    out: torch.Tensor | None = None
    rest: list[int] = []
    for a, b in runs:
        n = lengths_list[a]
        logits = edited_forward(model, ids[a:b, :n], mask[a:b, :n]) if b - a >= MIN_ROWS and n > 0 else None
        if logits is None:
            rest.extend(range(a, b))
            continue
        if out is None:
            out = logits.new_empty((rows, logits.shape[1]))
        out[a:b] = logits
    if out is None:
        return None
    if rest:
        index = torch.tensor(rest, dtype=torch.long)
        width = max(int(lengths[index].max()), 1)
        out[index] = model.forward_embedded(model.embed(ids[index, :width]), mask[index, :width])
    return out


def _reference(model: CnnLike, kernels: _Kernels, words: torch.Tensor) -> torch.Tensor:
    """The pre-activations ``[n, F]`` of every window of the text ``words`` ``[n]``
    (windows running past the end over zeros)."""
    w = kernels.width
    windows = F.pad(model.embedding(words), (0, 0, 0, w - 1)).unfold(0, w, 1)  # [n, D, w]
    return F.linear(windows.reshape(len(words), -1), kernels.flat, kernels.bias)


def _deleted_from(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The text ``[n + 1]`` of which every row of ``rows`` ``[B, n]`` is a copy with one
    word deleted (a leave-one-out batch) and where each row lost its word, or None. Guessed from the first two rows that
    differ, then verified on every row."""
    first = rows[0]
    differs = (rows != first).any(dim=1).nonzero()
    if len(differs) == 0:
        return None
    other = rows[int(differs[0])]
    c = int((first != other).nonzero()[0])
    # either `first` lost a word at c and `other` later, or the other way round
    for early, late in ((other, first), (first, other)):
        guess = torch.cat([early[: c + 1], late[c:]])
        deleted = _deletion_positions(rows, guess)
        if deleted is not None:
            return guess, deleted
    return None


def _deletion_positions(rows: torch.Tensor, original: torch.Tensor) -> torch.Tensor | None:
    """Where each row lost its word of ``original`` (the first position it differs), or
    None when a row is not ``original`` with one word deleted."""
    n = rows.shape[1]
    same_prefix = (rows == original[:n]).to(torch.int8).cumprod(dim=1)
    deleted = same_prefix.sum(dim=1)  # first position that differs (n: the last word was deleted)
    after = torch.arange(n) >= deleted.unsqueeze(1)
    if not bool(((rows == original[1:]) | ~after).all()):
        return None
    return deleted


def _deletions_forward(model: CnnLike, rows: torch.Tensor, original: torch.Tensor, deleted: torch.Tensor,
                       w: int) -> torch.Tensor:
    """Logits of a leave-one-out batch: a row without word d keeps ``original``'s windows
    that start before ``d - w + 1`` and, shifted by one, those that start after d; only the
    ``w - 1`` windows straddling the gap are new."""
    total = len(original)
    kernels = _stacked_kernels(model, w)
    z = _reference(model, kernels, original)
    kept = _outside_one_window(F.relu(z).T, deleted, w)
    if w == 1:  # no window straddles the gap
        return model.out(model.dropout(kept))
    starts = deleted.unsqueeze(1) - (w - 1) + torch.arange(w - 1)  # [B, w-1]: the row's windows over the gap
    index = starts.unsqueeze(-1) + torch.arange(w)  # [B, w-1, w], in the row's words
    index = index + (index >= deleted[:, None, None]).to(index.dtype)  # in the original's words
    inside = (index >= 0) & (index < total)
    x = model.embedding(original[index.clamp(0, total - 1)]) * inside.unsqueeze(-1)
    h = F.relu(F.linear(x.transpose(-1, -2).reshape(*starts.shape, -1), kernels.flat, kernels.bias))
    new = h.masked_fill((starts < 0).unsqueeze(-1), 0.0).amax(dim=1)  # [B, F]
    return model.out(model.dropout(torch.maximum(new, kept)))


@dataclass(frozen=True)
class _Kernels:
    """Every convolution as one of the widest width (narrower kernels padded with zero
    weights on the right, so they see the same words), in the order of the model's pooled
    features: ``flat`` ``[F, D * w]`` for whole windows, ``by_offset`` ``[D, w * F]`` for
    one word's contribution at each offset, and the biases ``[F]``."""

    width: int
    flat: torch.Tensor
    by_offset: torch.Tensor
    bias: torch.Tensor


def _stacked_kernels(model: CnnLike, widest: int) -> _Kernels:
    """The model's :class:`_Kernels`, kept on the model until a weight changes (the key
    holds every parameter's storage and version counter)."""
    # the zoo CNN's convolutions always have a bias
    weights = [cast(torch.Tensor, conv.weight) for conv in model.convs]
    biases = [cast(torch.Tensor, conv.bias) for conv in model.convs]
    params = [p for pair in zip(weights, biases) for p in pair]
    key = (widest, *((p.data_ptr(), p._version) for p in params))
    cached = model.__dict__.get("_stacked_kernels")
    if cached is not None and cached[0] == key:
        return cached[1]
    weight = torch.cat([F.pad(w, (0, widest - width)) for w, width in zip(weights, model.config.widths)])
    kernels = _Kernels(
        width=widest,
        flat=weight.reshape(weight.shape[0], -1).contiguous(),
        by_offset=weight.permute(1, 2, 0).reshape(weight.shape[1], -1).contiguous(),
        bias=torch.cat(biases),
    )
    model.__dict__["_stacked_kernels"] = (key, kernels)
    return kernels


def _edited_windows(z_ref: torch.Tensor, delta: torch.Tensor, positions: torch.Tensor, real: torch.Tensor,
                    w: int) -> torch.Tensor:
    """The max over each row's windows that hold an edit (those starting in
    ``[p - w + 1, p]`` for each edit p, from position 0 on): ``[B, F]``. A window's value
    is the reference's plus the change of every edit inside it."""
    rows, edits = positions.shape
    starts = positions.unsqueeze(-1) - torch.arange(w)  # [B, m, w]: window (i, k) holds edit i at offset k
    z = z_ref[starts.clamp(min=0)] + delta  # [B, m, w, F]: each window with its own edit
    # ... plus every other edit that falls inside it (edits closer than w words apart)
    flat_delta = delta.reshape(rows * edits * w, -1)
    for shift in range(1, edits):
        other = (torch.arange(edits) + shift) % edits  # [m]: window (i, k) also gets edit other[i]
        offsets = positions[:, other].unsqueeze(-1) - starts  # [B, m, w]: its offset in the window
        inside = (offsets >= 0) & (offsets < w) & real[:, other].unsqueeze(-1)
        if not bool(inside.any()):
            continue
        flat = (torch.arange(rows)[:, None, None] * (edits * w) + other[None, :, None] * w
                + offsets.clamp(0, w - 1)).reshape(-1)
        z = z + flat_delta.index_select(0, flat).reshape(z.shape) * inside.unsqueeze(-1)
    return F.relu(z).masked_fill((starts < 0).unsqueeze(-1), 0.0).amax(dim=(1, 2))  # ReLU >= 0: 0 is neutral


def _outside_one_window(a_ref: torch.Tensor, p: torch.Tensor, w: int) -> torch.Tensor:
    """The reference's max over the windows not starting in ``[p - w + 1, p]``, by prefix
    and suffix maxima: ``[B, F]``."""
    t = a_ref.shape[1]
    prefix = F.pad(torch.cummax(a_ref, dim=1).values, (1, 0))  # prefix[:, k] = max over starts < k
    suffix = F.pad(torch.cummax(a_ref.flip(1), dim=1).values.flip(1), (0, 1))  # suffix[:, k] = max over >= k
    left = prefix.index_select(1, (p - w + 1).clamp(min=0))  # [F, B]
    right = suffix.index_select(1, (p + 1).clamp(max=t))
    return torch.maximum(left, right).T


def _outside_windows(a_ref: torch.Tensor, positions: torch.Tensor, w: int) -> torch.Tensor:
    """The reference's max over the windows no edit touches, ``[B, F]``: with the edits
    sorted, q_1 < ... < q_m, the untouched starts are the runs ``[0, q_1 - w]``,
    ``[q_i + 1, q_{i+1} - w]`` and ``[q_m + 1, n - 1]``, each a range-maximum query."""
    rows = positions.shape[0]
    n = a_ref.shape[1]
    q = positions.sort(dim=1).values
    lefts = torch.cat([q.new_zeros(rows, 1), q + 1], dim=1)  # [B, m + 1]
    rights = torch.cat([q - w, q.new_full((rows, 1), n - 1)], dim=1)
    return _range_max(a_ref, lefts, rights).amax(dim=2).T


def _range_max(a: torch.Tensor, lefts: torch.Tensor, rights: torch.Tensor) -> torch.Tensor:
    """``max(a[:, l..r])`` for every pair of ``lefts``/``rights`` ``[B, S]`` (0 for an
    empty range, neutral after a ReLU), by a sparse table of maxima over spans of 2^j:
    ``[F, B, S]``."""
    filters, n = a.shape
    levels, span = [a], 1
    while 2 * span <= n:
        previous = levels[-1]
        levels.append(F.pad(torch.maximum(previous[:, : n - span], previous[:, span:]), (0, span)))
        span *= 2
    table = torch.stack(levels, dim=1).reshape(filters, -1)  # [F, J * n]: level j's entry i at j * n + i
    lefts, rights = lefts.clamp(min=0), rights.clamp(max=n - 1)
    length = rights - lefts + 1
    empty = length < 1
    level = torch.tensor([0] + [i.bit_length() - 1 for i in range(1, n + 1)])[length.clamp(1, n)]
    first = (level * n + lefts.clamp(0, n - 1)).reshape(-1)
    last = (level * n + (rights - (1 << level) + 1).clamp(0, n - 1)).reshape(-1)
    found = torch.maximum(table.index_select(1, first), table.index_select(1, last)).reshape(filters, *lefts.shape)
    return found.masked_fill(empty.unsqueeze(0), 0.0)
