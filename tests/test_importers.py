"""Importers: harness files in, raw attempt frames out, every mapped field checked.

Fixtures live in tests/fixtures/importers/: a small Terminal-Bench tree written by hand in the
harness's schema, real Inspect AI logs made offline with the mock model (make_fixture.py), a
real promptfoo output made offline (promptfooconfig.yaml), and synthetic files for the cases a
real run did not produce.
"""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tui_ledger.importers import (
    IMPORTERS,
    ImporterError,
    InspectImporter,
    PromptfooImporter,
    TerminalBenchImporter,
    detect,
    find_importer,
    get_importer,
    importer_names,
)
from tui_ledger.importers.inspect_ai import score_value
from tui_ledger.schema import STATUS_WORDS, canonical_for, normalise_word

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
TB = FIXTURES / "terminal_bench"
TB_RUN = TB / "agent-a" / "2025-01-01__10-00-00"
INSPECT = FIXTURES / "inspect"
PROMPTFOO = FIXTURES / "promptfoo"

UTC = timezone.utc


def rows_by(frame: pl.DataFrame, *keys: str) -> dict[Any, dict[str, Any]]:
    """Rows keyed by the value of `keys` (a tuple of them for several), field by field."""
    rows = {
        tuple(row[key] for key in keys) if len(keys) > 1 else row[keys[0]]: row
        for row in frame.to_dicts()
    }
    assert len(rows) == frame.height, "the keys must identify each row"
    return rows


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def all_fixture_frames() -> list[tuple[str, pl.DataFrame]]:
    frames = [
        ("tb agent-a", get_importer("terminal-bench").read(TB / "agent-a")),
        ("tb agent-b", get_importer("terminal-bench").read(TB / "agent-b")),
        ("tb run-only", get_importer("terminal-bench").read(TB / "run-only")),
        ("inspect .eval", get_importer("inspect").read(INSPECT / "ledger_fixture_deflate.eval")),
        ("inspect .json", get_importer("inspect").read(INSPECT / "ledger_fixture.json")),
        ("inspect synthetic", get_importer("inspect").read(INSPECT / "synthetic.json")),
        ("promptfoo real", get_importer("promptfoo").read(PROMPTFOO / "results.json")),
        ("promptfoo v2", get_importer("promptfoo").read(PROMPTFOO / "synthetic_v2.json")),
        ("promptfoo jsonl", get_importer("promptfoo").read(PROMPTFOO / "results.jsonl")),
    ]
    return frames


# --- the registry -----------------------------------------------------------------------------


def test_importers_are_named_and_found_by_name_or_alias() -> None:
    assert {"terminal-bench", "inspect", "promptfoo"} <= set(importer_names())
    assert [importer.name for importer in IMPORTERS] == list(importer_names())
    assert isinstance(get_importer("terminal-bench"), TerminalBenchImporter)
    assert isinstance(get_importer("TB"), TerminalBenchImporter)
    assert isinstance(get_importer("terminal_bench"), TerminalBenchImporter)
    assert isinstance(get_importer("inspect"), InspectImporter)
    assert isinstance(get_importer("inspect_ai"), InspectImporter)
    assert isinstance(get_importer("promptfoo"), PromptfooImporter)


def test_an_unknown_importer_name_is_an_error_listing_the_known_ones() -> None:
    with pytest.raises(ImporterError, match="unknown importer 'no-such-harness'; choose one of: "):
        get_importer("no-such-harness")
    assert issubclass(ImporterError, ValueError)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (TB / "agent-a", "terminal-bench"),
        (TB_RUN, "terminal-bench"),
        (TB / "agent-b", "terminal-bench"),
        (TB / "run-only", "terminal-bench"),
        (
            TB_RUN / "hello-world" / "hello-world.2-of-2.2025-01-01__10-00-00" / "results.json",
            "terminal-bench",
        ),
        (TB_RUN / "results.json", "terminal-bench"),
        (INSPECT / "ledger_fixture_deflate.eval", "inspect"),
        (INSPECT / "ledger_fixture_zstd.eval", "inspect"),
        (INSPECT / "ledger_fixture.json", "inspect"),
        (INSPECT / "synthetic.json", "inspect"),
        (INSPECT, "inspect"),
        (PROMPTFOO / "results.json", "promptfoo"),
        (PROMPTFOO / "synthetic_v2.json", "promptfoo"),
        (PROMPTFOO / "results.jsonl", "promptfoo"),
    ],
)
def test_find_importer_by_path_and_content(path: Path, expected: str) -> None:
    importer = find_importer(path)
    assert importer is not None and importer.name == expected
    assert detect(str(path)) is importer


def test_find_importer_leaves_other_files_to_the_plain_loader(tmp_path: Path) -> None:
    csv = tmp_path / "runs.csv"
    csv.write_text("workflow,tokens,passed\nlean,1000,true\n")
    plain_json = write_json(
        tmp_path / "results.json", [{"workflow": "a", "task_id": "t1", "tokens": 1}]
    )
    assert find_importer(csv) is None
    assert find_importer(plain_json) is None  # a plain table named results.json
    assert find_importer(TB_RUN / "run_metadata.json") is None
    assert find_importer(PROMPTFOO / "promptfooconfig.yaml") is None
    assert find_importer(tmp_path / "missing.json") is None
    assert find_importer(tmp_path) is None  # a folder of plain files


@pytest.mark.parametrize(("name", "frame"), all_fixture_frames())
def test_every_frame_is_raw_but_ready_for_the_loader(name: str, frame: pl.DataFrame) -> None:
    assert frame.height > 0
    assert frame.columns[-2:] == ["source", "line"], name
    # An extra column that were an alias would collide with its canonical column in the loader.
    for column in frame.columns:
        assert canonical_for(column) in (None, column), f"{name}: {column} is an alias"
    schema = frame.schema
    expected = {
        "workflow": pl.String,
        "task": pl.String,
        "passed": pl.Boolean,
        "status": pl.String,
        "tokens": pl.Int64,
        "input_tokens": pl.Int64,
        "output_tokens": pl.Int64,
        "run": pl.String,
        "timestamp": pl.Datetime("us", "UTC"),
        "duration_s": pl.Float64,
        "line": pl.Int64,
        "source": pl.String,
    }
    for column, dtype in expected.items():
        assert schema[column] == dtype, f"{name}: {column} is {schema[column]}"
    assert frame["workflow"].null_count() == 0
    assert frame["task"].null_count() == 0
    assert frame["line"].min() >= 1  # type: ignore[operator]
    # Every status is a word the loader knows: nothing for it to reject.
    for status in frame["status"].drop_nulls():
        assert normalise_word(status) in STATUS_WORDS, f"{name}: status {status!r}"


def test_importer_errors_are_one_line_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "results.json"
    broken.write_text('{"task_id": "x",')
    with pytest.raises(ImporterError) as caught:
        get_importer("terminal-bench").read(broken)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{broken}: is not valid JSON")
    assert caught.value.path == broken


# --- Terminal-Bench ---------------------------------------------------------------------------


@pytest.fixture
def tb_submission(tmp_path: Path) -> Path:
    """agent-a copied under a folder name with `@` and `:`, as submissions are named."""
    folder = tmp_path / "team@terminus:v2"
    shutil.copytree(TB / "agent-a", folder)
    return folder


def test_terminal_bench_folder_is_one_workflow_named_after_it(tb_submission: Path) -> None:
    frame = TerminalBenchImporter().read(tb_submission)
    assert frame.height == 4  # the run's own results.json repeats its trials: not read again
    assert set(frame["workflow"]) == {"team@terminus:v2"}
    assert set(frame["run"]) == {"2025-01-01__10-00-00"}
    assert set(frame["model"]) == {"openai/gpt-4o"}  # from run_metadata.json
    assert set(frame["agent_name"]) == {"terminus"}
    assert "cached_input_tokens" not in frame.columns  # Terminal-Bench does not split the cache
    run = tb_submission / "2025-01-01__10-00-00"
    rows = rows_by(frame, "trial_label")

    first = rows["hello-world.1-of-2.2025-01-01__10-00-00"]
    assert first["task"] == "hello-world"
    assert first["passed"] is True
    assert first["status"] == "unset"
    assert first["stop_reason"] == "unset"
    assert (first["input_tokens"], first["output_tokens"], first["tokens"]) == (1000, 200, 1200)
    assert first["timestamp"] == datetime(2025, 1, 1, 10, 0, tzinfo=UTC)
    assert first["duration_s"] == 150.5
    assert first["agent_duration_s"] == 115.0
    assert first["test_duration_s"] == 15.0
    assert first["trial_ended_at"] == datetime(2025, 1, 1, 10, 2, 30, 500000, tzinfo=UTC)
    assert (first["tests_passed"], first["tests_total"]) == (2, 2)
    assert first["trial_uuid"] == "00000000-0000-4000-8000-431909823723"
    assert first["recording_path"].endswith("/sessions/agent.cast")
    assert first["source"] == str(
        run / "hello-world" / "hello-world.1-of-2.2025-01-01__10-00-00" / "results.json"
    )
    assert first["line"] == 1

    timeout = rows["hello-world.2-of-2.2025-01-01__10-00-00"]
    assert (timeout["passed"], timeout["status"]) == (False, "agent_timeout")
    # Usage lost on a timeout is unknown, never 0.
    assert (timeout["input_tokens"], timeout["output_tokens"], timeout["tokens"]) == (
        None,
        None,
        None,
    )
    assert timeout["timestamp"] == datetime(2025, 1, 1, 11, 0, tzinfo=UTC)  # a `Z` time
    assert timeout["duration_s"] == 1800.0
    assert (timeout["tests_passed"], timeout["tests_total"]) == (1, 2)

    zero = rows["fix-bug.1-of-2.2025-01-01__10-00-00"]
    assert (zero["passed"], zero["status"]) == (None, "parse_error")
    # A recorded 0 stays 0: the loader flags it as suspect, the importer does not decide.
    assert (zero["input_tokens"], zero["output_tokens"], zero["tokens"]) == (0, 0, 0)
    assert zero["timestamp"] is None and zero["duration_s"] is None
    assert zero["tests_total"] is None

    half = rows["fix-bug.2-of-2.2025-01-01__10-00-00"]
    assert (half["passed"], half["status"]) == (False, "unset")
    assert (half["input_tokens"], half["output_tokens"], half["tokens"]) == (5000, None, None)


def test_terminal_bench_run_folder_and_single_file(tb_submission: Path) -> None:
    run = tb_submission / "2025-01-01__10-00-00"
    by_run = TerminalBenchImporter().read(run)
    assert set(by_run["workflow"]) == {"2025-01-01__10-00-00"}
    by_submission = TerminalBenchImporter().read(tb_submission)
    assert by_run.drop("workflow").equals(by_submission.drop("workflow"))

    trial = run / "hello-world" / "hello-world.1-of-2.2025-01-01__10-00-00" / "results.json"
    single = TerminalBenchImporter().read(trial)
    assert single.height == 1
    assert single.row(0, named=True)["workflow"] == "2025-01-01__10-00-00"
    assert single.row(0, named=True)["run"] == "2025-01-01__10-00-00"
    assert single.row(0, named=True)["tokens"] == 1200


def test_terminal_bench_flattened_submission_older_schema() -> None:
    frame = TerminalBenchImporter().read(TB / "agent-b")
    rows = rows_by(frame, "task")
    assert set(frame["workflow"]) == {"agent-b"}
    # No run folder: the run id recorded in recording_path names the run.
    assert set(frame["run"]) == {"2025-02-02__09-00-00"}
    assert "model" not in frame.columns  # no run_metadata.json anywhere: no empty column
    hello, fix = rows["hello-world"], rows["fix-bug"]
    assert (hello["passed"], hello["status"], hello["stop_reason"]) == (True, "unset", "none")
    assert (fix["passed"], fix["status"], fix["stop_reason"]) == (
        False,
        "failed",
        "context_length_exceeded",
    )
    assert fix["tokens"] == 91000
    assert hello["trial_uuid"] == "33333333-3333-4333-8333-000000000001"  # older "uuid" key


def test_terminal_bench_run_folder_with_only_its_summary_file() -> None:
    frame = TerminalBenchImporter().read(TB / "run-only")
    source = str(TB / "run-only" / "results.json")
    assert frame.select("task", "passed", "status", "tokens", "run", "line").rows() == [
        ("hello-world", True, "unset", 15, "run-only", 1),
        ("fix-bug", False, "test_timeout", None, "run-only", 2),
    ]
    assert set(frame["source"]) == {source}
    assert TerminalBenchImporter().read(TB / "run-only" / "results.json").equals(frame)


def test_terminal_bench_does_not_walk_into_trial_logs(tb_submission: Path) -> None:
    # The fixture's first trial keeps a `sessions/results.json` that is not JSON at all.
    decoy = next(tb_submission.rglob("sessions/results.json"))
    assert not decoy.read_text().startswith("{")
    assert TerminalBenchImporter().read(tb_submission).height == 4


def test_terminal_bench_matches(tmp_path: Path) -> None:
    importer = TerminalBenchImporter()
    assert importer.matches(TB / "agent-a")
    assert importer.matches(TB_RUN / "results.json")
    assert not importer.matches(TB_RUN / "run_metadata.json")
    assert not importer.matches(PROMPTFOO / "results.json")  # promptfoo's default name too
    assert not importer.matches(INSPECT)
    assert not importer.matches(tmp_path)
    write_json(tmp_path / "other" / "results.json", {"accuracy": 0.5})
    assert not importer.matches(tmp_path)


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"task_id": "t", "is_resolved": "yes"}, "is_resolved is 'yes', not true, false or null"),
        ({"task_id": "t", "total_input_tokens": "12"}, "total_input_tokens is '12', not a whole"),
        ({"task_id": "t", "total_output_tokens": 1.5}, "total_output_tokens is 1.5, not a whole"),
        ({"task_id": "t", "trial_started_at": "yesterday"}, "trial_started_at 'yesterday' is not"),
        ({"trial_name": "t.1-of-1"}, "has no task_id"),
    ],
)
def test_terminal_bench_bad_fields_name_file_and_field(
    tmp_path: Path, record: dict[str, Any], problem: str
) -> None:
    file = write_json(tmp_path / "sub" / "task" / "task.1-of-1" / "results.json", record)
    with pytest.raises(ImporterError) as caught:
        TerminalBenchImporter().read(tmp_path / "sub")
    assert str(caught.value).startswith(f"{file}: ")
    assert problem in str(caught.value)


def test_terminal_bench_broken_files_in_a_folder(tmp_path: Path) -> None:
    bad = tmp_path / "sub" / "task" / "task.1-of-1" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    with pytest.raises(ImporterError, match=r"results\.json: is not valid JSON \(Expecting"):
        TerminalBenchImporter().read(tmp_path / "sub")

    write_json(bad, {"something": "else"})
    with pytest.raises(ImporterError, match="is not a Terminal-Bench trial record"):
        TerminalBenchImporter().read(tmp_path / "sub")

    write_json(bad, {"results": [{"task_id": "ok"}, {"oops": 1}]})
    with pytest.raises(ImporterError, match=r"results\.json: record 2: is not a Terminal-Bench"):
        TerminalBenchImporter().read(tmp_path / "sub")

    (tmp_path / "empty").mkdir()
    with pytest.raises(ImporterError, match=r"holds no Terminal-Bench trial results\.json"):
        TerminalBenchImporter().read(tmp_path / "empty")
    with pytest.raises(ImporterError, match="does not exist"):
        TerminalBenchImporter().read(tmp_path / "missing")


# --- Inspect AI -------------------------------------------------------------------------------


def test_inspect_eval_log_every_field() -> None:
    path = INSPECT / "ledger_fixture_deflate.eval"
    frame = InspectImporter().read(path)
    assert frame.height == 10  # 5 samples x 2 epochs
    assert set(frame["workflow"]) == {"mockllm/model [generate]"}
    assert set(frame["model"]) == {"mockllm/model"}
    assert set(frame["eval_task"]) == {"ledger_fixture"}
    assert set(frame["inspect_version"]) == {"0.3.285"}
    assert set(frame["log_status"]) == {"success"}
    assert set(frame["source"]) == {str(path)}
    assert sorted(frame["line"]) == list(range(1, 11))
    rows = rows_by(frame, "sample", "run")

    add = rows[("add", "1")]
    assert add["task"] == "ledger_fixture/add"
    assert (add["passed"], add["status"], add["stop_reason"]) == (True, "passed", None)
    assert (add["scorer"], add["score"]) == ("match", 1.0)
    # Cache reads and writes apart from uncached input; reasoning inside output, not added.
    assert (
        add["input_tokens"],
        add["cached_input_tokens"],
        add["cache_write_tokens"],
        add["output_tokens"],
        add["tokens"],
    ) == (120, 400, 50, 30, 600)
    assert add["reasoning_tokens"] == 10
    assert add["cost"] is None  # the mock model has no price: unknown, never $0
    assert add["models_used"] == "mockllm/model"
    assert add["timestamp"] is not None and add["timestamp"].tzinfo is not None
    assert add["duration_s"] > 0 and add["working_time_s"] > 0
    assert add["sample_uuid"] and add["eval_id"] and add["inspect_run_id"]

    mul = rows[("mul", "2")]
    assert (mul["passed"], mul["status"], mul["score"]) == (False, "failed", 0.0)

    boom = rows[("boom", "1")]
    assert (boom["passed"], boom["status"], boom["stop_reason"]) == (None, "error", "error")
    assert boom["error_message"] == "RuntimeError('sandbox exploded')"
    assert (boom["tokens"], boom["input_tokens"], boom["cost"]) == (None, None, None)
    assert boom["scorer"] is None and boom["score"] is None

    big = rows[("big", "2")]
    assert (big["passed"], big["status"], big["stop_reason"]) == (False, "failed", "token_limit")
    assert (big["input_tokens"], big["output_tokens"], big["tokens"]) == (9000, 500, 9500)
    assert (big["cached_input_tokens"], big["cache_write_tokens"]) == (0, 0)
    assert big["reasoning_tokens"] is None


# What differs between two runs of the fixture task, or two files of one log: ids and clocks.
RUN_SPECIFIC = frozenset(
    {"timestamp", "duration_s", "working_time_s", "sample_uuid", "eval_id", "inspect_run_id"}
    | {"source", "line"}
)


def _same_attempts(left: pl.DataFrame, right: pl.DataFrame) -> None:
    keep = [column for column in left.columns if column not in RUN_SPECIFIC]
    assert left.select(keep).sort("task", "run").equals(right.select(keep).sort("task", "run"))


def test_inspect_zstd_eval_reads_like_the_deflate_one() -> None:
    if sys.version_info < (3, 14):
        pytest.importorskip("zstandard")
    zstd = InspectImporter().read(INSPECT / "ledger_fixture_zstd.eval")
    deflate = InspectImporter().read(INSPECT / "ledger_fixture_deflate.eval")
    assert zstd.drop("source").equals(deflate.drop("source"))


def test_inspect_zstd_without_a_decoder_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    if sys.version_info >= (3, 14):
        pytest.skip("Python 3.14 reads zstd zip members itself")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # `import zstandard` now fails
    with pytest.raises(ImporterError) as caught:
        InspectImporter().read(INSPECT / "ledger_fixture_zstd.eval")
    message = str(caught.value)
    assert message.startswith(f"{INSPECT / 'ledger_fixture_zstd.eval'}: header.json: ")
    assert "zstd-compressed" in message and "zstandard" in message and "\n" not in message


def test_inspect_json_log_reads_like_the_eval_log() -> None:
    frame = InspectImporter().read(INSPECT / "ledger_fixture.json")
    assert frame.height == 6  # add, mul, big x 2 epochs
    rows = rows_by(frame, "sample", "run")
    assert rows[("add", "2")]["tokens"] == 600
    assert rows[("add", "2")]["cached_input_tokens"] == 400
    assert rows[("mul", "1")]["status"] == "failed"
    assert rows[("big", "1")]["stop_reason"] == "token_limit"
    eval_rows = InspectImporter().read(INSPECT / "ledger_fixture_deflate.eval")
    _same_attempts(frame, eval_rows.filter(pl.col("sample").is_in(["add", "mul", "big"])))


def test_inspect_eval_without_summaries_reads_journal_or_samples(tmp_path: Path) -> None:
    source = zipfile.ZipFile(INSPECT / "ledger_fixture_deflate.eval")
    expected = InspectImporter().read(INSPECT / "ledger_fixture_deflate.eval")

    def rewrite(name: str, drop: set[str]) -> Path:
        path = tmp_path / name
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
            for info in source.infolist():
                if info.filename not in drop and not any(
                    info.filename.startswith(prefix) for prefix in drop if prefix.endswith("/")
                ):
                    target.writestr(info.filename, source.read(info))
        return path

    unfinished = rewrite("unfinished.eval", {"summaries.json", "header.json"})
    samples_only = rewrite("samples.eval", {"summaries.json", "_journal/summaries/"})
    for path in (unfinished, samples_only):
        assert InspectImporter().matches(path)
        frame = InspectImporter().read(path)
        _same_attempts(frame.drop("log_status"), expected.drop("log_status"))
    assert set(InspectImporter().read(unfinished)["log_status"]) == {"started"}
    # Full samples carry the error as an object: its message is read the same way.
    boom = InspectImporter().read(samples_only).filter(pl.col("sample") == "boom")
    assert set(boom["error_message"]) == {"RuntimeError('sandbox exploded')"}


def test_inspect_synthetic_log_limits_scores_and_usage() -> None:
    frame = InspectImporter().read(INSPECT / "synthetic.json")
    assert set(frame["workflow"]) == {"openai/gpt-4o [react]"}  # eval.solver beats the plan
    rows = {row["sample"]: row for row in frame.to_dicts()}

    one = rows["1"]
    assert one["task"] == "inspect_evals/swe_lite/1"
    assert (one["scorer"], one["score"], one["passed"]) == ("verify", 1.0, True)
    # Two models summed. gpt-4o's older input_tokens held its 600 cache reads (its total
    # is input + output), so they are taken out; haiku's already were apart.
    assert (
        one["input_tokens"],
        one["cached_input_tokens"],
        one["cache_write_tokens"],
        one["output_tokens"],
        one["tokens"],
    ) == (400 + 100, 600 + 30, 20, 200 + 10, 1200 + 160)
    assert (
        one["input_tokens"]
        + one["cached_input_tokens"]
        + one["cache_write_tokens"]
        + one["output_tokens"]
        == one["tokens"]
    )
    assert one["cost"] == pytest.approx(0.011)
    assert one["reasoning_tokens"] == 50
    assert one["models_used"] == "anthropic/claude-3-5-haiku, openai/gpt-4o"
    assert one["timestamp"] == datetime(2025, 3, 1, 12, 0, 1, tzinfo=UTC)
    assert (one["duration_s"], one["working_time_s"]) == (12.5, 10.0)
    assert one["inspect_version"] == "0.3.150"
    assert one["log_status"] == "error"

    expected = {
        # sample: (passed, status, stop_reason, score)
        "2": (False, "failed", None, 0.5),
        "3": (False, "timeout", "time_limit", 0.0),
        "4": (None, "timeout", "working_limit", None),
        "5": (None, "failed", "message_limit", None),
        "6": (None, "error", "error", None),
        "7": (False, "error", "operator_limit", 0.0),
        "8": (True, "passed", None, 1.0),
        "9": (False, "failed", None, 0.5),
        "10": (None, "unset", None, None),
        "11": (True, "passed", None, 1.0),
        "12": (True, "passed", "token_limit", 1.0),
    }
    for sample, (passed, status, stop_reason, score) in expected.items():
        row = rows[sample]
        assert (row["passed"], row["status"], row["stop_reason"], row["score"]) == (
            passed,
            status,
            stop_reason,
            score,
        ), sample
    assert rows["2"]["cost"] is None  # no total_cost reported: unknown
    assert (rows["2"]["cached_input_tokens"], rows["2"]["cache_write_tokens"]) == (0, 0)
    assert rows["6"]["run"] == "2"
    assert rows["6"]["error_message"] == "ValueError: bad fixture"
    assert rows["6"]["tokens"] is None and rows["6"]["models_used"] is None
    assert rows["6"]["timestamp"] == datetime(2025, 3, 1, 12, 0, tzinfo=UTC)  # eval.created
    assert rows["8"]["tokens"] == 0  # a reported 0 stays 0


def test_inspect_score_threshold_and_scorer_choice() -> None:
    lenient = InspectImporter(score_threshold=0.5).read(INSPECT / "synthetic.json")
    passed = dict(zip(lenient["sample"], lenient["passed"], strict=True))
    assert passed["2"] is True and passed["9"] is True  # 0.5 and "P" now accepted
    assert passed["3"] is False

    judged = InspectImporter(scorer="judge").read(INSPECT / "synthetic.json")
    by_sample = {row["sample"]: row for row in judged.to_dicts()}
    assert (by_sample["1"]["scorer"], by_sample["1"]["passed"]) == ("judge", False)
    assert by_sample["2"]["passed"] is None  # judge did not score it: ungraded

    with pytest.raises(ImporterError, match="no sample has a score from 'nope'; scorers: judge"):
        InspectImporter(scorer="nope").read(INSPECT / "synthetic.json")


def test_inspect_folder_of_logs(tmp_path: Path) -> None:
    shutil.copy(INSPECT / "ledger_fixture.json", tmp_path / "a.json")
    shutil.copy(INSPECT / "ledger_fixture_deflate.eval", tmp_path / "b.eval")
    write_json(tmp_path / "logs.json", {"a.json": {}})  # Inspect's own index: not data
    (tmp_path / "README.md").write_text("notes")
    assert InspectImporter().matches(tmp_path)
    frame = InspectImporter().read(tmp_path)
    assert frame.height == 16
    assert set(frame["source"]) == {str(tmp_path / "a.json"), str(tmp_path / "b.eval")}


def test_inspect_leaves_a_mixed_folder_to_the_loader_walk(tmp_path: Path) -> None:
    shutil.copy(INSPECT / "ledger_fixture.json", tmp_path / "a.json")
    (tmp_path / "runs.csv").write_text("workflow,tokens,passed\nlean,1000,true\n")
    assert not InspectImporter().matches(tmp_path)  # claiming it would hide runs.csv
    with pytest.raises(ImporterError, match=r"runs\.csv: is not an Inspect AI log"):
        InspectImporter().read(tmp_path)
    (tmp_path / "runs.csv").unlink()
    (tmp_path / "more").mkdir()
    assert not InspectImporter().matches(tmp_path)  # nor would a subfolder be read


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("C", 1.0),
        ("P", 0.5),
        ("I", 0.0),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        (1, 1.0),
        (0.25, 0.25),
        ("yes", 1.0),
        ("False", 0.0),
        ("0.75", 0.75),
        (None, None),
        (float("nan"), None),
    ],
)
def test_inspect_score_values(value: Any, number: float | None) -> None:
    assert score_value(value, path="log.json", record="sample 1 epoch 1", scorer="s") == number


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("maybe", "score 's' is 'maybe'; expected C, I, P, N, yes/no or a number"),
        ({"a": 1}, "score 's' is a dict, not one value; choose a scorer with a single value"),
        ([1, 0], "score 's' is list, not one value"),
    ],
)
def test_inspect_unreadable_scores_are_errors(value: Any, problem: str) -> None:
    with pytest.raises(ImporterError) as caught:
        score_value(value, path="log.json", record="sample 1 epoch 1", scorer="s")
    assert str(caught.value) == f"log.json: sample 1 epoch 1: {problem}" or problem in str(
        caught.value
    )


def _synthetic_log(samples: list[dict[str, Any]]) -> dict[str, Any]:
    log = json.loads((INSPECT / "synthetic.json").read_text())
    log["samples"] = samples
    return log


def test_inspect_malformed_logs(tmp_path: Path) -> None:
    not_zip = tmp_path / "broken.eval"
    not_zip.write_bytes(b"PK but not really")
    assert not InspectImporter().matches(not_zip)
    with pytest.raises(ImporterError, match=r"broken\.eval: is not a readable \.eval archive"):
        InspectImporter().read(not_zip)

    bad_json = tmp_path / "broken.json"
    bad_json.write_text('{"version": 2, "eval": {')
    with pytest.raises(ImporterError, match=r"broken\.json: is not valid JSON"):
        InspectImporter().read(bad_json)

    dict_score = write_json(
        tmp_path / "dict.json",
        _synthetic_log([{"id": "q7", "epoch": 3, "scores": {"verify": {"value": {"f1": 0.5}}}}]),
    )
    with pytest.raises(ImporterError) as caught:
        InspectImporter().read(dict_score)
    assert str(caught.value).startswith(f"{dict_score}: sample q7 epoch 3: score 'verify' is a")

    bad_usage = write_json(
        tmp_path / "usage.json",
        _synthetic_log([{"id": 1, "epoch": 1, "model_usage": {"m": {"input_tokens": "lots"}}}]),
    )
    with pytest.raises(ImporterError, match="sample 1 epoch 1: m input_tokens is 'lots'"):
        InspectImporter().read(bad_usage)

    empty = write_json(tmp_path / "empty.json", _synthetic_log([]))
    with pytest.raises(ImporterError, match="holds no samples"):
        InspectImporter().read(empty)

    no_header = write_json(tmp_path / "noheader.json", {"version": 2, "samples": [{"id": 1}]})
    with pytest.raises(ImporterError, match="is not an Inspect AI log"):
        InspectImporter().read(no_header)


def test_inspect_matches() -> None:
    importer = InspectImporter()
    assert importer.matches(INSPECT / "ledger_fixture_zstd.eval")
    assert importer.matches(INSPECT / "synthetic.json")
    assert not importer.matches(PROMPTFOO / "results.json")
    assert not importer.matches(TB_RUN / "results.json")
    assert not importer.matches(INSPECT / "make_fixture.py")
    assert not importer.matches(TB)


# --- promptfoo --------------------------------------------------------------------------------


def test_promptfoo_real_output_every_field() -> None:
    path = PROMPTFOO / "results.json"
    frame = PromptfooImporter().read(path)
    assert frame.height == 24  # 2 providers x 2 prompts x 3 tests x 2 repeats
    # Two prompts in the file: each provider x prompt pair is a workflow.
    assert set(frame["workflow"]) == {
        "echo-bot [short]",
        "echo-bot [long]",
        "counting-bot [short]",
        "counting-bot [long]",
    }
    assert set(frame["eval_id"]) == {"eval-IEi-2026-11-29T14:47:10"}
    assert set(frame["timestamp"]) == {datetime(2026, 11, 29, 14, 47, 10, 80000, tzinfo=UTC)}
    assert sorted(frame["line"]) == list(range(1, 25))
    rows = rows_by(frame, "workflow", "task", "run")

    hit = rows[("counting-bot [short]", "mentions cats", "1")]
    assert (hit["passed"], hit["status"], hit["stop_reason"]) == (True, "passed", None)
    # prompt 1004 holds the 800 cache reads: input = 204, and the buckets add up to the total.
    assert (
        hit["input_tokens"],
        hit["cached_input_tokens"],
        hit["cache_write_tokens"],
        hit["output_tokens"],
        hit["tokens"],
    ) == (204, 800, 0, 50, 1054)
    assert hit["reasoning_tokens"] == 10
    assert hit["grading_tokens"] == 0
    assert hit["cost"] == 0.0025
    assert hit["model"] == "file://provider.js"
    assert hit["prompt_label"] == "short"
    assert hit["test_vars"] == '{"topic": "cats"}'
    assert hit["score"] == 1.0
    assert hit["grading_reason"] == "All assertions passed"
    assert hit["duration_s"] is not None and hit["duration_s"] >= 0
    assert hit["result_id"] and hit["source"] == str(path)
    assert rows[("counting-bot [short]", "mentions cats", "2")]["test_idx"] == 1  # the repeat

    miss = rows[("counting-bot [long]", "says hello", "2")]
    assert (miss["passed"], miss["status"], miss["stop_reason"]) == (
        False,
        "failed",
        "assertion_failed",
    )
    assert miss["error_message"] is None  # an assertion failure is not an error
    assert miss["grading_reason"] == 'Expected output to contain "hello"'
    assert miss["tokens"] == 1057

    error = rows[("counting-bot [long]", "survives outage", "1")]
    assert (error["passed"], error["status"], error["stop_reason"]) == (False, "error", "error")
    assert error["error_message"] == "upstream 503: service unavailable"
    # The provider reported no usage; promptfoo's zero placeholder becomes unknown.
    assert (error["tokens"], error["input_tokens"], error["output_tokens"]) == (None, None, None)

    echo = rows[("echo-bot [short]", "survives outage", "2")]
    assert (echo["passed"], echo["status"]) == (True, "passed")
    assert (echo["tokens"], echo["input_tokens"], echo["output_tokens"]) == (0, 0, 0)
    assert (echo["model"], echo["response_cached"], echo["cost"]) == ("echo", False, 0.0)


def test_promptfoo_v2_file_edge_cases() -> None:
    frame = PromptfooImporter().read(PROMPTFOO / "synthetic_v2.json")
    rows = rows_by(frame, "task", "run")
    assert set(frame["eval_id"]) == {"eval-synthetic-2024-05-01"}
    # One prompt in the file: the workflow is the provider alone (its label, else its id).
    assert set(frame["workflow"]) == {"openai:gpt-4o-mini", "claude"}
    buckets = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")

    def usage(task: str, run: str = "1") -> tuple[Any, ...]:
        row = rows[(task, run)]
        return (*(row[b] for b in buckets), row["tokens"])

    first = rows[("case 1", "1")]
    assert (first["passed"], first["status"], first["model"]) == (
        True,
        "passed",
        "openai:gpt-4o-mini",
    )
    assert usage("case 1") == (40, None, None, 10, 50)
    assert first["duration_s"] == 1.5
    assert first["timestamp"] == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert usage("case 1", "2") == (45, None, None, 15, 60)  # the repeat, run 2

    replay = rows[("case 2", "1")]
    # Replayed from promptfoo's response cache: its total once, its split unknown.
    assert (replay["passed"], replay["status"], replay["stop_reason"]) == (
        False,
        "failed",
        "assertion_failed",
    )
    assert replay["response_cached"] is True
    assert usage("case 2") == (None, None, None, None, 50)

    assert usage("case 3") == (300, 700, None, 100, 1100)  # `cached` inside `prompt`
    assert rows[("case 4", "1")]["status"] == "error"
    assert usage("case 4") == (None, None, None, None, None)
    assert rows[("case 4", "1")]["error_message"] == "API error 500: overloaded"
    timeout = rows[("case 5", "1")]
    assert (timeout["passed"], timeout["status"], timeout["stop_reason"]) == (
        False,
        "timeout",
        "timeout",
    )
    assert usage("case 5") == (None, None, None, None, None)
    no_asserts = rows[("case 6", "1")]
    assert (no_asserts["passed"], no_asserts["status"], no_asserts["stop_reason"]) == (
        None,
        "unset",
        "no_assertions",
    )
    assert ("lang=en; q=7+7", "1") in rows  # no description: the vars
    duplicates = sorted(task for task, _ in rows if task.startswith("dup"))
    assert len(duplicates) == 2 and all(task.startswith("dup #") for task in duplicates)
    assert usage("case 10") == (200, 800, None, 50, 1050)  # this prompt left the cache out
    assert usage("case 11") == (10, None, None, 5, 15)  # no total: prompt + completion
    graded = rows[("case 12", "1")]
    assert usage("case 12") == (500, 1000, 500, 50, 2050)
    assert (graded["grading_tokens"], graded["reasoning_tokens"]) == (300, 20)


def test_promptfoo_jsonl() -> None:
    path = PROMPTFOO / "results.jsonl"
    frame = PromptfooImporter().read(path)
    assert frame["line"].to_list() == [1, 2, 4]  # line 3 is blank
    assert frame["timestamp"].null_count() == 3 and frame["eval_id"].null_count() == 3
    full = PromptfooImporter().read(PROMPTFOO / "results.json")
    same = full.filter(pl.col("line") <= 3)
    # Within three results only one prompt per provider pair shows, so compare what is shared.
    assert frame["task"].to_list() == same["task"].to_list()
    assert frame["tokens"].to_list() == same["tokens"].to_list()


def test_promptfoo_malformed_files(tmp_path: Path) -> None:
    broken = tmp_path / "results.json"
    broken.write_text('{"evalId": "x", "results": ')
    with pytest.raises(ImporterError, match=r"results\.json: is not valid JSON"):
        PromptfooImporter().read(broken)

    write_json(broken, {"evalId": "x", "results": {"version": 3}})
    with pytest.raises(ImporterError, match="is not a promptfoo results file"):
        PromptfooImporter().read(broken)

    write_json(broken, {"evalId": "x", "results": {"results": [{"testIdx": 0}]}})
    with pytest.raises(ImporterError, match="result 1: is not a promptfoo result"):
        PromptfooImporter().read(broken)

    write_json(broken, {"evalId": "x", "results": {"results": []}})
    with pytest.raises(ImporterError, match="holds no promptfoo results"):
        PromptfooImporter().read(broken)

    result = {"testIdx": 0, "promptIdx": 0, "success": True, "tokenUsage": {"total": "many"}}
    write_json(broken, {"evalId": "x", "results": {"results": [result]}})
    with pytest.raises(ImporterError, match=r"result 1: tokenUsage\.total is 'many'"):
        PromptfooImporter().read(broken)

    lines = tmp_path / "results.jsonl"
    lines.write_text('{"testIdx": 0, "success": true}\n{"testIdx": 1,\n')
    with pytest.raises(ImporterError, match=r"results\.jsonl: line 2: is not valid JSON"):
        PromptfooImporter().read(lines)
    lines.write_text('{"testIdx": 0, "success": true}\n\n{"testIdx": 1}\n')
    with pytest.raises(ImporterError, match=r"results\.jsonl: line 3: is not a promptfoo result"):
        PromptfooImporter().read(lines)


def test_promptfoo_file_with_terminal_bench_words_in_its_vars(tmp_path: Path) -> None:
    document = json.loads((PROMPTFOO / "synthetic_v2.json").read_text())
    for result in document["results"]["results"]:
        result["vars"] = {"task_id": "x", "trial_name": "y"}
    path = write_json(tmp_path / "results.json", document)
    assert not TerminalBenchImporter().matches(path)
    importer = find_importer(path)
    assert importer is not None and importer.name == "promptfoo"


def test_promptfoo_matches(tmp_path: Path) -> None:
    importer = PromptfooImporter()
    assert importer.matches(PROMPTFOO / "results.json")
    assert importer.matches(PROMPTFOO / "results.jsonl")
    assert not importer.matches(INSPECT / "ledger_fixture.json")
    assert not importer.matches(TB_RUN / "results.json")
    assert not importer.matches(PROMPTFOO)
    assert not importer.matches(PROMPTFOO / "promptfooconfig.yaml")
    other = write_json(tmp_path / "other.json", {"results": [1, 2]})
    assert not importer.matches(other)
