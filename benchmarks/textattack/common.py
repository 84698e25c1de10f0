"""What both sides of the TextAttack benchmark share: settings, paths, file formats.

Standard library only: this module is imported from the project's environment
(``prepare.py``, ``run_ours.py``, ``compare.py``) and from TextAttack's own venv
(``run_textattack.py``), which share nothing else.

The two attack settings (one per search) are declared once, here, and both sides read
them from the ``inputs.json`` written by ``prepare.py``:

- ``greedy``: TextFooler's search and candidate set without its USE and POS constraints
  (TextAttack's ``textfooler_jin_2019`` minus the two model-based constraints, which need
  downloads): 50 embedding neighbours, cosine >= 0.5 to the original word, stop words,
  no repeat modification, greedy search in delete word-importance order;
- ``genetic``: Alzantot et al. (2018) as TextAttack's ``genetic_algorithm_alzantot_2018``
  minus its Google language model (a download): 8 neighbours, squared L2 distance <= 0.5
  to the previous word (unit vectors), at most 20 % of the words changed, stop words, no
  repeat modification, population 60, 20 generations, temperature 0.3, no
  post-crossover check (the recipe's setting).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
#: TextAttack's venv, and the benchmark's own data beside it (both git-ignored).
VENV = Path(os.environ.get("TA_VENV", REPO / "benchmarks" / ".venv-textattack"))
DATA = VENV / "bench"
WORK = DATA / "work"
TA_CACHE = DATA / "ta_cache"
NLTK_DATA = DATA / "nltk_data"
RESULTS = REPO / "benchmarks" / "results" / "textattack.md"

#: The project's prepared WordNet (``textrobust assets prepare``), read-only.
SHARED_NLTK = (
    Path(os.environ.get("TEXTROBUST_CACHE", Path.home() / ".cache" / "textrobust"))
    / "nltk_data"
)

#: Environment both sides run under: no download can start. TextAttack's import builds a
#: default StopwordModification from NLTK's stopwords corpus (absent offline): our own
#: list is written in NLTK's layout under DATA (see :func:`write_nltk_stopwords`);
#: WordNet comes from the project's prepared layout. TA_CACHE holds TextAttack's
#: "post-install done" marker, so its import never calls ``nltk.download``.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "TA_CACHE_DIR": str(TA_CACHE),
    # one thread for every numerical library: on a shared 2-core machine more threads
    # oversubscribe the cores and the forward pass times swing by several x
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NLTK_DATA": os.pathsep.join([str(NLTK_DATA), str(SHARED_NLTK)]),
}

SETTINGS: dict[str, dict[str, Any]] = {
    "greedy": {
        "search": "greedy",
        "wir": "delete",
        "neighbours": 50,
        "min_cos": 0.5,
        "max_mse": None,
        "compare_to": "original",
        "max_modification_rate": None,
        "budget": None,
    },
    "genetic": {
        "search": "genetic",
        "neighbours": 8,
        "min_cos": None,
        "max_mse": 0.5,  # TextAttack's "mse" is the squared L2 distance
        "compare_to": "parent",
        "max_modification_rate": 0.2,
        "pop_size": 60,
        "max_iters": 20,
        "temperature": 0.3,
        "post_crossover_check": False,
        "max_crossover_retries": 20,
        "budget": None,
    },
}

# TextAttack's word splitter (textattack.shared.utils.strings.words_from_text, 0.3.11),
# copied so the project side can pick examples both sides split into the same words.
_TA_HOMOS = "˗৭Ȣ𝟕бƼᏎƷᒿlO`ɑЬϲԁе𝚏ɡհіϳ𝒌ⅼｍոорԛⲅѕ𝚝սѵԝ×уᴢ"
_TA_EXCEPTIONS = "'-_*@"
_TA_PATTERN = re.compile(f"[\\w{_TA_HOMOS}'\\-_\\*@]+")


def textattack_words(string: str) -> list[str]:
    """The words TextAttack 0.3.11 sees in ``string`` (non-Chinese text)."""
    words: list[str] = []
    for word in " ".join(string.split()).split():
        word = word.strip(_TA_EXCEPTIONS)
        words.extend(w.strip(_TA_EXCEPTIONS) for w in _TA_PATTERN.findall(word))
    return [w for w in words if w]


def write_nltk_stopwords(words: list[str]) -> Path:
    """Write ``words`` as NLTK's English stopwords corpus under :data:`NLTK_DATA`, and
    TextAttack's post-install marker under :data:`TA_CACHE` (so its import neither
    fails on the missing corpus nor tries ``nltk.download``)."""
    folder = NLTK_DATA / "corpora" / "stopwords"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "english").write_text("\n".join(sorted(words)) + "\n", encoding="utf-8")
    TA_CACHE.mkdir(parents=True, exist_ok=True)
    (TA_CACHE / "post_install_check_3").touch()
    return folder / "english"


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(
        json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = (math.nan, math.nan, math.nan)
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:  # pragma: no cover
        pass
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "loadavg_1m": round(load[0], 2),
    }


def summarise(
    records: list[dict[str, Any]],
    wall: float,
    cpu: float = math.nan,
    *,
    forward: float | None = None,
    forward_cpu: float | None = None,
) -> dict[str, Any]:
    """Totals over per-example records (``status``: succeeded/failed/skipped,
    ``queries``, ``model_texts``, ``perturbed_words``, ``words``, ``seconds``,
    ``forward_seconds``). ``forward``/``forward_cpu`` give the forward-pass totals when
    they cannot be split by example (examples sharing forward passes)."""
    attacked = [r for r in records if r["status"] != "skipped"]
    won = [r for r in attacked if r["status"] == "succeeded"]
    if forward is None:
        forward = sum(r.get("forward_seconds", 0.0) for r in records)
    if forward_cpu is None:
        forward_cpu = sum(r.get("forward_cpu_seconds", 0.0) for r in records)

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else math.nan

    return {
        "examples": len(records),
        "attacked": len(attacked),
        "skipped": len(records) - len(attacked),
        "succeeded": len(won),
        "success_rate": len(won) / len(attacked) if attacked else math.nan,
        "wall_seconds": wall,
        "examples_per_second": len(records) / wall if wall > 0 else math.nan,
        "cpu_seconds": cpu,
        "examples_per_cpu_second": len(records) / cpu if cpu > 0 else math.nan,
        "attacked_per_second": len(attacked) / wall if wall > 0 else math.nan,
        "queries_per_example": mean([r["queries"] for r in attacked]),
        "model_texts_per_example": mean([r["model_texts"] for r in attacked]),
        "perturbed_words": mean([r["perturbed_words"] for r in won]),
        "perturbed_share": mean(
            [r["perturbed_words"] / max(r["words"], 1) for r in won]
        ),
        "forward_seconds": forward,
        "overhead_share": 1.0 - forward / wall if wall > 0 else math.nan,
        "forward_cpu_seconds": forward_cpu,
        "cpu_overhead_share": 1.0 - forward_cpu / cpu if cpu > 0 else math.nan,
    }
