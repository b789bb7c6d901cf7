"""Without the Spark extra nothing changes: no pyspark import, and a one-line error naming it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import tui_ledger.spark as spark_package
from tests.spark.conftest import CLIENT, ENGINE_TEST_FILES, unavailable


def test_the_engine_tests_are_collected() -> None:
    if not CLIENT:
        unavailable(
            "the Spark Connect client is not installed (pip install -e '.[spark]'): "
            f"{', '.join(ENGINE_TEST_FILES)} not collected"
        )


def test_the_core_and_the_cli_never_import_pyspark() -> None:
    code = (
        "import sys; import tui_ledger, tui_ledger.cli, tui_ledger.accounting.ledger; "
        "import tui_ledger.spark; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    with pytest.raises(spark_package.SparkExtraMissing) as raised:
        spark_package.require_spark()
    assert isinstance(raised.value, ValueError)
    assert "ledger-tui[spark]" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_commands_name_the_extra_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui_ledger.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name.startswith("pyspark") else real(name, *args),
    )
    for command in ("summary", "check"):
        with pytest.raises(SystemExit) as exited:
            main([command, "--spark", "sc://127.0.0.1:15002", "runs.csv"])
        assert exited.value.code == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert "pip install 'ledger-tui[spark]'" in error
