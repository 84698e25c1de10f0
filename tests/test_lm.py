"""CausalLM: exact log-probabilities against the model's own full forward pass, chunked
output head, caching, word scores; real Gemma only in heavy tests."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from textrobust.errors import AssetMissingError, ConfigError
from textrobust.lm import CausalLM
from textrobust.text import Text

WORDS = "<pad> <unk> <bos> the a cat dog sat ran on mat rug and well made film - . ,".split()


def tiny_tokenizer(bos: bool = True) -> Any:
    """A word-level fast tokenizer over WORDS that prepends <bos> (or not)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if bos:
        tok.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 2)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", unk_token="<unk>", pad_token="<pad>")


def tiny_gpt2() -> Any:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(WORDS), n_positions=64, n_embd=16, n_layer=2, n_head=2, bos_token_id=2, eos_token_id=2)
    return GPT2LMHeadModel(config)


def tiny_gemma(softcap: float | None = 5.0) -> Any:
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(1)
    config = Gemma3TextConfig(
        vocab_size=len(WORDS), hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, head_dim=8, max_position_embeddings=64, sliding_window=4,
        final_logit_softcapping=softcap, bos_token_id=2, eos_token_id=2, pad_token_id=0,
    )
    return Gemma3ForCausalLM(config)


TEXTS = ["the cat sat on the mat .", "a dog ran", "the well-made film", "cat", "the dog sat on a rug , and the cat ran ."]


def reference_log_probs(model: Any, tokenizer: Any, text: str) -> np.ndarray:
    """log P(token_t | tokens<t) from the model's own full forward pass, one text at a time."""
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1]
    return torch.log_softmax(logits.double(), -1).gather(1, ids[0, 1:, None])[:, 0].numpy()


@pytest.fixture(scope="module")
def gpt2_lm() -> CausalLM:
    return CausalLM(tiny_gpt2(), tiny_tokenizer(), batch_size=3)


@pytest.mark.parametrize("build", [tiny_gpt2, tiny_gemma], ids=["gpt2", "gemma3-softcap"])
def test_batched_chunked_log_probs_equal_the_full_forward_pass(build: Any) -> None:
    model, tokenizer = build(), tiny_tokenizer()
    # 2 rows of logits per chunk and batches of 2 padded texts of different lengths
    lm = CausalLM(model, tokenizer, batch_size=2, max_logits_bytes=2 * 4 * len(WORDS))
    got = lm.log_probs(TEXTS)
    for text, values in zip(TEXTS, got):
        np.testing.assert_allclose(values, reference_log_probs(model, tokenizer, text), atol=1e-5)
    sums = lm.sentence_log_prob(TEXTS)
    np.testing.assert_allclose(sums, [v.sum() for v in got], atol=1e-9)
    np.testing.assert_allclose(lm.perplexity(TEXTS), [math.exp(-v.mean()) for v in got], rtol=1e-9)


def test_the_output_head_never_sees_more_than_one_chunk_of_positions() -> None:
    model = tiny_gpt2()
    rows_seen: list[tuple[int, ...]] = []
    model.get_output_embeddings().register_forward_hook(lambda m, inp, out: rows_seen.append(tuple(inp[0].shape)))
    lm = CausalLM(model, tiny_tokenizer(), batch_size=8, max_logits_bytes=3 * 4 * len(WORDS))
    lm.sentence_log_prob(TEXTS)
    total = sum(len(t.split()) for t in TEXTS) + 2  # "well-made" is 3 tokens
    assert rows_seen and all(len(shape) == 2 and shape[0] <= 3 for shape in rows_seen)
    assert sum(shape[0] for shape in rows_seen) == total  # only real positions, no padding


def test_each_string_goes_through_the_model_once(gpt2_lm: CausalLM) -> None:
    gpt2_lm.clear_cache()
    before = gpt2_lm.texts_scored
    first = gpt2_lm.sentence_log_prob(["a dog ran", "a dog ran", "the cat"])
    assert gpt2_lm.texts_scored - before == 2
    again = gpt2_lm.sentence_log_prob(["the cat", "a dog ran"])
    assert gpt2_lm.texts_scored - before == 2
    assert again.tolist() == [first[2], first[0]]
    assert gpt2_lm.stats()["cache_size"] == 2


def test_word_log_prob_sums_every_token_of_the_word(gpt2_lm: CausalLM) -> None:
    text = Text.from_string("the well-made film")
    per_token = gpt2_lm.log_probs([str(text)])[0]  # the, well, -, made, film
    got = gpt2_lm.word_log_prob([text, "the well-made film", text], [1, 1, 2])
    assert got[0] == pytest.approx(per_token[1:4].sum())
    assert got[1] == got[0]
    assert got[2] == pytest.approx(per_token[4])


def test_word_log_prob_counts_words_across_a_pair(gpt2_lm: CausalLM) -> None:
    pair = Text.from_pair("a cat sat", "the dog ran")
    per_token = gpt2_lm.log_probs([str(pair)])[0]  # a cat sat the dog ran
    assert gpt2_lm.word_log_prob([pair], [4])[0] == pytest.approx(per_token[4])


def test_pad_rows_right_pads_with_the_pad_id_and_masks_the_padding(gpt2_lm: CausalLM) -> None:
    ids, mask = gpt2_lm.pad_rows([[5, 6, 7], [], [8]])
    pad = gpt2_lm._pad
    assert ids.tolist() == [[5, 6, 7], [pad, pad, pad], [8, pad, pad]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 0], [1, 0, 0]]
    ids, mask = gpt2_lm.pad_rows([[]])  # never a zero-width tensor
    assert tuple(ids.shape) == (1, 1) and mask.tolist() == [[0]]


def test_bos_is_prepended_when_the_tokenizer_does_not_add_it() -> None:
    model = tiny_gpt2()
    with_bos = CausalLM(model, tiny_tokenizer(bos=True))
    without = CausalLM(model, tiny_tokenizer(bos=False))
    np.testing.assert_allclose(without.log_probs(TEXTS[:2])[0], with_bos.log_probs(TEXTS[:2])[0], atol=1e-6)


def test_empty_text_and_bad_input() -> None:
    lm = CausalLM(tiny_gpt2(), tiny_tokenizer())
    assert lm.sentence_log_prob([""]).tolist() == [0.0]
    assert lm.perplexity([""]).tolist() == [1.0]
    assert lm.perplexity([]).shape == (0,)
    with pytest.raises(ConfigError, match="not one string"):
        lm.perplexity("the cat")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="one position per text"):
        lm.word_log_prob(["the cat"], [0, 1])
    with pytest.raises(ConfigError, match="batch_size"):
        CausalLM(tiny_gpt2(), tiny_tokenizer(), batch_size=0)
    assert "GPT2LMHeadModel" in repr(lm) and "vocab=19" in repr(lm)


def test_max_length_truncates_and_words_beyond_it_are_nan() -> None:
    lm = CausalLM(tiny_gpt2(), tiny_tokenizer(), max_length=3)
    record = lm.score(["the cat sat on the mat"])[0]
    assert len(record.ids) == 3 and np.isnan(record.log_probs[0])
    assert np.isnan(lm.word_log_prob(["the cat sat on the mat"], [4])[0])


# ---- real Gemma 3 270M ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gemma() -> CausalLM:
    try:
        return CausalLM.default()
    except AssetMissingError as exc:
        pytest.skip(f"Gemma 3 270M is not converted in the asset cache (run `textrobust assets prepare causal_lm`): {exc.asset}")


@pytest.mark.heavy
def test_gemma_ranks_natural_odd_and_scrambled_sentences(gemma: CausalLM) -> None:
    natural, odd, scrambled = gemma.perplexity(
        [
            "The cat sat on the mat and looked out of the window.",
            "The cat sat on the mat and looked out of the banana.",
            "mat the window on cat looked sat and of out the The.",
        ]
    )
    assert natural < 60 < odd < scrambled
    assert scrambled > 10 * natural


@pytest.mark.heavy
def test_gemma_batched_scores_match_single_texts(gemma: CausalLM) -> None:
    texts = ["A gripping, well-made film.", "The plot goes nowhere and the jokes fall flat."]
    gemma.clear_cache()
    batched = gemma.sentence_log_prob(texts)
    gemma.clear_cache()
    single = [gemma.sentence_log_prob([t])[0] for t in texts]
    np.testing.assert_allclose(batched, single, atol=1e-3)
    words = gemma.word_log_prob([Text.from_string(t) for t in texts], [1, 1])
    assert np.all(np.isfinite(words)) and np.all(words < 0)
