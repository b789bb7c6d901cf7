"""`ledger-tui trace`: one attempt found by `--row` or `--attempt`, read by its reader, printed
as text, JSON or markdown. The readers of real harnesses live elsewhere; here a tiny reader of
the tests' own (tests/trace_reader.py) opens the files a `trace` column names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tui_ledger import trajectory
from tui_ledger.cli import main
from tui_ledger.trajectory.render import markdown_inline

ESC = "\x1b"


@pytest.fixture(autouse=True)
def test_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(trajectory.READERS, "atif", "tests.trace_reader")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


STEPS: list[dict[str, Any]] = [
    {"source": "user", "text": "Fix the login.", "timestamp": "2024-05-01T12:00:00Z"},
    {
        "source": "agent",
        "text": "Looking at the files.\nThen the tests.",
        "tool_calls": [{"name": "bash", "arguments": '{"command": "ls"}'}],
        "input_tokens": 1000,
        "cached_input_tokens": 200,
        "output_tokens": 34,
        "timestamp": "2024-05-01T12:00:01Z",
    },
    {"source": "tool", "text": "", "observation": "login.py\ntests/"},
    {
        "source": "agent",
        "text": "Running the tests.",
        "tool_calls": [{"name": "bash", "arguments": '{"command": "pytest"}'}],
        "observation": "exit 1",
        "error": True,
        "tokens": 500,
        "agent": "helper",
        "kind": "api_error",
    },
]
STEPS_TOKENS = 1000 + 200 + 34 + 500  # 1,734


def write_trajectory(folder: Path, name: str, **fields: Any) -> None:
    document = {
        "instruction": "Fix the login form.",
        "tests": [
            {"name": "test_login", "result": "passed"},
            {"name": "test_logout", "result": "failed"},
        ],
        "output": "1 passed, 1 failed",
        "steps": STEPS,
        **fields,
    }
    (folder / name).write_text(json.dumps(document), encoding="utf-8")


def write_ledger(folder: Path, rows: list[str]) -> Path:
    ledger = folder / "ledger.csv"
    ledger.write_text("workflow,task,tokens,passed,run,trace\n" + "\n".join(rows) + "\n")
    return ledger


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """Row 1 adds up, row 2 differs, row 3 records no tokens per step, row 4 has no log, row 5
    a broken log; rows 1 and 2 share their task."""
    write_trajectory(tmp_path, "equal.json")
    write_trajectory(tmp_path, "differs.json")
    write_trajectory(
        tmp_path,
        "unrecorded.json",
        steps=[{"source": "agent", "text": "no usage here"}],
        notes=["the log keeps no usage per step"],
    )
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    return write_ledger(
        tmp_path,
        [
            f"lean,login,{STEPS_TOKENS},false,1,equal.json",
            "lean,login,1800,false,2,differs.json",
            "steady,signup,900,true,1,unrecorded.json",
            "steady,logout,700,true,1,",
            "steady,broken,10,true,1,broken.json",
        ],
    )


# --------------------------------------------------------------------------- choosing


def test_row_opens_that_attempt_as_json(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    code, out, err = run(capsys, "trace", str(ledger), "--row", "1", "--format", "json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    attempt = document["attempt"]
    assert attempt["row"] == 1
    assert (attempt["workflow"], attempt["task"], attempt["outcome"]) == ("lean", "login", "failed")
    assert attempt["tokens"] == STEPS_TOKENS
    assert attempt["source"] == str(ledger) and attempt["line"] == 2
    assert document["log"] == ["equal.json"]
    assert document["instruction"] == "Fix the login form."
    assert document["verdict"] == {
        "tests": [
            {"name": "test_login", "result": "passed"},
            {"name": "test_logout", "result": "failed"},
        ],
        "output": "1 passed, 1 failed",
    }
    steps = document["steps"]
    assert [step["index"] for step in steps] == [1, 2, 3, 4]
    assert [step["source"] for step in steps] == ["user", "agent", "tool", "agent"]
    assert steps[1]["tool_calls"] == [{"name": "bash", "arguments": '{"command": "ls"}'}]
    assert (steps[1]["input_tokens"], steps[1]["cached_input_tokens"]) == (1000, 200)
    assert steps[1]["cache_write_tokens"] is None and steps[1]["tokens"] == 1234
    assert steps[0]["tokens"] is None and "agent" not in steps[0] and "kind" not in steps[0]
    assert (steps[3]["error"], steps[3]["agent"], steps[3]["kind"]) == (True, "helper", "api_error")
    assert document["steps_tokens"] == STEPS_TOKENS
    assert (document["tokens_match"], document["tokens_difference"]) == ("equal", 0)
    assert document["looked_for"] == [] and document["notes"] == []


def test_attempt_filter_matching_one(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    code, out, _ = run(capsys, "trace", str(ledger), "--attempt", "task:login run=2")
    assert code == 0
    assert out.startswith("Attempt 2 in the ledger\n")
    assert "differs.json" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--attempt", "task:nothing"], "no attempt matches 'task:nothing' among 5 attempts"),
        (
            ["--attempt", "task:login"],
            "2 attempts match 'task:login'; narrow the filter (add run:...) or use --row N "
            "(rows 1, 2)",
        ),
        (["--attempt", "steady"], "3 attempts match 'steady'; narrow the filter (add task:...)"),
        (["--row", "6"], "--row 6: the ledger has 5 attempts; give 1 to 5"),
        (["--row", "0"], "--row 0: the ledger has 5 attempts"),
        (["--attempt", "tokens>abc"], "--attempt: "),
    ],
)
def test_no_single_attempt_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], ledger: Path, argv: list[str], expected: str
) -> None:
    code, out, err = run(capsys, "trace", str(ledger), *argv)
    assert (code, out) == (2, "")
    assert err.startswith("ledger-tui: error: ")
    assert expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_identical_matches_point_at_row(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ledger = write_ledger(tmp_path, [f"lean,t,1,true,1,{i}.json" for i in range(8)])
    code, _, err = run(capsys, "trace", str(ledger), "--attempt", "lean")
    assert code == 2
    # The file has no model column: the line does not name one.
    assert "8 attempts match 'lean'; they share their workflow, task, run" in err
    assert "(rows 1, 2, 3, 4, 5 and 3 more)" in err


def test_row_and_attempt_exclude_each_other(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, _, err = run(capsys, "trace", str(ledger), "--row", "1", "--attempt", "lean")
    assert code == 2 and "not allowed with" in err
    code, _, err = run(capsys, "trace", str(ledger))
    assert code == 2 and "one of the arguments --attempt --row is required" in err


# --------------------------------------------------------------------------- renderings


def test_text_shows_header_verdict_instruction_steps_and_tokens(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, _ = run(capsys, "trace", str(ledger), "--row", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Attempt 1 in the ledger"
    assert "  workflow  lean" in lines and "  outcome   failed" in lines
    assert "  tokens    1,734" in lines
    assert f"  source    {ledger}, line 2" in lines
    assert "  log       equal.json" in lines
    assert "Verdict: 1 of 2 tests passed" in lines
    assert "  ✔ test_login" in lines and "  ✘ test_logout" in lines
    assert "    1 passed, 1 failed" in lines
    assert lines[lines.index("Instruction:") + 1] == "  Fix the login form."
    assert "Steps: 4" in lines
    assert "Step 1 · user · tokens not recorded · 2024-05-01T12:00:00Z" in lines
    assert (
        "Step 2 · agent · 1,234 tokens (input 1,000 · cached input 200 · output 34) · "
        "total 1,234 · 2024-05-01T12:00:01Z"
    ) in lines
    assert "    Looking at the files." in lines and "    Then the tests." in lines
    assert '    → bash {"command": "ls"}' in lines
    assert "    ← login.py" in lines and "        tests/" in lines
    assert "Step 4 · agent (helper) · api_error · 500 tokens · total 1,734 · ✘ error" in lines
    assert lines[-1] == "Tokens: steps add up to the attempt's 1,734 tokens"


def test_tokens_that_differ(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "2")
    assert "Tokens: steps: 1,734, the ledger: 1,800 (differs by -66)" in out
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "2", "--format", "json")
    document = json.loads(out)
    assert (document["tokens_match"], document["tokens_difference"]) == ("differs", -66)
    assert document["steps_tokens"] == STEPS_TOKENS


def test_tokens_not_recorded_per_step(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "3")
    assert "Tokens: not recorded per step (the ledger: 900)" in out
    assert "Note: the log keeps no usage per step" in out
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "3", "--format", "json")
    document = json.loads(out)
    assert document["tokens_match"] == "not recorded per step"
    assert document["tokens_difference"] is None and document["steps_tokens"] is None
    assert document["notes"] == ["the log keeps no usage per step"]


def test_a_row_with_no_log(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    code, out, err = run(capsys, "trace", str(ledger), "--row", "4", "--format", "json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["steps"] == [] and document["log"] == []
    assert document["tokens_match"] == "not recorded per step"
    assert any(str(ledger) in looked for looked in document["looked_for"])
    assert document["attempt"]["task"] == "logout"

    code, out, _ = run(capsys, "trace", str(ledger), "--row", "4")
    assert code == 0
    said = [line for line in out.splitlines() if line.startswith("No steps")]
    assert said == [
        "No steps: looked for a `trace` column naming a trajectory file; "
        f"a harness log beside {ledger}"
    ]
    assert "  task      logout" in out and "  tokens    700" in out
    assert "  passed  true" in out  # the row's other fields

    code, out, _ = run(capsys, "trace", str(ledger), "--row", "4", "--format", "md")
    assert code == 0 and "No steps: looked for" in out and "| passed | true |" in out


def test_a_broken_log_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, err = run(capsys, "trace", str(ledger), "--attempt", "task:broken")
    assert (code, out) == (2, "")
    assert err == "ledger-tui: error: broken.json: not a trajectory (JSONDecodeError)\n"


def test_markdown(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    code, out, _ = run(capsys, "trace", str(ledger), "--row", "1", "--format", "md")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "## Attempt 1: lean · login"
    assert "| tokens | 1,734 |" in lines and "| log | equal.json |" in lines
    assert "- ✔ test\\_login" in lines and "- ✘ test\\_logout" in lines
    assert (
        "#### Step 4 · agent (helper) · api\\_error · 500 tokens · total 1,734 · ✘ error" in lines
    )
    assert "**→ bash**" in lines and "**← observation**" in lines
    assert "```text" in lines
    assert "steps add up to the attempt's 1,734 tokens" in lines


def test_markdown_fences_outlast_the_logs_backticks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = "before\n```\n# not a heading\n<script>alert(1)</script>\n````\nafter"
    write_trajectory(tmp_path, "t.json", steps=[{"source": "agent", "text": text}])
    ledger = write_ledger(tmp_path, ["a|b,*t*,5,true,1,t.json"])
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "1", "--format", "md")
    lines = out.splitlines()
    start = lines.index("`````text")
    assert lines[start + 1 : start + 8] == [*text.split("\n"), "`````"]
    assert lines[0] == "## Attempt 1: a\\|b · \\*t\\*"


def test_escape_sequences_never_reach_the_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evil = f"{ESC}]52;c;cGF5bG9hZA=={ESC}\\{ESC}[2J\x9b31m\u202eevil\r\x07"
    write_trajectory(
        tmp_path,
        "evil.json",
        instruction=f"do {evil}",
        tests=[{"name": f"test {evil}", "result": "failed"}],
        output=evil,
        notes=[evil],
        steps=[
            {
                "source": "agent",
                "text": evil,
                "tool_calls": [{"name": evil, "arguments": evil}],
                "observation": evil,
                "timestamp": evil,
                "kind": evil,
                "agent": evil,
                "tokens": 5,
            }
        ],
    )
    ledger = write_ledger(tmp_path, [f"lean{ESC}[31m,t,5,true,1,evil.json"])
    for fmt in ("text", "md", "json"):
        code, out, _ = run(capsys, "trace", str(ledger), "--row", "1", "--format", fmt)
        assert code == 0
        for unsafe in (ESC, "\x9b", "\u202e", "\r", "\x07"):
            assert unsafe not in out, (fmt, unsafe)
        if fmt == "json":
            document = json.loads(out)
            assert document["steps"][0]["text"] == evil  # exact, only escaped for the terminal
            assert document["attempt"]["workflow"] == f"lean{ESC}[31m"
        else:
            assert "\\x1b]52;c;" in out and "<U+202E>evil" in out


def test_markdown_inline_escapes_what_markdown_acts_on() -> None:
    assert markdown_inline("a_b *c* [x](y) <b> | `d` & ~e~ #") == (
        "a\\_b \\*c\\* \\[x\\](y) \\<b\\> \\| \\`d\\` \\& \\~e\\~ \\#"
    )
    assert markdown_inline(f"{ESC}[1m") == "\\\\x1b\\[1m"


def test_help_names_trace(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "trace" in out
    code, out, _ = run(capsys, "trace", "--help")
    assert code == 0
    for option in ("--attempt", "--row", "--format", "--col", "--input-format", "--prices"):
        assert option in out


def test_typed_fields_read_as_everywhere_else(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import datetime as dt

    import polars as pl

    write_trajectory(
        tmp_path, "t.json", tests=[{"name": "flaky", "result": "skipped"}], output=None
    )
    pl.DataFrame(
        {
            "workflow": ["lean"],
            "tokens": [1300],
            "input_tokens": [1000],
            "output_tokens": [300],
            "passed": [True],
            "cost": [0.0123],
            "duration_s": [3.5],
            "timestamp": [dt.datetime(2024, 5, 1, 12, 30)],
            "trace": ["t.json"],
        }
    ).write_parquet(tmp_path / "runs.parquet")
    ledger = str(tmp_path / "runs.parquet")
    _, out, _ = run(capsys, "trace", ledger, "--row", "1", "--format", "json")
    attempt = json.loads(out)["attempt"]
    assert attempt["timestamp"] == "2024-05-01T12:30:00"
    assert (attempt["cost"], attempt["duration_s"]) == (0.0123, 3.5)
    assert (attempt["input_tokens"], attempt["output_tokens"]) == (1000, 300)
    assert "task" not in attempt and "cached_input_tokens" not in attempt
    _, out, _ = run(capsys, "trace", ledger, "--row", "1")
    lines = out.splitlines()
    assert "  tokens     1,300 (input 1,000 · output 300)" in lines
    assert "  cost       $0.012" in lines and "  duration   3.5 s" in lines
    assert "  timestamp  2024-05-01T12:30:00" in lines
    assert "Verdict: 0 of 1 test passed" in lines and "  ○ flaky (skipped)" in lines
    assert "Tokens: steps: 1,734, the ledger: 1,300 (differs by +434)" in lines


def test_trace_imports_no_textual(tmp_path: Path) -> None:
    import subprocess
    import sys

    ledger = write_ledger(tmp_path, ["lean,t,1,true,1,"])
    code = (
        "import sys; from tui_ledger.cli import main;"
        "main(['trace', sys.argv[1], '--row', '1']);"
        "loaded = any(m.startswith('textual') for m in sys.modules);"
        "print('TEXTUAL' if loaded else 'CLEAN', file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(ledger)], capture_output=True, text=True, check=True
    )
    assert result.stderr.strip().endswith("CLEAN")
    assert "No steps: looked for" in result.stdout


def test_steps_with_tokens_against_a_ledger_without(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_trajectory(tmp_path, "t.json")
    ledger = write_ledger(tmp_path, ["lean,t,,false,1,t.json"])
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "1")
    assert "  tokens    not recorded" in out.splitlines()
    assert out.splitlines()[-1] == "Tokens: steps: 1,734, the ledger: not recorded"
    _, out, _ = run(capsys, "trace", str(ledger), "--row", "1", "--format", "json")
    document = json.loads(out)
    assert document["attempt"]["tokens"] is None
    assert (document["tokens_match"], document["tokens_difference"]) == ("differs", None)


def test_a_rows_other_fields_are_cut_and_safe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ledger = tmp_path / "wide.csv"
    ledger.write_text(f"workflow,tokens,passed,notes\nlean,5,true,{ESC}[2J{'x' * 5000}\n")
    code, out, _ = run(capsys, "trace", str(ledger), "--row", "1")
    assert code == 0 and ESC not in out
    (line,) = [line for line in out.splitlines() if line.startswith("  notes")]
    assert line.startswith("  notes   \\x1b[2Jxxx") and line.endswith("…")
    assert len(line) < 320


def test_a_harness_folder_opened_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader names a harness's files below the folder opened (`run/task/trial/...`), no
    path from the working directory: the reader is still handed one it can open."""
    monkeypatch.setitem(trajectory.READERS, "terminal-bench", "tests.trace_reader")
    submission = tmp_path / "submission"
    trial = submission / "run-1" / "fix-git" / "fix-git.1-of-1.run-1"
    trial.mkdir(parents=True)
    record = {
        "id": "a1",
        "trial_name": trial.name,
        "task_id": "fix-git",
        "is_resolved": False,
        "failure_mode": "unset",
        "total_input_tokens": 1234,
        "total_output_tokens": 500,
    }
    (trial / "results.json").write_text(json.dumps(record))
    run_file = {"id": "run-1", "results": [record], "n_resolved": 0}
    (submission / "run-1" / "results.json").write_text(json.dumps(run_file))
    write_trajectory(trial, "trace.json")
    monkeypatch.chdir(tmp_path / "submission" / "run-1" / "fix-git")  # anywhere but above it
    code, out, err = run(capsys, "trace", str(submission), "--row", "1", "--format", "json")
    assert (code, err) == (0, ""), err
    document = json.loads(out)
    assert document["attempt"]["source"] == str(trial / "results.json")
    assert document["attempt"]["task"] == "fix-git"
    assert len(document["steps"]) == 4
    assert document["tokens_match"] == "equal"
