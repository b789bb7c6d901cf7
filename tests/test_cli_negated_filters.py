"""A filter option's value may start with `-`, the filter language's negation (issue 52,
item 3): `--where -failed` is `--where=-failed`, for every option that takes a filter
(`cli_options.FILTER_OPTIONS`), and a real option after it still parses."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.test_importers_wiring import run
from tui_ledger.cli_options import FILTER_OPTIONS, filter_values_joined
from tui_ledger.cli_trace import trace_parser
from tui_ledger.headless.check import check_parser as _check_parser
from tui_ledger.headless.convert import convert_parser as _convert_parser
from tui_ledger.headless.summary import summary_parser as _summary_parser


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    path = tmp_path / "runs.csv"
    path.write_text(
        "workflow,task,passed,tokens\na,x,true,10\na,y,false,20\nb,x,false,30\nb,y,true,40\n"
    )
    return str(path)


def summary(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    code, out, err = run(["summary", *argv, "--format", "json", "--intervals", "none"], capsys)
    assert code == 0, err
    return {name: row["attempts"] for name, row in json.loads(out).items()}


def test_summary_where_reads_a_negated_filter(
    ledger: str, capsys: pytest.CaptureFixture[str]
) -> None:
    joined = summary([ledger, "--view", "keep", "--where=-failed"], capsys)
    assert joined == {"a": 1, "b": 1}  # the failed attempts left out
    assert summary([ledger, "--view", "keep", "--where", "-failed"], capsys) == joined
    # a real option after the value still parses
    by_task = summary([ledger, "--view", "keep", "--where", "-failed", "--by", "task"], capsys)
    assert by_task == {"x": 1, "y": 1}
    # argparse's abbreviation of --where too
    assert summary([ledger, "--view", "keep", "--wher", "-task:x"], capsys) == {"a": 1, "b": 1}


def test_check_where_reads_a_negated_filter(
    ledger: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["check", ledger, "--where", "-task:x"], capsys)
    assert code == 0, err
    assert "Checks for 2 attempts in 2 groups (by workflow):" in out


def test_convert_where_reads_a_negated_filter(
    ledger: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Locally convert says --where needs --spark: the value was read, not taken for an option."""
    out_file = tmp_path / "out.csv"
    code, _, err = run(["convert", ledger, "-o", str(out_file), "--where", "-failed"], capsys)
    assert code == 2
    assert "convert --where needs --spark" in err
    assert not out_file.exists()


def test_trace_attempt_reads_a_negated_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "two.csv"
    path.write_text("workflow,task,passed,tokens\na,x,true,10\nb,y,false,20\n")
    code, out, err = run(["trace", str(path), "--attempt", "-task:x"], capsys)
    assert code == 0, err
    assert out.startswith("Attempt 2 in the ledger")


def test_a_forgotten_filter_is_still_said(ledger: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--where --by task`: the filter was left out; the option after it is not taken for it."""
    code, _, err = run(["summary", ledger, "--where", "--by", "task"], capsys)
    assert code == 2
    assert "argument --where: expected one argument" in err


def test_arguments_after_a_double_dash_are_left_alone() -> None:
    parser = _summary_parser()
    argv = ["--by", "task", "--", "--where", "-failed"]
    assert filter_values_joined(parser, argv) == argv
    assert filter_values_joined(parser, ["f", "--where", "-a", "--where", "-b"]) == [
        "f",
        "--where=-a",
        "--where=-b",
    ]


@pytest.mark.parametrize(
    "parser", [_summary_parser(), _check_parser(), _convert_parser(), trace_parser()]
)
def test_every_option_taking_a_filter_is_known(parser: argparse.ArgumentParser) -> None:
    """An option whose help names the filter language is in FILTER_OPTIONS (so a new one
    cannot miss the joining)."""
    for action in parser._actions:
        help_text = (action.help or "") + (action.metavar or "")
        if "filter" in help_text.lower():
            assert set(action.option_strings) & set(FILTER_OPTIONS), action.option_strings
