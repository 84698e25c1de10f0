"""A contract over every registered analysis (issue 29, item 5), in the spirit of
scikit-learn's ``check_estimator``: what every analysis must do, checked for all of them so
a new one cannot skip it. Records of real runs are checked by each analysis's own tests;
here: settings, the command line, pickling, and the summary and section of no records."""

from __future__ import annotations

import inspect
import math
import pickle
from typing import Any

import pytest

from textrobust.analyses import ANALYSES
from textrobust.cli.app import app
from textrobust.report.testing import validate_section
from textrobust.sections import Section

NAMES = ANALYSES.names()


def _command(name: str) -> Any:
    commands = {c.name or c.callback.__name__: c for c in app.registered_commands}
    assert name in commands, f"analysis {name!r} has no `textrobust {name}` command"
    return commands[name].callback


def _from_cli(value: Any, default: Any) -> Any:
    """A command-line default as the settings field receives it: comma-separated lists
    become tuples of the field's element type."""
    if isinstance(value, str) and isinstance(default, tuple):
        items = [item.strip() for item in value.split(",") if item.strip()]
        return tuple(type(default[0])(item) for item in items) if default else tuple(items)
    return value


@pytest.mark.parametrize("name", NAMES)
def test_settings_construct_with_defaults_and_pickle_with_the_analysis(name: str) -> None:
    analysis_type = ANALYSES.get(name)
    settings = analysis_type.settings_type()
    analysis = analysis_type(settings)
    assert analysis.name == name and analysis.title and analysis.paper
    assert pickle.loads(pickle.dumps(settings)) == settings
    assert pickle.loads(pickle.dumps(analysis)).settings == settings  # process and Ray workers get it pickled
    assert analysis_type.settings_type(**settings.to_dict()) == settings  # stored settings rebuild it (resume)


@pytest.mark.parametrize("name", NAMES)
def test_every_settings_field_is_an_option_of_its_command_with_the_same_default(name: str) -> None:
    settings_type = ANALYSES.get(name).settings_type
    parameters = inspect.signature(_command(name)).parameters
    defaults = settings_type()
    for field, info in settings_type.model_fields.items():
        assert field in parameters, f"`textrobust {name}` has no --{field.replace('_', '-')} option"
        if parameters[field].default is None and isinstance(info.default, tuple) and "list" in str(
                parameters[field].annotation):
            continue  # a repeatable option: none given means the command passes the field's default
        given = _from_cli(parameters[field].default, info.default)
        # None on the command line means the field's own default (its validator fills it in)
        rebuilt = settings_type(**{field: given})
        assert getattr(rebuilt, field) == getattr(defaults, field), (
            f"`textrobust {name} --{field.replace('_', '-')}` defaults to {parameters[field].default!r}, "
            f"the settings to {info.default!r}")


@pytest.mark.parametrize("name", NAMES)
def test_every_settings_field_has_a_description_the_help_of_its_option(name: str) -> None:
    """The generated command's help is the field's description (textrobust.cli.generated)."""
    fields = ANALYSES.get(name).settings_type.model_fields
    missing = [field for field, info in fields.items() if not (info.description or "").strip()]
    assert not missing, f"settings fields of {name!r} without a description (their --help is empty): {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_the_summary_of_no_records_is_pure_and_its_section_validates(name: str) -> None:
    analysis = ANALYSES.get(name)()
    first, second = analysis.summarise([], []), analysis.summarise([], [])
    assert repr(first) == repr(second)  # NaN != NaN, so compare what they print
    section = analysis.section(first, [], [], ("neg", "pos"))
    assert isinstance(section, Section)  # typed, checked where it is built (textrobust.sections)
    validate_section(analysis, section, units=0)
    risk = section.risk
    assert risk is None or (isinstance(risk, float) and not math.isnan(risk))



@pytest.mark.parametrize("name", NAMES)
def test_the_analysis_names_its_settings_record_and_summary_types(name: str) -> None:
    """``class X(Analysis[XSettings, XRecord, XSummary])``: the type parameters are the
    class attributes the store and the CLI use, and the summary is what ``summarise`` gives
    (so its methods are typed without casts)."""
    from typing import get_args, get_origin

    from textrobust.analyses.protocol import Analysis

    cls = ANALYSES.get(name)
    bases = [b for b in getattr(cls, "__orig_bases__", ()) if get_origin(b) is Analysis]
    assert len(bases) == 1, f"{cls.__name__} must subclass Analysis[Settings, Record, Summary]"
    settings_type, record_type, summary_type = get_args(bases[0])
    assert settings_type is cls.settings_type and record_type is cls.record_type
    assert type(cls().summarise([], [])) is summary_type
