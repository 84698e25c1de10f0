"""Pieces of report sections shared by the analyses: headline figures, example rows.

Every string here ends up in HTML, where the report escapes it: these helpers only shape
data (the typed parts of :mod:`textrobust.sections`, which check themselves against the
``textrobust.report`` schema), they never produce markup.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from textrobust.sections import ExampleRow, Figure, Format, Headline, Section, Table
from textrobust.text import Text, split_words

__all__ = ["candidates_headline", "with_substitutes", "example_row", "figure", "headline", "outcome_figures", "source_name", "tokens",
           "table"]


def headline(label: str, value: Any, fmt: Format = "float", note: str | None = None) -> Headline:
    """One headline figure; NaN and None become ``None`` (shown as n/a, never 0)."""
    return Headline(label, value, fmt, note)


def source_name(candidates: str) -> str:
    """How a section names its substitutes in a sentence (the verdict's points)."""
    return "validated substitutes" if candidates == "validated" else "the paper's substitutes"


def candidates_headline(candidates: str, paper_source: str) -> Headline:
    """The headline naming a section's substitutes and how often people accept them
    (measured on held-out SWORDS); ``paper_source`` names the paper's own."""
    from textrobust.attack.candidates.choice import choice_note

    return headline("substitutes (--candidates)", candidates, "text", choice_note(candidates, paper_source))


def with_substitutes(section: Section, candidates: str, paper_source: str) -> Section:
    """``section`` with the :func:`candidates_headline` last (the first is the section's key
    figure in the overview) and its verdict point naming
    the substitutes (the front page's verdict must say what it counted)."""
    from textrobust.attack.candidates.choice import coverage

    point = section.point
    if point:
        tried = coverage(candidates)
        point = f"{point.rstrip('.')} (substitutes: {source_name(candidates)}{'; ' + tried if tried else ''})."
    return dataclasses.replace(section, headline=(*section.headline, candidates_headline(candidates, paper_source)),
                               point=point)


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], note: str | None = None) -> Table:
    """One table; ``note`` says what its columns mean (shown under it); NaN cells are n/a."""
    return Table(title, list(columns), [list(row) for row in rows], note)


def figure(title: str, svg: str, caption: str = "") -> Figure:
    """One figure: a complete SVG document (:mod:`textrobust.analyses.figures`) and its caption."""
    return Figure(title, svg, caption)


def tokens(text: Text) -> tuple[list[str], dict[int, int]]:
    """The text as tokens (gaps and words interleaved, columns joined by `` / ``) and the
    map from word position to token index."""
    out: list[str] = []
    where: dict[int, int] = {}
    position = 0
    for c, column in enumerate(text.columns):
        words, gaps = split_words(column)
        if c:
            out.append(" / ")
        for word, gap in zip(words, gaps):
            if gap:
                out.append(gap)
            where[position] = len(out)
            out.append(word)
            position += 1
        if gaps[-1]:
            out.append(gaps[-1])
    return out, where


def example_row(example_id: str, status: str, label_names: Sequence[str], label: int, original: Text,
                perturbed: Text, before: int | None = None, after: int | None = None,
                note: str | None = None) -> ExampleRow:
    """One row of a report's example table, with the changed words marked."""
    original_tokens, where = tokens(original)
    perturbed_tokens, _ = tokens(perturbed)
    changed = [where[p] for p in original.diff(perturbed) if p in where] \
        if len(original_tokens) == len(perturbed_tokens) else []

    def name(index: int | None) -> str | None:
        return None if index is None or not 0 <= index < len(label_names) else str(label_names[index])

    return ExampleRow(example_id, status, name(label) or str(label), original_tokens, perturbed_tokens, changed,
                      prediction_before=name(before), prediction_after=name(after), note=note)


def outcome_figures(title: str, outcome_labels: Sequence[str], outcome_counts: Sequence[int], l0: Sequence[int], *,
                    l0_from: int, l0_title: str, l0_chart_title: str, l0_caption: str = "") -> list[Figure]:
    """The two figures of an attack section: how the attacks ended (one bar per outcome)
    and how many words the successes changed (one bar per count from ``l0_from``)."""
    from textrobust.analyses.figures import bar_chart

    figures = [figure("How the attacks ended", bar_chart(list(outcome_labels), list(outcome_counts),
                                                         title=f"{title}: outcomes", xlabel="", ylabel="examples"))]
    if l0:
        counts = range(l0_from, max(l0) + 1)
        figures.append(figure(l0_title, bar_chart([str(k) for k in counts], [list(l0).count(k) for k in counts],
                                                  title=l0_chart_title, xlabel="words changed", ylabel="successes"),
                              l0_caption))
    return figures
