"""The attribution-robustness analysis: TEA and TEF over a rho sweep, k and AUC_k.

Ivankay et al., "Estimating the Adversarial Robustness of Attributions in Text with
Transformers" (../shared/papers/attribution-robustness-tea.txt). For each example, the
victim's predicted class ``l`` is explained (Algorithm 1's input), each attack runs at
each ``rho_max`` of the sweep, and the best perturbed text is scored: PCC of the two
attribution maps, MiniLM similarity (Eq. 5), relative perplexity (Eq. 6, Gemma,
optional), grammar-error increase (link-grammar), and k (Eq. 2) for each text distance.
The summary gives Figure 2's curves (means and standard deviations per rho), AUC_k per
attack and TEA's relative increase over TEF (Figure 3).

Candidates: TEA asks the project's fill-in (``textrobust.fill_in``; the default is
``minilm_gemma``, the tuned MiniLM times Gemma's left context; ``minilm_tuned``, ``causal_rescore`` or a
local masked-LM folder by name), |C| = 15
whole words per word; TEF the 15 nearest counter-fitted GloVe neighbours (the project
counter-fits GloVe itself: no counter-fitted vectors exist offline). Stop words are never
substituted (Algorithm 1, line 8).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from textrobust.analyses.attribution.records import (
    AttackRun,
    AttributionRecord,
    AttributionSummary,
    AucRow,
    CurvePoint,
)
from textrobust.analyses.attribution.robustness import auc, lipschitz_k, mean_std, relative_increase
from textrobust.analyses.attribution.settings import AttributionSettings
from textrobust.analyses.attribution.text_distances import TextDistances, relative_perplexity, semantic_distance
from textrobust.analyses.protocol import Analysis, Failure, WorkerContext, counts
from textrobust.data.examples import Example
from textrobust.devices import Placement
from textrobust.sections import Section

__all__ = ["AttributionAnalysis", "build_attribution", "candidate_sources", "summarise_records"]

PAPER = ("Ivankay, Rigotti, Girardi, Marchiori, Frossard: Estimating the Adversarial Robustness of "
         "Attributions in Text with Transformers (2022); TEF: Ivankay et al., Fooling Explanations in "
         "Text Classifiers (ICLR 2022).")


def build_attribution(layer: Any, settings: AttributionSettings) -> Any:
    """The attribution method the settings ask for, on ``layer``."""
    from textrobust.attribution import IntegratedGradients, attribution_for

    if settings.attribution == "integrated_gradients":
        return IntegratedGradients(layer, n_steps=settings.ig_steps)
    return attribution_for(layer, settings.attribution)


def tef_units(records: Sequence[AttributionRecord], top: float) -> tuple[list[Any], int]:
    """TEF's moved explanations at ``top`` (the largest rho_max; prediction kept, PCC < 0.5),
    one unit each (item ``attribution/EXAMPLE_ID``; None when not weighed), and the examples
    TEF ran on at ``top``."""
    import numpy as np

    from textrobust.analyses.validity_figures import unit

    units, ran = [], 0
    for record in records:
        run = next((r for r in record.runs if r.attack == "tef" and r.rho_max == top), None)
        if run is None:
            continue
        ran += 1
        if run.prediction_kept and np.isfinite(run.pcc) and run.pcc < 0.5:
            units.append(unit(f"attribution/{record.example_id}", record.example_id, record.tef_validity))
    return units, ran


def candidate_sources(settings: AttributionSettings, placement: Placement | None = None,
                      user_labels: Any | None = None) -> dict[str, Any]:
    """Per attack, its candidate source: TEA the fill-in's whole words; TEF the validated
    synonyms (``settings.candidates == "validated"``, the default: a departure, the paper's
    counter-fitted neighbours mostly change the meaning) or the paper's counter-fitted
    neighbours; ``settings.per_word`` per word (stop words dropped first when
    ``settings.content_candidates``; the validated synonyms propose none). ``placement``:
    where the fill-in's and the validated source's models run (None: the CPU in float32)."""
    out: dict[str, Any] = {}
    ask = settings.per_word * (3 if settings.content_candidates else 1)
    if "tea" in settings.attacks:
        from textrobust.attack.candidates import fill_in_source

        out["tea"] = fill_in_source(ask, fill_in=settings.fill_in, placement=placement)
    if "tef" in settings.attacks and settings.candidates == "paper":
        from textrobust.attack.candidates import embedding_neighbours

        out["tef"] = embedding_neighbours(k=ask)
    if settings.content_candidates:
        from textrobust.assets import stop_words
        from textrobust.attack.candidates.content_words import ContentWords

        words = frozenset(w.lower() for w in stop_words())
        out = {name: ContentWords(source, settings.per_word, words) for name, source in out.items()}
    if "tef" in settings.attacks and settings.candidates == "validated":
        from textrobust.attack.candidates.choice import validated_source

        out["tef"] = validated_source(settings.per_word, placement=placement, user_labels=user_labels,
                                      min_validity=settings.min_validity)
    return {name: out[name] for name in settings.attacks}


class AttributionAnalysis(Analysis[AttributionSettings, AttributionRecord, AttributionSummary]):
    """TEA and TEF over a rho sweep: how far an explanation moves while the prediction stays."""

    name = "attribution"
    title = "Attribution robustness (TEA / TEF)"
    paper = PAPER
    settings_type = AttributionSettings
    record_type = AttributionRecord

    def worker(self, context: WorkerContext) -> Callable[[Any], AttributionRecord]:
        from textrobust.attack.candidates import swap_validity

        judge = swap_validity.validity_judge(None, context.placement) if "tef" in self.settings.attacks else None
        return self.worker_with(context.layer, candidate_sources(self.settings, context.placement, context.user_labels),
                                TextDistances.default(
            semantic=self.settings.semantic, perplexity=self.settings.perplexity, grammar=self.settings.grammar,
            placement=context.placement), judge=judge)

    def worker_with(self, layer: Any, sources: dict[str, Any], distances: TextDistances,
                    stop_words: Any = None, judge: Any = None) -> Callable[[Example], AttributionRecord]:
        """``analyse(example)`` with the given candidate sources (one per attack) and text
        scorers (tests pass small ones); ``judge``: weighs TEF's text at the largest rho_max
        (:func:`~textrobust.attack.candidates.swap_validity.judge_finding`; None: not weighed)."""
        from textrobust.attack.candidates.swap_validity import judge_finding
        from textrobust.attack.constraints.stop_words import StopWords
        from textrobust.attack.goals_attribution import AttributionGoal
        from textrobust.attack.problem import Problem
        from textrobust.attack.searches import ATTRIBUTION_SEARCHES
        from textrobust.attribution import pcc

        s = self.settings
        method = build_attribution(layer, s)
        stop = StopWords(stop_words)
        searches = {(attack, rho): ATTRIBUTION_SEARCHES.get(attack)(
                        rho_max=rho, **({"batch_masking": s.batch_masking} if attack == "tea" else {}))
                    for attack in s.attacks for rho in s.rhos}

        def analyse(example: Example) -> AttributionRecord:
            start_all = time.perf_counter()
            queries_before = layer.stats().queries
            text = example.text
            prediction = int(layer.predict([text])[0])
            goal = AttributionGoal(layer, method, text, prediction, distance=s.distance.value, k=s.top_k)
            raw: list[dict[str, Any]] = []
            exhausted = False
            for attack in s.attacks:
                problem = Problem(original=text, goal=goal, source=sources[attack], position_constraints=(stop,))
                for rho in s.rhos:
                    q0, a0, t0 = layer.stats().queries, method.stats().seconds, time.perf_counter()
                    with layer.budget(s.budget) as budget:
                        outcome = searches[(attack, rho)].search(text, problem)
                    best = outcome.best
                    kept = int(layer.predict([best])[0]) == prediction
                    values = method.attribute([best], [prediction])[0]
                    seconds = time.perf_counter() - t0
                    exhausted |= outcome.budget_exhausted
                    raw.append({"attack": attack, "rho_max": rho, "perturbed": best, "kept": kept,
                                "values": values, "queries": layer.stats().queries - q0, "seconds": seconds,
                                "attribution_seconds": method.stats().seconds - a0,
                                "exhausted": outcome.budget_exhausted, "used": budget.used})
            first, scores = distances.score(str(text), [str(r["perturbed"]) for r in raw])
            runs = []
            for i, r in enumerate(raw):
                changed = len(text.diff(r["perturbed"]))
                d_attr = goal.distance(r["values"], goal.reference)
                sim, ppl, errors = scores.similarity[i], scores.perplexity[i], scores.grammar_errors[i]
                d_sem = None if sim is None else semantic_distance(sim)
                d_pp = None if ppl is None or first.perplexity[0] is None else \
                    relative_perplexity(first.perplexity[0], ppl)
                ge = None if errors is None or first.grammar_errors[0] is None else errors - first.grammar_errors[0]
                runs.append(AttackRun(
                    attack=r["attack"], rho_max=r["rho_max"], perturbed=r["perturbed"], changed=changed,
                    rho=changed / len(text) if len(text) else 0.0, prediction_kept=r["kept"],
                    pcc=pcc(r["values"], goal.reference), attribution_distance=d_attr,
                    attribution=tuple(float(v) for v in r["values"]), similarity=sim, semantic_distance=d_sem,
                    perplexity=ppl, relative_perplexity=d_pp, grammar_errors=errors, grammar_increase=ge,
                    k_semantic=lipschitz_k(d_attr, d_sem, prediction_kept=r["kept"], changed_words=changed),
                    k_perplexity=lipschitz_k(d_attr, d_pp, prediction_kept=r["kept"], changed_words=changed),
                    queries=r["queries"], seconds=r["seconds"], attribution_seconds=r["attribution_seconds"],
                    budget_exhausted=r["exhausted"]))
            return AttributionRecord(
                example_id=example.id, status="exhausted" if exhausted else "ok",
                queries=layer.stats().queries - queries_before, seconds=time.perf_counter() - start_all,
                label=int(example.label), prediction=prediction, method=method.method.value, original=text,
                original_attribution=tuple(float(v) for v in goal.reference),
                original_perplexity=first.perplexity[0], original_grammar_errors=first.grammar_errors[0],
                runs=tuple(runs), budget_exhausted=exhausted,
                tef_validity=next((judge_finding(judge, text, run.perturbed) for run in runs
                                   if run.attack == "tef" and run.rho_max == s.rhos[-1]), None))

        return analyse

    def __init__(self, settings: Any = None) -> None:
        super().__init__(settings)
        if "tea" in self.settings.attacks:
            from textrobust.analyses.second_order.analysis import check_fill_in

            check_fill_in(self.settings.fill_in, "AttributionSettings")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "paper": "Ivankay et al. 2022 (TEA), Algorithm 1"}

    def summarise(self, records: Sequence[AttributionRecord], failures: Sequence[Failure]) -> AttributionSummary:
        return summarise_records(self.settings, records, failures)

    def section(self, summary: AttributionSummary, records: Sequence[AttributionRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.attribution.section import attribution_section

        return attribution_section(summary, records, label_names)


def summarise_records(settings: AttributionSettings, records: Sequence[AttributionRecord],
                      failures: Sequence[Failure]) -> AttributionSummary:
    """The pure summary: curves per (attack, rho_max), AUC_k, relative increase."""
    import numpy as np

    from textrobust.analyses.validity_figures import expected_fields

    points: list[CurvePoint] = []
    for attack in settings.attacks:
        for rho in settings.rhos:
            runs = [run for r in records for run in r.runs if run.attack == attack and run.rho_max == rho]
            kept = [run for run in runs if run.prediction_kept]

            def stat(values: Sequence[float | None]) -> tuple[float, float, int]:
                return mean_std(values)

            pcc_m, pcc_s, _ = stat([x.pcc for x in kept])
            sim_m, sim_s, _ = stat([x.similarity for x in kept])
            pp_m, pp_s, _ = stat([x.relative_perplexity for x in kept])
            ge_m, ge_s, _ = stat([x.grammar_increase for x in kept])
            # k recomputed from the stored distances: records stored by an older version
            # (a negative k_PP where perplexity fell) are summarised by today's rule
            ks_m, ks_s, ks_n = stat([lipschitz_k(x.attribution_distance, x.semantic_distance, prediction_kept=True,
                                                 changed_words=x.changed) for x in kept])
            k_pp = [lipschitz_k(x.attribution_distance, x.relative_perplexity, prediction_kept=True,
                                changed_words=x.changed) for x in kept]
            kp_m, kp_s, kp_n = stat(k_pp)
            kp_undefined = sum(1 for x, k in zip(kept, k_pp) if k is None and x.relative_perplexity is not None)
            seconds = float(np.mean([x.seconds for x in runs])) if runs else float("nan")
            total = sum(x.seconds for x in runs)
            share = sum(x.attribution_seconds for x in runs) / total if total > 0 else float("nan")
            points.append(CurvePoint(attack, rho, len(runs), float(np.mean([x.rho for x in runs])) if runs
                                     else float("nan"), pcc_m, pcc_s, sim_m, sim_s, pp_m, pp_s, ge_m, ge_s,
                                     ks_m, ks_s, ks_n, kp_m, kp_s, kp_n, seconds, share, kp_undefined))
    aucs = []
    for attack in settings.attacks:
        mine = [p for p in points if p.attack == attack]
        aucs.append(AucRow(attack, auc([p.rho_max for p in mine], [p.k_semantic_mean for p in mine]),
                           auc([p.rho_max for p in mine], [p.k_perplexity_mean for p in mine])))
    by = {a.attack: a for a in aucs}
    inc_sem = inc_pp = float("nan")
    if "tea" in by and "tef" in by:
        inc_sem = relative_increase(by["tea"].auc_k_semantic, by["tef"].auc_k_semantic)
        inc_pp = relative_increase(by["tea"].auc_k_perplexity, by["tef"].auc_k_perplexity)
    changed = sum(1 for r in records for run in r.runs if not run.prediction_kept)
    first, top = settings.attacks[0], settings.rhos[-1]
    finals = [run for r in records for run in r.runs if run.attack == first and run.rho_max == top]
    moved = [run for run in finals if run.prediction_kept and np.isfinite(run.pcc) and run.pcc < 0.5]
    tef, tef_runs = tef_units(records, settings.rhos[-1]) if "tef" in settings.attacks else ([], 0)
    return AttributionSummary(
        **expected_fields(tef, tef_runs),
        **counts(records, failures),
        attribution=records[0].method if records else settings.attribution, distance=settings.distance.value,
        points=tuple(points), aucs=tuple(aucs), relative_increase_semantic=inc_sem,
        relative_increase_perplexity=inc_pp, prediction_changed=changed,
        seconds_per_example=float(np.mean([r.seconds for r in records])) if records else float("nan"),
        moved_share=len(moved) / len(finals) if finals else float("nan"))
