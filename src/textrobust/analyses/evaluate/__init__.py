"""The ``evaluate`` analysis: clean accuracy of the victim on the data set, per class, with
the share of each predicted class (:mod:`~textrobust.analyses.evaluate.analysis`)."""

from textrobust.analyses.evaluate.analysis import AccuracySummary, EvaluateAnalysis, EvaluateSettings, EvaluationBatch

__all__ = ["AccuracySummary", "EvaluateAnalysis", "EvaluateSettings", "EvaluationBatch"]
