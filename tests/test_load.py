"""The loader, by example: files of attempts in, one validated attempts frame and a report out.

Errors have their own file, tests/test_load_errors.py.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.corpus.guard import guarded
from tests.frames import assert_same_attempts
from tui_ledger import schema
from tui_ledger.importers import Imported
from tui_ledger.load import (
    SUPPORTED_SUFFIXES,
    Ledger,
    LoadError,
    LoadReport,
    LoadWarning,
    load,
    scan,
)
from tui_ledger.load import inputs as load_inputs


@pytest.fixture(autouse=True)
def _inputs_stay_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every load and scan in this module is checked to leave its input's bytes unchanged."""
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "load", guarded(load))
    monkeypatch.setattr(module, "scan", guarded(scan))


ROOT = Path(__file__).resolve().parents[1]
ARTICLE = ROOT / "sample_data" / "runs.csv"
FIXTURES = Path(__file__).parent / "fixtures" / "load"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_text(folder: Path, text: str, name: str = "runs.csv", **options: object) -> Ledger:
    return load([write(folder, name, text)], **options)  # type: ignore[arg-type]


def column(ledger: Ledger, name: str) -> list[object]:
    return ledger.attempts[name].to_list()


def warning(ledger: Ledger, kind: str) -> LoadWarning | None:
    return next((w for w in ledger.report.warnings if w.kind == kind), None)


# --- the article's six attempts ---------------------------------------------------------


def test_the_articles_fixture_loads_as_six_attempts() -> None:
    ledger = load([ARTICLE])

    assert ledger.attempts.columns == [
        "workflow",
        "outcome",
        "tokens",
        "passed",
        "source",
        "line",
    ]
    assert ledger.attempts.schema["outcome"] == schema.OUTCOME_DTYPE
    assert ledger.attempts.schema["tokens"] == pl.Int64
    assert ledger.attempts.schema["passed"] == pl.Boolean
    assert column(ledger, "workflow") == ["lean"] * 3 + ["steady"] * 3
    assert column(ledger, "outcome") == ["passed", "failed", "failed", "passed", "passed", "passed"]
    assert column(ledger, "tokens") == [1000, 1000, 1000, 1600, 1600, 1600]
    assert column(ledger, "line") == [2, 3, 4, 5, 6, 7]  # the header is line 1
    assert set(column(ledger, "source")) == {str(ARTICLE)}
    assert ledger.report.warnings == []


def test_the_articles_report_in_plain_words() -> None:
    report = load([ARTICLE]).report

    assert report.files == [str(ARTICLE)]
    assert report.rows == 6
    assert report.mapping == {"workflow": "workflow", "tokens": "tokens", "passed": "passed"}
    assert report.lines() == [
        f"Read {ARTICLE}.",
        "6 attempts.",
        "Columns: workflow; tokens; passed.",
        "Derived: outcome from passed (true = passed, false = failed, empty = ungraded).",
        "No warnings.",
    ]


def test_a_single_path_needs_no_list() -> None:
    assert load(ARTICLE).report.rows == 6
    assert load(str(ARTICLE)).report.rows == 6


# --- column names -------------------------------------------------------------------------

SAMPLE_VALUES = {
    "task": "t1",
    "model": "gpt-5",
    "run": "r1",
    "timestamp": "2025-09-24T06:16:48",
    "duration_s": "12.5",
    "cost": "0.25",
}


def _file_naming(canonical: str, alias: str) -> tuple[str, str]:
    """A one-attempt CSV whose `canonical` column is spelled `alias`."""
    cells = {"workflow": "lean", "tokens": "100", "passed": "true"}
    if canonical in cells:
        value = cells.pop(canonical)
    elif canonical == "status":
        cells.pop("passed")
        value = "passed"
    elif canonical in schema.BUCKETS:
        cells.pop("tokens")
        value = "100"
    else:
        value = SAMPLE_VALUES[canonical]
    header = ",".join([*cells, alias])
    row = ",".join([*cells.values(), value])
    return header, row


@pytest.mark.parametrize(
    ("canonical", "alias"),
    [(canonical, alias) for canonical, aliases in schema.ALIASES.items() for alias in aliases],
)
def test_every_alias_names_its_canonical_column(tmp_path: Path, canonical: str, alias: str) -> None:
    header, row = _file_naming(canonical, alias)
    ledger = load_text(tmp_path, f"{header}\n{row}\n")

    assert ledger.report.mapping[canonical] == alias
    assert canonical in ledger.attempts.columns
    # The file's spelling is not kept beside the canonical column ("outcome" is ours).
    assert alias in (canonical, "outcome") or alias not in ledger.attempts.columns
    assert column(ledger, "outcome") == ["passed"]
    assert column(ledger, "tokens") == [100]


@pytest.mark.parametrize(
    ("header", "canonical"),
    [
        ("Total Tokens", "tokens"),
        ("TASK-ID", "task"),
        ("task.id", "task"),
        (" Agent ", "workflow"),
        ("Is Resolved", "passed"),
        ("failure-mode", "status"),
    ],
)
def test_names_match_in_any_case_with_spaces_dots_and_dashes(
    tmp_path: Path, header: str, canonical: str
) -> None:
    cells = {"workflow": "lean", "tokens": "100", "passed": "true", "task": "t1", "status": "ok"}
    cells.pop(canonical)
    if canonical == "status":
        cells.pop("passed")
    text = ",".join([*cells, header]) + "\n" + ",".join([*cells.values(), "lean"]) + "\n"
    if canonical == "tokens":
        text = text.replace(",lean\n", ",100\n")
    if canonical in ("passed",):
        text = text.replace(",lean\n", ",true\n")
    if canonical == "status":
        text = text.replace(",lean\n", ",passed\n")

    assert load_text(tmp_path, text).report.mapping[canonical] == header


def test_a_real_export_with_its_own_names(tmp_path: Path) -> None:
    ledger = load([FIXTURES / "harness_export.csv"])

    assert ledger.report.mapping == {
        "workflow": "Agent",
        "task": "Task ID",
        "tokens": "Total Tokens",
        "status": "Result",
        "model": "Model",
    }
    assert ledger.attempts.columns == [
        "workflow",
        "task",
        "outcome",
        "tokens",
        "status",
        "model",
        "Duration (s)",
        "Notes",
        "source",
        "line",
    ]
    assert column(ledger, "outcome") == ["passed", "timeout", "failed", "passed", "passed", "error"]
    assert column(ledger, "tokens") == [1000, None, 0, 1600, 1600, 1700]
    assert column(ledger, "status") == [
        "passed",
        "timed-out",
        "failed",
        "Passed",
        "PASSED",
        "error",
    ]
    # A blank line is skipped but still counted; a row is numbered by the line it starts on,
    # also after a quoted cell holding a newline (as an editor counts).
    assert column(ledger, "line") == [2, 3, 4, 6, 7, 9]
    assert ledger.attempts.schema["Duration (s)"] == pl.Float64
    assert column(ledger, "Notes")[1] == "usage lost, killed at 10 min"


def test_columns_nobody_validates_get_the_types_a_csv_reader_would_infer(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path,
        "workflow,tokens,passed,attempt_no,seconds,retried,label,run\n"
        "lean,1,true,1,1.5,TRUE,007x,3\n"
        "lean,2,false,2,,false,abc,4\n",
    )

    types = ledger.attempts.schema
    assert types["attempt_no"] == pl.Int64
    assert types["seconds"] == pl.Float64
    assert types["retried"] == pl.Boolean
    assert types["label"] == pl.String
    assert types["run"] == pl.Int64
    assert column(ledger, "retried") == [True, False]


def test_workflow_and_task_are_trimmed_other_text_is_kept_as_written(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path, "workflow,task,tokens,passed,notes\n  lean ,  t1 ,1,true,  spaced  \n"
    )

    assert column(ledger, "workflow") == ["lean"]
    assert column(ledger, "task") == ["t1"]
    assert column(ledger, "notes") == ["  spaced  "]


def test_a_plain_csv_is_typed_as_it_is_parsed_and_one_odd_count_reads_counts_as_text(
    tmp_path: Path,
) -> None:
    """Plain integer counts come straight from the CSV parser, the keys as Categorical; a
    count the parser cannot read (a missing word, a decimal) sends the counts to the exact
    parser as text, the keys still Categorical, and gives the same attempts."""
    rows = "lean,t1,1000,true,m\n steady ,t2,1600,no,m\nlean,t1,,false,m\n"
    typed = load_text(tmp_path, "workflow,task,tokens,passed,model\n" + rows)
    odd = load_text(
        tmp_path,
        "workflow,task,tokens,passed,model\n" + rows + "steady,t3,NA,yes,m\n",
        name="odd.csv",
    )

    for ledger in (typed, odd):
        types = ledger.attempts.schema
        keys = [types[name] for name in ("workflow", "task", "model", "source")]
        assert keys == [pl.Categorical] * 4
        assert types["tokens"] == pl.Int64
    assert column(typed, "workflow") == ["lean", "steady", "lean"]
    assert_same_attempts(typed.attempts.drop("source"), odd.attempts.head(3).drop("source"))
    assert column(odd, "tokens") == [1000, 1600, None, None]


def test_a_typed_count_is_checked_like_any_other(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as caught:
        load_text(tmp_path, "workflow,tokens,passed\nlean,1000,true\nlean,-5,false\n")
    assert "line 3" in str(caught.value) and "tokens" in str(caught.value)
    assert "-5" in str(caught.value)


# --- --col ----------------------------------------------------------------------------------


def test_an_explicit_mapping_beats_the_aliases(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path,
        "agent,usage_total,tokens,passed\nlean,1200,99,true\n",
        columns={"tokens": "usage_total"},
    )

    assert column(ledger, "tokens") == [1200]
    assert ledger.report.mapping["tokens"] == "usage_total"
    # The file's own `tokens` column is not lost: it is kept under a name of its own.
    assert column(ledger, "tokens_in_file") == [99]
    assert any("tokens_in_file" in sentence for sentence in ledger.report.derived)


def test_an_explicit_mapping_can_pick_among_several_candidates(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path,
        "agent,framework,tokens,passed\nlean,langgraph,10,true\n",
        columns={"workflow": "framework"},
    )

    assert column(ledger, "workflow") == ["langgraph"]
    assert column(ledger, "agent") == ["lean"]


def test_an_explicit_mapping_matches_names_loosely_when_unambiguous(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path, "arm,Usage Total,passed\nlean,5,true\n", columns={"tokens": "usage_total"}
    )

    assert ledger.report.mapping["tokens"] == "Usage Total"


# --- outcomes -------------------------------------------------------------------------------


def _one_column_file(folder: Path, name: str, values: list[str]) -> Ledger:
    rows = "".join(f"w,1,{value}\n" for value in values)
    return load_text(folder, f"workflow,tokens,{name}\n{rows}")


def test_every_spelling_of_true_and_false_in_any_case(tmp_path: Path) -> None:
    words = sorted(schema.TRUE_WORDS | schema.FALSE_WORDS)
    spellings = [variant for word in words for variant in (word, word.upper(), word.title())]
    ledger = _one_column_file(tmp_path, "passed", spellings)

    expected = ["passed" if word.lower() in schema.TRUE_WORDS else "failed" for word in spellings]
    assert column(ledger, "outcome") == expected
    assert column(ledger, "passed") == [outcome == "passed" for outcome in expected]


def test_an_empty_or_missing_passed_is_ungraded(tmp_path: Path) -> None:
    spellings = ["", "NA", "null", "None", "-", "N/A", "nan"]
    ledger = _one_column_file(tmp_path, "passed", spellings)

    assert column(ledger, "outcome") == ["ungraded"] * len(spellings)
    assert column(ledger, "passed") == [None] * len(spellings)
    ungraded = warning(ledger, "ungraded")
    assert ungraded is not None
    assert ungraded.count == len(spellings)
    assert ungraded.lines == (2, 3, 4, 5, 6)  # five examples at most


def test_every_status_word_in_any_case_with_dashes_or_spaces(tmp_path: Path) -> None:
    words = sorted(word for word in schema.STATUS_WORDS if word)
    spellings = [
        variant
        for word in words
        for variant in (word, word.upper(), word.replace("_", "-"), word.replace("_", " "))
    ]
    ledger = _one_column_file(tmp_path, "status", spellings)

    expected = [schema.STATUS_WORDS[schema.normalise_word(word)] for word in spellings]
    assert column(ledger, "outcome") == expected
    assert column(ledger, "status") == spellings  # the raw text is kept


def test_an_empty_or_unset_status_is_ungraded(tmp_path: Path) -> None:
    ledger = _one_column_file(tmp_path, "status", ["", "unset", "UNSET", "NA"])

    assert column(ledger, "outcome") == ["ungraded"] * 4


@pytest.mark.parametrize(
    ("passed", "status", "outcome", "contradicting"),
    [
        ("true", "passed", "passed", False),
        ("true", "", "passed", False),
        ("true", "failed", "passed", True),
        ("true", "agent_timeout", "passed", True),
        ("true", "crash", "passed", True),
        ("false", "timeout", "timeout", False),
        ("false", "test_timeout", "timeout", False),
        ("false", "error", "error", False),
        ("false", "parse_error", "error", False),
        ("false", "failed", "failed", False),
        ("false", "unset", "failed", False),
        ("false", "", "failed", False),
        ("false", "passed", "failed", True),
        ("", "passed", "passed", False),
        ("", "failed", "failed", False),
        ("", "agent_timeout", "timeout", False),
        ("", "unknown_agent_error", "error", False),
        ("", "unset", "ungraded", False),
        ("", "", "ungraded", False),
    ],
)
def test_passed_and_status_together(
    tmp_path: Path, passed: str, status: str, outcome: str, contradicting: bool
) -> None:
    ledger = load_text(tmp_path, f"workflow,tokens,passed,status\nlean,10,{passed},{status}\n")

    assert column(ledger, "outcome") == [outcome]
    found = warning(ledger, "contradicting_status")
    assert (found is not None) == contradicting
    if found is not None:
        assert found.count == 1
        assert found.lines == (2,)


def test_the_outcome_sentence_says_which_columns_decided(tmp_path: Path) -> None:
    both = load_text(tmp_path, "workflow,tokens,passed,status\nlean,10,true,ok\n")
    status = load_text(tmp_path, "workflow,tokens,result\nlean,10,ok\n", name="s.csv")

    assert any(s.startswith("outcome from passed and status") for s in both.report.derived)
    assert "outcome from status" in status.report.derived


# --- usage ----------------------------------------------------------------------------------


def test_every_missing_word_is_missing_usage_never_zero(tmp_path: Path) -> None:
    words = sorted(schema.MISSING_WORDS)
    spellings = [variant for word in words for variant in (word, word.upper())]
    rows = "".join(f"lean,{word},true\n" for word in spellings)
    ledger = load_text(tmp_path, f"workflow,tokens,passed\nlean,5,true\n{rows}")

    assert column(ledger, "tokens") == [5] + [None] * len(spellings)
    missing = warning(ledger, "missing_usage")
    assert missing is not None
    assert missing.count == len(spellings)
    assert missing.lines == (3, 4, 5, 6, 7)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("1000", 1000),
        ("+7", 7),
        (" 12 ", 12),
        ("007", 7),
        ("1000.0", 1000),
        ("1000.000", 1000),
        ("1e3", 1000),
        ("1.5E3", 1500),
        ("1000e-3", 1),
        ("-0", 0),
        ("9223372036854775807", 2**63 - 1),
        ("9.223372036854775807e18", 2**63 - 1),
    ],
)
def test_whole_numbers_in_any_notation_are_read_exactly(
    tmp_path: Path, text: str, tokens: int
) -> None:
    ledger = load_text(tmp_path, f'workflow,tokens,passed\nlean,"{text}",true\n')

    assert column(ledger, "tokens") == [tokens]


def test_zero_usage_is_kept_and_counted_as_suspect(tmp_path: Path) -> None:
    rows = "lean,0,false\n" * 7
    ledger = load_text(tmp_path, f"workflow,tokens,passed\nlean,10,true\n{rows}")

    assert column(ledger, "tokens") == [10] + [0] * 7
    zero = warning(ledger, "suspect_zero")
    assert zero is not None
    assert zero.count == 7
    assert zero.lines == (3, 4, 5, 6, 7)
    assert warning(ledger, "missing_usage") is None


def test_zero_usage_can_be_read_as_missing(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path,
        "workflow,tokens,passed\nlean,10,true\nlean,0,false\n",
        zero_usage_is_missing=True,
    )

    assert column(ledger, "tokens") == [10, None]
    zero, missing = warning(ledger, "suspect_zero"), warning(ledger, "missing_usage")
    assert zero is not None and zero.count == 1
    assert missing is not None and missing.lines == (3,)
    assert any("--zero-usage-is-missing" in sentence for sentence in ledger.report.derived)


def test_buckets_are_summed_when_there_is_no_tokens_column() -> None:
    ledger = load([FIXTURES / "buckets.tsv"])

    assert ledger.report.mapping == {
        "workflow": "workflow",
        "task": "task",
        "passed": "passed",
        "input_tokens": "input_tokens",
        "cached_input_tokens": "cache_read_tokens",
        "cache_write_tokens": "cache_creation_tokens",
        "output_tokens": "completion_tokens",
    }
    # The second attempt lacks its cache-read count, so its usage is unknown, not 100+5+50.
    assert column(ledger, "tokens") == [175, None, 280]
    assert column(ledger, "cached_input_tokens") == [20, None, 0]
    assert ledger.report.derived[0] == (
        "tokens = input_tokens + cached_input_tokens + cache_write_tokens + output_tokens "
        "(a row missing any of them has missing usage)"
    )
    assert ledger.attempts.columns[:9] == [
        "workflow",
        "task",
        "outcome",
        "tokens",
        "passed",
        "input_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "output_tokens",
    ]


def test_tokens_beats_buckets_and_disagreements_are_counted(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path,
        "workflow,tokens,input_tokens,output_tokens,passed\n"
        "lean,150,100,50,true\n"
        "lean,999,100,50,true\n"
        "lean,150,,50,true\n",
    )

    assert column(ledger, "tokens") == [150, 999, 150]
    mismatch = warning(ledger, "bucket_mismatch")
    assert mismatch is not None
    assert (mismatch.count, mismatch.lines) == (1, (3,))


def test_a_lone_bucket_next_to_tokens_is_not_compared(tmp_path: Path) -> None:
    ledger = load_text(tmp_path, "workflow,tokens,output_tokens,passed\nlean,150,50,true\n")

    assert warning(ledger, "bucket_mismatch") is None


# --- formats ----------------------------------------------------------------------------------

ROWS = [
    {"workflow": "lean", "tokens": "1000", "passed": "true"},
    {"workflow": "lean", "tokens": "", "passed": "false"},
    {"workflow": "steady", "tokens": "1600", "passed": "true"},
]
CSV_TEXT = "workflow,tokens,passed\nlean,1000,true\nlean,,false\nsteady,1600,true\n"


def _written(folder: Path, suffix: str) -> Path:
    path = folder / f"runs{suffix}"
    if suffix == ".csv":
        path.write_text(CSV_TEXT)
    elif suffix == ".tsv":
        path.write_text(CSV_TEXT.replace(",", "\t"))
    elif suffix in (".csv.gz", ".tsv.gz"):
        separator = "\t" if suffix == ".tsv.gz" else ","
        path.write_bytes(gzip.compress(CSV_TEXT.replace(",", separator).encode()))
    elif suffix == ".parquet":
        pl.DataFrame(
            {"workflow": ["lean", "lean", "steady"], "tokens": [1000, None, 1600]}
        ).with_columns(passed=pl.Series([True, False, True])).write_parquet(path)
    elif suffix == ".json":
        path.write_text(json.dumps([{**row, "tokens": row["tokens"] or None} for row in ROWS]))
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return path


@pytest.mark.parametrize("suffix", SUPPORTED_SUFFIXES)
def test_every_supported_format_reads_the_same_attempts(tmp_path: Path, suffix: str) -> None:
    ledger = load([_written(tmp_path, suffix)])

    assert column(ledger, "workflow") == ["lean", "lean", "steady"]
    assert column(ledger, "outcome") == ["passed", "failed", "passed"]
    assert column(ledger, "tokens") == [1000, None, 1600]
    assert column(ledger, "line") == ([2, 3, 4] if "sv" in suffix else [1, 2, 3])


@pytest.mark.parametrize(
    ("suffix", "name"),
    [(".csv", "runs.txt"), (".tsv", "runs.dat"), (".ndjson", "runs.log"), (".json", "runs")],
)
def test_an_unknown_extension_is_sniffed(tmp_path: Path, suffix: str, name: str) -> None:
    path = _written(tmp_path, suffix).rename(tmp_path / name)

    assert column(load([path]), "tokens") == [1000, None, 1600]


def test_parquet_and_gzip_are_sniffed_by_their_magic_bytes(tmp_path: Path) -> None:
    parquet = _written(tmp_path, ".parquet").rename(tmp_path / "export.bin")
    gzipped = _written(tmp_path, ".csv.gz").rename(tmp_path / "export.gz")

    assert column(load([parquet]), "tokens") == [1000, None, 1600]
    assert column(load([gzipped]), "tokens") == [1000, None, 1600]


def test_a_forced_format_beats_the_extension(tmp_path: Path) -> None:
    path = write(tmp_path, "runs.csv", CSV_TEXT.replace(",", "\t"))

    assert column(load([path], fmt="tsv"), "tokens") == [1000, None, 1600]


def test_json_records_keep_nested_fields_and_read_floats_exactly() -> None:
    ledger = load([FIXTURES / "records.json"])

    assert column(ledger, "tokens") == [1000, 1000, 1600]
    assert column(ledger, "outcome") == ["passed", "failed", "ungraded"]
    assert column(ledger, "meta")[0] == {"seed": 1}
    assert column(ledger, "line") == [1, 2, 3]
    assert ledger.report.units[str(FIXTURES / "records.json")] == "record"


def test_a_json_file_holding_one_record_is_one_attempt(tmp_path: Path) -> None:
    path = write(tmp_path, "one.json", '{"workflow": "lean", "tokens": 5, "passed": true}')

    assert column(load([path]), "tokens") == [5]


def test_terminal_bench_style_records_in_ndjson() -> None:
    ledger = load([FIXTURES / "trials.jsonl"])

    assert ledger.report.mapping["passed"] == "is_resolved"
    assert ledger.report.mapping["status"] == "failure_mode"
    assert column(ledger, "outcome") == ["passed", "timeout", "error", "passed"]
    assert column(ledger, "tokens") == [1500, None, 900, 0]
    kinds = {w.kind: w.count for w in ledger.report.warnings}
    assert kinds == {"suspect_zero": 1, "missing_usage": 1}


# --- several files, folders, importers -----------------------------------------------------


def test_several_files_with_different_names_for_the_same_columns(tmp_path: Path) -> None:
    first = write(tmp_path, "a.csv", "agent,tokens,passed\nlean,10,true\n")
    second = write(tmp_path, "b.csv", "workflow,input_tokens,output_tokens,status\nsteady,5,6,ok\n")
    ledger = load([first, second])

    assert column(ledger, "workflow") == ["lean", "steady"]
    assert column(ledger, "tokens") == [10, 11]
    assert column(ledger, "source") == [str(first), str(second)]
    assert ledger.report.mapping["workflow"] == "agent / workflow"
    assert (
        f"tokens = input_tokens + output_tokens (a row missing any of them has missing usage) "
        f"(in {second})" in ledger.report.derived
    )


def test_a_folder_means_every_supported_file_below_it_sorted(tmp_path: Path) -> None:
    write(tmp_path, "runs/b.csv", "workflow,tokens,passed\nb,2,true\n")
    write(tmp_path, "runs/a/x.tsv", "workflow\ttokens\tpassed\nax\t1\ttrue\n")
    write(tmp_path, "runs/.hidden.csv", "not,a,ledger\n")
    write(tmp_path, "runs/.cache/c.csv", "not,a,ledger\n")
    write(tmp_path, "runs/README.md", "# notes\n")
    folder = tmp_path / "runs"
    ledger = load([folder])

    assert column(ledger, "workflow") == ["ax", "b"]
    assert ledger.report.files == [str(folder / "a" / "x.tsv"), str(folder / "b.csv")]


def test_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path, "runs.csv", CSV_TEXT)

    assert load([path, path, tmp_path]).report.rows == 3


class FakeImporter:
    """Stands in for a harness importer: canonical names, its own source and line."""

    name = "fake-harness"

    def read(self, path: Path) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "workflow": ["orchestrator", "orchestrator"],
                "task": ["hello", "fix-git"],
                "passed": [True, None],
                "status": ["unset", "agent_timeout"],
                "input_tokens": [100, None],
                "output_tokens": [20, None],
                "source": [str(path / "a" / "results.json"), str(path / "b" / "results.json")],
                "line": [1, 1],
            }
        )

    def read_imported(self, path: Path, options: object = None) -> Imported:
        return Imported(self.read(path), ("fake buckets, read as they are",), ("2 fakes seen",))


def test_an_importer_is_asked_first_and_its_rows_validated_like_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.setattr(
        load_inputs, "find_importer", lambda path: FakeImporter() if path == folder else None
    )
    ledger = load([folder])

    assert column(ledger, "outcome") == ["passed", "timeout"]
    assert column(ledger, "tokens") == [120, None]
    # Named by their path below the folder opened; one attempt per file: no line number.
    assert column(ledger, "source") == ["a/results.json", "b/results.json"]
    assert ledger.report.files == [f"{folder} (fake-harness)"]
    lines = ledger.report.lines()
    assert any(line.endswith("(e.g. b/results.json)") for line in lines), lines
    assert "Convention: fake-harness: fake buckets, read as they are." in lines
    assert "Warning (fake_harness_import, 2): 2 fakes seen." in lines


def test_an_importers_bad_value_is_still_a_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken(FakeImporter):
        def read(self, path: Path) -> pl.DataFrame:
            return super().read(path).with_columns(status=pl.lit("exploded"))

    monkeypatch.setattr(load_inputs, "find_importer", lambda path: Broken())
    with pytest.raises(LoadError, match=r"a/results\.json, column 'status': 'exploded'"):
        load([tmp_path])


# --- the files themselves ----------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUPPORTED_SUFFIXES)
def test_files_are_never_changed(tmp_path: Path, suffix: str) -> None:
    path = _written(tmp_path, suffix)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    load([path])
    scan([path])[0].collect()

    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_bytes_that_are_not_utf8_are_replaced_and_reported() -> None:
    ledger = load([FIXTURES / "cp1252.csv"])

    assert column(ledger, "notes") == ["caf\ufffd cr\ufffdme", "ok"]
    lossy = warning(ledger, "lossy_decode")
    assert lossy is not None
    assert (lossy.count, lossy.lines) == (1, (2,))
    assert "re-encode" in lossy.message


# --- the lazy variant ------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".ndjson", ".json", ".csv.gz"])
def test_scan_gives_what_load_gives(tmp_path: Path, suffix: str) -> None:
    path = _written(tmp_path, suffix)
    lazy, report = scan([path])

    assert isinstance(lazy, pl.LazyFrame)
    assert_same_attempts(lazy.collect(), load([path]).attempts)
    assert report == load([path]).report


def test_scan_of_several_files_and_warnings(tmp_path: Path) -> None:
    paths = [FIXTURES / "harness_export.csv", FIXTURES / "trials.jsonl", FIXTURES / "cp1252.csv"]
    lazy, report = scan(paths)
    ledger = load(paths)

    assert_same_attempts(lazy.collect(), ledger.attempts)
    assert report == ledger.report


# --- the report --------------------------------------------------------------------------------


def test_the_report_names_every_warning_with_its_count_and_examples() -> None:
    report = load([FIXTURES / "harness_export.csv"]).report
    lines = report.lines()

    assert lines[:3] == [
        f"Read {FIXTURES / 'harness_export.csv'}.",
        "6 attempts.",
        "Columns: workflow from Agent; task from Task ID; tokens from Total Tokens; "
        "status from Result; model from Model.",
    ]
    assert "Derived: outcome from status." in lines
    assert any(
        line.startswith("Warning (suspect_zero, 1): ") and "(e.g. line 4)" in line for line in lines
    )
    assert any(
        line.startswith("Warning (missing_usage, 1): ") and "(e.g. line 3)" in line
        for line in lines
    )


def test_a_report_can_be_built_by_hand() -> None:
    report = LoadReport(
        files=["a.csv", "b.json"],
        rows=3,
        mapping={"workflow": "agent"},
        derived=[],
        warnings=[LoadWarning("suspect_zero", "Zero.", 7, (2, 3), ("a.csv", "b.json"))],
        units={"a.csv": "line", "b.json": "record"},
    )

    assert report.lines()[-1] == (
        "Warning (suspect_zero, 7): Zero. (e.g. a.csv line 2; b.json record 3 and more)"
    )


# --- what real exports look like ------------------------------------------------------------


def test_an_excel_export_with_a_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(b"\xef\xbb\xbfAgent,Tokens,Passed\r\nlean,10,TRUE\r\nsteady,,FALSE\r\n")
    ledger = load([path])

    assert ledger.report.mapping == {"workflow": "Agent", "tokens": "Tokens", "passed": "Passed"}
    assert column(ledger, "tokens") == [10, None]
    assert column(ledger, "outcome") == ["passed", "failed"]


def test_json_lines_saved_as_json_are_read_as_json_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "runs.json", "".join(json.dumps(row) + "\n" for row in ROWS))

    assert column(load([path]), "tokens") == [1000, None, 1600]


def test_a_column_typed_differently_in_two_files_is_kept_as_text(tmp_path: Path) -> None:
    first = write(tmp_path, "a.csv", "workflow,tokens,passed,seed\nlean,1,true,7\n")
    second = write(
        tmp_path, "b.jsonl", '{"workflow": "lean", "tokens": 2, "passed": true, "seed": {"s": 1}}\n'
    )
    ledger = load([first, second])

    assert column(ledger, "seed") == ["7", '{"s":1}']


def test_fmt_can_name_an_importer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        load_inputs, "named_importer", lambda name: FakeImporter() if name == "fake" else None
    )

    assert column(load([tmp_path], fmt="fake"), "workflow") == ["orchestrator", "orchestrator"]


def test_a_cell_spanning_three_lines_next_to_empty_last_cells(tmp_path: Path) -> None:
    ledger = load_text(
        tmp_path,
        'workflow,tokens,passed,notes,extra\nlean,1,true,"a\nb, c\nd",\nlean,2,true,,\n',
    )

    assert column(ledger, "notes") == ["a\nb, c\nd", None]
    assert column(ledger, "line") == [2, 5]  # the second record starts on line 5
