"""Inspect AI: a log that kept no samples never stops the others, and says how many it ran; a log
stopped early says how many of its samples ran; a sample with an error is an error (issue 52).

The logs are generated from the synthetic fixture's header, as `inspect eval` writes them:
`--no-log-samples` leaves `results` (and `stats.model_usage` totals) but no `samples`; a
cancelled eval leaves `status: cancelled` and the samples it finished.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import write_json
from tui_ledger.cli import main
from tui_ledger.importers import ImporterError, InspectImporter

SYNTHETIC = Path(__file__).parent / "fixtures" / "importers" / "inspect" / "synthetic.json"


def log(
    samples: list[dict[str, Any]], *, status: str = "success", dataset: int = 2, epochs: int = 1
) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SYNTHETIC.read_text())
    document["status"] = status
    document["eval"]["dataset"]["samples"] = dataset
    document["eval"]["config"] = {"epochs": epochs}
    document["results"] = {"total_samples": dataset * epochs, "completed_samples": len(samples)}
    document["samples"] = samples
    return document


def sample(number: int, **more: Any) -> dict[str, Any]:
    usage = {"openai/gpt-4o": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}
    return {
        "id": number,
        "epoch": 1,
        "scores": {"verify": {"value": 1.0}},
        "model_usage": usage,
        **more,
    }


def without_samples(path: Path, ran: int) -> Path:
    document = log([], dataset=ran)
    document["results"] = {"total_samples": ran, "completed_samples": ran, "scores": []}
    document["stats"]["model_usage"] = {"openai/gpt-4o": {"input_tokens": 5000}}
    del document["samples"]
    return write_json(path, document)


def test_a_log_without_samples_never_stops_the_others(tmp_path: Path) -> None:
    write_json(tmp_path / "logs" / "a.json", log([sample(1), sample(2)]))
    without_samples(tmp_path / "logs" / "b.json", 5)
    imported = InspectImporter().read_imported(tmp_path / "logs")
    assert imported.frame.height == 2
    assert (
        "1 log kept no samples (written with --no-log-samples): b.json ran 5 samples, "
        "recorded only as totals; its samples are not attempts here"
    ) in imported.warnings


def test_a_log_alone_without_samples_says_how_many_it_ran(tmp_path: Path) -> None:
    file = without_samples(tmp_path / "b.json", 5)
    with pytest.raises(ImporterError) as caught:
        InspectImporter().read(file)
    message = str(caught.value)
    assert message.startswith(f"{file}: holds no samples: b.json ran 5 samples, recorded only")
    assert "\n" not in message


def test_a_cancelled_log_says_how_many_samples_ran(tmp_path: Path) -> None:
    errored = sample(3, error={"message": "RuntimeError: sandbox died", "traceback": "..."})
    del errored["scores"]
    file = write_json(
        tmp_path / "cancelled.json",
        log([sample(1), sample(2), errored], status="cancelled", dataset=100),
    )
    imported = InspectImporter().read_imported(file)
    rows = {row["sample"]: row for row in imported.frame.iter_rows(named=True)}
    assert len(rows) == 3
    assert (rows["3"]["status"], rows["3"]["passed"]) == ("error", None)
    assert rows["3"]["error_message"] == "RuntimeError: sandbox died"
    assert (
        "1 log stopped before every sample ran: cancelled.json ran 3 of its 100 samples "
        "(cancelled); the samples that never ran are not attempts"
    ) in imported.warnings


def test_a_finished_log_and_a_limited_eval_say_nothing(tmp_path: Path) -> None:
    file = write_json(tmp_path / "done.json", log([sample(1), sample(2)]))
    assert InspectImporter().read_imported(file).warnings == ()
    limited = log([sample(1)], status="cancelled", dataset=500)
    limited["results"] = None
    limited["eval"]["config"] = {"epochs": 1, "limit": 1}
    file = write_json(tmp_path / "limited.json", limited)
    assert InspectImporter().read_imported(file).warnings == ()  # --limit 1: all it chose ran


def test_check_names_the_log_that_kept_no_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_json(tmp_path / "logs" / "a.json", log([sample(1)]))
    without_samples(tmp_path / "logs" / "b.json", 7)
    main(["check", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    assert "b.json ran 7 samples, recorded only as totals" in out


def test_a_retried_log_counts_each_sample_once(tmp_path: Path) -> None:
    """`inspect eval-retry` keeps the samples the failed log completed, with their uuids."""
    first = [sample(1, uuid="u1"), sample(2, uuid="u2")]
    write_json(
        tmp_path / "logs" / "2025-03-01T12-00-00_task.json", log(first, status="error", dataset=3)
    )
    again = [sample(1, uuid="u1"), sample(2, uuid="u2"), sample(3, uuid="u3")]
    write_json(tmp_path / "logs" / "2025-03-01T13-00-00_task.json", log(again, dataset=3))
    imported = InspectImporter().read_imported(tmp_path / "logs")
    frame = imported.frame
    assert sorted(frame["sample_uuid"].to_list()) == ["u1", "u2", "u3"]
    assert set(frame["source"].map_elements(lambda s: Path(s).name, return_dtype=str)) == {
        "2025-03-01T13-00-00_task.json"
    }
    assert (
        "2 samples appeared in more than one log (a retry keeps the samples the failed log "
        "completed): each counted once, from the later log"
    ) in imported.warnings
    # Samples without a uuid are never merged.
    plain = [sample(1), sample(2)]
    write_json(tmp_path / "other" / "a.json", log(plain))
    write_json(tmp_path / "other" / "b.json", log(plain))
    assert InspectImporter().read(tmp_path / "other").height == 4


def test_an_eval_archive_without_samples_is_named_too(tmp_path: Path) -> None:
    """A `.eval` written with --no-log-samples: header.json and an empty summaries.json."""
    import zipfile

    header = log([], dataset=4)
    del header["samples"]
    header["results"] = {"total_samples": 4, "completed_samples": 4, "scores": []}
    (tmp_path / "logs").mkdir()
    with zipfile.ZipFile(tmp_path / "logs" / "b.eval", "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("summaries.json", "[]")
    write_json(tmp_path / "logs" / "a.json", log([sample(1)]))
    imported = InspectImporter().read_imported(tmp_path / "logs")
    assert imported.frame.height == 1
    assert any(
        "b.eval ran 4 samples, recorded only as totals" in text for text in imported.warnings
    )
