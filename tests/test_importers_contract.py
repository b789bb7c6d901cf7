"""What every new importer promises the loader: the frame contract, its conventions, and that
each format is found by its own importer and by no other."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tui_ledger.importers import IMPORTERS, Imported, ImportOptions, find_importer, get_importer
from tui_ledger.schema import STATUS_WORDS, canonical_for, normalise_word

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
CASES = [
    ("harbor", FIXTURES / "harbor"),
    ("swe-bench", FIXTURES / "swebench"),
    ("openhands", FIXTURES / "openhands"),
    ("aider", FIXTURES / "aider"),
    ("claude-code", FIXTURES / "sessions" / "claude"),
    ("codex", FIXTURES / "sessions" / "codex"),
    ("otel", FIXTURES / "otel" / "traces.jsonl"),
]


@pytest.mark.parametrize(("name", "path"), CASES)
def test_every_new_frame_is_raw_but_ready_for_the_loader(name: str, path: Path) -> None:
    imported = get_importer(name).read_imported(path, ImportOptions())
    assert isinstance(imported, Imported)
    frame = imported.frame
    assert frame.height > 0
    assert frame.columns[-2:] == ["source", "line"]
    for column in frame.columns:
        assert canonical_for(column) in (None, column), f"{name}: {column} is an alias"
    expected = {
        "workflow": pl.String,
        "passed": pl.Boolean,
        "status": pl.String,
        "tokens": pl.Int64,
        "run": pl.String,
        "timestamp": pl.Datetime("us", "UTC"),
        "cost": pl.Float64,
        "source": pl.String,
        "line": pl.Int64,
    }
    for column, dtype in expected.items():
        if column in frame.columns:
            assert frame.schema[column] == dtype, f"{name}: {column} is {frame.schema[column]}"
    assert frame["workflow"].null_count() == 0
    for status in frame["status"].drop_nulls():
        assert normalise_word(status) in STATUS_WORDS, f"{name}: status {status!r}"
    # Every source names a file below the path given, never a bare file name.
    for source in frame["source"]:
        assert source.startswith(str(path)), source
    # The convention the load report shows: one line each, present for every format.
    assert imported.conventions
    assert all("\n" not in line for line in (*imported.conventions, *imported.warnings))
    # read() is read_imported().frame: the loader's call keeps working.
    assert get_importer(name).read(path).equals(frame)


@pytest.mark.parametrize(("name", "path"), CASES)
def test_each_format_is_found_by_its_own_importer_only(name: str, path: Path) -> None:
    found = [importer.name for importer in IMPORTERS if importer.matches(path)]
    assert found == [name]
    importer = find_importer(path)
    assert importer is not None and importer.name == name


def test_the_older_importers_report_their_conventions_too() -> None:
    inspect = get_importer("inspect").read_imported(FIXTURES / "inspect" / "ledger_fixture.json")
    assert inspect.conventions[0].startswith("Inspect ModelUsage.input_tokens excludes")
    tb = get_importer("terminal-bench").read_imported(FIXTURES / "terminal_bench" / "agent-a")
    assert "total_input_tokens" in tb.conventions[0]
    promptfoo = get_importer("promptfoo").read_imported(FIXTURES / "promptfoo" / "results.json")
    assert promptfoo.conventions


def test_inspect_takes_the_pass_threshold_as_its_score_threshold() -> None:
    path = FIXTURES / "inspect" / "synthetic.json"
    strict = get_importer("inspect").read(path)
    lenient = get_importer("inspect").read(path, ImportOptions(pass_threshold=0.5))
    assert (strict["passed"].sum(), lenient["passed"].sum()) == (4, 6)  # "P" and 0.5 pass
