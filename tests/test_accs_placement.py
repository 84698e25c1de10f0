"""ACCS loads its own models (the LM constraint's Gemma, the sentence encoders of its
constraint models) on the run's placement (``--device``, ``--dtype``), like every other
analysis; injected test doubles keep their one-argument factories."""

from __future__ import annotations

from typing import Any

import pytest

from textrobust.analyses.accs import scorers as accs_scorers
from textrobust.analyses.accs.analysis import AccsAnalysis
from textrobust.analyses.accs.scorers import PLACED_SCORERS, build_constraint_model
from textrobust.analyses.accs.settings import AccsAnalysisSettings, LMMode
from textrobust.analyses.accs.sweep import AccsComponents
from textrobust.analyses.protocol import WorkerContext
from textrobust.attack.candidates import DictLexicon
from textrobust.devices import Placement
from textrobust.similarity import SIMILARITY_SCORERS

BF16 = Placement("cpu", "bfloat16")


def _components(settings: AccsAnalysisSettings, **kwargs: Any) -> AccsComponents:
    from textrobust.attack.candidates import WordNetAntonyms, WordNetSynonyms

    lexicon = DictLexicon({})
    return AccsComponents(settings, synonyms=WordNetSynonyms(lexicon=lexicon, tagger=object()),
                          antonyms=WordNetAntonyms(lexicon=lexicon, tagger=object()), stop_words=frozenset(),
                          **kwargs)


@pytest.mark.parametrize("mode", [LMMode.LEFT_WORD, LMMode.WINDOW])
def test_lm_constraint_loads_on_the_placement(mode: LMMode) -> None:
    components = _components(AccsAnalysisSettings(lm_mode=mode), placement=BF16)
    constraint = components.lm_constraint
    inner = getattr(constraint, "scorer", constraint)  # left_word wraps a PrefixWordScorer
    placed = [getattr(part, "_placement", None) for part in (constraint, inner, *vars(constraint).values())]
    assert BF16 in placed


def test_no_placement_is_the_cpu_in_float32() -> None:
    components = _components(AccsAnalysisSettings(lm_mode=LMMode.WINDOW))
    assert components.placement is None
    assert getattr(components.lm_constraint, "_placement", "absent") is None


def test_constraint_models_that_load_torch_take_the_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def recording(name: str) -> Any:
        def factory(path: Any = None, **settings: Any) -> str:
            seen[name] = settings.get("placement", "none given")
            return name
        return factory

    monkeypatch.setattr(accs_scorers.SIMILARITY_SCORERS, "get", recording)
    for name in sorted(PLACED_SCORERS) + ["word_mean"]:
        build_constraint_model(name, BF16)
    assert {name: seen[name] for name in PLACED_SCORERS} == {name: BF16 for name in PLACED_SCORERS}
    assert seen["word_mean"] == "none given"  # no torch model: no placement
    build_constraint_model("minilm")
    assert seen["minilm"] == "none given"  # no placement: the factory's own default (CPU float32)


def test_placed_scorers_are_registered() -> None:
    assert PLACED_SCORERS <= set(SIMILARITY_SCORERS.names())


def test_the_worker_builds_its_parts_on_the_context_placement(monkeypatch: pytest.MonkeyPatch) -> None:
    built: dict[str, Any] = {}

    class Recorded(AccsComponents):
        def __init__(self, settings: Any = None, **kwargs: Any) -> None:
            built["components"] = kwargs.get("placement")

    def scorer(spec: str, placement: Placement | None = None) -> Any:
        built[spec] = placement
        return SIMILARITY_SCORERS.get("word_mean")(vectors=_Vectors())

    monkeypatch.setattr("textrobust.analyses.accs.analysis.AccsComponents", Recorded)
    monkeypatch.setattr("textrobust.analyses.accs.analysis.build_constraint_model", scorer)
    analysis = AccsAnalysis(AccsAnalysisSettings(constraint=("minilm",)))
    analysis.worker(WorkerContext(layer=object(), label_names=("neg", "pos"), placement=BF16))  # type: ignore[arg-type]
    assert built == {"components": BF16, "minilm": BF16}


def test_injected_factories_keep_one_argument() -> None:
    calls: list[Any] = []

    def components(settings: AccsAnalysisSettings) -> AccsComponents:
        calls.append(settings)
        return _components(settings)

    def scorers(spec: str) -> Any:
        calls.append(spec)
        return SIMILARITY_SCORERS.get("word_mean")(vectors=_Vectors())

    analysis = AccsAnalysis(AccsAnalysisSettings(constraint=("minilm",)), components=components, scorers=scorers)
    analysis.worker(WorkerContext(layer=object(), label_names=("neg", "pos"), placement=BF16))  # type: ignore[arg-type]
    assert calls == [analysis.settings, "minilm"]


class _Vectors:
    """The smallest word vectors WordEmbeddingMeanCosine accepts."""

    dim = 2

    def __contains__(self, word: str) -> bool:
        return False

    def vector(self, word: str) -> Any:
        raise KeyError(word)
