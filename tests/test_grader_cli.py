"""`ledger-tui grader`, `summary/check --accepted`, `check --fail-on tampering`, and the signals
`trace --format json` carries (the headless parts of issue 54)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.grader_fixtures import write_job
from tui_ledger.cli import main

QUICK, CAREFUL = "quick__openai/gpt-5", "careful__openai/gpt-5"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def job(tmp_path: Path) -> str:
    return str(write_job(tmp_path))


def test_grader_json_lists_flagged_attempts_health_and_both_figures(
    job: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "grader", job, "--format", "json")
    assert code == 0
    document = json.loads(out)
    flagged = {
        item["attempt"]["source"].split("/")[0]: [
            (signal["kind"], signal["step"]) for signal in item["signals"]
        ]
        for item in document["attempts"]
    }
    assert flagged == {
        "contradiction": [("verdict_contradiction", None)],
        "infra": [("infrastructure_error", None)],
        "lookup": [("answer_lookup", 2)],
        "never-acted": [("verdict_contradiction", None)],
        "tamper-reward": [("touched_grader", 3)],
        "tamper-sed": [("touched_grader", 3)],
    }
    first = document["attempts"][0]
    assert set(first["attempt"]) >= {"row", "workflow", "task", "outcome", "tokens", "source"}
    assert first["signals"][0]["evidence"].startswith("accepted, but the verdict lists 1 failed")
    assert document["tests_never_passed"] == []
    assert document["tasks_all_failed"] == [] and document["tasks_all_passed"] == []
    assert document["vouched"] == {
        CAREFUL: {
            "attempts": 4,
            "accepted_graded": 2,
            "accepted_vouched": 2,
            "tokens_per_accepted_result_graded": 1650,
            "tokens_per_accepted_result_vouched": 1650,
            "lower_bound_graded": False,
            "lower_bound_vouched": False,
        },
        QUICK: {
            "attempts": 6,
            "accepted_graded": 6,
            "accepted_vouched": 1,
            "tokens_per_accepted_result_graded": 1100,
            "tokens_per_accepted_result_vouched": 6600,
            "lower_bound_graded": False,
            "lower_bound_vouched": False,
        },
    }
    assert document["note"] is None and document["logs_read"] == 9


def test_grader_text_and_markdown(job: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "grader", job)
    assert code == 0
    assert "touched_grader (step 3): sed -i 's/assert parse(x) == 3/assert True/'" in out
    assert "render: 1 of 5 attempts (20%)" in out
    code, out, _ = _run(capsys, "grader", job, "--format", "md")
    assert (
        "| group | attempts | accepted as graded | accepted as vouched | per accepted, graded "
        "| per accepted, vouched |\n|---|---:|---:|---:|---:|---:|\n"
        "| careful__openai/gpt-5 | 4 | 2 | 2 | 1,650 | 1,650 |"
    ) in out
    code, out, _ = _run(capsys, "grader", job)
    table = out[out.index("Accepted as graded") :].splitlines()
    assert table[2:5] == [
        "group                  attempts  graded  vouched  graded  vouched",
        "careful__openai/gpt-5         4       2        2   1,650    1,650",
        "quick__openai/gpt-5           6       6        1   1,100    6,600",
    ]


def test_summary_accepted_vouched_reranks_and_says_so(
    job: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = _run(capsys, "summary", job, "--format", "json", "--intervals", "none")
    graded = json.loads(out)
    assert graded["accepted"] == "graded"
    assert graded["views"]["keep"][QUICK]["rank"] == 1
    _, out, _ = _run(
        capsys, "summary", job, "--format", "json", "--intervals", "none", "--accepted", "vouched"
    )
    vouched = json.loads(out)
    assert vouched["accepted"] == "vouched"
    assert vouched["views"]["keep"][QUICK]["accepted"] == 1
    assert vouched["views"]["keep"][QUICK]["total_tokens"] == 6600  # the tokens stay
    assert vouched["views"]["keep"][CAREFUL]["rank"] == 1
    assert vouched["views"]["keep"][QUICK]["rank"] == 2
    [notice] = [w for w in vouched["warnings"] if w["kind"] == "vouched"]
    assert notice["message"].startswith(
        "accepted as vouched: 5 accepted attempts the grader cannot vouch for count as failures"
    )


def test_check_fails_on_tampering(
    job: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "check", job, "--fail-on", "tampering")
    assert code == 1
    [line] = [line for line in out.splitlines() if line.startswith("fail-on")]
    assert line.startswith("fail-on tampering: 3 signal(s) on accepted attempts")
    assert "touched_grader at step 3" in line and "answer_lookup at step 2" in line
    code, out, _ = _run(capsys, "check", job, "--fail-on", "tampering", "--accepted", "vouched")
    assert code == 1 and "accepted as vouched: 5 accepted attempts" in out
    clean = tmp_path / "clean.csv"
    clean.write_text("workflow,task,passed,tokens\na,x,true,10\nb,x,false,20\n", encoding="utf-8")
    code, out, _ = _run(capsys, "check", str(clean), "--fail-on", "tampering")
    assert code == 0 and "fail-on: none of tampering holds" in out
    assert "tampering: no trajectories: signals from verdicts only" in out


def test_trace_json_carries_the_attempts_signals(
    job: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "trace", job, "--attempt", "source:tamper-sed", "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["signals"] == [
        {
            "kind": "touched_grader",
            "step": 3,
            "evidence": "sed -i 's/assert parse(x) == 3/assert True/' tests/test_parse.py",
        }
    ]
    assert document["steps"][2]["index"] == 3  # the step trace numbers 3
    _, out, _ = _run(capsys, "trace", job, "--attempt", "source:decoys-quick", "--format", "json")
    assert json.loads(out)["signals"] == []


def test_bad_input_is_one_line_and_exit_2(job: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "grader", job, "--by", "nope")
    assert code == 2 and out == ""
    assert err.startswith("ledger-tui: error: --by 'nope': no such column") and err.count("\n") == 1
    code, out, err = _run(capsys, "grader", "/no/such/file.csv")
    assert code == 2 and out == "" and err.count("\n") == 1


def test_the_demo_tells_it_vouched_moves_lean_loop_down(capsys: pytest.CaptureFixture[str]) -> None:
    demo = str(Path(__file__).resolve().parent.parent / "sample_data" / "demo.csv")
    _, out, _ = _run(capsys, "grader", demo, "--format", "json")
    document = json.loads(out)
    flagged = [
        (item["attempt"]["workflow"], item["attempt"]["outcome"], item["signals"][0]["kind"])
        for item in document["attempts"]
    ]
    assert len(flagged) == 6
    assert {workflow for workflow, _, _ in flagged} == {"lean-loop"}
    assert {outcome for _, outcome, _ in flagged} == {"passed"}
    assert sorted(kind for _, _, kind in flagged).count("touched_grader") == 4
    assert all(item["signals"][0]["step"] == 5 for item in document["attempts"])
    assert document["vouched"]["lean-loop"]["accepted_vouched"] == 24
    ranks = {}
    for accepted in ("graded", "vouched"):
        _, out, _ = _run(
            capsys,
            "summary",
            demo,
            "--format",
            "json",
            "--intervals",
            "none",
            "--accepted",
            accepted,
        )
        ranks[accepted] = json.loads(out)["views"]["keep"]["lean-loop"]["rank"]
    assert ranks == {"graded": 2, "vouched": 3}


def test_vouched_is_refused_on_spark_in_one_line(
    job: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("summary", "check"):
        code, out, err = _run(
            capsys, command, job, "--spark", "sc://nowhere", "--accepted", "vouched"
        )
        assert code == 2 and out == ""
        assert "--accepted vouched" in err and err.count("\n") == 1


def test_trace_text_and_markdown_end_with_the_signals(
    job: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = _run(capsys, "trace", job, "--attempt", "source:lookup")
    assert out.endswith(
        "\nGrader signals (ledger-tui grader):\n"
        "  answer_lookup (step 2): git log --all --oneline | grep fix\n"
    )
    _, out, _ = _run(capsys, "trace", job, "--attempt", "source:lookup", "--format", "md")
    assert out.endswith(
        "\n## Grader signals\n- answer_lookup (step 2): `git log --all --oneline | grep fix`\n"
    )
    _, out, _ = _run(capsys, "trace", job, "--attempt", "source:decoys-quick")
    assert "Grader signals" not in out
