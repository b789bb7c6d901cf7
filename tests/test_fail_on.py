"""`ledger-tui check --fail-on`: a CI gate that exits 1 on the conditions it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_ledger.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["check", *args])
    except SystemExit as stop:  # a usage error leaves through SystemExit(2)
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_flip_fails_on_the_articles_fixture(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check(capsys, str(SAMPLES / "runs.csv"), "--fail-on", "flip,noise")
    assert code == 1
    assert "fail-on flip: dropping failures changes the ranking: lean looks cheapest" in out
    assert "fail-on noise: the cheapest group is not decided: steady vs lean" in out


def test_no_flip_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "steady.csv"
    path.write_text(
        "workflow,task,tokens,passed\n"
        "a,t1,100,true\na,t2,100,false\nb,t1,300,true\nb,t2,300,false\n"
    )
    code, out, _ = _check(capsys, str(path), "--fail-on", "flip,not-recorded")
    assert code == 0
    assert "fail-on: none of flip, not-recorded holds" in out


def test_not_recorded_and_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "unrecorded.csv"
    path.write_text("workflow,task,tokens,passed\na,t1,100,true\nb,t1,,true\nb,t2,,false\n")
    code, out, _ = _check(capsys, str(path), "--fail-on", "not-recorded,warnings")
    assert code == 1
    assert "fail-on not-recorded: usage not recorded for b" in out
    assert "fail-on warnings:" in out


def test_the_demo_is_decided(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check(capsys, str(SAMPLES / "demo.csv"), "--fail-on", "noise")
    assert code == 0, out


def test_an_unknown_condition_exits_2_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _check(capsys, str(SAMPLES / "runs.csv"), "--fail-on", "flip,flap")
    assert code == 2
    assert out == ""
    assert err.strip().splitlines() == [
        "ledger-tui: error: --fail-on: unknown condition 'flap'; accepted: flip, warnings, "
        "not-recorded, noise, tampering"
    ]
