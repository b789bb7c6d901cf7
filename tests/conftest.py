"""Settings every test shares.

Hypothesis: no deadline and no "too slow" health check. Both judge a test by the clock (200 ms
an example, by default), and a busy machine decides that, not the code: `.ci/run` on a fresh
clone failed once at load 10 when one round trip of `test_filter_term_round_trips_any_text`
took 275 ms and its replay 49 ms. What a property test checks is its property; speed is
measured by `benchmarks/`, never asserted.
"""

import ast
import functools
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ledger-tui", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ledger-tui")

# What ledger-tui keeps in its cache folder (the Spark sessions a run leaves warm for the next,
# `spark.session.kept_session`) goes to a folder of this test run's, never the user's: the
# commands the tests run inherit it.
if "LEDGER_TUI_CACHE_DIR" not in os.environ:
    os.environ["LEDGER_TUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="ledger-tui-tests-cache-")


# The `core` marker: the tests `.ci/run` also runs on the oldest and newest supported Pythons.
# A test is core unless its module imports the app (textual, tui_ledger.tui, the pilot helpers),
# at the top or inside a function, or it is marked tmux. Read from each module's source, so a
# new test file is sorted the day it is added, with no list to keep.
APP_IMPORTS = ("textual", "textual_serve", "tui_ledger.tui", "tests.pilot_helpers")


def _names_app(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in APP_IMPORTS)


@functools.cache
def imports_the_app(path: Path) -> bool:
    """Whether the test module at `path` imports textual, the app or the pilot helpers."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(_names_app(alias.name) for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from .pilot_helpers import ..., from . import pilot_helpers
                names = [node.module] if node.module else [a.name for a in node.names]
                if any(name == "pilot_helpers" for name in names):
                    return True
            elif node.module is not None and (
                _names_app(node.module)
                or any(_names_app(f"{node.module}.{alias.name}") for alias in node.names)
            ):
                return True
    return False


# No terminal size. pytest imports readline before it loads this file (capture.py's
# `_readline_workaround`), and readline writes its guess, COLUMNS=80 and LINES=24, into the C
# environment: os.environ misses them, every subprocess inherits them, pytest-xdist's workers
# included, and there `summary` fitted its table to 80 columns where a serial run took the
# table's natural width. A test that wants a width sets COLUMNS itself (monkeypatch.setenv).
def pytest_configure() -> None:
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
        os.unsetenv(name)  # os.environ never saw readline's


SPARK_TESTS = Path(__file__).parent / "spark"


# tryfirst: pytest-xdist reads the `xdist_group` marks in its own collection hook.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("tmux") is None and not imports_the_app(Path(item.path)):
            item.add_marker(pytest.mark.core)
        # pytest-xdist (pyproject's addopts): the Spark tests share one session-scoped server,
        # which each worker that ran one would start for itself (a JVM of 2 GB, 10-30 s).
        # One group runs on one worker (`--dist loadgroup`).
        if SPARK_TESTS in Path(item.path).parents:
            item.add_marker(pytest.mark.xdist_group("spark"))
