"""Attributions and attribution distances (Ivankay et al., TEA paper): known answers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from textrobust.attribution import (
    ATTRIBUTIONS,
    Attention,
    IntegratedGradients,
    KernelShap,
    Occlusion,
    Saliency,
    attribution_distance,
    attribution_for,
    kendall_distance,
    pcc,
    pcc_distance,
    spearman_distance,
    top_k_distance,
)
from textrobust.attribution.testing import linear_victim, planted_victim
from textrobust.errors import CapabilityError, ConfigError
from textrobust.text import Text
from textrobust.victims import FunctionVictim, QueryLayer

pytest.importorskip("captum")

EMB = {"good": [1.0, 2.0, 0.0], "bad": [-1.0, 0.5, 1.0], "film": [0.5, -0.5, 2.0], "plot": [0.0, 1.0, -1.0]}
W = [[0.3, -0.2, 0.5], [-1.0, 0.4, 0.25]]


def t(s: str) -> Text:
    return Text.from_string(s)


# ---- distances ------------------------------------------------------------------------------------
def test_pcc_distance_properties() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        a, b = rng.normal(size=7), rng.normal(size=7)
        d = pcc_distance(a, b)
        assert 0.0 <= d <= 1.0
        assert d == pytest.approx(pcc_distance(b, a))  # symmetric
        assert d == pytest.approx(1 - (1 + np.corrcoef(a, b)[0, 1]) / 2)  # Eq. 2's scaling
        assert pcc_distance(a, 3.0 * a - 2.0) == pytest.approx(0.0, abs=1e-12)  # affine invariant
        assert pcc_distance(a, -a) == pytest.approx(1.0)
        assert pcc_distance(a, a) == pytest.approx(0.0, abs=1e-12)


def test_pcc_undefined_cases_and_errors() -> None:
    assert np.isnan(pcc([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    assert pcc_distance([1.0, 1.0], [1.0, 1.0]) == 0.0  # equal constant maps
    assert pcc_distance([1.0, 1.0], [1.0, 2.0]) == 0.5  # undefined correlation counts as 0
    assert pcc_distance([2.0], [5.0]) == 0.5
    with pytest.raises(ConfigError, match="lengths 2 and 3"):
        pcc_distance([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ConfigError, match="finite"):
        pcc_distance([1.0, np.nan], [1.0, 2.0])


def test_rank_and_top_k_distances() -> None:
    a = [0.1, 0.4, 0.3, 0.9]
    assert spearman_distance(a, [1, 3, 2, 4]) == pytest.approx(0.0)
    assert kendall_distance(a, [4, 2, 3, 1]) == pytest.approx(1.0)
    assert top_k_distance(a, a, k=2) == 0.0
    assert top_k_distance([3, 2, 1, 0], [0, 1, 2, 3], k=2) == 1.0
    assert top_k_distance([3, 2, 1], [3, 2, 1], k=10) == 0.0  # k larger than the text
    assert attribution_distance("top_k", k=1)([1, 0], [0, 1]) == 1.0
    assert attribution_distance("pcc") is pcc_distance
    with pytest.raises(ConfigError, match="'distance' parameter"):
        attribution_distance("cosine")


# ---- gradient methods: a linear victim with exact answers -------------------------------------------
@pytest.fixture(scope="module")
def linear() -> Any:
    return linear_victim(EMB, W, bias=[0.1, -0.2])


@pytest.mark.parametrize("label", [0, 1])
def test_saliency_is_exact_on_a_linear_victim(linear: Any, label: int) -> None:
    texts = [t("good film"), t("bad plot , good"), t("film")]
    found = Saliency(linear).attribute(texts, [label] * 3)
    expected = float(np.abs(W[label]).sum())
    for text, values in zip(texts, found):
        assert values.shape == (len(text),)
        np.testing.assert_allclose(values, expected, rtol=1e-5)


@pytest.mark.parametrize("label", [0, 1])
def test_integrated_gradients_is_exact_on_a_linear_victim(linear: Any, label: int) -> None:
    texts = [t("good film"), t("bad plot , good")]
    found = IntegratedGradients(linear, n_steps=5).attribute(texts, [label, label])
    for text, values in zip(texts, found):
        expected = [float(np.dot(EMB.get(w, [0.0, 0.0, 0.0]), W[label])) for w in text.words]
        np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)
        # completeness: the attributions sum to logit(x) - logit(0)
        logit = linear.logits([text])[0, label] - [0.1, -0.2][label]
        assert values.sum() == pytest.approx(float(logit), rel=1e-5)


def test_zeroed_word_gets_zero_integrated_gradients(linear: Any) -> None:
    ig = IntegratedGradients(linear, n_steps=3)
    text = t("good film plot")
    full = ig.attribute([text], [1])[0]
    zeroed = ig.attribute([text], [1], zeroed=[1])[0]
    np.testing.assert_allclose(zeroed, [full[0], 0.0, full[2]], atol=1e-6)


def test_cache_and_batching(linear: Any) -> None:
    sal = Saliency(linear, batch_size=2)
    texts = [t("good film"), t("bad film"), t("good film"), t("plot")]
    first = sal.attribute(texts, [1, 1, 1, 1])
    stats = sal.stats()
    assert (stats.requested, stats.computed, stats.cache_hits) == (4, 3, 1)
    again = sal.attribute(texts[:2], [1, 1])
    assert sal.stats().computed == 3 and sal.stats().cache_hits == 3
    np.testing.assert_array_equal(again[0], first[0])
    sal.attribute([texts[0]], [0])  # another label is another answer
    assert sal.stats().computed == 4


def test_attribute_validates_its_arguments(linear: Any) -> None:
    sal = Saliency(linear)
    with pytest.raises(ConfigError, match="one label"):
        sal.attribute([t("good")], [0, 1])
    with pytest.raises(ConfigError, match=r"Labels must be in \[0, 2\)"):
        sal.attribute([t("good")], [5])
    with pytest.raises(ConfigError, match="zeroed"):
        sal.attribute([t("good")], [0], zeroed=[3])
    with pytest.raises(ConfigError, match="n_steps"):
        IntegratedGradients(linear, n_steps=0)


# ---- every victim kind ------------------------------------------------------------------------------
def _function_victim() -> FunctionVictim:
    def fn(strings: list[str]) -> np.ndarray:
        return np.array([[1.0, s.lower().count("good") - s.lower().count("bad")] for s in strings])

    return FunctionVictim(fn, ("neg", "pos"), outputs="logits")


def test_occlusion_is_the_probability_drop_of_each_word() -> None:
    victim = _function_victim()
    layer = QueryLayer(victim)
    text = t("a good film , not bad")
    values = Occlusion(layer).attribute([text], [1])[0]
    full = victim.probabilities([text])[0, 1]
    expected = [full - victim.probabilities([text.replace(i, "unk")])[0, 1] for i in range(len(text))]
    np.testing.assert_allclose(values, expected, atol=1e-12)
    assert len(text) == 5 and values[1] > 0 > values[4] and values[0] == 0.0
    assert layer.stats().queries >= 1  # black-box calls go through the query layer


def test_kernel_shap_is_seeded_and_signed() -> None:
    victim = _function_victim()
    text = t("good good film bad")
    a = KernelShap(victim, n_samples=40, seed=3).attribute([text], [1])[0]
    b = KernelShap(victim, n_samples=40, seed=3).attribute([text], [1])[0]
    np.testing.assert_allclose(a, b)
    assert a[0] > 0 and a[3] < 0


def test_auto_picks_a_method_for_every_victim_kind(linear: Any) -> None:
    assert isinstance(attribution_for(linear), Saliency)
    assert isinstance(attribution_for(_function_victim()), Occlusion)
    with pytest.raises(CapabilityError, match="occlusion"):
        Saliency(_function_victim())
    with pytest.raises(CapabilityError, match="attention"):
        Attention(linear)
    with pytest.raises(ConfigError, match="'attribution' parameter"):
        attribution_for(linear, "lime")
    assert ATTRIBUTIONS.names() == ["attention", "integrated_gradients", "kernel_shap", "occlusion", "saliency"]


def test_sklearn_victim_is_attributed_black_box() -> None:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from textrobust.victims import SklearnVictim

    pipe = make_pipeline(CountVectorizer(), LogisticRegression())
    pipe.fit(["good film", "great plot", "bad film", "awful plot"] * 3, ["pos", "pos", "neg", "neg"] * 3)
    victim = SklearnVictim(pipe, ("neg", "pos"))
    method = attribution_for(victim)
    values = method.attribute([t("a good film")], [1])[0]
    assert isinstance(method, Occlusion) and values.shape == (3,) and values[1] > 0


def test_zoo_transformer_gradients_and_attention() -> None:
    import torch

    from textrobust.victims.torch import TorchVictim
    from textrobust.zoo.architectures import ZOO
    from textrobust.zoo.vocab import WordVocab

    torch.manual_seed(0)
    arch = ZOO.get("transformer")
    vocab = WordVocab(["good", "film", "bad", "plot"])
    victim = TorchVictim(arch.build(arch.make_config({"layers": 1, "d_model": 8, "heads": 2, "ff": 8}), len(vocab), 2),
                         vocab, ("neg", "pos"))
    texts = [t("good film"), t("a bad plot here")]
    for method in (Saliency(victim), IntegratedGradients(victim, n_steps=4), Attention(victim)):
        found = method.attribute(texts, [0, 1])
        assert [v.shape for v in found] == [(2,), (4,)]
        assert all(np.all(np.isfinite(v)) for v in found)
    attention = Attention(victim).attribute(texts, [0, 1])
    np.testing.assert_allclose([v.sum() for v in attention], [1.0, 1.0], atol=1e-5)  # a distribution over keys


@pytest.fixture(scope="module")
def bert_victim(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from textrobust.attribution.testing import tiny_bert_victim

    return tiny_bert_victim(tmp_path_factory.mktemp("tiny-bert-attr"))


def test_hugging_face_folder_sums_sub_word_pieces(bert_victim: Any) -> None:
    text = t("the film is unbelievable .")  # "unbelievable" is three pieces
    sal = Saliency(bert_victim).attribute([text], [1])[0]
    assert sal.shape == (4,) and np.all(sal > 0)
    ig = IntegratedGradients(bert_victim, n_steps=8)
    values = ig.attribute([text], [1])[0]
    # summing a word's pieces: IG of the pieces, computed on tokens, adds up to the word's value
    from textrobust.attribution.embedded import embedded_batch

    batch = embedded_batch(bert_victim, [text])
    assert batch.words[0][3].sum() == 3.0  # three tokens make the fourth word
    assert values.shape == (4,) and np.all(np.isfinite(values))
    att = Attention(bert_victim).attribute([text], [1])[0]
    assert att.shape == (4,) and np.all(att >= 0)
    # zeroing the word's pieces changes the explanation
    assert not np.allclose(ig.attribute([text], [1], zeroed=[3])[0], values)


def test_lstm_att_returns_its_attention_vector_through_the_victim() -> None:
    import torch

    from textrobust.victims.torch import TorchVictim
    from textrobust.zoo.architectures import ZOO
    from textrobust.zoo.vocab import WordVocab

    torch.manual_seed(0)
    arch = ZOO.get("lstm_att")
    vocab = WordVocab(["good", "film", "bad", "plot", "very"])
    model = arch.build(arch.make_config({"hidden": 8, "attention_dim": 4, "embed_dim": 6}), len(vocab), 2)
    victim = TorchVictim(model, vocab, ("neg", "pos"))
    assert victim.capabilities.attention and victim.capabilities.gradients
    short, long = t("good film"), t("a very bad plot indeed")
    attention = Attention(victim).attribute([short, long], [0, 1])
    np.testing.assert_allclose([a.sum() for a in attention], [1.0, 1.0], atol=1e-5)
    # the same as alpha computed alone (padding in a batch changes nothing)
    ids, mask, _ = victim.encode([short])
    with torch.no_grad():
        _, rows = model.forward_embedded(model.embed(ids), mask, return_attention=True)
    np.testing.assert_allclose(attention[0], rows[0, 0, 0, 0].numpy(), atol=1e-5)
    np.testing.assert_allclose(victim.probabilities([short, long])[0], victim.probabilities([short])[0], atol=1e-5)
    assert Saliency(victim).attribute([long], [1])[0].shape == (5,)
