"""Fill-in routes: the FillIn protocol contract for every implementation (tiny random
models built here), whole-word filtering, batching, folder errors, and (heavy) the
shipped MiniLM head and the Gemma route."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from textrobust.attack.candidates.fill_in import FillIn, FillInSource
from textrobust.errors import AssetMissingError, ConfigError
from textrobust.fill_in import (
    FILL_INS,
    CausalRescoreFillIn,
    HuggingFaceFillIn,
    MiniLMFillIn,
    load_fill_in,
    masked_word_probes,
    recall_at_k,
)
from textrobust.fill_in.minilm_mlm import (
    HEAD_CONFIG,
    HEAD_FORMAT,
    HEAD_WEIGHTS,
    embedding_fingerprint,
    init_head,
    load_head,
)
from textrobust.fill_in.requests import masked_columns
from textrobust.fill_in.whole_words import vocab_from_tokens
from textrobust.text import Text

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]",
    "the", "a", "film", "movie", "is", "was", "good", "bad", "great", "and", "deep",
    "meaningful", "boring", "story", "plot", "he", "she", "very", "it", "not",
    ".", ",", "!", "'", "##s", "##ing", "##ly", "un", "1990",
]
SENTENCES = [
    Text.from_string("the film is good."),
    Text.from_string("a deep and meaningful movie, very boring!"),
    Text.from_string("he was not bad and she was great."),
    Text.from_string("the story is unboringly deep."),  # "unboringly" is several word pieces
]
REQUESTS = [(SENTENCES[0], 1), (SENTENCES[1], 3), (SENTENCES[2], 4), (SENTENCES[3], 3), (SENTENCES[1], 0), (SENTENCES[0], 3)]


def _tokenizer(tmp_path: Path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    # transformers 5 ignores vocab_file=; vocab= takes the file
    return transformers.BertTokenizerFast(vocab=str(vocab), do_lower_case=True)


def _bert_config(**extra):
    return transformers.BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, **extra,
    )


@pytest.fixture(scope="module")
def tiny_mlm_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny_mlm")
    torch.manual_seed(0)
    model = transformers.BertForMaskedLM(_bert_config())
    model.save_pretrained(folder)
    _tokenizer(folder).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def hf_fill_in(tiny_mlm_folder: Path) -> HuggingFaceFillIn:
    return HuggingFaceFillIn.from_folder(tiny_mlm_folder, batch_size=4)


@pytest.fixture(scope="module")
def minilm_fill_in(tmp_path_factory) -> MiniLMFillIn:
    folder = tmp_path_factory.mktemp("tiny_minilm")
    torch.manual_seed(1)
    encoder = transformers.BertModel(_bert_config()).eval()
    head = init_head(16, len(VOCAB), 2, seed=3)
    head["bias"] = torch.randn(len(VOCAB))
    config = {"format": HEAD_FORMAT, "layers": [1, 2], "encoder": "tiny", "embedding_fingerprint": embedding_fingerprint(encoder.get_input_embeddings().weight)}
    return MiniLMFillIn(encoder, _tokenizer(folder), head, config, batch_size=3)


@pytest.fixture(scope="module")
def causal_fill_in(tmp_path_factory) -> CausalRescoreFillIn:
    from textrobust.lm import CausalLM

    folder = tmp_path_factory.mktemp("tiny_causal")
    torch.manual_seed(2)
    config = transformers.GPT2Config(vocab_size=len(VOCAB), n_embd=16, n_layer=1, n_head=2, n_positions=64)
    model = transformers.GPT2LMHeadModel(config)
    return CausalRescoreFillIn(CausalLM(model, _tokenizer(folder), batch_size=5), proposals=6, batch_size=2)


ROUTES = ["hf_fill_in", "minilm_fill_in", "causal_fill_in"]


# ---- the protocol contract, for every implementation -------------------------------------
@pytest.mark.parametrize("route", ROUTES)
def test_contract(route: str, request: pytest.FixtureRequest) -> None:
    fill_in = request.getfixturevalue(route)
    assert isinstance(fill_in, FillIn)
    answers = fill_in.fill(REQUESTS, 5)
    assert len(answers) == len(REQUESTS)
    for answer in answers:
        assert 1 <= len(answer) <= 5
        words = [w for w, _ in answer]
        scores = [s for _, s in answer]
        assert len(set(words)) == len(words)
        assert all(isinstance(w, str) and isinstance(s, float) and math.isfinite(s) for w, s in answer)
        assert scores == sorted(scores, reverse=True)
        # whole words only: no pieces, punctuation, special or unused tokens
        assert not set(words) & {"##s", "##ing", "##ly", ".", ",", "!", "'", "[MASK]", "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[unused0]"}
    assert fill_in.fill([], 5) == []


@pytest.mark.parametrize("route", ROUTES)
def test_batching_equals_one_at_a_time(route: str, request: pytest.FixtureRequest) -> None:
    fill_in = request.getfixturevalue(route)
    fill_in.clear_cache()
    together = fill_in.fill(REQUESTS, 4)
    for req, answer in zip(REQUESTS, together):
        fill_in.clear_cache()
        alone = fill_in.fill([req], 4)[0]
        assert [w for w, _ in alone] == [w for w, _ in answer]
        assert np.allclose([s for _, s in alone], [s for _, s in answer], atol=1e-4)


@pytest.mark.parametrize("route", ROUTES)
def test_bad_arguments(route: str, request: pytest.FixtureRequest) -> None:
    fill_in = request.getfixturevalue(route)
    with pytest.raises(ConfigError, match="'k'"):
        fill_in.fill(REQUESTS, 0)
    with pytest.raises(ConfigError, match="position 9"):
        fill_in.fill([(SENTENCES[0], 9)], 3)
    with pytest.raises(ConfigError, match="pair"):
        fill_in.fill(["the film"], 3)  # type: ignore[list-item]


@pytest.mark.parametrize("route", ROUTES)
def test_k_larger_than_cached_answer(route: str, request: pytest.FixtureRequest) -> None:
    fill_in = request.getfixturevalue(route)
    small = fill_in.fill(REQUESTS[:2], 2)
    large = fill_in.fill(REQUESTS[:2], 12)
    for a, b in zip(small, large):
        assert [w for w, _ in b[:2]] == [w for w, _ in a]
        assert len(b) > len(a)


# ---- masked LMs -------------------------------------------------------------------------
def test_hf_scores_are_the_logits_at_the_mask(hf_fill_in: HuggingFaceFillIn) -> None:
    answer = hf_fill_in.fill([(SENTENCES[0], 1)], 30)[0]
    enc = hf_fill_in.tokenizer("the [MASK] is good.", return_tensors="pt")
    with torch.no_grad():
        logits = hf_fill_in.model(**enc).logits[0, enc["input_ids"][0].tolist().index(4)]
    vocab = hf_fill_in.tokenizer.get_vocab()
    for word, score in answer:
        assert score == pytest.approx(float(logits[vocab[word]]), abs=1e-5)
    # every whole-word entry is ranked: 35 tokens minus 6 special/unused, 4 pieces, 4 punctuation
    assert sorted(w for w, _ in answer) == sorted(
        w for w in VOCAB if w.isalnum() and not w.startswith("##")
    )


def test_hf_long_text_is_cropped_around_the_mask(tiny_mlm_folder: Path) -> None:
    fill_in = HuggingFaceFillIn.from_folder(tiny_mlm_folder, max_length=8)
    long = Text.from_string(" ".join(["the film is good ."] * 12) + " it was great")
    answer = fill_in.fill([(long, len(long) - 1), (long, 0)], 3)
    assert all(len(a) == 3 for a in answer)
    ids, _, at = fill_in._encode([masked_columns(long, len(long) - 1, "[MASK]")])[0]
    assert len(ids) == 8 and ids[at] == 4 and ids[0] == 2 and ids[-1] == 3


def test_hf_pairs_and_cache(hf_fill_in: HuggingFaceFillIn) -> None:
    pair = Text.from_pair("the film is good.", "it was great.")
    before = hf_fill_in.masks_scored
    first = hf_fill_in.fill([(pair, 4), (pair, 4)], 3)
    assert first[0] == first[1] and hf_fill_in.masks_scored == before + 1  # deduplicated
    again = hf_fill_in.fill([(pair, 4)], 3)
    assert again[0] == first[0] and hf_fill_in.masks_scored == before + 1  # cached


def test_hf_text_containing_the_mask_string(hf_fill_in: HuggingFaceFillIn) -> None:
    text = Text.from_string("[MASK] the film is good")
    assert text.words[0] == "MASK"
    plain = hf_fill_in.fill([(Text.from_string("MASK the film is good"), 2)], 3)
    tricky = hf_fill_in.fill([(text, 2)], 3)  # the literal "[MASK]" is not the gap
    assert len(tricky[0]) == 3 and len(plain[0]) == 3


def test_fill_in_source_drops_the_original(hf_fill_in: HuggingFaceFillIn) -> None:
    source = FillInSource(hf_fill_in, k=40)
    text = Text.from_string("The film is good.")
    subs = source.candidates(text, [1])[1]
    assert subs and all(s.word.lower() != "film" for s in subs)
    assert "film" in [w for w, _ in hf_fill_in.fill([(text, 1)], 40)[0]]  # the fill-in itself keeps it


def test_minilm_head_checks(minilm_fill_in: MiniLMFillIn) -> None:
    head = minilm_fill_in.head
    with pytest.raises(ConfigError, match="another encoder"):
        MiniLMFillIn(minilm_fill_in.encoder, minilm_fill_in.tokenizer, head, {**minilm_fill_in.config, "embedding_fingerprint": "0" * 16})
    with pytest.raises(ConfigError, match="layers"):
        MiniLMFillIn(minilm_fill_in.encoder, minilm_fill_in.tokenizer, head, {**minilm_fill_in.config, "layers": [1, 7]})
    # a mismatched vocabulary size is refused
    small = {**head, "bias": head["bias"][:10]}
    with pytest.raises(ConfigError, match="vocabulary"):
        MiniLMFillIn(minilm_fill_in.encoder, minilm_fill_in.tokenizer, small, minilm_fill_in.config)


def test_minilm_scores_are_head_logits(minilm_fill_in: MiniLMFillIn) -> None:
    from textrobust.fill_in.minilm_mlm import head_logits

    answer = dict(minilm_fill_in.fill([(SENTENCES[0], 1)], 40)[0])
    enc = minilm_fill_in.tokenizer("the [MASK] is good.", return_tensors="pt")
    with torch.no_grad():
        out = minilm_fill_in.encoder(**enc, output_hidden_states=True)
        states = torch.stack([out.hidden_states[x][0, 2] for x in (1, 2)])[None]
        logits = head_logits(minilm_fill_in.head, states, minilm_fill_in.encoder.get_input_embeddings().weight)[0]
    vocab = minilm_fill_in.tokenizer.get_vocab()
    assert answer["film"] == pytest.approx(float(logits[vocab["film"]]), abs=1e-5)


def test_head_folder_round_trip_and_errors(tmp_path: Path, minilm_fill_in: MiniLMFillIn) -> None:
    from safetensors.torch import save_file

    with pytest.raises(AssetMissingError, match="MLM head"):
        load_head(tmp_path / "nowhere")
    save_file({k: v.contiguous() for k, v in minilm_fill_in.head.items()}, str(tmp_path / HEAD_WEIGHTS))
    (tmp_path / HEAD_CONFIG).write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a textrobust MLM head"):
        load_head(tmp_path)
    (tmp_path / HEAD_CONFIG).write_text(json.dumps(minilm_fill_in.config), encoding="utf-8")
    params, config = load_head(tmp_path)
    assert config["layers"] == [1, 2] and torch.equal(params["bias"], minilm_fill_in.head["bias"])


# ---- Hugging Face folder errors -----------------------------------------------------------
def test_hf_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(AssetMissingError, match="does not exist"):
        HuggingFaceFillIn.from_folder(tmp_path / "distilbert-base-uncased")
    with pytest.raises(AssetMissingError, match="not a saved transformers model"):
        HuggingFaceFillIn.from_folder(tmp_path)
    (tmp_path / "config.json").write_text(_bert_config().to_json_string(), encoding="utf-8")
    (tmp_path / "pytorch_model.bin").write_bytes(b"not really a pickle")
    with pytest.raises(AssetMissingError, match="only pickled weights"):
        HuggingFaceFillIn.from_folder(tmp_path)
    with pytest.raises(ConfigError, match="folder path"):
        HuggingFaceFillIn.from_folder(3)  # type: ignore[arg-type]


def test_hf_folder_without_mlm_head_is_refused(tmp_path: Path) -> None:
    transformers.BertModel(_bert_config()).save_pretrained(tmp_path)  # an encoder, no MLM head
    _tokenizer(tmp_path).save_pretrained(tmp_path)
    with pytest.raises(AssetMissingError, match="without its masked-LM head"):
        HuggingFaceFillIn.from_folder(tmp_path)


def test_tokenizer_without_mask_is_refused() -> None:
    class NoMask:
        mask_token = None
        mask_token_id = None

    with pytest.raises(ConfigError, match="mask token"):
        HuggingFaceFillIn(transformers.BertForMaskedLM(_bert_config()), NoMask())


# ---- causal propose-and-rescore -----------------------------------------------------------
def test_causal_scores_are_sentence_log_prob_ratios(causal_fill_in: CausalRescoreFillIn) -> None:
    text = SENTENCES[2]
    answer = causal_fill_in.fill([(text, 4)], 6)[0]
    lm = causal_fill_in.lm
    for word, score in answer:
        expected = lm.sentence_log_prob([str(text.replace(4, word))])[0] - lm.sentence_log_prob([str(text)])[0]
        assert score == pytest.approx(expected, abs=1e-6)
        if word == text.words[4]:
            assert score == 0.0


def test_causal_proposals_follow_the_left_context(causal_fill_in: CausalRescoreFillIn) -> None:
    from textrobust.fill_in.causal_rescore import _left_context

    assert _left_context(Text.from_string("a deep, (moving) film"), 2) == ("a deep, (", False)
    assert _left_context(Text.from_string("a deep  film"), 2) == ("a deep", True)
    assert _left_context(Text.from_pair("it is.", "so good"), 3) == ("it is. so", True)
    before = causal_fill_in.contexts_scored
    # the same left context ("the film is") is proposed for once, whatever follows it
    causal_fill_in.fill([(Text.from_string("the film is bad"), 3), (Text.from_string("the film is not good"), 3)], 3)
    assert causal_fill_in.contexts_scored - before <= 1
    with pytest.raises(ConfigError, match="proposals"):
        CausalRescoreFillIn(causal_fill_in.lm, proposals=0)


# ---- whole-word vocabularies ---------------------------------------------------------------
def test_whole_word_conventions() -> None:
    wordpiece = vocab_from_tokens(["[CLS]", "the", "##s", "film", ".", "don't", "[unused1]"], {0})
    assert wordpiece.convention == "wordpiece" and wordpiece.spaced_words == ("the", "film", "don't")
    assert wordpiece.unspaced_words == wordpiece.spaced_words
    bpe = vocab_from_tokens(["<s>", "Ġthe", "Ġfilm", "film", "s", "Ġ.", "Ġ", "ing"], {0})
    assert bpe.convention == "bpe"
    assert bpe.spaced_words == ("the", "film") and list(bpe.spaced_ids) == [1, 2]
    assert bpe.unspaced_words == ("film", "s", "ing")
    sentencepiece = vocab_from_tokens(["<bos>", "▁the", "▁film", "Good", "▁,", "▁well-made"], {0})
    assert sentencepiece.convention == "sentencepiece"
    assert sentencepiece.spaced_words == ("the", "film", "well-made") and sentencepiece.unspaced_words == ("Good",)


# ---- registry and evaluation ---------------------------------------------------------------
def test_registry_and_loading(tiny_mlm_folder: Path) -> None:
    assert FILL_INS.names() == ["causal_rescore", "huggingface", "minilm_gemma", "minilm_mlm", "minilm_tuned"]
    assert isinstance(load_fill_in(str(tiny_mlm_folder)), HuggingFaceFillIn)
    assert isinstance(FILL_INS.get("huggingface")(tiny_mlm_folder), HuggingFaceFillIn)
    with pytest.raises(ConfigError, match="needs path"):
        FILL_INS.get("huggingface")()
    with pytest.raises(ConfigError, match="Unknown fill-in 'bert'"):
        load_fill_in("bert")


def test_probes_and_recall() -> None:
    texts = [Text.from_string(s) for s in ("The film is good", "It is", "A bold, deep story", "So boring")]
    probes = masked_word_probes(texts, 3, seed=1, stop_words={"the", "is", "it", "a", "so"})
    assert probes == masked_word_probes(texts, 3, seed=1, stop_words={"the", "is", "it", "a", "so"})
    assert len(probes) == 3 and all(t.words[p].lower() not in {"the", "is", "it", "a", "so"} for t, p in probes)

    class Oracle:  # right at rank 2 for every probe
        def fill(self, requests, k):
            return [[("zzz", 2.0), (t.words[p].upper(), 1.0)] for t, p in requests]

    score = recall_at_k(Oracle(), probes, (1, 2, 20))
    assert score.recall == {1: 0.0, 2: 1.0, 20: 1.0}
    assert score.candidates == 6 and score.candidates_per_second > 0


# ---- heavy: the real assets ---------------------------------------------------------------
@pytest.mark.heavy
def test_shipped_minilm_head_gives_sensible_words() -> None:
    fill_in = MiniLMFillIn.default()
    assert fill_in.config["format"] == HEAD_FORMAT and fill_in.layers == (4, 5, 6)
    requests = [
        (Text.from_string("a deep and meaningful film."), 4),  # film
        (Text.from_string("I love this film so much."), 3),  # film
        (Text.from_string("The acting is great and the story is very good."), 1),  # acting
    ]
    answers = [[w for w, _ in a] for a in fill_in.fill(requests, 20)]
    assert "film" in answers[0][:3] and "movie" in answers[0][:5]
    assert {"film", "movie"} <= set(answers[1][:5])
    assert {"movie", "film", "story"} & set(answers[2][:5])
    # whole words from the uncased WordPiece vocabulary, never pieces or punctuation
    assert all(w.islower() and not w.startswith("#") and w.isalnum() for a in answers for w in a)
    # a batch of many texts equals the single answers
    assert fill_in.fill(requests[:1], 20)[0] == fill_in.fill(requests, 20)[0]


@pytest.mark.heavy
def test_gemma_propose_and_rescore() -> None:
    fill_in = CausalRescoreFillIn.default(proposals=20)
    text = Text.from_string("I watched the movie last night and loved it.")
    answer = fill_in.fill([(text, 3)], 20)[0]
    words = [w for w, _ in answer]
    assert {"movie", "film"} <= set(words[:5])
    assert dict(answer)["movie"] == 0.0  # the original scores 0 (log-ratio against itself)
    # scores are full-sentence log-probability ratios under the LM
    lm = fill_in.lm
    expected = lm.sentence_log_prob([str(text.replace(3, "film"))])[0] - lm.sentence_log_prob([str(text)])[0]
    assert dict(answer)["film"] == pytest.approx(expected, abs=1e-3)


def test_package_surface_is_light_and_complete() -> None:
    import subprocess
    import sys

    import textrobust.fill_in as package

    assert all(getattr(package, name) is not None for name in package.__all__)
    code = "import sys, textrobust.fill_in; print([m for m in ('torch', 'transformers') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
