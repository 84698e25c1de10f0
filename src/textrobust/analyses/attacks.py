"""First-order attacks over a data set, resumable through the run store.

Each example is attacked, optionally scored for quality (perplexity before and after
under the causal LM, sentence similarity of original and adversarial text), and written
to the run store the moment it is done. The summary is computed from the stored
records with the pure functions of :mod:`textrobust.attack.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from textrobust.attack import metrics
from textrobust.attack.attack import Attack
from textrobust.attack.results import AttackResult, Status
from textrobust.data.examples import Dataset, Example

if TYPE_CHECKING:
    from rich.progress import Progress

    from textrobust.store import Run

__all__ = ["QualityScorer", "attack_dataset", "stored_results"]


class QualityScorer:
    """Adds ``perplexity_before``/``perplexity_after`` (causal LM) and ``similarity``
    (sentence scorer) to successful results. Either model may be None (then skipped)."""

    def __init__(self, lm: Any | None = None, scorer: Any | None = None) -> None:
        self.lm = lm
        self.scorer = scorer

    @classmethod
    def default(cls, *, perplexity: bool = True, similarity: bool = True) -> QualityScorer:
        lm = scorer = None
        if perplexity:
            from textrobust.lm import CausalLM

            lm = CausalLM.default()
        if similarity:
            from textrobust.similarity import EncoderCosine

            scorer = EncoderCosine()
        return cls(lm, scorer)

    def __call__(self, result: AttackResult) -> AttackResult:
        if result.status is not Status.SUCCEEDED or (self.lm is None and self.scorer is None):
            return result
        extras = dict(result.extras)
        before, after = str(result.original), str(result.perturbed)
        if self.lm is not None:
            ppl = self.lm.perplexity([before, after])
            extras["perplexity_before"], extras["perplexity_after"] = float(ppl[0]), float(ppl[1])
        if self.scorer is not None:
            extras["similarity"] = float(self.scorer.similarity([before], [after])[0])
        return replace(result, extras=extras)

    def __repr__(self) -> str:
        return f"QualityScorer(lm={self.lm!r}, scorer={self.scorer!r})"


def stored_results(run: Run) -> list[AttackResult]:
    """The attack results recorded in ``run`` (error records left out), in order."""
    return [AttackResult.from_payload(r.payload) for r in run.results() if "status" in r.payload]


def attack_dataset(
    attack: Attack,
    dataset: Dataset | Sequence[Example],
    run: Run,
    *,
    quality: QualityScorer | None = None,
    progress: Progress | None = None,
    description: str = "attack",
) -> tuple[list[AttackResult], dict[str, Any]]:
    """Attack every example not yet in ``run``; return all stored results and a summary
    (metrics over every stored result, plus this session's run statistics)."""
    from textrobust.runner import run_examples

    examples = list(dataset)

    def work(example: Example) -> dict[str, Any]:
        result = attack.attack(example)
        if quality is not None:
            result = quality(result)
        return result.to_payload()

    stats = run_examples(
        run,
        [(e.id, e) for e in examples],
        work,
        progress=progress,
        description=description,
        queries=lambda: attack.layer.queries,
    )
    results = stored_results(run)
    summary: dict[str, Any] = dict(metrics.summary(results))
    summary.update(
        {
            "errors": len(run.failed_ids()),
            "computed_now": stats.computed,
            "resumed": stats.done_before,
            "seconds_now": stats.seconds,
            "queries_now": stats.queries,
        }
    )
    return results, summary
