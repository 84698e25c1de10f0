"""Victim wrappers, test doubles and the victim contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import textrobust.victims as victims_pkg
from textrobust.errors import CapabilityError, ConfigError, TextRobustError, VictimError
from textrobust.text import Text
from textrobust.victims import FunctionVictim, HuggingFaceVictim, QueryLayer, SklearnVictim
from textrobust.victims.protocol import Capabilities, GradientVictim, Victim
from textrobust.victims.sklearn import join_pair
from textrobust.victims.testing import ContractError, KeywordVictim, WordListVictim, check_victim

SENTENCES = [
    "The film is good.",
    "An unbelievable plot, and the acting was bad.",
    "I don't like this movie",
    "good good good",
]


def texts(*strings: str) -> list[Text]:
    return [Text.from_string(s) for s in strings]


# ---- fixtures: one of each wrapper ------------------------------------------------------
@pytest.fixture(scope="module")
def sklearn_victim() -> SklearnVictim:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    positive = ["a good film", "great acting", "I loved it", "a wonderful story", "good fun",
                "truly great", "lovely and moving", "a fine movie", "great fun", "good plot"]
    negative = ["a bad film", "awful acting", "I hated it", "a boring story", "bad fun",
                "truly awful", "dull and slow", "a poor movie", "boring plot", "bad plot"]
    pipeline = make_pipeline(TfidfVectorizer(), LogisticRegression(C=10.0))
    pipeline.fit(positive + negative, ["pos"] * 10 + ["neg"] * 10)
    return SklearnVictim(pipeline)


VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "an", "film", "movie",
         "is", "was", "good", "bad", "plot", "acting", "and", "i", "like", "this", "don",
         "'", "t", ".", ",", "un", "##believ", "##able", "man", "sleeps", "nobody"]


def _bert_tokenizer(vocab_file: Path) -> Any:
    import transformers
    from transformers import BertTokenizerFast

    # transformers 5 takes the vocabulary as `vocab` and silently ignores `vocab_file`.
    if int(transformers.__version__.split(".")[0]) >= 5:
        return BertTokenizerFast(vocab=str(vocab_file))
    return BertTokenizerFast(vocab_file=str(vocab_file))


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    root = tmp_path_factory.mktemp("tiny-bert")
    (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    tokenizer = _bert_tokenizer(root / "vocab.txt")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, num_labels=3,
        id2label={0: "contradiction", 1: "neutral", 2: "entailment"}, initializer_range=0.5,
    )
    model = BertForSequenceClassification(config)
    folder = root / "model"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def hf_victim(bert_folder: Path) -> HuggingFaceVictim:
    return HuggingFaceVictim.from_folder(bert_folder, batch_size=3)


def _function_victim() -> FunctionVictim:
    def lengths(strings: list[str]) -> np.ndarray:
        return np.array([[len(s) / 10.0, s.count("good"), 1.0] for s in strings])

    return FunctionVictim(lengths, ("long", "good", "other"), outputs="logits")


VICTIMS = ["function", "function-probabilities", "function-pairs", "sklearn", "huggingface",
           "wordlist", "keyword"]


@pytest.fixture(params=VICTIMS)
def victim_and_texts(request: pytest.FixtureRequest) -> tuple[Any, list[Text]]:
    name = request.param
    if name == "function":
        return _function_victim(), texts(*SENTENCES)
    if name == "function-probabilities":
        victim = FunctionVictim(lambda s: [[0.25, 0.75] if "good" in x else [0.9, 0.1] for x in s],
                                ("neg", "pos"), name="good-detector")
        return victim, texts(*SENTENCES)
    if name == "function-pairs":
        victim = FunctionVictim(lambda ps: [[len(p), len(h)] for p, h in ps], ("p", "h"),
                                outputs="logits", pairs=True)
        return victim, [Text.from_pair("A man sleeps.", "Nobody sleeps."),
                        Text.from_pair("It rains", "The street is wet and grey")]
    if name == "sklearn":
        return request.getfixturevalue("sklearn_victim"), texts(*SENTENCES)
    if name == "huggingface":
        return request.getfixturevalue("hf_victim"), texts(*SENTENCES)
    if name == "wordlist":
        return WordListVictim(["good", "like"], ["bad", "unbelievable"]), texts(*SENTENCES)
    return KeywordVictim({"a": ["good"], "b": ["bad", "plot"], "c": ["movie"]},
                         temperature=0.5), texts(*SENTENCES)


# ---- the contract over every wrapper ---------------------------------------------------
def test_every_victim_keeps_the_contract(victim_and_texts: tuple[Any, list[Text]]) -> None:
    victim, sample = victim_and_texts
    ran = check_victim(victim, sample)
    assert {"shape", "distribution", "deterministic", "batch_independence", "empty"} <= set(ran)
    assert ("gradients" in ran) == victim.capabilities.gradients
    assert ("pairs" in ran) == victim.capabilities.pairs
    assert isinstance(victim, Victim)


def test_every_victim_works_behind_the_query_layer(victim_and_texts: tuple[Any, list[Text]]) -> None:
    victim, sample = victim_and_texts
    layer = QueryLayer(victim, batch_size=2)
    first = layer.probabilities(sample)
    np.testing.assert_allclose(first, victim.probabilities(sample), atol=1e-6)
    layer.probabilities(sample)
    assert layer.stats().queries == len(sample)


# ---- the contract catches broken victims -----------------------------------------------
class _Broken:
    """A victim whose probabilities come from ``fn(texts)`` and whose other parts can be
    switched off, to check that each contract check fires."""

    def __init__(self, fn: Any, caps: Capabilities = Capabilities(), labels: Any = ("a", "b"),
                 grads: Any = None) -> None:
        self.fn, self.caps, self.labels, self.grads = fn, caps, labels, grads

    @property
    def label_names(self) -> Any:
        return self.labels

    @property
    def capabilities(self) -> Capabilities:
        return self.caps

    def probabilities(self, texts: Any) -> Any:
        return self.fn(texts)

    def word_gradients(self, texts: Any, labels: Any) -> Any:
        return self.grads(texts)

    def __repr__(self) -> str:
        return "Broken()"


def _uniform(texts: Any) -> np.ndarray:
    return np.full((len(texts), 2), 0.5)


@pytest.mark.parametrize(
    ("victim", "check"),
    [
        (_Broken(_uniform, labels=["a", "b"]), "label_names"),
        (_Broken(_uniform, labels=()), "label_names"),
        (_Broken(_uniform, labels=("a", "a")), "label_names"),
        (_Broken(lambda t: np.full((len(t), 3), 1 / 3)), "shape"),
        (_Broken(lambda t: np.full((len(t), 2), 0.7)), "distribution"),
        (_Broken(lambda t: np.tile([1.5, -0.5], (len(t), 1))), "distribution"),
        (_Broken(lambda t: np.full((len(t), 2), np.nan)), "distribution"),
        (_Broken(lambda t: np.random.default_rng().dirichlet([1, 1], len(t))), "deterministic"),
        (_Broken(lambda t: np.tile([1 / (1 + len(t)), 1 - 1 / (1 + len(t))], (len(t), 1))),
         "batch_independence"),
        (_Broken(lambda t: np.array([[(i + 1) / 10, 1 - (i + 1) / 10] for i in range(len(t))])
                 .reshape(-1, 2)), "batch_independence"),
        (_Broken(lambda t: _uniform(t) if t else np.zeros((0,))), "empty"),
        (_Broken(_uniform, Capabilities(gradients=True), grads=lambda t: [np.zeros((1, 4))] * len(t)),
         "gradients"),
        (_Broken(_uniform, Capabilities(gradients=True),
                 grads=lambda t: [np.full((len(x), 4), np.inf) for x in t]), "gradients"),
        (_Broken(_uniform, Capabilities(embedding_layer=True)), "embedding_layer"),
        (_Broken(_uniform, Capabilities(attention=True)), "attention"),
        (_Broken(lambda t: _uniform(t) if not any(x.is_pair for x in t) else 1 / 0,
                 Capabilities(pairs=True)), "pairs"),
    ],
)
def test_check_victim_names_the_broken_rule(victim: Any, check: str) -> None:
    with pytest.raises(ContractError) as caught:
        check_victim(victim, texts("good film here", "bad", "so so"))
    assert caught.value.check == check
    assert "Broken()" in str(caught.value) and isinstance(caught.value, TextRobustError)


def test_check_victim_rejects_pairs_for_a_victim_without_pairs() -> None:
    with pytest.raises(ContractError, match=r"\[pairs\]"):
        check_victim(_Broken(_uniform), [Text.from_pair("a", "b"), Text.from_pair("c", "d")])


def test_check_victim_wants_a_readable_repr_and_enough_texts() -> None:
    class NoRepr:
        label_names = ("a", "b")
        capabilities = Capabilities()

        def probabilities(self, t: Any) -> np.ndarray:
            return _uniform(t)

    with pytest.raises(ContractError, match=r"\[repr\]"):
        check_victim(NoRepr(), texts("a", "b"))
    with pytest.raises(ConfigError, match="at least two Text"):
        check_victim(WordListVictim(["good"], ["bad"]), texts("only one"))
    with pytest.raises(ContractError, match=r"\[protocol\]"):
        check_victim(object(), texts("a", "b"))


# ---- FunctionVictim ---------------------------------------------------------------------
def test_function_victim_softmaxes_logits_and_shows_its_config() -> None:
    victim = FunctionVictim(lambda s: [[0.0, np.log(3.0)] for _ in s], ("neg", "pos"),
                            outputs="logits", name="const")
    np.testing.assert_allclose(victim.probabilities(texts("x")), [[0.25, 0.75]])
    assert repr(victim) == "FunctionVictim(name='const', label_names=('neg', 'pos'), outputs='logits', pairs=False)"
    assert victim.capabilities == Capabilities()
    big = FunctionVictim(lambda s: [[1000.0, 0.0]] * len(s), ("a", "b"), outputs="logits")
    np.testing.assert_allclose(big.probabilities(texts("x")), [[1.0, 0.0]])


def test_function_victim_passes_strings_or_pairs_and_never_an_empty_list() -> None:
    seen: list[list[Any]] = []

    def fn(batch: list[Any]) -> list[list[float]]:
        seen.append(batch)
        return [[0.5, 0.5]] * len(batch)

    single = FunctionVictim(fn, ("a", "b"))
    single.probabilities(texts("Hello,  world!"))
    single.probabilities([])
    paired = FunctionVictim(fn, ("a", "b"), pairs=True)
    paired.probabilities([Text.from_pair("A man.", "He sleeps")])
    assert seen == [["Hello,  world!"], [("A man.", "He sleeps")]]
    assert paired.capabilities.pairs and not single.capabilities.pairs
    with pytest.raises(CapabilityError, match="pairs=True"):
        single.probabilities([Text.from_pair("a", "b")])
    with pytest.raises(VictimError, match="from_pair"):
        paired.probabilities(texts("not a pair"))


def test_function_victim_validates_its_parameters() -> None:
    with pytest.raises(ConfigError, match="'outputs'.*'probabilities', 'logits'"):
        FunctionVictim(lambda s: s, ("a", "b"), outputs="scores")
    with pytest.raises(ConfigError, match="'label_names'"):
        FunctionVictim(lambda s: s, "ab")
    with pytest.raises(ConfigError, match="repeat"):
        FunctionVictim(lambda s: s, ("a", "a"))
    with pytest.raises(ConfigError, match="'fn'"):
        FunctionVictim("not callable", ("a", "b"))  # type: ignore[arg-type]
    with pytest.raises(VictimError, match=r"shape \(2,\)"):
        FunctionVictim(lambda s: [0.5, 0.5], ("a", "b")).probabilities(texts("x"))


# ---- SklearnVictim -----------------------------------------------------------------------
def test_sklearn_victim_names_and_orders_columns(sklearn_victim: SklearnVictim) -> None:
    assert sklearn_victim.label_names == ("neg", "pos")
    sample = texts("a good and great film", "an awful boring plot")
    probs = sklearn_victim.probabilities(sample)
    assert probs.argmax(axis=1).tolist() == [1, 0]
    flipped = SklearnVictim(sklearn_victim.pipeline, ("pos", "neg"))
    np.testing.assert_allclose(flipped.probabilities(sample), probs[:, ::-1])
    renamed = SklearnVictim(sklearn_victim.pipeline, ("negative", "positive"))
    assert renamed.label_names == ("negative", "positive")
    np.testing.assert_allclose(renamed.probabilities(sample), probs)
    assert repr(sklearn_victim) == "SklearnVictim(name='TfidfVectorizer+LogisticRegression', label_names=('neg', 'pos'))"


def test_sklearn_victim_joins_pairs_with_the_documented_separator(sklearn_victim: SklearnVictim) -> None:
    pair = Text.from_pair("a good film", "awful acting")
    assert sklearn_victim.render(pair) == "a good film [SEP] awful acting" == join_pair(*pair.columns)
    expected = sklearn_victim.pipeline.predict_proba(["a good film [SEP] awful acting"])
    np.testing.assert_allclose(sklearn_victim.probabilities([pair]), expected)


def test_sklearn_victim_refuses_unfitted_paths_and_bad_names(sklearn_victim: SklearnVictim) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    with pytest.raises(VictimError, match="not fitted"):
        SklearnVictim(make_pipeline(TfidfVectorizer(), LogisticRegression()))
    with pytest.raises(ConfigError, match="predict_proba"):
        SklearnVictim(LinearSVC())
    with pytest.raises(ConfigError, match="does not unpickle"):
        SklearnVictim(Path("model.joblib"))
    with pytest.raises(ConfigError, match="2 classes"):
        SklearnVictim(sklearn_victim.pipeline, ("a", "b", "c"))


# ---- HuggingFaceVictim -------------------------------------------------------------------
def test_hf_victim_loads_a_local_folder(hf_victim: HuggingFaceVictim, bert_folder: Path) -> None:
    assert hf_victim.label_names == ("contradiction", "neutral", "entailment")
    assert hf_victim.capabilities == Capabilities(True, True, True, True)
    assert isinstance(hf_victim, GradientVictim)
    assert not hf_victim.model.training
    assert hf_victim.embedding_layer() is hf_victim.model.get_input_embeddings()
    assert hf_victim.tokenizer.is_fast
    renamed = HuggingFaceVictim.from_folder(str(bert_folder), label_names=("c", "n", "e"), max_length=8)
    assert renamed.label_names == ("c", "n", "e") and renamed.max_length == 8
    with pytest.raises(ConfigError, match="one name per output of the model \\(3\\)"):
        HuggingFaceVictim.from_folder(bert_folder, label_names=("a", "b"))
    with pytest.raises(ConfigError, match="'batch_size'"):
        HuggingFaceVictim.from_folder(bert_folder, batch_size=0)


def test_hf_victim_matches_the_model_for_texts_and_pairs(hf_victim: HuggingFaceVictim) -> None:
    import torch

    pair = Text.from_pair("A man sleeps.", "Nobody sleeps.")
    single = Text.from_string("the plot was bad")
    with torch.no_grad():
        enc = hf_victim.tokenizer(["A man sleeps."], ["Nobody sleeps."], return_tensors="pt")
        pair_expected = torch.softmax(hf_victim.model(**enc).logits.double(), -1).numpy()
        enc = hf_victim.tokenizer(["the plot was bad"], return_tensors="pt")
        single_expected = torch.softmax(hf_victim.model(**enc).logits.double(), -1).numpy()
    got = hf_victim.probabilities([pair, single, pair])  # mixed kinds in one call
    np.testing.assert_allclose(got[0], pair_expected[0], atol=1e-6)
    np.testing.assert_allclose(got[2], pair_expected[0], atol=1e-6)
    np.testing.assert_allclose(got[1], single_expected[0], atol=1e-6)
    assert hf_victim.tokens([pair])[0] == ["[CLS]", "a", "man", "sleeps", ".", "[SEP]",
                                           "nobody", "sleeps", ".", "[SEP]"]


def _token_gradients(victim: HuggingFaceVictim, *columns: str, label: int) -> np.ndarray:
    """Gradient of the loss w.r.t. each token's input embedding, computed by hand."""
    import torch

    enc = victim.tokenizer(*[[c] for c in columns], return_tensors="pt")
    embeds = victim.model.get_input_embeddings()(enc.pop("input_ids")).detach().requires_grad_(True)
    logits = victim.model(inputs_embeds=embeds, **enc).logits
    torch.nn.functional.cross_entropy(logits, torch.tensor([label])).backward()
    return embeds.grad[0].double().numpy()


def test_hf_word_gradients_sum_the_pieces_of_each_word(hf_victim: HuggingFaceVictim) -> None:
    text = Text.from_string("An unbelievable plot, I don't like")
    # tokens: [CLS] an un ##believ ##able plot , i don ' t like [SEP]
    tokens = _token_gradients(hf_victim, str(text), label=2)
    expected = np.stack([
        tokens[1],                           # An
        tokens[2] + tokens[3] + tokens[4],   # unbelievable = un + ##believ + ##able
        tokens[5],                           # plot (the comma is not a word)
        tokens[7],                           # I
        tokens[8] + tokens[9] + tokens[10],  # don't = don + ' + t
        tokens[11],                          # like
    ])
    other = Text.from_string("good good good good good good good good good good")
    grads = hf_victim.word_gradients([text, other, text], [2, 0, 2])
    assert grads[0].shape == (6, 32)
    # float32 arithmetic, padded next to a longer neighbour: equal to ~1e-6
    np.testing.assert_allclose(grads[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[2], grads[0], rtol=1e-5, atol=1e-5)
    assert np.abs(expected).sum() > 0


def test_hf_word_gradients_for_pairs_and_truncated_words(hf_victim: HuggingFaceVictim, bert_folder: Path) -> None:
    pair = Text.from_pair("A man sleeps.", "Nobody sleeps.")
    tokens = _token_gradients(hf_victim, "A man sleeps.", "Nobody sleeps.", label=1)
    # [CLS] a man sleeps . [SEP] nobody sleeps . [SEP]
    (grad,) = hf_victim.word_gradients([pair], [1])
    np.testing.assert_allclose(grad, tokens[[1, 2, 3, 6, 7]], rtol=1e-5, atol=1e-5)
    short = HuggingFaceVictim.from_folder(bert_folder, max_length=4)  # [CLS] a man [SEP]
    (cut,) = short.word_gradients(texts("a man sleeps and sleeps"), [0])
    assert cut.shape == (5, 32)
    assert np.all(cut[2:] == 0) and np.all(np.abs(cut[:2]).sum(axis=1) > 0)


def test_hf_word_gradients_check_labels(hf_victim: HuggingFaceVictim) -> None:
    with pytest.raises(ConfigError, match=r"\[0, 3\)"):
        hf_victim.word_gradients(texts("good"), [3])
    with pytest.raises(ConfigError, match="one int label per text"):
        hf_victim.word_gradients(texts("good", "bad"), [0])


def test_hf_attentions(hf_victim: HuggingFaceVictim) -> None:
    sample = texts("the film is good", "an unbelievable plot")
    tokens = hf_victim.token_attentions(sample)
    # [CLS] the film is good [SEP] / [CLS] an un ##believ ##able plot [SEP]
    assert [t.shape for t in tokens] == [(2, 2, 6, 6), (2, 2, 7, 7)]
    np.testing.assert_allclose(tokens[0].sum(axis=-1), 1.0, atol=1e-5)  # softmax over keys
    words = hf_victim.attentions(sample)
    assert [w.shape for w in words] == [(2, 2, 4, 4), (2, 2, 3, 3)]
    # word "unbelievable" (tokens 2-4) attending to word "plot" (token 5): mean over the
    # query pieces of the weight they give to the key token
    np.testing.assert_allclose(words[1][:, :, 1, 2], tokens[1][:, :, 2:5, 5].mean(axis=-1), atol=1e-9)
    assert hf_victim.model.config._attn_implementation != "eager"  # switched back


def test_hf_refuses_missing_paths_hub_ids_and_pickles(tmp_path: Path, bert_folder: Path) -> None:
    with pytest.raises(VictimError, match="needs a local folder.*not downloaded"):
        HuggingFaceVictim.from_folder(tmp_path / "nowhere")
    with pytest.raises(VictimError, match="'bert-base-uncased' does not exist.*hub ids"):
        HuggingFaceVictim.from_folder("bert-base-uncased")
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text((bert_folder / "config.json").read_text())
    (pickled / "pytorch_model.bin").write_bytes(b"never unpickled")
    with pytest.raises(VictimError, match=r"pytorch_model\.bin.*use_safetensors=True"):
        HuggingFaceVictim.from_folder(pickled)
    (pickled / "pytorch_model.bin").unlink()
    with pytest.raises(VictimError, match="no model weights"):
        HuggingFaceVictim.from_folder(pickled)
    with pytest.raises(VictimError, match="no config.json"):
        HuggingFaceVictim.from_folder(tmp_path)
    with pytest.raises(VictimError, match="is a file"):
        HuggingFaceVictim.from_folder(bert_folder / "config.json")


def test_hf_refuses_an_encoder_without_a_trained_head(tmp_path: Path, hf_victim: HuggingFaceVictim) -> None:
    from transformers import BertModel

    encoder = BertModel(hf_victim.model.config)
    encoder.save_pretrained(tmp_path)
    hf_victim.tokenizer.save_pretrained(tmp_path)
    with pytest.raises(VictimError, match="no trained weights for classifier.*randomly initialised head"):
        HuggingFaceVictim.from_folder(tmp_path)


# ---- closed-form doubles -----------------------------------------------------------------
def test_wordlist_victim_is_a_known_logistic() -> None:
    victim = WordListVictim(["good", "great"], ["bad"], temperature=2.0)
    text = Text.from_string("Good, GREAT and good but bad")
    assert victim.score(text) == 2
    p = victim.probabilities([text])[0]
    assert p[1] == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert p[1] == pytest.approx(victim.probability_positive(2))
    assert victim.label_names == ("negative", "positive")
    (grad,) = victim.word_gradients([text], [1])
    np.testing.assert_allclose(grad, np.tile((p - [0, 1]) / 2.0, (6, 1)))
    importance = grad @ np.stack([victim.embedding(w) for w in text.words]).T
    assert np.diag(importance).argmin() == 0  # a positive word supports label 1 most
    with pytest.raises(ConfigError, match="two names"):
        WordListVictim(["a"], ["b"], ("x",))


def test_keyword_victim_counts_per_label() -> None:
    victim = KeywordVictim({"sport": ["goal", "match"], "politics": ["vote"], "other": []})
    text = Text.from_pair("A goal in the match", "then a vote")
    assert victim.counts(text) == (2, 1, 0)
    expected = np.exp([2, 1, 0]) / np.exp([2, 1, 0]).sum()
    np.testing.assert_allclose(victim.probabilities([text])[0], expected)
    np.testing.assert_allclose(victim.probabilities(texts("nothing here"))[0], [1 / 3] * 3)
    with pytest.raises(CapabilityError):
        KeywordVictim({"a": ["x"]}, gradients=False).word_gradients(texts("x"), [0])
    with pytest.raises(ConfigError, match="single string"):
        KeywordVictim({"a": "goal"})
    with pytest.raises(ConfigError, match="'temperature'"):
        KeywordVictim({"a": ["x"]}, temperature=0)


# ---- the package surface -----------------------------------------------------------------
def test_all_matches_the_public_names() -> None:
    assert sorted(victims_pkg.__all__) == sorted(
        ["Victim", "Capabilities", "EmbeddingVictim", "GradientVictim", "QueryLayer", "QueryStats", "FunctionVictim",
         "SklearnVictim", "HuggingFaceVictim", "TorchVictim"]
    )
    for name in victims_pkg.__all__:
        if name == "TorchVictim" and not (Path(victims_pkg.__file__).parent / "torch.py").exists():
            continue
        assert getattr(victims_pkg, name).__name__ == name
    with pytest.raises(AttributeError):
        victims_pkg.NoSuchVictim  # noqa: B018


def test_importing_victims_imports_neither_torch_nor_transformers() -> None:
    code = (
        "import sys, textrobust.victims, textrobust.victims.testing;"
        "print(sorted(m for m in ('torch', 'transformers', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
