"""The victim zoo and TorchVictim: tiny synthetic data, random vectors, 1-2 epochs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from textrobust.data.examples import Dataset, Example
from textrobust.errors import CapabilityError, ConfigError, RegistryError, VictimError
from textrobust.text import Text
from textrobust.zoo import (
    ZOO,
    TrainingData,
    VictimCard,
    WordVocab,
    default_victim_dir,
    ensure_default_victim,
    is_victim_folder,
    load_victim,
    train_victim,
)

torch = pytest.importorskip("torch")

POSITIVE = ["good", "great", "fine", "superb", "lovely", "moving"]
NEGATIVE = ["bad", "dull", "awful", "boring", "weak", "tedious"]
NOUNS = ["film", "movie", "story", "plot", "cast", "script", "ending"]

#: small models so that each trains in well under a second
SMALL = {
    "bow": {"embed_dim": 8},
    "cnn": {"embed_dim": 8, "filters": 4},
    "lstm": {"embed_dim": 8, "hidden": 6},
    "transformer": {"embed_dim": 8, "d_model": 8, "heads": 2, "ff": 16, "max_positions": 16},
}
WORD_ARCHS = sorted(SMALL)
TRAINING = {"epochs": 2, "extra_words": 0, "max_length": 16, "vectors": "random", "lr": 1e-2}


def _dataset(split: str, n: int, offset: int) -> Dataset:
    rng = np.random.default_rng(offset)
    examples = []
    for i in range(n):
        label = i % 2
        adjective = (POSITIVE if label else NEGATIVE)[int(rng.integers(6))]
        noun = NOUNS[int(rng.integers(len(NOUNS)))]
        filler = " really" * int(rng.integers(3))
        examples.append(Example(f"{split}-{i}", Text.from_string(f"The {noun} was{filler} {adjective}."), label))
    return Dataset("toy", tuple(examples), ("negative", "positive"), split)


@pytest.fixture(scope="module")
def data() -> TrainingData:
    return TrainingData(_dataset("train", 40, 1), _dataset("dev", 12, 2), _dataset("test", 12, 3))


@pytest.fixture(scope="module")
def trained(data: TrainingData, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("victims")
    return {
        arch: train_victim(arch, data, out=root / arch, config=SMALL[arch], training=TRAINING, seed=0)
        for arch in WORD_ARCHS
    }


def _module(arch: str, vocab_size: int = 30) -> torch.nn.Module:
    torch.manual_seed(0)
    architecture = ZOO.get(arch)
    return architecture.build(architecture.make_config(SMALL[arch]), vocab_size, 2).eval()


TEXTS = [Text.from_string(s) for s in ("A good film.", "dull", "The plot was really really boring and weak", "")]


# ---- registry and configs -------------------------------------------------------------
def test_registry_lists_every_architecture() -> None:
    assert ZOO.names() == ["bow", "cnn", "lstm", "lstm_att", "minilm", "transformer"]
    assert ZOO.get("minilm").kind == "huggingface"
    with pytest.raises(RegistryError, match="Known: bow, cnn"):
        ZOO.get("gru")


def test_configs_are_validated() -> None:
    with pytest.raises(ConfigError, match="widht"):
        ZOO.get("cnn").make_config({"widht": 3})
    with pytest.raises(ConfigError, match="multiple of heads"):
        ZOO.get("transformer").make_config({"d_model": 10, "heads": 4})
    assert ZOO.get("cnn").make_config().widths == (3, 4, 5)


def test_importing_the_zoo_does_not_import_torch() -> None:
    code = "import sys, textrobust.zoo, textrobust.victims.torch; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- vocabulary ---------------------------------------------------------------------------
def test_vocab_encodes_unk_pad_truncation_and_word_index() -> None:
    vocab = WordVocab(["good", "Film", "the"], max_length=4)
    assert vocab.words[:2] == ("<pad>", "<unk>") and vocab.id_of("FILM") == 3
    enc = vocab.encode([Text.from_string("The GOOD, weird film is long"), Text.from_string("good"), Text.from_string("")])
    assert enc.ids.tolist() == [[4, 2, 1, 3], [2, 0, 0, 0], [1, 0, 0, 0]]
    assert enc.mask.tolist() == [[True] * 4, [True, False, False, False], [True, False, False, False]]
    assert enc.word_index.tolist() == [[0, 1, 2, 3], [0, -1, -1, -1], [-1, -1, -1, -1]]
    assert enc.ids.dtype == np.int64 and enc.lengths.tolist() == [4, 1, 1]


def test_vocab_ids_by_typed_word_stay_right_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.zoo import vocab as vocab_module

    monkeypatch.setattr(vocab_module._IdsAsTyped, "LIMIT", 3)
    vocab = WordVocab(["good", "film"], max_length=16)
    text = Text.from_string("Good GOOD good film Film FILM odd Odd")
    for _ in range(3):  # cached, emptied at the limit, filled again: always the same ids
        assert vocab.encode([text]).ids.tolist() == [[2, 2, 2, 3, 3, 3, 1, 1]]
        assert len(vocab._as_typed) <= 3


def test_vocab_build_counts_and_round_trips(tmp_path: Path) -> None:
    texts = [Text.from_string("good good bad film"), Text.from_string("Good plot")]
    vocab = WordVocab.build(texts, min_count=2, extra_words=["great", "good"], max_length=7)
    assert vocab.words == ("<pad>", "<unk>", "good", "great")
    loaded = WordVocab.load(vocab.save(tmp_path / "vocab.json"))
    assert loaded.words == vocab.words and loaded.max_length == 7
    (tmp_path / "bad.json").write_text('{"words": 3}')
    with pytest.raises(VictimError, match="Not a word vocabulary"):
        WordVocab.load(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="max_length"):
        WordVocab([], max_length=0)


# ---- modules ---------------------------------------------------------------------------
@pytest.mark.parametrize("arch", WORD_ARCHS)
def test_forward_embedded_of_embed_equals_forward(arch: str) -> None:
    module = _module(arch)
    ids = torch.randint(2, 30, (3, 7))
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[1, 4:] = False
    with torch.no_grad():
        assert torch.allclose(module(ids, mask), module.forward_embedded(module.embed(ids), mask))
    assert isinstance(module.embedding, torch.nn.Embedding)


@pytest.mark.parametrize("arch", WORD_ARCHS)
def test_padding_never_changes_a_rows_logits(arch: str) -> None:
    module = _module(arch)
    ids = torch.tensor([[5, 6, 7, 0, 0, 0, 0]])
    with torch.no_grad():
        alone = module(ids[:, :3], torch.ones(1, 3, dtype=torch.bool))
        padded = module(torch.where(ids > 0, ids, 9), ids > 0)  # garbage ids under padding
    assert torch.allclose(alone, padded, atol=1e-6)


# ---- training, saving, loading ---------------------------------------------------------------
@pytest.mark.parametrize("arch", WORD_ARCHS)
def test_train_save_load_gives_identical_probabilities(arch: str, trained: dict, data: TrainingData) -> None:
    result = trained[arch]
    folder = result.path
    assert sorted(p.name for p in folder.iterdir()) == ["card.json", "config.json", "model.safetensors", "vocab.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert folder.stat().st_mode & 0o777 == 0o777 & ~umask  # not mkdtemp's private 0700
    card = result.card
    assert card.architecture == arch and card.splits["train"] == 40 and card.epochs_run == 2
    assert 0.0 <= card.test_accuracy <= 1.0 and card.parameters > 0 and card.vocab_size > 10
    victim = load_victim(folder)
    assert victim.card == card and victim.label_names == ("negative", "positive")
    probs = victim.probabilities(data.test.texts)
    np.testing.assert_allclose(probs, result.victim.probabilities(data.test.texts), atol=1e-7)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    # the card's test accuracy was measured on the in-memory model before saving
    assert np.mean(probs.argmax(axis=1) == np.array(data.test.labels)) == pytest.approx(card.test_accuracy, abs=1e-6)


def test_a_victim_answers_alike_alone_and_in_a_batch(trained: dict) -> None:
    victim = trained["cnn"].victim
    batch = victim.probabilities(TEXTS)
    single = np.vstack([victim.probabilities([t]) for t in TEXTS])
    np.testing.assert_allclose(batch, single, atol=1e-6)


def test_training_is_deterministic_with_the_seed(data: TrainingData, trained: dict, tmp_path: Path) -> None:
    again = train_victim("cnn", data, out=tmp_path / "a", config=SMALL["cnn"], training=TRAINING, seed=0)
    other = train_victim("cnn", data, out=tmp_path / "b", config=SMALL["cnn"], training=TRAINING, seed=1)
    first = trained["cnn"].victim.probabilities(TEXTS)
    np.testing.assert_array_equal(again.victim.probabilities(TEXTS), first)
    assert not np.allclose(other.victim.probabilities(TEXTS), first)


def test_augment_hook_replaces_each_example(data: TrainingData, tmp_path: Path) -> None:
    def twice(example: Example) -> list[Example]:
        upper = Example(example.id + "-u", Text.from_string(str(example.text).replace("The", "A")), example.label)
        return [example, upper]

    result = train_victim("bow", data, out=tmp_path / "bow", config=SMALL["bow"], training=TRAINING, augment=twice)
    assert result.card.splits["train_used"] == 80 and result.card.augment.endswith("twice")
    with pytest.raises(ConfigError, match="list of Example"):
        train_victim("bow", data, out=tmp_path / "x", config=SMALL["bow"], training=TRAINING, augment=lambda e: e)


def test_glove_style_vectors_initialise_the_embeddings(data: TrainingData, tmp_path: Path) -> None:
    words = ["film", "good", "zebra", ","]
    matrix = np.arange(16, dtype=np.float32).reshape(4, 4) + 1.0
    training = {**TRAINING, "vectors": "glove", "extra_words": 3, "epochs": 1, "lr": 1e-9}
    result = train_victim("bow", data, out=tmp_path / "v", config={"embed_dim": 4}, training=training, vectors=(words, matrix))
    vocab, table = result.victim.tokenizer, result.victim.embedding.weight.detach().numpy()
    assert "zebra" in vocab  # among the 3 first word-like entries of the vector set
    np.testing.assert_allclose(table[vocab.id_of("good")], matrix[1], atol=1e-6)
    np.testing.assert_allclose(table[:2], 0.0, atol=1e-6)  # <pad>, <unk>
    with pytest.raises(ConfigError, match="embed_dim"):
        train_victim("bow", data, out=tmp_path / "w", config={"embed_dim": 5}, training=training, vectors=(words, matrix))


def test_training_rejects_bad_parameters(data: TrainingData, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="lr"):
        train_victim("bow", data, out=tmp_path / "a", training={"lr": -1})
    with pytest.raises(ConfigError, match="max_positions"):
        train_victim("transformer", data, out=tmp_path / "b", config=SMALL["transformer"], training={"max_length": 64})
    with pytest.raises(ConfigError, match="'dataset'"):
        train_victim("bow", 3, out=tmp_path / "c")  # type: ignore[arg-type]


def test_save_refuses_to_overwrite_an_unrelated_folder(data: TrainingData, tmp_path: Path, trained: dict) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(VictimError, match="not a victim folder"):
        train_victim("bow", data, out=tmp_path / "mine", config=SMALL["bow"], training=TRAINING)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


# ---- load errors -------------------------------------------------------------------------
def test_load_errors_name_the_folder_and_what_was_expected(tmp_path: Path, trained: dict) -> None:
    with pytest.raises(VictimError, match="does not exist"):
        load_victim(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(VictimError, match=r"config.json is missing.*model.safetensors"):
        load_victim(empty)
    assert not is_victim_folder(empty) and is_victim_folder(trained["bow"].path)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"hello": 1}))
    with pytest.raises(VictimError, match="neither a textrobust victim config"):
        load_victim(bad)
    source = trained["bow"].path
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text((source / "config.json").read_text())
    with pytest.raises(VictimError, match="model.safetensors is missing"):
        load_victim(broken)
    (broken / "model.safetensors").write_bytes((trained["cnn"].path / "model.safetensors").read_bytes())
    (broken / "vocab.json").write_text((source / "vocab.json").read_text())
    with pytest.raises(VictimError, match="do not fit a 'bow' model"):
        load_victim(broken)
    config = json.loads((source / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "architecture": "gru"}))
    with pytest.raises(VictimError, match="Unknown victim architecture 'gru'"):
        load_victim(broken)


# ---- the victim's capabilities ---------------------------------------------------------------
def test_capabilities_follow_the_module(trained: dict) -> None:
    assert trained["cnn"].victim.capabilities.names() == ["gradients", "embedding_layer"]
    assert trained["transformer"].victim.capabilities.attention

    class Plain(torch.nn.Module):
        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return torch.zeros(ids.shape[0], 2)

    from textrobust.victims.torch import TorchVictim

    plain = TorchVictim(Plain(), WordVocab(["a"]), ("n", "p"))
    assert plain.capabilities.names() == [] and plain.probabilities(TEXTS[:1]).tolist() == [[0.5, 0.5]]
    with pytest.raises(CapabilityError, match="gradients"):
        plain.word_gradients(TEXTS[:1], [0])
    with pytest.raises(VictimError, match="torch.nn.Module"):
        TorchVictim(object(), WordVocab(["a"]), ("n", "p"))
    assert plain.probabilities(["a string"]).tolist() == [[0.5, 0.5]]  # plain strings are accepted


@pytest.mark.parametrize("arch", ["cnn", "transformer"])
def test_word_gradients_match_autograd_and_map_words(arch: str, trained: dict) -> None:
    victim = trained[arch].victim
    texts = [*TEXTS, Text.from_string(" ".join(["good"] * 20))]  # the last is truncated at 16
    grads = victim.word_gradients(texts, [1, 0, 0, 1, 0])
    dim = victim.embedding.embedding_dim
    assert [g.shape for g in grads] == [(len(t), dim) for t in texts]
    assert np.all(grads[-1][16:] == 0) and np.any(grads[-1][:16] != 0)
    # the gradient of one word equals plain autograd on that text alone
    ids, mask, _ = victim.encode(texts[:1])
    emb = victim.module.embed(ids).detach().requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(victim.module.forward_embedded(emb, mask), torch.tensor([1]))
    loss.backward()
    np.testing.assert_allclose(grads[0], emb.grad[0].numpy(), atol=1e-6)
    with pytest.raises(ConfigError, match="one label per text"):
        victim.word_gradients(texts, [0])


def test_transformer_attention_is_word_to_word(trained: dict) -> None:
    victim = trained["transformer"].victim
    attn = victim.attentions(TEXTS)
    assert [a.shape for a in attn] == [(2, 2, len(t), len(t)) for t in TEXTS]
    np.testing.assert_allclose(attn[0].sum(axis=-1), 1.0, atol=1e-5)  # one token per word
    with pytest.raises(CapabilityError, match="attention"):
        trained["cnn"].victim.attentions(TEXTS)


# ---- cards and the default victim -----------------------------------------------------------
def test_card_round_trips_and_keeps_unknown_keys(trained: dict, tmp_path: Path) -> None:
    card = trained["lstm"].card
    assert VictimCard.from_dict(card.to_dict()) == card
    data = {**card.to_dict(), "future_field": 3}
    assert VictimCard.from_dict(data).extra["future_field"] == 3
    del data["seed"]
    with pytest.raises(VictimError, match="seed"):
        VictimCard.from_dict(data)
    assert card.package_versions["torch"].startswith("2.") and "lstm on toy" in card.summary()


def test_default_victim_lives_in_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, trained: dict) -> None:
    import shutil

    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path))
    assert default_victim_dir() == tmp_path / "victims" / "default"
    shutil.copytree(trained["cnn"].path, tmp_path / "victims" / "default")
    assert ensure_default_victim() == tmp_path / "victims" / "default"  # present: loaded, not trained


@pytest.mark.heavy
def test_minilm_fine_tunes_saves_and_reloads(data: TrainingData, tmp_path: Path) -> None:
    from textrobust.victims.huggingface import HuggingFaceVictim

    small = TrainingData(data.train.take(8), data.dev.take(4), data.test.take(4))
    result = train_victim("minilm", small, out=tmp_path / "m", config={"max_length": 16}, training={"epochs": 1, "batch_size": 4})
    assert isinstance(result.victim, HuggingFaceVictim) and result.victim.card.architecture == "minilm"
    assert (tmp_path / "m" / "model.safetensors").is_file() and not list((tmp_path / "m").glob("*.bin"))
    probs = load_victim(tmp_path / "m").probabilities(small.test.texts)
    acc = np.mean(probs.argmax(axis=1) == np.array(small.test.labels))
    assert acc == pytest.approx(result.card.test_accuracy) and probs.shape == (4, 2)
