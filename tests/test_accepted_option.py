"""`--accepted graded|vouched` reaches the interactive app and every served tab (issue 54): the
app's command line reads it, `run_app` hands it on, and `app_argv` (what `serve` runs per tab)
writes it back; Spark refuses vouched in one line."""

from __future__ import annotations

from typing import Any

import pytest

from tui_ledger import cli
from tui_ledger.cli_options import app_argv
from tui_ledger.tui.serve import serve


@pytest.mark.core
def test_the_app_reads_accepted_and_app_argv_writes_it_back() -> None:
    vouched = cli._app_parser().parse_args(["runs.csv", "--accepted", "vouched"])
    graded = cli._app_parser().parse_args(["runs.csv"])
    assert (vouched.accepted, graded.accepted) == ("vouched", "graded")
    assert app_argv(vouched)[-2:] == ["--accepted", "vouched"]
    assert "--accepted" not in app_argv(graded)  # the default says nothing


def test_a_served_tab_opens_as_vouched_when_serve_was_asked(tmp_path: Any) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,tokens,passed\na,10,true\n", encoding="utf-8")
    args = serve._serve_parser().parse_args([str(ledger), "--accepted", "vouched"])
    argv = serve.session_argv(args)
    assert argv[-2:] == ["--accepted", "vouched"]


@pytest.mark.core
def test_run_app_hands_accepted_to_the_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,tokens,passed\na,10,true\n", encoding="utf-8")
    seen: dict[str, Any] = {}

    def fake_run(paths: list[str], **options: Any) -> int:
        seen.update(options)
        return 0

    import tui_ledger.tui.run as run

    monkeypatch.setattr(run, "run_app", fake_run)
    assert cli.run_app([str(ledger), "--accepted", "vouched"]) == 0
    assert seen["accepted"] == "vouched"


@pytest.mark.core
def test_spark_refuses_vouched_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--spark", "sc://127.0.0.1:1", "runs.csv", "--accepted", "vouched"])
    code = exit_.value.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--accepted vouched" in err
