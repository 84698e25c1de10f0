"""Attribution robustness (Ivankay et al. 2022): TEA and TEF over a rho sweep, k, AUC_k.

- :mod:`.settings`: :class:`AttributionSettings`;
- :mod:`.records`: the typed records and summary;
- :mod:`.text_distances`: Eq. 5 (MiniLM), Eq. 6 (Gemma, optional), grammar errors;
- :mod:`.grammar`, :mod:`.grammar_pairs`: the offline grammar checker and the pairs it
  was chosen on;
- :mod:`.robustness`: k(s) with the prediction constraint, AUC_k, relative increase;
- :mod:`.analysis`: :class:`AttributionAnalysis` (registered as ``attribution``);
- :mod:`.section`: the report section and the attribution-coloured text maps.
"""

from __future__ import annotations

from textrobust.analyses.attribution.analysis import AttributionAnalysis
from textrobust.analyses.attribution.records import AttackRun, AttributionRecord, AttributionSummary
from textrobust.analyses.attribution.settings import AttributionSettings

__all__ = ["AttackRun", "AttributionAnalysis", "AttributionRecord", "AttributionSettings", "AttributionSummary"]
