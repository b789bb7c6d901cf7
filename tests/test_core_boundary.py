"""The core never imports textual: it must run in scripts, notebooks and `summary`.

Every module below `tui_ledger` but the app (`tui_ledger.tui`) is imported in a fresh process,
subpackages included (`pkgutil.walk_packages`), so a new module or package is checked the day
it is added. `lint-imports` (pyproject.toml, run by .ci/run) checks the same statically, for the
modules its contract names; the last test keeps that list complete.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import tui_ledger

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
APP = "tui_ledger.tui"
SPARK = "tui_ledger.spark"
FRONT_ENDS = {APP, "tui_ledger.cli", "tui_ledger.serve_child"}


def core_modules() -> list[str]:
    """Every module and package below `tui_ledger` but the app's."""
    return sorted(
        info.name
        for info in pkgutil.walk_packages(tui_ledger.__path__, "tui_ledger.")
        if info.name != APP and not info.name.startswith(APP + ".")
    )


def test_the_walk_finds_the_subpackages() -> None:
    modules = core_modules()
    assert {"tui_ledger.load.validate", "tui_ledger.importers.harbor"} <= set(modules)
    assert "tui_ledger.cli" in modules  # the headless commands import no textual either
    assert not any(name.startswith(APP) for name in modules)


def importable_core_modules() -> list[str]:
    """`core_modules`, less the Spark engine's when its optional extra is not installed (they
    import pyspark at the top; the Spark tests check them where it is)."""
    spark = importlib.util.find_spec("pyspark") is not None
    return [name for name in core_modules() if spark or not name.startswith(SPARK + ".")]


def test_core_modules_do_not_import_textual() -> None:
    imports = "; ".join(f"import {name}" for name in importable_core_modules())
    probe = "sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))"
    code = f"import sys; {imports}; print({probe})"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_summary_command_does_not_import_textual(tmp_path: Path) -> None:
    fixture = tmp_path / "runs.csv"
    fixture.write_text("workflow,tokens,passed\nlean,1000,true\n")
    code = (
        "import sys; from tui_ledger.cli import main;"
        "main(['summary', sys.argv[1], '--format', 'json']);"
        "loaded = any(m.startswith('textual') for m in sys.modules);"
        "print('TEXTUAL' if loaded else 'CLEAN', file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(fixture)], capture_output=True, text=True, check=True
    )
    assert result.stderr.strip().endswith("CLEAN")


def test_the_import_contract_names_every_core_module() -> None:
    """lint-imports only checks the modules its contract lists: a new top-level module or
    package of the core has to be added there (pyproject.toml) too."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    contract = next(
        contract
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["name"] == "The core never imports textual or the app"
    )
    top_level = {name for name in core_modules() if name.count(".") == 1 and name not in FRONT_ENDS}
    assert set(contract["source_modules"]) == top_level
