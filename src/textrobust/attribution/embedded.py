"""A differentiable view of a victim: its input embeddings, a forward map from embeddings to
logits, and which tokens make up which word.

Captum's gradient methods need a function of a tensor. Zoo models (``TorchVictim``) offer
``embed(ids)`` and ``forward_embedded(embeddings, mask)``; Hugging Face models take
``inputs_embeds``. :func:`embedded_batch` builds, for a batch of texts, the embeddings
``[B, T, D]``, the extra forward argument (the attention mask, which Captum repeats for
each integration step), and per text a 0/1 matrix ``[words, tokens]`` that sums token
attributions into words (a word's sub-word pieces are summed; special and padding tokens
belong to no word). Words listed in ``zeroed`` get zero embeddings (TEA's ranking step,
Ivankay et al. Algorithm 1 line 3: ``s_{w_i -> 0}``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.errors import CapabilityError
from textrobust.text import Text

__all__ = ["EmbeddedBatch", "embedded_batch", "supports_embeddings"]


@dataclass(frozen=True)
class EmbeddedBatch:
    """Embeddings ``[B, T, D]``, ``extra`` (the other forward arguments, each ``[B, ...]``:
    the attention mask, token types), ``forward(embeddings, *extra) -> logits [B, labels]``,
    and per text the ``[len(text), T]`` word/token matrix."""

    embeddings: Any
    extra: tuple[Any, ...]
    forward: Callable[..., Any]
    words: list[np.ndarray]


def supports_embeddings(victim: Any) -> bool:
    """Whether :func:`embedded_batch` can read ``victim`` (a zoo ``TorchVictim`` with
    ``forward_embedded``, or a ``HuggingFaceVictim`` with a fast tokenizer)."""
    from textrobust.victims.gate import unwrap
    from textrobust.victims.huggingface import HuggingFaceVictim
    from textrobust.victims.torch import TorchVictim

    victim = unwrap(victim)  # a lockstep run's gate member stands for the victim
    if isinstance(victim, TorchVictim):
        return bool(victim.capabilities.gradients)
    if isinstance(victim, HuggingFaceVictim):
        return bool(victim.capabilities.gradients)
    return False


def embedded_batch(victim: Any, texts: Sequence[Text], zeroed: Sequence[int | None] | None = None) -> EmbeddedBatch:
    """The :class:`EmbeddedBatch` of ``texts`` under ``victim``; ``zeroed[i]``, when not
    None, is a word of ``texts[i]`` whose tokens get zero embeddings."""
    from textrobust.victims.gate import unwrap
    from textrobust.victims.huggingface import HuggingFaceVictim
    from textrobust.victims.torch import TorchVictim

    victim = unwrap(victim)  # a lockstep run's gate member stands for the victim
    zeroed = list(zeroed) if zeroed is not None else [None] * len(texts)
    if isinstance(victim, TorchVictim) and victim.capabilities.gradients:
        batch = _torch_batch(victim, texts)
    elif isinstance(victim, HuggingFaceVictim) and victim.capabilities.gradients:
        batch = _hf_batch(victim, texts)
    else:
        raise CapabilityError(
            f"Gradient attributions (saliency, integrated gradients) need a victim whose embeddings "
            f"can be differentiated (a zoo model or a Hugging Face folder with a fast tokenizer). "
            f"{victim!r} is not one: use the 'occlusion' or 'kernel_shap' attribution instead."
        )
    if any(z is not None for z in zeroed):
        import torch

        device = batch.embeddings.device  # the victim's: Captum runs there
        keep = torch.ones(batch.embeddings.shape[:2], dtype=batch.embeddings.dtype, device=device)
        for i, position in enumerate(zeroed):
            if position is not None:
                tokens = np.flatnonzero(batch.words[i][position] > 0)
                keep[i, torch.as_tensor(tokens, dtype=torch.long, device=device)] = 0.0
        embeddings = (batch.embeddings * keep.unsqueeze(-1)).detach()
        batch = EmbeddedBatch(embeddings, batch.extra, batch.forward, batch.words)
    return batch


def _torch_batch(victim: Any, texts: Sequence[Text]) -> EmbeddedBatch:
    import torch

    ids, mask, word_index = victim.encode(list(texts))  # on the victim's device
    module = victim.module
    module.eval()
    with torch.no_grad():  # in the module's float type (float32 unless --dtype says otherwise)
        embeddings = module.embed(ids).detach().to(next(module.parameters()).dtype)
    words = []
    for i, text in enumerate(texts):
        matrix = np.zeros((len(text), ids.shape[1]), dtype=np.float64)
        for t, w in enumerate(word_index[i]):
            if 0 <= w < len(text):
                matrix[w, t] = 1.0
        words.append(matrix)

    def forward(emb: Any, m: Any) -> Any:
        return module.forward_embedded(emb, m)

    return EmbeddedBatch(embeddings, (mask,), forward, words)


def _hf_batch(victim: Any, texts: Sequence[Text]) -> EmbeddedBatch:
    import torch

    from textrobust.victims.huggingface import word_token_matrix

    texts = list(texts)
    if len({len(t.columns) for t in texts}) > 1:
        raise CapabilityError("A batch of attributions must hold only single texts or only pairs, not both.")
    columns: tuple[list[str], ...] = (
        ([t.columns[0] for t in texts], [t.columns[1] for t in texts]) if texts[0].is_pair
        else ([t.columns[0] for t in texts],)
    )
    enc = victim.tokenizer(*columns, padding=True, truncation=True, max_length=victim.max_length,
                           return_tensors="pt", return_offsets_mapping=True)
    offsets = enc.pop("offset_mapping").cpu().numpy()
    words = [word_token_matrix(text, offsets[b], enc.sequence_ids(b)) for b, text in enumerate(texts)]
    model = victim.model.eval()
    weight = next(model.parameters())
    enc = enc.to(weight.device)  # the inputs go to the victim's device once; Captum runs there
    with torch.no_grad():  # in the model's float type (float32 unless --dtype says otherwise)
        embeddings = victim.embedding_layer()(enc["input_ids"]).detach().to(weight.dtype)
    token_types = enc.get("token_type_ids")

    def forward(emb: Any, m: Any, types: Any = None) -> Any:
        kwargs: dict[str, Any] = {"inputs_embeds": emb, "attention_mask": m}
        if types is not None:
            kwargs["token_type_ids"] = types
        return model(**kwargs).logits

    extra = (enc["attention_mask"],) if token_types is None else (enc["attention_mask"], token_types)
    return EmbeddedBatch(embeddings, extra, forward, words)
