"""Files the loader refuses, and what it says: one line naming the file, the row, the column,
and what to do. Every message here is checked for those parts."""

from __future__ import annotations

import gzip
import os
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.corpus.guard import guarded
from tui_ledger import schema
from tui_ledger.load import LoadError, load, scan
from tui_ledger.load import inputs as load_inputs


@pytest.fixture(autouse=True)
def _inputs_stay_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every load and scan in this module is checked to leave its input's bytes unchanged."""
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "load", guarded(load))
    monkeypatch.setattr(module, "scan", guarded(scan))


HEADER = "workflow,tokens,passed\n"


def refused(path: Path | list[Path], **options: object) -> LoadError:
    """The LoadError a load raises (checked to be one line), from `load` and from `scan`."""
    paths = path if isinstance(path, list) else [path]
    with pytest.raises(LoadError) as eager:
        load(paths, **options)  # type: ignore[arg-type]
    with pytest.raises(LoadError) as lazy:
        scan(paths, **options)  # type: ignore[arg-type]
    message = str(eager.value)
    assert "\n" not in message
    assert str(lazy.value) == message
    return eager.value


def refused_text(folder: Path, text: str, name: str = "runs.csv", **options: object) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(refused(path, **options))


# --- outcome values ---------------------------------------------------------------------------


def test_an_unknown_passed_value_names_row_column_value_and_the_accepted_words(
    tmp_path: Path,
) -> None:
    message = refused_text(tmp_path, "agent,tokens,ok\nlean,1,true\nlean,1,maybe\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 3, column 'ok': 'maybe' is not")
    for word in schema.TRUE_WORDS | schema.FALSE_WORDS:
        assert word in message
    assert "--col passed=COLUMN" in message


def test_an_unknown_status_names_row_column_value_and_the_accepted_words(tmp_path: Path) -> None:
    message = refused_text(
        tmp_path, "workflow,tokens,Result\nlean,1,passed\nlean,1,passed\nlean,1,exploded\n"
    )

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 4, column 'Result': 'exploded'")
    for word in schema.STATUS_WORDS:
        assert word in message
    assert "timeout = " in message


def test_the_first_unknown_value_in_the_file_is_named(tmp_path: Path) -> None:
    """The first unknown value in the file is the one named, whatever its spelling."""
    message = refused_text(tmp_path, HEADER + "a,1,true\na,1,nope\na,1,NOPE\n")

    assert "line 3" in message and "'nope'" in message


# --- token counts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        ("-5", "is negative"),
        ("-5.0", "is negative"),
        ("-1e3", "is negative"),
        ("lots", "is not a number"),
        ("1,000", "is not a number"),
        ("0x10", "is not a number"),
        ("12.5", "is not a whole number"),
        ("1e-3", "is not a whole number"),
        ("inf", "is not a finite number"),
        ("-Infinity", "is not a finite number"),
        ("9223372036854775808", "is larger than the biggest count"),
        ("1e30", "is larger than the biggest count"),
        ("99999999999999999999999999", "is larger than the biggest count"),
    ],
)
def test_a_bad_token_count_names_row_and_column(tmp_path: Path, cell: str, problem: str) -> None:
    message = refused_text(tmp_path, f'agent,usage,passed\nlean,10,true\nlean,"{cell}",false\n')

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 3, column 'usage': {cell!r} {problem}")
    assert "leave it empty" in message


def test_a_bad_bucket_is_named_like_tokens(tmp_path: Path) -> None:
    message = refused_text(
        tmp_path, "workflow,passed,input_tokens,completion_tokens\nlean,true,10,-1\n"
    )

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 2, column 'completion_tokens': '-1'")


def test_buckets_adding_up_beyond_the_largest_count(tmp_path: Path) -> None:
    big = 2**62
    message = refused_text(
        tmp_path, f"workflow,passed,input_tokens,output_tokens\nlean,true,{big},{big}\n"
    )

    assert message.startswith(
        f"{tmp_path / 'runs.csv'} line 2: input_tokens + output_tokens adds up to {2 * big}"
    )


def test_a_bad_count_in_json_is_named_by_record(tmp_path: Path) -> None:
    message = refused_text(
        tmp_path,
        '[{"workflow": "a", "tokens": 1, "passed": true}, '
        '{"workflow": "a", "tokens": -3, "passed": true}]',
        name="runs.json",
    )

    assert message.startswith(f"{tmp_path / 'runs.json'} record 2, column 'tokens': '-3'")


def test_a_bad_count_in_parquet_is_named_by_row(tmp_path: Path) -> None:
    path = tmp_path / "runs.parquet"
    pl.DataFrame(
        {"workflow": ["a", "a"], "tokens": [1.0, 2.5], "passed": [True, False]}
    ).write_parquet(path)

    assert str(refused(path)).startswith(f"{path} row 2, column 'tokens': '2.5' is not a whole")


# --- columns ----------------------------------------------------------------------------------


def test_no_workflow_column_lists_the_names_that_work_and_the_option(tmp_path: Path) -> None:
    message = refused_text(tmp_path, "team,tokens,passed\nlean,1,true\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'}: no workflow column")
    assert "team, tokens, passed" in message  # what the file has
    for alias in schema.ALIASES["workflow"]:
        assert alias in message
    assert "--col workflow=COLUMN" in message


def test_no_outcome_column(tmp_path: Path) -> None:
    message = refused_text(tmp_path, "workflow,tokens,verdict\nlean,1,yes\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'}: no outcome column")
    assert "--col passed=COLUMN" in message and "--col status=COLUMN" in message


def test_no_tokens_column_and_no_buckets(tmp_path: Path) -> None:
    message = refused_text(tmp_path, "workflow,passed,cost\nlean,true,1\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'}: no tokens column")
    assert "--col tokens=COLUMN" in message


def test_two_columns_for_one_canonical_name_are_both_named(tmp_path: Path) -> None:
    message = refused_text(tmp_path, "agent,workflow,tokens,passed\na,b,1,true\n")

    assert message == (
        f"{tmp_path / 'runs.csv'}: columns 'agent' and 'workflow' both name workflow; "
        "rename one, or pick one with --col workflow=COLUMN."
    )


def test_a_header_naming_one_column_twice(tmp_path: Path) -> None:
    message = refused_text(tmp_path, "workflow,tokens,passed,tokens\nlean,1,true,2\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'}: the header names 'tokens' twice")


def test_an_explicit_mapping_to_a_missing_column(tmp_path: Path) -> None:
    message = refused_text(tmp_path, HEADER + "lean,1,true\n", columns={"tokens": "usage_total"})

    assert message.startswith(
        f"{tmp_path / 'runs.csv'}: --col tokens=usage_total names no column of this file"
    )
    assert "workflow, tokens, passed" in message


def test_an_explicit_mapping_to_an_unknown_canonical_name(tmp_path: Path) -> None:
    message = refused_text(tmp_path, HEADER + "lean,1,true\n", columns={"team": "workflow"})

    assert message.startswith("--col team=workflow: 'team' is not a column ledger-tui knows")


def test_one_column_mapped_to_two_canonical_names(tmp_path: Path) -> None:
    message = refused_text(
        tmp_path, HEADER + "lean,1,true\n", columns={"workflow": "workflow", "task": "workflow"}
    )

    assert "column 'workflow' is given for both workflow and task" in message


# --- rows -------------------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ["", "   ", '""'])
def test_an_empty_workflow_names_the_row(tmp_path: Path, cell: str) -> None:
    message = refused_text(tmp_path, f"agent,tokens,passed\nlean,1,true\n{cell},1,true\n")

    assert message == (
        f"{tmp_path / 'runs.csv'} line 3, column 'agent': the workflow is empty; every attempt "
        "needs one: fill it in or delete the row."
    )


def test_a_row_with_too_few_fields_names_its_line(tmp_path: Path) -> None:
    message = refused_text(tmp_path, HEADER + "lean,1,true\nlean,1\n")

    assert message.startswith(
        f"{tmp_path / 'runs.csv'} line 3: 2 fields where the header has 3 (fewer"
    )


def test_a_short_row_is_reported_as_short_not_as_the_value_that_slid_left(
    tmp_path: Path,
) -> None:
    message = refused_text(tmp_path, "workflow,passed,tokens\nlean,true,10\nlean,1000\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 3: 2 fields where the header has 3")


def test_a_row_with_too_many_fields_names_its_line(tmp_path: Path) -> None:
    message = refused_text(tmp_path, HEADER + "lean,1,true\nlean,1,000,true\n")

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 3: 4 fields where the header has 3")
    assert "quote a cell" in message


def test_a_ragged_row_after_a_quoted_newline_is_named_by_its_real_line(tmp_path: Path) -> None:
    text = 'workflow,tokens,passed,notes\nlean,1,true,"two\nlines"\nlean,1\n'

    assert refused_text(tmp_path, text).startswith(f"{tmp_path / 'runs.csv'} line 4: 2 fields")


def test_an_empty_last_cell_is_not_a_ragged_row(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text('workflow,tokens,passed,notes\nlean,1,true,\nlean,1,true,"a,b"\n')

    assert load([path]).report.rows == 2


def test_a_quote_inside_an_unquoted_cell_names_its_line(tmp_path: Path) -> None:
    message = refused_text(
        tmp_path, 'workflow,tokens,passed,screen\nlean,1,true,ok\nlean,1,true,12" wide\n'
    )

    assert message.startswith(f"{tmp_path / 'runs.csv'} line 3: a quote inside a cell")


def test_quoted_cells_with_quotes_separators_and_newlines(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(
        'workflow,tokens,passed,screen,notes\n"lean",1,true,"12"" wide",\n'
        'lean,2,true,"a,b","multi\nline"\nlean,3,true,ok,\n'
    )
    ledger = load([path])

    assert ledger.attempts["screen"].to_list() == ['12" wide', "a,b", "ok"]
    assert ledger.attempts["notes"].to_list() == [None, "multi\nline", None]


# --- files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("runs.csv", b""),
        ("runs.csv", HEADER.encode()),
        ("runs.csv", (HEADER + "\n\n").encode()),
        # mtime=0: the same bytes in every process, so the test id is the same on every
        # xdist worker.
        ("runs.csv.gz", gzip.compress(b"", mtime=0)),
        ("runs.json", b"[]"),
        ("runs.json", b"  \n"),
        ("runs.jsonl", b"\n\n"),
        ("runs.parquet", b""),
    ],
)
def test_a_file_without_attempts(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    message = str(refused(path))

    assert message.startswith(f"{path}: ")
    assert "empty" in message or "no attempts" in message


def test_a_path_that_does_not_exist(tmp_path: Path) -> None:
    message = str(refused(tmp_path / "nope.csv"))

    assert message == f"{tmp_path / 'nope.csv'}: no such file or folder; check the path."


def test_a_file_that_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(HEADER + "lean,1,true\n")
    # Tests may run as root, who reads everything: pretend the permission is missing.
    monkeypatch.setattr(load_inputs.os, "access", lambda p, mode: Path(p) != path)

    assert str(refused(path)) == (
        f"{path}: cannot be read (permission denied); check its permissions."
    )


def test_an_unreadable_file_inside_a_folder_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, bad = tmp_path / "a.csv", tmp_path / "sub" / "b.csv"
    bad.parent.mkdir()
    for path in (good, bad):
        path.write_text(HEADER + "lean,1,true\n")
    monkeypatch.setattr(load_inputs.os, "access", lambda p, mode: Path(p) != bad)

    assert str(refused(tmp_path)).startswith(f"{tmp_path / 'sub' / 'b.csv'}: cannot be read")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_a_file_without_read_permission(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(HEADER + "lean,1,true\n")
    path.chmod(0)

    assert "permission denied" in str(refused(path))


def test_a_bad_file_inside_a_folder_is_named_with_its_path(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(HEADER + "lean,1,true\n")
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "b.csv").write_text(HEADER + "lean,-1,true\n")

    assert str(refused(tmp_path)).startswith(f"{tmp_path / 'z' / 'b.csv'} line 2, column 'tokens'")


def test_a_folder_with_nothing_to_read(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# runs\n")

    assert str(refused(tmp_path)).startswith(f"{tmp_path}: the folder holds no CSV, TSV")


def test_an_unsupported_format(tmp_path: Path) -> None:
    path = tmp_path / "runs.xlsx"
    path.write_bytes(b"PK\x03\x04\x00\x00\x00binary spreadsheet")

    message = str(refused(path))
    assert message.startswith(f"{path}: unsupported format (.xlsx); ledger-tui reads CSV")
    assert "export the attempts to CSV" in message


def test_an_unknown_forced_format(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(HEADER + "lean,1,true\n")

    assert str(refused(path, fmt="xml")).startswith("Unknown format 'xml'; use one of csv")


def test_a_file_that_is_not_what_its_extension_says(tmp_path: Path) -> None:
    path = tmp_path / "runs.parquet"
    path.write_text(HEADER + "lean,1,true\n")

    assert str(refused(path)).startswith(f"{path}: cannot be read as Parquet")


def test_broken_json_names_the_line(tmp_path: Path) -> None:
    message = refused_text(
        tmp_path,
        '[\n  {"workflow": "a", "tokens": 1, "passed": true},\n  {"workflow": }\n]\n',
        name="runs.json",
    )

    assert message.startswith(
        f"{tmp_path / 'runs.json'} line 3, column 16: not valid JSON (Expecting value)"
    )


def test_broken_ndjson_names_the_line(tmp_path: Path) -> None:
    good = '{"workflow": "a", "tokens": 1, "passed": true}\n'
    message = refused_text(tmp_path, good * 3 + '{"workflow": "b", tokens\n', name="runs.ndjson")

    assert message.startswith(f"{tmp_path / 'runs.ndjson'} line 4, column 19: not valid NDJSON")


def test_json_that_holds_no_records(tmp_path: Path) -> None:
    message = refused_text(tmp_path, "[1, 2, 3]", name="runs.json")

    assert message.startswith(
        f"{tmp_path / 'runs.json'}: the JSON holds values that are not records"
    )


def test_a_workflow_name_damaged_by_decoding_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_bytes(HEADER.encode() + b"caf\xe9,1,true\n")

    message = str(refused(path))
    assert message.startswith(f"{path} line 2, column 'workflow': the workflow name has bytes")
    assert "re-encode the file as UTF-8" in message


def test_nothing_to_load() -> None:
    with pytest.raises(LoadError, match="No file given"):
        load([])


def test_a_load_error_says_where_for_programs_too(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("agent,tokens,passed\nlean,-4,true\n")
    error = refused(path)

    assert (error.source, error.line, error.column) == (str(path), 2, "tokens")


def test_an_importer_failure_is_a_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Failing:
        name = "fake-harness"

        def read_imported(self, path: Path, options: object = None) -> pl.DataFrame:
            raise ValueError(f"{path}: record 3: is_resolved is 'yes', not true, false or null")

    monkeypatch.setattr(load_inputs, "find_importer", lambda path: Failing())

    assert str(refused(tmp_path)) == (
        f"{tmp_path}: record 3: is_resolved is 'yes', not true, false or null"
    )
