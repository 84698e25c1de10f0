"""The maximal-safe-radius analysis (La Malfa et al. 2020): MCTS upper bound, certified
lower bound, per word, with the LIME comparison."""

from __future__ import annotations

from textrobust.analyses.msr.analysis import MsrAnalysis, MsrRecord, MsrSettings, MsrSummary

__all__ = ["MsrAnalysis", "MsrRecord", "MsrSettings", "MsrSummary"]
