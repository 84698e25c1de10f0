"""The package surface: light import, explicit __all__ that resolves."""

from __future__ import annotations

import subprocess
import sys

import textrobust


def test_import_pulls_in_neither_torch_nor_transformers() -> None:
    code = (
        "import sys, textrobust, textrobust.cli.app\n"
        "heavy = [m for m in ('torch', 'transformers', 'spacy', 'nltk', 'sentence_transformers', 'pandas') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_all_names_exist_and_are_exported() -> None:
    for name in textrobust.__all__:
        assert getattr(textrobust, name) is not None, name
    public = {n for n in dir(textrobust) if not n.startswith("_")}
    lazy_and_eager = set(textrobust.__all__)
    # every public attribute that is not a submodule is in __all__
    modules = {n for n in public if type(getattr(textrobust, n)).__name__ == "module"}
    assert public - modules - {"annotations", "importlib", "Any"} <= lazy_and_eager


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        textrobust.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
