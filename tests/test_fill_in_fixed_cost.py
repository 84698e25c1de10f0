"""The product fill-in's tables are built once (issue 41, item 2): whatever the first call
asks for, it builds every table the later calls read, and a second fill-in on the same
pair of models (the next analysis of an audit) builds none. Tiny random models; the
timing of the real route is in ``benchmarks/fill_in_fixed_cost.py``."""

from __future__ import annotations

import pytest

from textrobust.fill_in import MiniLMFillIn
from textrobust.fill_in.minilm_mlm import HEAD_FORMAT, embedding_fingerprint, init_head
from textrobust.fill_in.product import ProductFillIn
from textrobust.text import Text

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

MASKED_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "film", "movie", "is", "was",
                "good", "bad", "great", "and", "deep", "story", "very", "not", "rare", ".", ",", "##s"]
CAUSAL_WORDS = "<pad> <unk> <bos> the The a A film Film movie is was good bad great and deep story very not . ,".split()
EVERY_TABLE = ["word maps", "variants True", "head rows words-True", "variants False", "head rows words-False",
               "normalizer", "head rows normalizer"]


def _masked(folder, words: list[str] = MASKED_VOCAB) -> MiniLMFillIn:
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab=str(vocab), do_lower_case=True)
    config = transformers.BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    torch.manual_seed(1)
    encoder = transformers.BertModel(config).eval()
    head = init_head(16, len(words), 1, seed=3)
    head_config = {"format": HEAD_FORMAT, "layers": [1], "encoder": "tiny",
                   "embedding_fingerprint": embedding_fingerprint(encoder.get_input_embeddings().weight)}
    return MiniLMFillIn(encoder, tokenizer, head, head_config, batch_size=3)


def _causal():
    from tokenizers import Tokenizer, models, pre_tokenizers

    from textrobust.lm import CausalLM

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(CAUSAL_WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", unk_token="<unk>",
                                                     pad_token="<pad>")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(CAUSAL_WORDS), n_positions=32, n_embd=8, n_layer=2, n_head=2)
    return CausalLM(transformers.GPT2LMHeadModel(config), tokenizer, batch_size=4)


MIDDLE = [(Text.from_string("the film is very good ."), 1), (Text.from_string("a deep story , not bad ."), 2)]
AT_THE_END = [(Text.from_string("a deep film"), 2)]  # the gap ends the text: no lookahead rows


def test_a_first_call_without_lookahead_still_builds_every_table(tmp_path) -> None:
    fill_in = ProductFillIn(_masked(tmp_path), _causal(), rerank=3, batch_size=2)
    fill_in.fill(AT_THE_END, 5)
    assert fill_in.lookahead_rows == 0  # nothing needed the normaliser yet
    built = list(fill_in._shared().built)
    assert sorted(built) == sorted(EVERY_TABLE)
    fill_in.fill(MIDDLE, 5)
    assert fill_in.lookahead_rows > 0  # the lookahead ran, on the tables already built
    assert fill_in._shared().built == built


def test_each_table_is_built_once_over_many_calls(tmp_path) -> None:
    fill_in = ProductFillIn(_masked(tmp_path), _causal(), rerank=2, batch_size=2)
    for request in MIDDLE + AT_THE_END + MIDDLE:
        fill_in.clear_cache()
        fill_in.fill([request], 5)
    built = fill_in._shared().built
    assert sorted(built) == sorted(EVERY_TABLE) and len(set(built)) == len(built)


def test_a_second_fill_in_on_the_same_models_builds_nothing_and_answers_the_same(tmp_path) -> None:
    masked, lm = _masked(tmp_path), _causal()
    first = ProductFillIn(masked, lm, rerank=2, batch_size=2)
    answers = first.fill(MIDDLE, 6)
    built = list(first._shared().built)
    masked.clear_cache()
    second = ProductFillIn(masked, lm, rerank=2, batch_size=2)
    assert second.fill(MIDDLE, 6) == answers
    assert second._shared() is first._shared() and second._shared().built == built


def test_another_masked_vocabulary_gets_its_own_tables(tmp_path) -> None:
    lm = _causal()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = ProductFillIn(_masked(tmp_path / "a"), lm, rerank=0)
    other = ProductFillIn(_masked(tmp_path / "b", [*MASKED_VOCAB, "movies"]), lm, rerank=0)
    first.prepare()
    other.prepare()
    assert first._shared() is not other._shared()
    assert "movies" in other.vocab.words(True) and "normalizer" not in other._shared().built  # rerank 0: none


def test_prepare_with_weight_zero_loads_no_causal_lm(tmp_path) -> None:
    fill_in = ProductFillIn(_masked(tmp_path), None, weight=0.0)
    fill_in.prepare()
    fill_in.fill(MIDDLE, 3)
    assert fill_in._lm is None and fill_in._tables is None
