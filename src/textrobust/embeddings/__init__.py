"""Word vectors: GloVe, and GloVe counter-fitted to WordNet synonyms and antonyms.

>>> import numpy as np
>>> from textrobust.embeddings import WordVectors
>>> v = WordVectors(["good", "great", "bad"], np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]))
>>> [w for w, _ in v.nearest(["good"], 2)[0]]
['great', 'bad']

``WordVectors.from_glove()`` loads GloVe 6B 50d (100k most frequent words by default);
``counterfitted_vectors()`` loads the counter-fitted version from the project cache, or
builds it once (about a minute on two cores).
"""

from textrobust.embeddings.counterfit import (
    COUNTERFIT_VERSION,
    CounterFitCache,
    CounterFitSettings,
    CounterFitStats,
    counter_fit,
    counterfit_cache,
    counterfitted_vectors,
    vsp_pairs,
    wordnet_pairs,
)
from textrobust.embeddings.vectors import (
    DEFAULT_VOCAB_SIZE,
    WordVectors,
    normalise_rows,
)

__all__ = [
    "COUNTERFIT_VERSION",
    "DEFAULT_VOCAB_SIZE",
    "CounterFitCache",
    "CounterFitSettings",
    "CounterFitStats",
    "WordVectors",
    "counter_fit",
    "counterfit_cache",
    "counterfitted_vectors",
    "normalise_rows",
    "vsp_pairs",
    "wordnet_pairs",
]
