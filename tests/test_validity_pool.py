"""The labelled set's pool tools (issue 39): the yield draw, blinded chunks, the merge rule."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import pytest

VALIDITY = Path(__file__).resolve().parents[1] / "benchmarks" / "validity"
HEADER = "id\tsplit\tcorpus\tsentence\tposition\tword\tsubstitute\tsources\tlabel\treason\n"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"validity_{name}", VALIDITY / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build_pool() -> ModuleType:
    return _script("build_pool")


def _labelled(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path = tmp_path / "labelled.tsv"
    lines = [f"{i}\tdev\ttweets\tA sentence here.\t1\tsentence\tx\t{sources}\t{label}\t{'same' if label == '1' else 'sense'}"
             for i, sources, label in rows]
    path.write_text("# the rule\n" + HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_combination_rates_are_smoothed_shares_of_the_third_pool(build_pool: ModuleType, tmp_path: Path) -> None:
    path = _labelled(tmp_path, [
        ("s0001", "wordnet_top", "1"),  # before s2000: another pool's columns, ignored
        ("s2000", "wordnet_top,embedding_high", "1"),
        ("s2001", "wordnet_top,embedding_high", "1"),
        ("s2002", "embedding_high", "0"),
        ("s2003", "embedding_high", "0"),
    ])
    rates = build_pool.combination_rates(path, prior=2.0)
    assert rates[frozenset()] == pytest.approx(0.5)
    assert rates[frozenset({"wordnet_top", "embedding_high"})] == pytest.approx((2 + 2 * 0.5) / 4)
    assert rates[frozenset({"embedding_high"})] == pytest.approx((0 + 2 * 0.5) / 4)


def test_combination_rates_need_third_pool_items(build_pool: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="s2000"):
        build_pool.combination_rates(_labelled(tmp_path, [("s0001", "wordnet_top", "1")]))


def test_yield_draw_takes_the_likeliest_first_and_a_control_from_the_rest(build_pool: ModuleType) -> None:
    rates = {frozenset(): 0.2, frozenset({"wordnet_top", "mlm_visible"}): 0.7, frozenset({"embedding_high"}): 0.03,
             frozenset({"mlm_visible"}): 0.02}
    proposals = {"wordnet_top": ["film"], "mlm_visible": ["film", "show", "story"], "embedding_high": ["cinema"],
                 "validated_relaxed": [], "validated_nolm": []}
    for seed in range(20):
        picked = build_pool.yield_draw(proposals, rates, random.Random(seed), control=1.0)
        assert picked[0] == "film"
        assert len(picked) == 3 and len(set(picked)) == 3
    assert all(len(build_pool.yield_draw(proposals, rates, random.Random(s), control=0.0)) == 2 for s in range(5))
    assert build_pool.yield_draw({"wordnet_top": []}, rates, random.Random(0), control=1.0) == []


def test_sentences_avoid_documents_that_hold_a_known_sentence(build_pool: ModuleType,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    class Doc:
        def __init__(self, text: str) -> None:
            self.text = text

    docs = [Doc("First known sentence is right here now. Another sentence of that same document here."),
            Doc("A fresh sentence from another document right here. And a second fresh one in it too.")]
    monkeypatch.setattr(build_pool, "load_dataset", lambda corpus, split: docs)
    known = frozenset({"First known sentence is right here now."})
    got = build_pool.sentences("bbc_news", 5, random.Random(0), split="train", per_document=3, avoid=known)
    assert got and all("fresh" in s for s in got)


def test_chunks_are_numbered_from_the_first_given_and_never_overwrite(tmp_path: Path) -> None:
    chunks = _script("write_chunks")
    rows = [{"id": f"s{i}", "sentence": "The film was good.", "position": "1", "word": "film", "substitute": "movie"}
            for i in range(7)]
    paths = chunks.write(rows, tmp_path, "chunk", first=8, most=3)
    assert [p.name for p in paths] == ["chunk_08.tsv", "chunk_09.tsv", "chunk_10.tsv"]
    lines = paths[0].read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == list(chunks.COLUMNS)
    assert lines[1].split("\t")[1] == "The [[film]] was good."
    assert lines[1].split("\t")[5] == "The [[movie]] was good."
    with pytest.raises(FileExistsError, match="first-chunk"):
        chunks.write(rows, tmp_path, "chunk", first=10, most=3)


def test_merge_rule_and_kappa() -> None:
    merge = _script("merge_labels")
    assert merge.resolve(("1", "same"), ("0", "related")) == ("0", "related")
    assert merge.resolve(("0", "sense"), ("1", "same")) == ("0", "sense")
    assert merge.resolve(("1", "same"), None) == ("1", "same")
    assert merge.cohen_kappa([("1", "1"), ("0", "0")]) == pytest.approx(1.0)
    assert merge.cohen_kappa([("1", "0"), ("0", "1")]) == pytest.approx(-1.0)


def test_record_validated_adds_the_validated_proposers_in_column_order(build_pool: ModuleType, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from textrobust.attack.candidates import validated

    relaxed = SimpleNamespace(tagger=lambda text: ["NN"] * len(text.words))
    monkeypatch.setattr(build_pool, "validated_sources", lambda: (relaxed, "strict settings"))
    verdicts = [SimpleNamespace(substitute="movie", kept=True), SimpleNamespace(substitute="picture", kept=True),
                SimpleNamespace(substitute="show", kept=False)]
    monkeypatch.setattr(build_pool, "cheap_verdicts", lambda source, text, tags, position: verdicts)
    monkeypatch.setattr(validated, "failed_check", lambda e, c: "" if e.substitute == "movie" else "judge")
    pool = tmp_path / "pool.tsv"
    pool.write_text("id\tsplit\tcorpus\tsentence\tposition\tword\tsubstitute\tsources\n"
                    "s7000\tdev\trotten_tomatoes\tThe film was good.\t1\tfilm\tMovie\twordnet_top,embedding_high\n"
                    "s7001\tdev\trotten_tomatoes\tThe film was good.\t1\tfilm\tpicture\tmlm_visible\n"
                    "s7002\tdev\trotten_tomatoes\tThe film was good.\t1\tfilm\tshow\tembedding_high\n",
                    encoding="utf-8")
    build_pool.record_validated(pool)
    sources = [line.split("\t")[7] for line in pool.read_text(encoding="utf-8").splitlines()[1:]]
    assert sources == ["wordnet_top,validated_relaxed,validated_nolm,embedding_high",
                       "validated_relaxed,mlm_visible", "embedding_high"]


def test_merging_two_pools_replaces_their_rows_and_counts_every_double_read(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    merge = _script("merge_labels")
    head = "id\tsplit\tcorpus\tsentence\tposition\tword\tsubstitute\tsources\n"
    third, fourth = tmp_path / "pool3.tsv", tmp_path / "pool4.tsv"
    third.write_text(head + "s2000\tdev\ttweets\tThe film was good.\t1\tfilm\tmovie\twordnet_top\n", encoding="utf-8")
    fourth.write_text(head + "s7000\ttest\ttweets\tThe car was red.\t1\tcar\tauto\tembedding_high\n", encoding="utf-8")
    labels = tmp_path / "labels_chunk.tsv"
    labels.write_text("id\tlabel\treason\ns2000\t1\tsame\ns7000\t1\tsame\n", encoding="utf-8")
    double = tmp_path / "labels_double.tsv"
    double.write_text("id\tlabel\treason\ns2000\t1\tsame\ns7000\t0\trelated\n", encoding="utf-8")
    target = tmp_path / "labelled.tsv"
    target.write_text("# rule\n" + HEADER.rstrip("\n") + "\n"
                      "s0001\tdev\ttweets\tOld one.\t0\tOld\tNew\tembedding\t0\tsense\n"
                      "s2000\tdev\ttweets\tThe film was good.\t1\tfilm\tmovie\twordnet_top\t0\tsense\n", encoding="utf-8")
    agreement = tmp_path / "agreement.json"
    monkeypatch.setattr("sys.argv", ["merge_labels.py", "--pool", str(third), str(fourth), "--labels", str(labels),
                                     "--double", str(double), "--append-to", str(target), "--agreement", str(agreement)])
    merge.main()
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in lines[2:]] == ["s0001", "s2000", "s7000"]
    assert lines[3].endswith("\t1\tsame") and lines[4].endswith("\t0\trelated")  # one rejecting read: invalid
    assert '"double_read": 2' in agreement.read_text(encoding="utf-8")


def test_a_higher_power_keeps_a_crowd_of_unlikely_neighbours_from_the_second_pick(build_pool: ModuleType) -> None:
    rates = {frozenset(): 0.2, frozenset({"wordnet_top"}): 0.3, frozenset({"wordnet_top", "mlm_visible"}): 0.7,
             frozenset({"embedding_high"}): 0.03}
    proposals = {"wordnet_top": ["film", "picture"], "mlm_visible": ["film"],
                 "embedding_high": [f"n{i}" for i in range(20)]}

    def second_is_likely(power: float) -> int:
        return sum(build_pool.yield_draw(proposals, rates, random.Random(s), 0.0, power)[1] == "picture"
                   for s in range(200))

    assert second_is_likely(2.0) > 150 > second_is_likely(1.0)
