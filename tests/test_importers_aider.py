"""Aider benchmark runs: exercise files written by make_fixture.py, figures by hand.

- 2025-06-01-10-00-00--sonnet-diff: python/anagram passed on its second try (20000 + 1500,
  $0.05), python/bowling first try (8000 + 600, $0.02), rust/clock failed twice (30000 + 2500,
  $0.07), go/dominoes crashed (only an exception in the file).
- 2025-06-02-09-00-00--local-whole: an unpriced model (cost 0): python/anagram passed
  (5000 + 400), python/bowling an older file with no token counts, failed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import rows_by, write_json
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import AiderImporter, ImporterError, find_importer, get_importer
from tui_ledger.load import load

AIDER = Path(__file__).parent / "fixtures" / "importers" / "aider"
BENCHMARKS = AIDER / "tmp.benchmarks"
SONNET_RUN = BENCHMARKS / "2025-06-01-10-00-00--sonnet-diff"
LOCAL_RUN = BENCHMARKS / "2025-06-02-09-00-00--local-whole"
SONNET = "aider__anthropic/claude-sonnet-4-20250514__diff"
LOCAL = "aider__ollama/qwen2.5-coder:32b__whole"


def exercise(run: Path, language: str, name: str) -> Path:
    return run / language / "exercises" / "practice" / name / ".aider.results.json"


def test_aider_is_found_by_name_alias_and_content() -> None:
    for path in (AIDER, BENCHMARKS, SONNET_RUN, exercise(SONNET_RUN, "rust", "clock")):
        importer = find_importer(path)
        assert importer is not None and importer.name == "aider", path
    assert isinstance(get_importer("aider-benchmark"), AiderImporter)


def test_aider_run_every_field() -> None:
    imported = AiderImporter().read_imported(SONNET_RUN)
    rows = rows_by(imported.frame, "task")
    anagram = rows["python/anagram"]
    assert (anagram["workflow"], anagram["model"], anagram["edit_format"]) == (
        SONNET,
        "anthropic/claude-sonnet-4-20250514",
        "diff",
    )
    # Passed when any try passed; pass@1 kept apart.
    assert (anagram["passed"], anagram["status"], anagram["passed_first_try"]) == (
        True,
        "passed",
        False,
    )
    assert (anagram["input_tokens"], anagram["output_tokens"], anagram["tokens"]) == (
        20000,
        1500,
        21500,
    )
    assert (anagram["cost"], anagram["tries"], anagram["duration_s"]) == (0.05, 2, 30.5)
    assert anagram["thinking_budget"] == 4096  # a setting, never added to usage
    assert (anagram["language"], anagram["run"]) == ("python", SONNET_RUN.name)
    assert anagram["source"] == str(exercise(SONNET_RUN, "python", "anagram"))
    clock = rows["rust/clock"]
    assert (clock["passed"], clock["status"], clock["test_timeouts"]) == (False, "failed", 1)
    assert clock["malformed_responses"] == 2
    bowling = rows["python/bowling"]
    assert (bowling["passed"], bowling["passed_first_try"], bowling["tries"]) == (True, True, 1)
    crash = rows["go/dominoes"]
    # A crash is an error attempt in its run's workflow, with unknown usage.
    assert (crash["workflow"], crash["passed"], crash["status"]) == (SONNET, None, "error")
    assert crash["error_message"] == "litellm.APIConnectionError: Connection reset by peer"
    assert (crash["tokens"], crash["cost"]) == (None, None)
    assert imported.warnings == (
        "1 exercise crashed (a results file holding only an exception): outcome error, "
        "usage unknown",
    )
    assert "cached_input_tokens" not in imported.frame.columns


def test_unpriced_model_and_older_file_without_tokens() -> None:
    rows = rows_by(AiderImporter().read(LOCAL_RUN), "task")
    assert rows["python/anagram"]["cost"] is None  # cost 0 for 5400 tokens: no price known
    assert rows["python/anagram"]["tokens"] == 5400
    older = rows["python/bowling"]
    assert (older["tokens"], older["input_tokens"], older["cost"]) == (None, None, None)
    assert (older["passed"], older["status"]) == (False, "failed")


def test_aider_through_the_loader_gives_the_figures() -> None:
    keep = rows_by(compare(load([AIDER]).attempts).keep, "workflow")
    assert (keep[SONNET]["attempts"], keep[SONNET]["accepted"], keep[SONNET]["error"]) == (4, 2, 1)
    assert keep[SONNET]["total_tokens"] == 62600  # 21500 + 8600 + 32500; the crash unknown
    assert keep[SONNET]["tokens_per_accepted_result"] == 31300.0
    assert keep[SONNET]["lower_bound"] is True
    assert (keep[LOCAL]["attempts"], keep[LOCAL]["accepted"]) == (2, 1)
    assert keep[LOCAL]["total_tokens"] == 5400


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"tests_outcomes": "yes"}, "tests_outcomes is 'yes', not a list of true/false"),
        ({"prompt_tokens": "9"}, "prompt_tokens is '9', not a whole number"),
        ({"cost": "free"}, "cost is 'free', not a number"),
        ({"testcase": None}, "testcase is None, not an exercise name"),
    ],
)
def test_a_key_of_the_wrong_type_names_file_and_key(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    document = json.loads(exercise(SONNET_RUN, "rust", "clock").read_text()) | change
    file = write_json(exercise(tmp_path / "run", "rust", "clock"), document)
    with pytest.raises(ImporterError) as caught:
        AiderImporter().read(tmp_path / "run")
    message = str(caught.value)
    assert message.startswith(f"{file}: ") and problem in message
    assert "\n" not in message


def test_broken_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(SONNET_RUN, run)
    file = exercise(run, "python", "anagram")
    file.write_text(file.read_text()[:100])
    with pytest.raises(ImporterError, match=r"anagram/\.aider\.results\.json: is not valid JSON"):
        AiderImporter().read(run)
    write_json(file, [1, 2])
    with pytest.raises(ImporterError, match="is not an Aider results object"):
        AiderImporter().read(run)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImporterError, match=r"empty: holds no Aider \.aider\.results\.json"):
        AiderImporter().read(tmp_path / "empty")
