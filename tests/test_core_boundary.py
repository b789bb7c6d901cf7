"""The core never imports textual: it must run in scripts, notebooks and `summary`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tui_ledger

CORE_MODULES = [
    path.stem for path in Path(tui_ledger.__file__).parent.glob("*.py") if path.stem != "__init__"
]


def test_core_modules_do_not_import_textual() -> None:
    imports = "; ".join(f"import tui_ledger.{name}" for name in CORE_MODULES)
    imports += "; import tui_ledger.importers"
    probe = "any(m == 'textual' or m.startswith('textual.') for m in sys.modules)"
    code = f"import sys; {imports}; print({probe})"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


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
