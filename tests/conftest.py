"""Test-suite settings: a wide console (:data:`TEST_COLUMNS`), a Hypothesis profile for a
noisy, shared 2-core CI machine, and one torch thread (the tests' models are tiny: on a busy
machine a second intra-op thread made a prover test 20x slower, 0.6 s against 0.03 s).

No test may depend on timing: the ``ci`` profile (used when ``CI`` is set, as in
``.ci/run``) switches off Hypothesis's deadline and its too-slow and data-too-large health
checks, bounds the examples and derandomises the runs so a CI failure reproduces.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

#: The width of the command line's consoles in tests (``COLUMNS``, which rich reads on every
#: print): wide enough that no message is wrapped, whatever the terminal pytest runs in (none,
#: as in CI: 80 columns) and however long its temporary paths are (issue 49, item 0). A test
#: of wrapping sets its own ``COLUMNS`` (``monkeypatch.setenv`` or ``CliRunner(env=...)``).
TEST_COLUMNS = "2000"

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=50,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    print_blob=True,
)
settings.register_profile(
    "dev",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test prints on a console :data:`TEST_COLUMNS` wide (see there)."""
    monkeypatch.setenv("COLUMNS", TEST_COLUMNS)
    yield


def pytest_configure(config: object) -> None:
    import torch

    # the command line's consoles are made without a width of their own (rich would keep a
    # COLUMNS found at their making for good), so that each test's COLUMNS holds
    os.environ.pop("COLUMNS", None)
    import textrobust.cli.common  # noqa: F401

    torch.set_num_threads(1)


def pytest_collection_modifyitems(config: object, items: list) -> None:
    """Tests marked ``gpu`` are skipped, with the reason, where torch sees no CUDA device.

    The marker itself decides, not ``"gpu" in item.keywords``: keywords also hold the names
    of the folders and modules above a test, so every test under a folder named ``gpu``
    would have been skipped too (issue 41).
    """
    import pytest
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is False)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


import pytest  # noqa: E402 - after the profiles, as the hooks above import lazily


@pytest.fixture(autouse=True)
def _no_real_findings_judge(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit tests never load the validated source's models to judge a run's findings (issue
    47): the findings judge is None (findings carry no probability) unless the test is marked
    ``heavy`` or patches :func:`textrobust.attack.candidates.swap_validity.validity_judge` with
    a stub judge itself (after this fixture, so its patch wins). In-process only: a spawned
    worker process judges with the real source where it can load."""
    if request.node.get_closest_marker("heavy") is not None:
        return
    from textrobust.attack.candidates import swap_validity

    monkeypatch.setattr(swap_validity, "validity_judge", lambda source=None, placement=None: None)
