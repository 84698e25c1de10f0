"""BAE, the fill-in first-order attack the second-order attacks are compared with.

Garg and Ramakrishnan, "BAE: BERT-based Adversarial Examples for Text Classification",
EMNLP 2020 (BAE-R, replace only), as TextAttack builds it (``bae_garg_2019``) and as the
double-perturbation paper (../shared/papers/double-perturbation-second-order-robustness-
and-bias.txt, Section 3.3.1) runs it: the top 50 fill-in words for each masked word,
stop words and repeated edits excluded, the same part of speech, sentence similarity
with the original over a window of 15 words at least 0.936338023, greedy search in
deletion word-importance order.

:func:`garg_2020` returns a :class:`~textrobust.attack.recipes.RecipeSpec` whose source
is the candidate source named ``"fill_in"``; :func:`fill_in_source` is the factory to
register under that name (``CANDIDATE_SOURCES.add("fill_in", fill_in_source, ...)``).
"""

from __future__ import annotations

from textrobust.attack.candidates.fill_in import FillInSource
from textrobust.attack.recipes import Component, RecipeSpec
from textrobust.errors import ConfigError

__all__ = ["fill_in_source", "garg_2020"]


def fill_in_source(k: int = 50, *, fill_in: str | None = None, keep_case: bool = True) -> FillInSource:
    """The top ``k`` words of a fill-in model as a candidate source: ``fill_in`` names one
    in ``textrobust.fill_in.FILL_INS`` (None: ``textrobust.fill_in.DEFAULT_FILL_IN``,
    the fast ``minilm_mlm``)."""
    from textrobust.second_order.neighbourhood import load_fill_in

    return FillInSource(load_fill_in(fill_in), k, keep_case=keep_case)


def garg_2020(*, k: int = 50, min_similarity: float = 0.936338023, window: int = 7,
              part_of_speech: bool = True, fill_in: str | None = None) -> RecipeSpec:
    """BAE-R. Garg and Ramakrishnan, "BAE: BERT-based Adversarial Examples for Text
    Classification", EMNLP 2020.

    Top ``k`` = 50 fill-in words per masked word; no stop word or repeated edit; same
    part of speech; sentence similarity with the original >= 0.936 over 7 words each side
    of the change; greedy search in deletion word-importance order.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"The 'k' parameter of garg_2020 must be an int >= 1. Got {k!r} instead.")
    if not -1.0 <= min_similarity <= 1.0:
        raise ConfigError(f"The 'min_similarity' parameter of garg_2020 must be in [-1, 1]. Got {min_similarity}.")
    source = Component.of("fill_in", k=k) if fill_in is None else Component.of("fill_in", k=k, fill_in=fill_in)
    constraints = [
        Component.of("repeat_modification"),
        Component.of("stop_words"),
        Component.of("frozen_columns"),
    ]
    if part_of_speech:
        # As TextAttack's recipe: nouns and verbs may replace each other.
        constraints.append(Component.of("part_of_speech", allow_noun_verb_swap=True))
    # Departure: USE cosine 0.936338023 over a 15-word window (TextAttack's value; the paper
    # tunes its own) becomes MiniLM cosine with the same threshold and window.
    constraints.append(Component.of("sentence_similarity", min_similarity=min_similarity, window=window,
                                    compare_to="original"))
    return RecipeSpec(
        "bae",
        "Garg and Ramakrishnan, EMNLP 2020",
        source,
        tuple(constraints),
        Component.of("greedy", ranking="delete"),
        notes=(
            "BERT masked LM replaced by the project's fill-in model (whole words only)",
            "USE replaced by MiniLM cosine (same threshold, 15-word window)",
        ),
    )
