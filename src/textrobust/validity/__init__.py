"""Validity: how far each figure's texts can be trusted (DESIGN.md, "Validity").

The package sits just below the attack engine, so candidate sources may use its judges and
the audit, report and gate may use its reviews; it imports only from the layers beneath
(text, store, data, assets). Models that a judge needs (a masked LM, a causal LM) are
passed in as collaborators by the layer that owns them, never imported here.

Modules:
- ``substitutions``: the labelled in-context substitution set and its loader.
- ``second_order``: the labelled second-order findings (naturalness of x0 and of the
  neighbour, whether the patch keeps the sentiment) and their loader.
- ``findings``: the labelled attack findings (adversarial examples read blind by two
  readers) and their loader.
- ``cache``: the on-disk cache of judges' verdicts, keyed by sentence, position and the
  versions of every model and lexicon used.
- ``calibration``: from a judge's raw score to a probability, with bootstrap refits for
  its uncertainty; reliability tables and the expected calibration error.
- ``reviews``: a person's judgements of a run's findings, kept in the run store.
- ``overrides``: a user's labelled substitutions (``textrobust review --export``, read back
  with ``--labelled``), which the validated synonyms apply.
"""
