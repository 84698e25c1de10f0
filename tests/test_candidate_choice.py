"""Every analysis that substitutes synonyms uses the validated source by default and the
paper's own with ``candidates="paper"`` (issue 28, item 3); the report says which."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from textrobust.attack.candidates.choice import (
    ContentPositions,
    TopCandidates,
    check_choice,
    choice_note,
    shared_labelled,
    shared_validated,
    validated_source,
)
from textrobust.attack.candidates.people import PeopleSubstitutes
from textrobust.attack.candidates.validated import ValidatedSynonyms
from textrobust.attack.problem import Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text
from tests.test_validity import light_source


class DictSource:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[tuple[str, ...]] = []

    def candidates(self, text: Text, positions: Any) -> dict[int, list[Substitution]]:
        self.calls.append(tuple(text.words[p] for p in positions))
        return {p: [Substitution(p, w, -i) for i, w in enumerate(self.table.get(text.words[p].lower(), []))]
                for p in positions}


def _settings() -> dict[str, Any]:
    from textrobust.analyses.attack.analysis import AttackSettings
    from textrobust.analyses.attribution.settings import AttributionSettings
    from textrobust.analyses.msr.analysis import MsrSettings
    from textrobust.analyses.radius.analysis import PRMetricSettings, RadiusBoundsSettings
    from textrobust.analyses.second_order.analysis import SecondOrderSettings

    return {"attack": AttackSettings, "attribution": AttributionSettings, "msr": MsrSettings,
            "pr": PRMetricSettings, "radius": RadiusBoundsSettings, "second-order": SecondOrderSettings}


@pytest.mark.parametrize("name", ["attack", "attribution", "msr", "pr", "radius", "second-order"])
def test_every_synonym_analysis_defaults_to_validated_in_python_and_on_the_command_line(name: str) -> None:
    from textrobust.cli.app import app

    settings = _settings()[name]
    assert settings().candidates == "validated"
    assert settings(candidates="paper").candidates == "paper"
    with pytest.raises(Exception, match="validated"):
        settings(candidates="synonyms")
    command = next(c for c in app.registered_commands if c.name == name)
    default = inspect.signature(command.callback).parameters["candidates"].default
    assert default == "validated"


def test_the_radius_space_is_the_validated_synonyms_unless_told_paper() -> None:
    from textrobust.analyses.radius.method import RadiusAnalysis, _source
    from textrobust.analyses.radius.settings import PRMetricSettings, RadiusBoundsSettings
    from textrobust.attack.candidates.wordnet_cosine import CleanedSynonyms

    validated = _source(RadiusBoundsSettings(), None)
    assert isinstance(validated, ContentPositions) and isinstance(validated.source, TopCandidates)
    assert validated.source.k == 5 and validated.source.source is shared_validated()
    assert isinstance(_source(PRMetricSettings(skip_stop_words=False, eta=3), None), TopCandidates)
    assert isinstance(_source(RadiusBoundsSettings(candidates="paper"), None), CleanedSynonyms)
    given = DictSource({})
    assert _source(RadiusBoundsSettings(), given) is given
    assert isinstance(RadiusAnalysis(None, RadiusBoundsSettings(candidates="paper")).source, CleanedSynonyms)


def test_tef_second_order_and_msr_take_the_choice() -> None:
    from textrobust.analyses.attribution.analysis import candidate_sources
    from textrobust.analyses.attribution.settings import AttributionSettings
    from textrobust.analyses.second_order.analysis import patch_synonyms

    sources = candidate_sources(AttributionSettings(attacks=("tef",), per_word=7))
    assert isinstance(sources["tef"], TopCandidates) and sources["tef"].k == 7
    paper = candidate_sources(AttributionSettings(attacks=("tef",), candidates="paper"))
    assert "EmbeddingNeighbours" in repr(paper["tef"])
    assert list(candidate_sources(AttributionSettings(attacks=("tef", "tea"), candidates="paper"))) == ["tef", "tea"]
    assert patch_synonyms("paper") is None  # PatchFinder's default, the project's stand-in for the paper's
    assert patch_synonyms("validated") is shared_labelled()  # the patches the readers read (issue 48)


def test_top_candidates_and_content_positions_keep_the_protocol() -> None:
    text = Text.from_string("the good film")
    source = DictSource({"good": ["fine", "nice", "decent"], "the": ["a"], "film": ["movie"]})
    assert [s.word for s in TopCandidates(source, 2).candidates(text, [1])[1]] == ["fine", "nice"]
    content = ContentPositions(source, {"The"})
    assert set(content.candidates(text, [0, 1, 2])) == {1, 2} and source.calls[-1] == ("good", "film")
    assert content.candidates(text, [0]) == {}
    with pytest.raises(ConfigError, match="k"):
        TopCandidates(source, 0)
    assert "TopCandidates" in repr(TopCandidates(source, 2))


def test_the_shared_source_is_one_per_settings_and_validated_source_wraps_it() -> None:
    assert shared_validated() is shared_validated()
    assert shared_validated(max_candidates=2) is not shared_validated()
    assert isinstance(shared_validated(), PeopleSubstitutes)
    assert isinstance(shared_labelled(), ValidatedSynonyms) and shared_labelled() is shared_labelled()
    assert validated_source() is shared_validated()
    wrapped = validated_source(3, skip_stop_words=True)
    assert isinstance(wrapped, ContentPositions) and wrapped.source.source is shared_validated()
    assert check_choice("paper") == "paper"
    with pytest.raises(ConfigError, match="validated"):
        check_choice("synonyms")


def test_verdicts_are_judged_once_per_sentence_and_position() -> None:
    source = light_source(min_zipf=0.0)
    judged: list[list[int]] = []
    real = source._judge

    def counting(text: Text, positions: list[int], only: Any) -> Any:
        judged.append(list(positions))
        return real(text, positions, only)

    source._judge = counting  # type: ignore[method-assign]
    text = Text.from_string("The good film")
    first = source.candidates(text, [1, 2])
    assert source.candidates(text, [2, 1]) == first and source.candidates(text, [2]) == {2: first[2]}
    assert judged == [[1, 2]]
    source.candidates(Text.from_string("A good film"), [2])
    assert judged == [[1, 2], [2]]


def test_msr_space_synonyms_keep_known_words_nearest_first() -> None:
    from textrobust.attack.candidates.neighbours import EmbeddingSpace, SpaceSynonyms

    words = ["good", "fine", "nice", "film"]
    matrix = np.array([[0.0, 0.0], [0.1, 0.0], [0.5, 0.5], [1.0, 1.0]])
    index = {w: i for i, w in enumerate(words)}
    space = EmbeddingSpace(words, matrix, lambda w: index.get(w.lower()))
    source = DictSource({"good": ["nice", "unknown", "fine", "good"]})
    found = SpaceSynonyms(space, source).candidates(Text.from_string("Good film"), [0, 1])
    assert [s.word for s in found[0]] == ["Fine", "Nice"]  # in the space, nearest first, the word's case
    assert found[0][0].score == pytest.approx(-np.linalg.norm(space.vector("fine") - space.vector("good")))
    assert 1 not in found  # no synonyms of "film"


def test_sections_name_their_substitutes_and_the_verdict_says_which() -> None:
    from dataclasses import replace

    from textrobust.analyses.sections import headline, with_substitutes
    from textrobust.sections import Section

    section = Section(headline=[headline("key figure", 0.5, "%")], point="30% flip.")
    validated = with_substitutes(section, "validated", "WordNet")
    assert validated.headline[0].label == "key figure"  # the overview's key figure stays first
    from textrobust.validity.people_judge import MEASURED

    assert validated.headline[-1].value == "validated"
    assert f"{MEASURED['precision']:.1%}" in (validated.headline[-1].note or "")
    assert validated.point is not None and validated.point.startswith("30% flip (substitutes: validated substitutes; "
                                                                     "robust here means robust to the ")
    paper = with_substitutes(section, "paper", "WordNet cleaned by cosine")
    assert paper.point is not None and paper.point.endswith("(substitutes: the paper's substitutes).")
    assert "WordNet cleaned by cosine" in (paper.headline[-1].note or "")
    assert with_substitutes(replace(section, point=None), "paper", "x").point is None
    assert "--candidates paper" in choice_note("paper", "x")


def test_the_verdict_level_comes_from_sections_with_validated_substitutes() -> None:
    from textrobust.audit.verdict import verdict

    validated = {"name": "attack", "risk": 0.1, "point": "a", "settings": {"candidates": "validated"}}
    paper = {"name": "radius", "risk": 0.9, "point": "b", "settings": {"candidates": "paper"}}
    plain = {"name": "evaluate", "risk": None, "settings": {}}
    found = verdict([validated, paper, plain])
    assert found["level"] == "good"  # the paper's 90% does not set the level
    assert any("Not counted in the level: radius" in p for p in found["points"]) and "b" in found["points"]
    assert verdict([paper])["level"] == "unknown"
    assert verdict([{**paper, "settings": {"candidates": "validated"}}])["level"] == "poor"


def test_audit_candidates_sets_every_synonym_analysis_and_refuses_other_values(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from textrobust.cli import running
    from textrobust.cli.app import app

    seen: dict[str, Any] = {}

    class Stop(Exception):
        pass

    def capture(ctx: Any, chosen: dict[str, Any], **kwargs: Any) -> Any:
        seen.update(chosen)
        raise Stop

    monkeypatch.setattr(running, "run_analyses", capture)
    result = CliRunner().invoke(app, ["audit", "--analyses", "evaluate,attack,radius,attribution",
                                      "--candidates", "paper"])
    assert isinstance(result.exception, Stop), result.output
    assert "candidates" not in seen["evaluate"]
    assert seen["attack"]["candidates"] == seen["radius"]["candidates"] == seen["attribution"]["candidates"] == "paper"
    refused = CliRunner().invoke(app, ["audit", "--candidates", "synonyms"])
    assert refused.exit_code == 2 and "--candidates" in refused.output and "validated" in refused.output


def test_a_second_order_level_says_it_is_about_nearby_sentences_and_gives_the_answers_level() -> None:
    from textrobust.audit.verdict import verdict

    attack = {"name": "attack", "risk": 0.105, "point": "a", "settings": {"candidates": "validated"}}
    second = {"name": "second-order", "risk": 1.0, "point": "b", "settings": {"candidates": "validated"}}
    found = verdict([attack, second], gates={})  # as if people's reading let it set the level (issue 38)
    assert found["level"] == "poor" and "near its test data" in found["headline"]
    assert any("On its own answers (attack), the level would be good: at most 10% fail (attack)" in p
               for p in found["points"])
    assert "most of its answers" in verdict([{**attack, "risk": 0.9}, {**second, "risk": 0.7}], gates={})["headline"]
