"""Issue 13: the fine-tuned MiniLM fill-in (folder format, loading, errors; heavy: the
shipped weights) and the key/value-cache rescoring of the causal route."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textrobust.errors import AssetMissingError, ConfigError
from textrobust.fill_in import FILL_INS, CausalRescoreFillIn, MiniLMFillIn
from textrobust.fill_in.minilm_mlm import HEAD_FORMAT, embedding_fingerprint, init_head
from textrobust.fill_in.minilm_tuned import (
    TUNED_CONFIG,
    TUNED_FORMAT,
    TUNED_WEIGHTS,
    load_tuned,
    tuned_fill_in,
    tuned_state,
)
from textrobust.text import Text

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "the", "a", "film", "movie", "is", "was", "good", "bad", "great", "and", "deep",
    "meaningful", "boring", "story", "plot", "he", "she", "very", "it", "not", ".", ",", "##s",
]
TEXTS = [Text.from_string("the film is good ."), Text.from_string("a deep and meaningful movie , very boring .")]


def _tokenizer(folder: Path):
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return transformers.BertTokenizerFast(vocab=str(vocab), do_lower_case=True)


@pytest.fixture(scope="module")
def encoder_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny_encoder")
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )
    transformers.BertModel(config).save_pretrained(folder, safe_serialization=True)
    _tokenizer(folder).save_pretrained(folder)
    return folder


def _write_tuned(encoder_folder: Path, out: Path, *, first: int = 1) -> tuple[dict, dict]:
    """Perturb the encoder's layers >= first, save them + a head as a tuned folder."""
    from safetensors.torch import save_file

    encoder = transformers.AutoModel.from_pretrained(encoder_folder)
    torch.manual_seed(5)
    with torch.no_grad():
        for name, p in encoder.named_parameters():
            if name.startswith("encoder.layer.") and int(name.split(".")[2]) >= first:
                p.add_(0.5 * torch.randn_like(p))
    head = init_head(16, len(VOCAB), 2, seed=1)
    head["bias"] = torch.randn(len(VOCAB))
    state = tuned_state(encoder, first)
    state.update({f"head.{k}": v for k, v in head.items()})
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.half().contiguous() for k, v in state.items()}, str(out / TUNED_WEIGHTS))
    config = {
        "format": TUNED_FORMAT, "version": 1, "encoder": "tiny",
        "embedding_fingerprint": embedding_fingerprint(encoder.get_input_embeddings().weight),
        "tuned_layers": list(range(first, 3)), "head_layers": [2, 3], "layer_norm_eps": 1e-12,
        "dtype": "float16", "training": {"steps": 1},
    }
    (out / TUNED_CONFIG).write_text(json.dumps(config), encoding="utf-8")
    return {k: v.half().float() for k, v in state.items()}, config


def test_tuned_folder_loads_and_equals_the_same_model_built_by_hand(encoder_folder: Path, tmp_path: Path) -> None:
    state, _ = _write_tuned(encoder_folder, tmp_path / "tuned")
    fill_in = tuned_fill_in(encoder_folder, tmp_path / "tuned", batch_size=2)
    # the same model by hand: the encoder with the (float16-rounded) tuned layers and head
    encoder = transformers.AutoModel.from_pretrained(encoder_folder).eval()
    encoder.load_state_dict({k[len("encoder."):]: v for k, v in state.items() if k.startswith("encoder.")}, strict=False)
    head = {k[len("head."):]: v for k, v in state.items() if k.startswith("head.")}
    config = {"format": HEAD_FORMAT, "layers": [2, 3], "encoder": "tiny",
              "embedding_fingerprint": embedding_fingerprint(encoder.get_input_embeddings().weight)}
    by_hand = MiniLMFillIn(encoder, _tokenizer(tmp_path), head, config)
    requests = [(TEXTS[0], 1), (TEXTS[1], 4), (TEXTS[1], 1)]
    got, expected = fill_in.fill(requests, 5), by_hand.fill(requests, 5)
    for a, b in zip(got, expected):
        assert [w for w, _ in a] == [w for w, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-4)
    # the tuned layers changed the model: the untuned encoder answers differently
    plain = MiniLMFillIn(transformers.AutoModel.from_pretrained(encoder_folder).eval(), _tokenizer(tmp_path), head, config)
    assert any(a != b for a, b in zip(got, plain.fill(requests, 5)))


def test_tuned_folder_errors(encoder_folder: Path, tmp_path: Path) -> None:
    with pytest.raises(AssetMissingError):
        load_tuned(tmp_path / "nothing")
    _, config = _write_tuned(encoder_folder, tmp_path / "bad")
    (tmp_path / "bad" / TUNED_CONFIG).write_text(json.dumps({**config, "format": "other"}), encoding="utf-8")
    with pytest.raises(ConfigError, match="not a tuned MiniLM"):
        load_tuned(tmp_path / "bad")
    _write_tuned(encoder_folder, tmp_path / "wrong")
    (tmp_path / "wrong" / TUNED_CONFIG).write_text(
        json.dumps({**config, "embedding_fingerprint": "0" * 16}), encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="another encoder"):
        tuned_fill_in(encoder_folder, tmp_path / "wrong")


def test_registry_names_the_tuned_route() -> None:
    assert "minilm_tuned" in FILL_INS.names()
    assert "minilm_mlm" in FILL_INS.names()  # the old route stays


def test_kv_cache_rescoring_equals_full_rescoring(tmp_path: Path) -> None:
    from textrobust.lm import CausalLM

    torch.manual_seed(2)
    config = transformers.GPT2Config(vocab_size=len(VOCAB), n_embd=16, n_layer=2, n_head=2, n_positions=64)
    model = transformers.GPT2LMHeadModel(config).eval()
    lm = CausalLM(model, _tokenizer(tmp_path), batch_size=3)
    cached = CausalRescoreFillIn(lm, proposals=8, batch_size=2, kv_cache=True)
    full = CausalRescoreFillIn(lm, proposals=8, batch_size=2, kv_cache=False)
    groups = [
        ["the film is good .", "the movie is good .", "the film was good .", "the film"],
        ["a deep and meaningful movie , very boring .", "a deep and bad movie , very boring ."],
        ["good", "bad"],  # the difference at the first token
    ]
    for a, b in zip(cached._rescore_kv(groups), full._rescore(groups)):
        assert np.allclose(a - a[0], b - b[0], atol=1e-4)
    requests = [(TEXTS[0], 1), (TEXTS[1], 4), (TEXTS[0], 0)]
    for a, b in zip(cached.fill(requests, 6), full.fill(requests, 6)):
        assert [w for w, _ in a] == [w for w, _ in b]
        assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-4)


# ---- heavy: the shipped weights ------------------------------------------------------------
@pytest.mark.heavy
def test_shipped_tuned_model_loads_offline_and_fills_easy_gaps() -> None:
    fill_in = FILL_INS.get("minilm_tuned")()
    requests = [
        (Text.from_string("a deep and meaningful film."), 4),  # film
        (Text.from_string("I love this movie so much."), 3),  # movie
        (Text.from_string("The acting is great and the story is very good."), 1),  # acting
        (Text.from_string("The weather in London was cold and wet."), 3),  # london
        (Text.from_string("The film is a total waste of time."), 5),  # waste
        (Text.from_string("The prime minister spoke to parliament on Tuesday."), 1),  # prime
    ]
    answers = [[w for w, _ in a] for a in fill_in.fill(requests, 20)]
    assert "film" in answers[0][:2] and "movie" in answers[0][:5]  # measured (stage 4): drama, film, story, movie
    assert answers[1][0] == "movie"
    assert {"film", "movie", "story", "cast"} <= set(answers[2][:10])  # a noun about the film
    assert "prime" in answers[5][:10] and "london" in answers[3][:20]
    hits = sum(text.words[p].lower() in a for (text, p), a in zip(requests, answers))
    assert hits >= 4  # "acting" itself is missed (measured: movie, film, story, script, ...)
    # measured weakness, kept visible: "one of the ___ films" puts the antonym first (stage 3:
    # "most, best", no "worst" in the top 20; stage 4: "best, most, worst")
    worst = [w for w, _ in fill_in.fill([(Text.from_string("This is one of the worst films I have ever seen."), 5)], 20)[0]]
    assert "best" in worst[:2] and "worst" in worst[:5]
    assert all(w == w.lower() and not w.startswith("#") and w.isalnum() for a in answers for w in a)


@pytest.mark.heavy
def test_the_default_fill_in_and_bae_source_are_the_shipped_product_route() -> None:
    """Issue 13, item 7: Neighbor_k, BAE and TEA take the default, which is minilm_gemma
    (the shipped tuned MiniLM times Gemma): the same answers as that route built by name,
    not those of minilm_mlm."""
    pytest.importorskip("gguf")
    from textrobust.attack.candidates import fill_in_source
    from textrobust.fill_in import default_fill_in

    requests = [(Text.from_string("The film is a total waste of time."), 5),
                (Text.from_string("a deep and meaningful film."), 2)]
    tuned = FILL_INS.get("minilm_gemma")().fill(requests, 20)
    assert default_fill_in().fill(requests, 20) == tuned
    assert [[w for w, _ in a] for a in FILL_INS.get("minilm_mlm")().fill(requests, 20)] != \
        [[w for w, _ in a] for a in tuned]
    bae = fill_in_source(20)  # BAE's source when its recipe names no fill-in
    words = [s.word for s in bae.candidates(requests[0][0], [5])[5]]
    assert words and set(words) <= {w for w, _ in tuned[0]}


@pytest.mark.heavy
def test_shipped_tokenizer_round_trips_whole_words() -> None:
    """The whole-word entries a fill-in returns are single tokens that decode to themselves,
    and a candidate put into a text tokenises back to that one entry."""
    from textrobust.fill_in.minilm_mlm import load_minilm
    from textrobust.fill_in.whole_words import whole_word_vocab

    _, tokenizer = load_minilm()
    vocab = whole_word_vocab(tokenizer)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(vocab.spaced_ids), size=200, replace=False):
        word, token = vocab.spaced_words[i], int(vocab.spaced_ids[i])
        ids = tokenizer(f"it is {word} here", add_special_tokens=False)["input_ids"]
        assert token in ids and tokenizer.decode([token]).strip() == word
    weights = Path(str(__import__("textrobust").__file__)).parent / "resources" / "minilm_tuned" / TUNED_WEIGHTS
    assert weights.stat().st_size < 30 * 2**20
