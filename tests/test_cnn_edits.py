"""The zoo CNN's incremental forward pass over batches of edits of one text
(:mod:`textrobust.zoo.cnn_edits`) gives the full pass's logits, and steps aside when the
batch is not such a batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from textrobust.text import Text
from textrobust.victims.torch import TorchVictim
from textrobust.zoo.cnn import CnnClassifier, CnnConfig
from textrobust.zoo.cnn_edits import MAX_EDITS, MIN_ROWS, edited_forward, grouped_edited_forward
from textrobust.zoo.vocab import WordVocab

VOCAB = 40


def _model(seed: int, widths: tuple[int, ...] = (3, 4, 5), labels: int = 3) -> CnnClassifier:
    torch.manual_seed(seed)
    model = CnnClassifier(CnnConfig(embed_dim=6, widths=widths, filters=5, dropout=0.0), VOCAB, labels).eval()
    with torch.no_grad():  # biases negative enough that some ReLUs are off: the max over time matters
        for conv in model.convs:
            conv.bias.sub_(0.3)
    return model


def _full(model: CnnClassifier, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return model.forward_embedded(model.embed(ids), mask)


def _padded(rows: torch.Tensor, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    mask = torch.ones(rows.shape, dtype=torch.bool)
    return F.pad(rows, (0, pad)), F.pad(mask, (0, pad))


widths_strategy = st.sampled_from([(3, 4, 5), (1,), (2, 3), (5,), (1, 7)])


@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), rows=st.integers(MIN_ROWS, 24),
       edits=st.integers(0, MAX_EDITS), pad=st.integers(0, 4), widths=widths_strategy,
       small_vocab=st.booleans())
def test_substitution_batches_give_the_full_logits(seed: int, n: int, rows: int, edits: int, pad: int,
                                                   widths: tuple[int, ...], small_vocab: bool) -> None:
    model = _model(seed % 97, widths)
    g = torch.Generator().manual_seed(seed)
    high = 4 if small_vocab else VOCAB  # few words: repeated words and ties in the column mode
    base = torch.randint(1, high, (n,), generator=g)
    batch = base.repeat(rows, 1)
    for r in range(rows):
        count = int(torch.randint(0, edits + 1, (1,), generator=g))
        for p in torch.randint(0, n, (count,), generator=g).tolist():
            batch[r, p] = int(torch.randint(1, high, (1,), generator=g))
    ids, mask = _padded(batch, pad)
    with torch.inference_mode():
        fast = edited_forward(model, ids, mask)
        full = _full(model, ids, mask)
    assert fast is not None  # at most MAX_EDITS off the mode in every row: always taken
    np.testing.assert_allclose(fast.numpy(), full.numpy(), atol=2e-5, rtol=1e-5)


@given(seed=st.integers(0, 10_000), n=st.integers(2, 30), pad=st.integers(0, 3), widths=widths_strategy,
       small_vocab=st.booleans(), sort=st.booleans())
def test_leave_one_out_batches_give_the_full_logits(seed: int, n: int, pad: int, widths: tuple[int, ...],
                                                    small_vocab: bool, sort: bool) -> None:
    model = _model(seed % 89, widths)
    g = torch.Generator().manual_seed(seed)
    original = torch.randint(1, 3 if small_vocab else VOCAB, (n,), generator=g)  # "a a b a ..." repeats
    chosen = torch.randperm(n, generator=g)[: max(MIN_ROWS, int(torch.randint(1, n + 1, (1,), generator=g)))]
    if sort:
        chosen = chosen.sort().values
    batch = torch.stack([torch.cat([original[:d], original[d + 1:]]) for d in chosen.tolist()])
    ids, mask = _padded(batch, pad)
    with torch.inference_mode():
        fast = edited_forward(model, ids, mask)
        full = _full(model, ids, mask)
    if fast is not None:
        np.testing.assert_allclose(fast.numpy(), full.numpy(), atol=2e-5, rtol=1e-5)


def test_a_typical_leave_one_out_batch_takes_the_incremental_path() -> None:
    model = _model(1)
    original = torch.arange(1, 21)
    batch = torch.stack([torch.cat([original[:d], original[d + 1:]]) for d in range(20)])
    mask = torch.ones(batch.shape, dtype=torch.bool)
    with torch.inference_mode():
        fast = edited_forward(model, batch, mask)
    assert fast is not None
    np.testing.assert_allclose(fast.numpy(), _full(model, batch, mask).detach().numpy(), atol=2e-5)


@pytest.mark.parametrize("case", ["few rows", "unequal lengths", "too many edits", "unrelated rows"])
def test_other_batches_take_the_full_pass(case: str) -> None:
    model = _model(2)
    g = torch.Generator().manual_seed(3)
    base = torch.randint(1, VOCAB, (12,), generator=g)
    batch = base.repeat(8, 1)
    mask = torch.ones(batch.shape, dtype=torch.bool)
    if case == "few rows":
        batch, mask = batch[: MIN_ROWS - 1], mask[: MIN_ROWS - 1]
    elif case == "unequal lengths":
        mask[0, 10:] = False
    elif case == "too many edits":
        batch[0, : MAX_EDITS + 1] = (batch[0, : MAX_EDITS + 1] % (VOCAB - 1)) + 1
    else:
        batch = torch.randint(1, VOCAB, batch.shape, generator=g)
    with torch.inference_mode():
        assert edited_forward(model, batch, mask) is None
        logits = model(batch, mask)  # the module falls back to the full pass
    np.testing.assert_allclose(logits.numpy(), _full(model, batch, mask).detach().numpy(), atol=1e-6)


def _candidates_at(position: int, words: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Six candidates of one random text, differing at ``position``, and their mask."""
    batch = torch.randint(1, VOCAB, (words,)).repeat(6, 1)
    batch[:, position] = torch.arange(1, 7)
    return batch, torch.ones(batch.shape, dtype=torch.bool)


def test_training_and_gradients_use_the_full_pass() -> None:
    model = _model(4)
    batch, mask = _candidates_at(3, 10)
    logits = model(batch, mask)  # grad mode: differentiable full pass
    logits.sum().backward()
    assert model.convs[0].weight.grad is not None and model.convs[0].weight.grad.abs().sum() > 0


def test_a_victim_answers_alike_with_and_without_the_incremental_pass() -> None:
    model = _model(5, labels=2)
    words = [f"w{i}" for i in range(VOCAB - 2)]
    vocab = WordVocab.build([Text.from_string(" ".join(words))], max_size=VOCAB - 2, max_length=64)
    victim = TorchVictim(model, vocab, ("neg", "pos"))
    start = Text.from_string(" ".join(words[:15]))
    texts = [start.replace(i % 15, words[(i * 7) % len(words)]) for i in range(30)]
    texts += [Text.from_string(" ".join(w for j, w in enumerate(start.words) if j != d)) for d in range(15)]
    fast = victim.probabilities(texts)
    model.incremental = False
    full = victim.probabilities(texts)
    np.testing.assert_allclose(fast, full, atol=1e-6)
    assert (fast.argmax(1) == full.argmax(1)).all()


def test_changed_weights_are_seen_by_the_next_incremental_pass() -> None:
    model = _model(6)
    batch, mask = _candidates_at(4, 12)
    with torch.inference_mode():
        before = edited_forward(model, batch, mask)
    with torch.no_grad():
        model.convs[1].weight.mul_(-2.0)  # in place, as an optimiser step or load_state_dict
    with torch.inference_mode():
        after = edited_forward(model, batch, mask)
        full = _full(model, batch, mask)
    assert before is not None and after is not None
    assert not torch.allclose(before, after)
    np.testing.assert_allclose(after.numpy(), full.numpy(), atol=2e-5)


@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), ranges=st.integers(1, 6))
def test_range_maxima_equal_brute_force(seed: int, n: int, ranges: int) -> None:
    from textrobust.zoo.cnn_edits import _range_max

    g = torch.Generator().manual_seed(seed)
    a = torch.rand(3, n, generator=g)
    lefts = torch.randint(-2, n + 2, (4, ranges), generator=g)
    rights = torch.randint(-2, n + 2, (4, ranges), generator=g)
    found = _range_max(a, lefts, rights)
    for b in range(4):
        for s in range(ranges):
            lo, hi = max(int(lefts[b, s]), 0), min(int(rights[b, s]), n - 1)
            expected = a[:, lo:hi + 1].amax(dim=1) if lo <= hi else torch.zeros(3)
            assert torch.equal(found[:, b, s], expected)


@given(seed=st.integers(0, 10_000), edits=st.integers(MAX_EDITS + 1, 6))
def test_long_texts_take_more_edits_incrementally(seed: int, edits: int) -> None:
    model = _model(seed % 83)
    g = torch.Generator().manual_seed(seed)
    n = 2 * edits * 5  # the recomputed windows (edits x widest width) cover half the text
    batch = torch.randint(1, VOCAB, (n,), generator=g).repeat(8, 1)
    for r in range(1, 8):  # rows edit disjoint positions, so the column mode is the original text
        chosen = torch.arange(r - 1, n, 7)[:edits]
        batch[r, chosen] = (batch[r, chosen] + r) % (VOCAB - 1) + 1  # never the original word
    mask = torch.ones(batch.shape, dtype=torch.bool)
    with torch.inference_mode():
        fast = edited_forward(model, batch, mask)
        full = _full(model, batch, mask)
    assert fast is not None
    np.testing.assert_allclose(fast.numpy(), full.numpy(), atol=2e-5, rtol=1e-5)


def test_a_victim_puts_layers_left_in_training_mode_back_in_inference_mode() -> None:
    torch.manual_seed(7)
    model = CnnClassifier(CnnConfig(embed_dim=6, filters=5, dropout=0.5), VOCAB, 2)
    words = [f"w{i}" for i in range(10)]
    victim = TorchVictim(model, WordVocab(words, max_length=16), ("neg", "pos"))
    texts = [Text.from_string(" ".join(words[: 3 + i])) for i in range(5)]
    expected = victim.probabilities(texts)
    model.train()  # the whole model, then one layer only: dropout would make answers random
    np.testing.assert_array_equal(victim.probabilities(texts), expected)
    model.dropout.train()
    np.testing.assert_array_equal(victim.probabilities(texts), expected)
    assert not any(m.training for m in model.modules())


@given(seed=st.integers(0, 10_000), texts=st.integers(2, 5), pad=st.integers(0, 3), widths=widths_strategy,
       same_length=st.booleans(), loner=st.booleans())
def test_merged_batches_of_several_texts_give_the_full_logits(seed: int, texts: int, pad: int,
                                                              widths: tuple[int, ...], same_length: bool,
                                                              loner: bool) -> None:
    # what the lockstep executor sends: several attacks' candidate runs in one batch,
    # ordered by length as the victim's batching does, padded to the longest
    model = _model(seed % 83, widths)
    g = torch.Generator().manual_seed(seed)
    runs = []
    for _ in range(texts):
        n = 9 if same_length else int(torch.randint(3, 16, (1,), generator=g))
        base = torch.randint(1, VOCAB, (n,), generator=g)
        rows = base.repeat(int(torch.randint(MIN_ROWS, 9, (1,), generator=g)), 1)
        p = int(torch.randint(0, n, (1,), generator=g))
        rows[:, p] = torch.randint(1, VOCAB, (len(rows),), generator=g)
        runs.append(rows)
    if loner:  # a single unrelated text (a start text's own prediction) among them
        runs.append(torch.randint(1, VOCAB, (1, 9), generator=g))
    runs.sort(key=len)  # any order of runs; the victim sorts rows by length (stably)
    runs.sort(key=lambda r: r.shape[1])
    width = max(r.shape[1] for r in runs) + pad
    ids = torch.cat([F.pad(r, (0, width - r.shape[1])) for r in runs])
    mask = torch.cat([F.pad(torch.ones(r.shape, dtype=torch.bool), (0, width - r.shape[1])) for r in runs])
    with torch.inference_mode():
        fast = grouped_edited_forward(model, ids, mask)
        full = _full(model, ids, mask)
        through_module = model(ids, mask)
    assert fast is not None  # every run has MIN_ROWS rows or more
    np.testing.assert_allclose(fast.numpy(), full.numpy(), atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(through_module.numpy(), full.numpy(), atol=2e-5, rtol=1e-5)


def test_merged_batches_without_a_run_take_the_full_pass() -> None:
    model = _model(5)
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(1, VOCAB, (3 * MIN_ROWS, 10), generator=g)  # unrelated rows: no run
    mask = torch.ones(ids.shape, dtype=torch.bool)
    with torch.inference_mode():
        assert grouped_edited_forward(model, ids, mask) is None
        assert grouped_edited_forward(model, ids[: 2 * MIN_ROWS - 1], mask[: 2 * MIN_ROWS - 1]) is None
        holes = mask.clone()
        holes[0, 3] = False  # not a padded batch of plain texts
        assert grouped_edited_forward(model, ids.repeat(1, 1), holes) is None
