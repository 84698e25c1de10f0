"""The labelled second-order findings and their loader (issue 38): textrobust.validity.second_order."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from textrobust.errors import DataError
from textrobust.validity.second_order import COLUMNS, cohen_kappa, load_labelled, table4

ROW = {"item": "s1-aaaa", "phase": "1", "half": "dev", "corpus": "rotten_tomatoes", "victim": "cnn",
       "settings": "baseline", "example_id": "rt-1", "x0": "a good film", "x0_patched": "a good [[movie]]",
       "neighbour": "one good film", "neighbour_patched": "one good [[movie]]", "patch_source": "film",
       "patch_target": "movie", "patch_position": "2", "l0": "1", "p_x0": "0.8", "p_x0_patched": "0.7",
       "p_neighbour": "0.55", "p_neighbour_patched": "0.45", "ppl_x0": "20.0", "ppl_neighbour": "", "reader": "1",
       "nat_x0": "5", "nat_neighbour": "3", "sent_x0": "pos", "sent_x0_patched": "pos", "sent_neighbour": "pos",
       "sent_neighbour_patched": "neu", "patch_ok": "yes", "note": ""}


def write(tmp_path: Path, rows: list[dict[str, str]], header: tuple[str, ...] = COLUMNS) -> Path:
    path = tmp_path / "labelled.tsv"
    lines = ["# protocol line", "\t".join(header)] + ["\t".join(r[c] for c in COLUMNS) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_small_set_loads_and_gives_table4(tmp_path: Path) -> None:
    second = {**ROW, "item": "s1-bbbb", "nat_x0": "4", "nat_neighbour": "4", "sent_neighbour": "neg",
              "sent_neighbour_patched": "neg", "sent_x0_patched": "neu"}
    double = {**ROW, "reader": "2", "nat_neighbour": "2"}
    found = load_labelled(write(tmp_path, [ROW, second, double]))
    assert len(found) == 3 and found[0].naturalness_drop == 2 and math.isnan(found[0].ppl_neighbour)
    assert found[0].margin == pytest.approx(0.05) and found[0].patch_ok
    t = table4(found)  # reader 1 only
    assert t.findings == 2 and t.naturalness_x0 == 4.5 and t.naturalness_neighbour == 3.5
    assert t.naturalness_drop == 1.0 and t.keeps_x0 == 0.5 and t.keeps_neighbour == 0.5  # neu never keeps
    assert math.isnan(table4([]).naturalness_drop)


@pytest.mark.parametrize("field, value, message", [
    ("nat_x0", "6", "nat_x0 must be 1-5"), ("sent_neighbour", "positive", "sent_neighbour must be one of"),
    ("patch_ok", "maybe", "patch_ok"), ("half", "train", "half"), ("p_x0", "1.2", "probabilities"),
    ("reader", "3", "reader")])
def test_bad_values_name_the_line(tmp_path: Path, field: str, value: str, message: str) -> None:
    with pytest.raises(DataError, match=rf"line 3: .*{message}"):
        load_labelled(write(tmp_path, [{**ROW, field: value}]))


def test_bad_header_width_duplicates_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="header"):
        load_labelled(write(tmp_path, [ROW], header=COLUMNS[:-1]))
    with pytest.raises(DataError, match="appears twice"):
        load_labelled(write(tmp_path, [ROW, ROW]))
    path = tmp_path / "short.tsv"
    path.write_text("\t".join(COLUMNS) + "\n" + "a\tb\n")
    with pytest.raises(DataError, match="line 2: expected 30"):
        load_labelled(path)
    with pytest.raises(DataError, match="does not exist"):
        load_labelled(tmp_path / "none.tsv")


def test_cohen_kappa_plain_and_weighted() -> None:
    assert cohen_kappa([("a", "a"), ("b", "b")]) == 1.0
    assert cohen_kappa([("a", "b"), ("b", "a")]) == -1.0
    pairs = [(5, 4), (4, 4), (2, 3), (1, 1)]
    plain, weighted = cohen_kappa(pairs, weights=None), cohen_kappa(pairs, weights=[1, 2, 3, 4, 5])
    assert 0 < plain < weighted < 1  # near misses count as part agreement when weighted
    assert math.isnan(cohen_kappa([]))


def test_the_shipped_set_loads_with_both_readers_and_halves() -> None:
    found = load_labelled()
    assert {f.reader for f in found} == {1, 2} and {f.half for f in found} == {"dev", "test"}
    firsts = {f.item for f in found if f.reader == 1}
    assert {f.item for f in found if f.reader == 2} <= firsts
    assert {f.victim for f in found} == {"cnn", "minilm"}
    # the protocol is written at the top of the file
    from textrobust.validity.second_order import default_path

    assert default_path().read_text().startswith("# Labelled SO-Beam findings")
