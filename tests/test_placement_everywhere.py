"""One device option everywhere (issue 31, item 1): every torch component that an analysis
builds takes the run's placement and loads its model there. The validated synonyms (its
masked LM and causal LM), the attack recipes' language-model and similarity constraints,
the fill-ins built on the causal LM (``minilm_gemma``, ``causal_rescore``, a lazy LM), and
each analysis that builds them from ``context.placement``.

Where a model loads is observed through recording stand-ins (``textrobust.assets.causal_lm``
replaced by a tiny GPT-2 placed as asked) and through the float type, which the CPU shows:
with ``Placement("cpu", "bfloat16")`` every parameter is bfloat16, and the fill-ins' own
passes run in it. Tests marked ``gpu`` run the same components on CUDA (skipped without
one); ``heavy`` ones load the real MiniLM and Gemma 3 270M."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from test_constraints import tiny_causal_lm
from test_fill_in_product import TEXTS, _causal, _masked
from textrobust.analyses.protocol import WorkerContext
from textrobust.attack.candidates import choice
from textrobust.attack.candidates.choice import shared_validated, validated_source
from textrobust.attack.candidates.validated import ValidatedSynonyms
from textrobust.attack.constraints import BERTScoreConstraint, LMLogProbDrop, SentenceSimilarity
from textrobust.attack.constraints.left_context_lm import PrefixWordScorer
from textrobust.devices import Placement
from textrobust.fill_in import load_fill_in
from textrobust.fill_in.causal_rescore import CausalRescoreFillIn
from textrobust.fill_in.product import ProductFillIn
from textrobust.text import Text

torch = pytest.importorskip("torch")

BF16 = Placement("cpu", "bfloat16")
CUDA = Placement("cuda:0")


class _Stop(Exception):
    """Raised by a recording stand-in once it has seen what a worker passes it."""


def _dtypes(module: Any) -> set[Any]:
    return {p.dtype for p in module.parameters()}


def _devices(module: Any) -> set[str]:
    return {p.device.type for p in module.parameters()}


@pytest.fixture()
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Placement | None]:
    """Each causal-LM load's placement; the LM is the product tests' tiny GPT-2, placed as asked."""
    calls: list[Placement | None] = []

    def causal_lm(path: Any = None, placement: Placement | None = None) -> tuple[Any, Any]:
        calls.append(placement)
        lm = _causal()
        return (placement or Placement()).place(lm.model).eval(), lm.tokenizer

    monkeypatch.setattr("textrobust.assets.causal_lm", causal_lm)
    return calls


@pytest.fixture()
def tiny_masked(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """``minilm_tuned`` (and the masked part of ``minilm_gemma``) is a tiny MiniLM fill-in."""
    monkeypatch.setattr("textrobust.fill_in.registry.tuned_fill_in", lambda *a, **k: _masked(tmp_path))


@pytest.fixture()
def fresh_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(choice, "_SHARED", {})


def _validated(source: Any) -> Any:
    """The validated source inside wrappers (TopCandidates, ContentPositions, ...)."""
    from textrobust.attack.candidates.people import PeopleSubstitutes

    while not isinstance(source, (ValidatedSynonyms, PeopleSubstitutes)):
        source = source.source
    return source


def _layer() -> Any:
    from textrobust.audit.testing import keyword_scores
    from textrobust.victims.function import FunctionVictim
    from textrobust.victims.query import QueryLayer

    return QueryLayer(FunctionVictim(keyword_scores, ("negative", "positive")))


# ---- the validated synonyms ---------------------------------------------------------------------
def test_the_validated_source_loads_its_fill_in_and_lm_on_its_placement(loads, tiny_masked) -> None:
    source = ValidatedSynonyms(placement=BF16)
    assert _dtypes(source.fill_in.encoder) == {torch.bfloat16}
    assert {t.dtype for t in source.fill_in.head.values()} == {torch.bfloat16}
    assert _dtypes(source.lm.model) == {torch.bfloat16} and loads == [BF16]
    # its masked-LM scores run in bfloat16 and come back as float32 on the CPU
    scores = source._context_scores(Text.from_string("the film is very good ."), {1: ["movie", "story"]})
    assert set(scores[1]) == {"movie", "story"} and all(np.isfinite(list(scores[1].values())))

    default = ValidatedSynonyms()
    assert _dtypes(default.fill_in.encoder) == {torch.float32}
    assert _dtypes(default.lm.model) == {torch.float32} and loads == [BF16, None]


def test_one_shared_validated_source_per_placement_and_settings(fresh_shared) -> None:
    cpu = shared_validated()
    assert cpu is shared_validated(placement=Placement()) and cpu.placement is None
    reduced = shared_validated(placement=BF16)
    assert reduced is not cpu and reduced.placement == BF16 and reduced is shared_validated(placement=BF16)
    other = shared_validated(placement=BF16, max_candidates=3)
    assert other is not reduced and other.placement == BF16 and other.config.max_candidates == 3
    assert _validated(validated_source(4, placement=BF16)) is reduced
    assert _validated(validated_source(4)) is cpu


@pytest.fixture()
def validated_calls(monkeypatch: pytest.MonkeyPatch) -> list[Placement | None]:
    """Each ``validated_source`` call's placement; the call then stops the worker."""
    calls: list[Placement | None] = []

    def record(*args: Any, placement: Placement | None = None, **kwargs: Any) -> Any:
        calls.append(placement)
        raise _Stop

    monkeypatch.setattr(choice, "validated_source", record)
    monkeypatch.setattr(choice, "shared_labelled", record)  # second-order's patch pairs (issue 48's readers)
    monkeypatch.setattr("textrobust.analyses.radius.method.validated_source", record)
    return calls


def test_every_analysis_that_builds_the_validated_source_passes_its_placement(
    validated_calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textrobust.analyses.attribution.analysis import AttributionAnalysis
    from textrobust.analyses.msr.analysis import MsrAnalysis
    from textrobust.analyses.radius.analysis import PRMetricAnalysis, RadiusBoundsAnalysis
    from textrobust.analyses.second_order.analysis import SecondOrderAnalysis
    from textrobust.attack.candidates.neighbours import EmbeddingSpace
    from textrobust.embeddings.vectors import WordVectors

    fill_ins: list[Placement | None] = []

    class Fill:
        def fill(self, requests: Any, k: int) -> list[list[tuple[str, float]]]:
            return [[] for _ in requests]

    def neighbourhood_fill_in(name: Any = None, placement: Placement | None = None) -> Any:
        fill_ins.append(placement)
        return Fill()

    monkeypatch.setattr("textrobust.fill_in.neighbourhood.load_fill_in", neighbourhood_fill_in)
    space = EmbeddingSpace.of_vectors(WordVectors(["good", "fine"], np.eye(2), name="tiny"), name="tiny")
    context = WorkerContext(_layer(), ("negative", "positive"), placement=BF16)
    analyses: list[Any] = [
        AttributionAnalysis({"attacks": ["tef"], "semantic": False, "perplexity": False, "grammar": False}),
        MsrAnalysis(space=space),
        PRMetricAnalysis(),
        RadiusBoundsAnalysis(),
        SecondOrderAnalysis({"quality": False}),
    ]
    for analysis in analyses:
        with pytest.raises(_Stop):
            analysis.worker(context)
    assert validated_calls == [BF16] * len(analyses)
    assert fill_ins == [BF16]  # the second-order neighbourhood's fill-in


def test_attributions_tea_fill_in_takes_the_placement(monkeypatch: pytest.MonkeyPatch, fresh_shared) -> None:
    from textrobust.analyses.attribution.analysis import candidate_sources
    from textrobust.analyses.attribution.settings import AttributionSettings

    asked: list[tuple[Any, Placement | None]] = []

    class Fill:
        def fill(self, requests: Any, k: int) -> list[list[tuple[str, float]]]:
            return [[] for _ in requests]

    def record(spec: Any = None, *, placement: Placement | None = None, **settings: Any) -> Any:
        asked.append((spec, placement))
        return Fill()

    monkeypatch.setattr("textrobust.fill_in.load_fill_in", record)
    sources = candidate_sources(AttributionSettings(attacks=("tea", "tef"), fill_in="minilm_tuned"), BF16)
    assert asked == [("minilm_tuned", BF16)] and _validated(sources["tef"]).placement == BF16
    candidate_sources(AttributionSettings(attacks=("tea",), fill_in="minilm_tuned"))
    assert asked[-1] == ("minilm_tuned", None)


# ---- the attack recipes -------------------------------------------------------------------------
def test_build_attack_passes_the_placement_to_every_model_component(
    monkeypatch: pytest.MonkeyPatch, fresh_shared
) -> None:
    from textrobust.attack.recipes import build_attack, garg_2020, morris_2020
    from textrobust.similarity.bertscore import BERTScore
    from textrobust.similarity.encoder import EncoderCosine

    layer = _layer()
    attack = build_attack(morris_2020().with_source("validated"), layer, placement=BF16)
    assert attack.source is shared_validated(placement=BF16)
    lm = next(c for c in attack.constraints if isinstance(c, LMLogProbDrop))
    similarity = next(c for c in attack.constraints if isinstance(c, SentenceSimilarity))
    assert lm._placement == BF16 and similarity._placement == BF16
    assert isinstance(similarity.scorer, EncoderCosine) and similarity.scorer._placement == BF16  # not loaded yet
    bert = build_attack(morris_2020(similarity="bertscore"), layer, placement=BF16)
    scorer = next(c for c in bert.constraints if isinstance(c, BERTScoreConstraint)).scorer
    assert isinstance(scorer, BERTScore) and scorer.placement == BF16

    # no placement: the CPU in float32, as before
    plain = build_attack(morris_2020().with_source("validated"), layer)
    assert plain.source is shared_validated() and plain.source.placement is None
    assert all(getattr(c, "_placement", None) is None for c in plain.constraints)

    asked: list[Placement | None] = []

    class Fill:
        def fill(self, requests: Any, k: int) -> list[list[tuple[str, float]]]:
            return [[] for _ in requests]

    def record(spec: Any = None, *, placement: Placement | None = None, **settings: Any) -> Any:
        asked.append(placement)
        return Fill()

    monkeypatch.setattr("textrobust.fill_in.load_fill_in", record)
    build_attack(garg_2020(part_of_speech=False), layer, placement=BF16)  # BAE: the fill-in source
    build_attack(garg_2020(part_of_speech=False), layer)
    assert asked == [BF16, None]


def test_every_component_build_attack_places_takes_a_placement() -> None:
    import inspect

    from textrobust.attack.candidates import CANDIDATE_SOURCES
    from textrobust.attack.constraints import CONSTRAINTS
    from textrobust.attack.recipes import PLACED

    registries: dict[str, Any] = {"candidate source": CANDIDATE_SOURCES, "constraint": CONSTRAINTS}
    assert set(PLACED) == set(registries)
    for kind, names in PLACED.items():
        for name in names:
            assert "placement" in inspect.signature(registries[kind].get(name)).parameters, (kind, name)


def test_the_attack_analysis_hands_its_placement_to_build_attack(monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.analyses.attack.analysis import AttackAnalysis

    seen: list[Placement | None] = []

    def record(spec: Any, layer: Any, *, placement: Placement | None = None, **kwargs: Any) -> Any:
        seen.append(placement)
        raise _Stop

    monkeypatch.setattr("textrobust.attack.recipes.build_attack", record)
    with pytest.raises(_Stop):
        AttackAnalysis({"quality": False}).worker(WorkerContext(_layer(), ("negative", "positive"), placement=BF16))
    assert seen == [BF16]


def test_the_lm_constraints_load_gemma_on_their_placement(loads) -> None:
    drop = LMLogProbDrop(placement=BF16, window=2)
    assert _dtypes(drop.lm.model) == {torch.bfloat16}
    scorer = PrefixWordScorer(placement=BF16)
    assert _dtypes(scorer.lm.model) == {torch.bfloat16}
    assert loads == [BF16, BF16]
    assert _dtypes(LMLogProbDrop().lm.model) == {torch.float32} and loads[-1] is None


def test_the_prefix_word_scorer_reads_its_scores_in_one_gather() -> None:
    """The scores read back from the model's device equal ``CausalLM.word_log_prob`` (float32)
    and stay close in bfloat16."""
    lm = tiny_causal_lm()
    prefixes, words = ["the film is ", "the film is ", "a man ", ""], ["very", "good", "sleeps", "the"]
    scores = PrefixWordScorer(lm).log_probs(prefixes, words)
    expected = lm.word_log_prob([p + w for p, w in zip(prefixes, words)], [len(p.split()) for p in prefixes])
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    half = tiny_causal_lm()
    half_scores = PrefixWordScorer(type(lm)(BF16.place(half.model), half.tokenizer)).log_probs(prefixes, words)
    np.testing.assert_allclose(half_scores, scores, atol=0.1)


def test_bertscore_runs_where_its_placement_says(monkeypatch: pytest.MonkeyPatch) -> None:
    import bert_score

    from textrobust.similarity.bertscore import BERTScore

    built: list[dict[str, Any]] = []

    class FakeScorer:
        def __init__(self, **kwargs: Any) -> None:
            built.append(kwargs)
            self._model = torch.nn.Linear(2, 2)

    monkeypatch.setattr(bert_score, "BERTScorer", FakeScorer)
    reduced = BERTScore(placement=BF16).scorer
    assert built[-1]["device"] == "cpu" and _dtypes(reduced._model) == {torch.bfloat16}
    plain = BERTScore().scorer  # no placement: the CPU in float32, not bert-score's pick of a GPU
    assert built[-1]["device"] == "cpu" and _dtypes(plain._model) == {torch.float32}


# ---- the fill-ins on the causal LM --------------------------------------------------------------
def test_load_fill_in_places_both_parts_of_minilm_gemma(loads, tiny_masked) -> None:
    fill_in = load_fill_in("minilm_gemma", placement=BF16)
    assert isinstance(fill_in, ProductFillIn) and loads == [BF16]
    masked: Any = fill_in.masked
    assert _dtypes(masked.encoder) == {torch.bfloat16}
    assert _dtypes(fill_in.lm.model) == {torch.bfloat16}
    # the product, its case variants and the lookahead over stacked caches run in bfloat16
    requests = [(TEXTS[0], 1), (TEXTS[1], 3), (TEXTS[1], 5)]
    answers = fill_in.fill(requests, 6)
    assert [len(a) for a in answers] == [6, 6, 6]
    assert all(np.isfinite(s) for a in answers for _, s in a) and fill_in.lookahead_rows > 0
    plain: Any = load_fill_in("minilm_gemma")
    assert _dtypes(plain.lm.model) == {torch.float32} and loads[-1] is None


def test_load_fill_in_places_causal_rescore_and_a_lazy_lm(loads) -> None:
    fill_in = load_fill_in("causal_rescore", placement=BF16)
    assert isinstance(fill_in, CausalRescoreFillIn) and _dtypes(fill_in.lm.model) == {torch.bfloat16}
    requests = [(TEXTS[0], 1), (TEXTS[1], 6)]
    for kv in (True, False):
        fill_in.kv_cache = kv
        fill_in.clear_cache()
        answers = fill_in.fill(requests, 4)
        assert [len(a) for a in answers] == [4, 4] and all(np.isfinite(s) for a in answers for _, s in a)
    assert loads == [BF16]
    lazy = CausalRescoreFillIn(placement=BF16, proposals=4)
    assert loads == [BF16]  # nothing loads until the LM is read
    assert _dtypes(lazy.lm.model) == {torch.bfloat16} and loads == [BF16, BF16]
    assert _dtypes(CausalRescoreFillIn().lm.model) == {torch.float32} and loads[-1] is None


def test_a_product_fill_in_without_an_lm_loads_it_on_its_placement(loads, tmp_path: Any) -> None:
    product = ProductFillIn(_masked(tmp_path), placement=BF16)
    assert loads == []
    assert _dtypes(product.lm.model) == {torch.bfloat16} and loads == [BF16]


def test_the_masked_fill_ins_take_the_placement_through_their_factory(tiny_masked) -> None:
    reduced: Any = load_fill_in("minilm_tuned", placement=BF16)
    plain: Any = load_fill_in("minilm_tuned")
    assert _dtypes(reduced.encoder) == {torch.bfloat16} and _dtypes(plain.encoder) == {torch.float32}


# ---- real assets --------------------------------------------------------------------------------
@pytest.mark.heavy
def test_real_minilm_gemma_in_bfloat16_fills_like_float32() -> None:
    requests = [(Text.from_string("a deep and meaningful film about love ."), 4),
                (Text.from_string("the acting is superb and the story is moving ."), 2)]
    full = load_fill_in("minilm_gemma").fill(requests, 20)
    fill_in: Any = load_fill_in("minilm_gemma", placement=BF16)
    assert _dtypes(fill_in.lm.model) == {torch.bfloat16}
    assert _dtypes(fill_in.masked.encoder) == {torch.bfloat16}
    half = fill_in.fill(requests, 20)
    for a, b in zip(full, half):
        assert len({w for w, _ in a} & {w for w, _ in b}) >= 12


@pytest.mark.heavy
def test_real_bertscore_in_bfloat16_scores_like_float32() -> None:
    from textrobust.similarity.bertscore import BERTScore

    a, b = ["the film is very good .", "i loved every minute of it ."], ["the movie is very good .", "i hated it ."]
    half = BERTScore(placement=BF16)
    np.testing.assert_allclose(half.similarity(a, b), BERTScore().similarity(a, b), atol=0.01)
    assert _dtypes(half.scorer._model) == {torch.bfloat16}


# ---- on a GPU -----------------------------------------------------------------------------------
def _same_answers(a: list[list[tuple[str, float]]], b: list[list[tuple[str, float]]]) -> None:
    """Every word of each answer (k above the vocabulary: no cut at a near tie) scores alike."""
    for x, y in zip(a, b):
        assert dict(x).keys() == dict(y).keys()
        assert dict(x) == pytest.approx(dict(y), abs=1e-3)


@pytest.mark.gpu
def test_gpu_fill_ins_on_the_causal_lm_fill_as_on_the_cpu(loads, tiny_masked) -> None:
    requests = [(TEXTS[0], 1), (TEXTS[1], 3), (TEXTS[1], 5)]
    product: Any = load_fill_in("minilm_gemma", placement=CUDA)
    assert _devices(product.masked.encoder) == {"cuda"} and _devices(product.lm.model) == {"cuda"}
    _same_answers(product.fill(requests, 100), load_fill_in("minilm_gemma").fill(requests, 100))
    cpu_rescore: Any = load_fill_in("causal_rescore")
    rescore: Any = load_fill_in("causal_rescore", placement=CUDA)
    assert _devices(rescore.lm.model) == {"cuda"}
    for kv in (True, False):
        for fill_in in (cpu_rescore, rescore):
            fill_in.kv_cache = kv
            fill_in.clear_cache()
        _same_answers(rescore.fill(requests, 100), cpu_rescore.fill(requests, 100))


@pytest.mark.gpu
def test_gpu_validated_source_and_lm_constraints_run_on_cuda(loads, tiny_masked) -> None:
    source = ValidatedSynonyms(placement=CUDA)
    assert _devices(source.fill_in.encoder) == {"cuda"} and _devices(source.lm.model) == {"cuda"}
    text = Text.from_string("the film is very good .")
    wanted = {1: ["movie", "story"]}
    assert source._context_scores(text, wanted)[1] == pytest.approx(
        ValidatedSynonyms()._context_scores(text, wanted)[1], abs=1e-3)
    cpu = tiny_causal_lm()
    gpu = type(cpu)(CUDA.place(tiny_causal_lm().model), cpu.tokenizer)
    prefixes, words = ["the film is", "a man"], ["good", "sleeps"]
    np.testing.assert_allclose(PrefixWordScorer(gpu).log_probs(prefixes, words),
                               PrefixWordScorer(cpu).log_probs(prefixes, words), atol=1e-4)
    assert _devices(LMLogProbDrop(placement=CUDA).lm.model) == {"cuda"}


@pytest.mark.gpu
@pytest.mark.heavy
def test_gpu_similarity_constraints_load_minilm_on_cuda() -> None:
    from textrobust.assets.catalog import resolve
    from textrobust.errors import AssetMissingError

    try:  # the GPU check carries no assets (benchmarks/gpu/run.sh); the 88 MB MiniLM package stays behind
        resolve("minilm")
    except AssetMissingError:
        pytest.skip("the MiniLM asset is not installed here")
    pairs = (["the film is very good ."], ["the movie is very good ."])
    sentence = SentenceSimilarity(placement=CUDA)
    assert sentence.scorer.similarity(*pairs) == pytest.approx(SentenceSimilarity().scorer.similarity(*pairs), abs=1e-4)
    assert _devices(sentence.scorer.encoder) == {"cuda"}
    bert = BERTScoreConstraint(placement=CUDA)
    assert bert.scorer.similarity(*pairs) == pytest.approx(BERTScoreConstraint().scorer.similarity(*pairs), abs=1e-4)
    assert _devices(bert.scorer.scorer._model) == {"cuda"}
