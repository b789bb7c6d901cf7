"""What the SWE-bench and OpenHands readers share: a JSON object or none, a litellm usage
counted as the importers count it, and the SWE-bench harness's tests by name. Files are read
through `trajectory.files`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.model import Test, TrajectoryError
from tui_ledger.trajectory.text import token_count

TEST_GROUPS = ("FAIL_TO_PASS", "PASS_TO_PASS")


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a key the log left out)."""
    return value if isinstance(value, dict) else {}


def count(value: Any, path: Path, where: str) -> int | None:
    """A token count at `where` in the file `path` (`text.token_count`)."""
    return token_count(value, f"{path}: {where}")


def litellm_buckets(
    usage: Mapping[str, Any], path: Path, where: str
) -> tuple[int | None, int | None, int | None, int | None]:
    """(input, cached input, cache write, output) of one litellm usage, as the importers count
    it: litellm's prompt_tokens includes cache reads and (Anthropic) writes, so the uncached
    input is prompt - reads - writes (the prompt as it is when smaller than its cache counts).
    """
    prompt = count(usage.get("prompt_tokens"), path, f"{where}.prompt_tokens")
    completion = count(usage.get("completion_tokens"), path, f"{where}.completion_tokens")
    details = usage.get("prompt_tokens_details")
    reads = details.get("cached_tokens") if isinstance(details, dict) else None
    if reads is None:
        reads = usage.get("cache_read_input_tokens")
    writes = usage.get("cache_creation_input_tokens")
    read = count(reads, path, f"{where}.cached_tokens") or 0
    written = count(writes, path, f"{where}.cache_creation_input_tokens") or 0
    if prompt is None and completion is None:
        return None, None, None, None  # a usage object with no counts records nothing
    if prompt is None:
        return None, read, written, completion
    cache = read + written
    uncached = prompt - cache if prompt >= cache else prompt
    return uncached, read, written, completion


def report_tests(
    entry: Mapping[str, Any], where: Path | str, *, strict: bool = True
) -> tuple[Test, ...]:
    """The tests a SWE-bench harness report entry names (`tests_status`): FAIL_TO_PASS then
    PASS_TO_PASS, each passed or failed as listed. A shape the harness does not write is a
    `TrajectoryError` at `where`; where not `strict`, a status or group of another shape is
    passed over (OpenHands' own records), a list of names of another shape never is."""
    status = entry.get("tests_status")
    if status is None or (not strict and not isinstance(status, dict)):
        return ()
    if not isinstance(status, dict):
        raise TrajectoryError(f"{where}: tests_status is not an object")
    tests: list[Test] = []
    for group in TEST_GROUPS:
        lists = status.get(group)
        if lists is None or (not strict and not isinstance(lists, dict)):
            continue
        if not isinstance(lists, dict):
            raise TrajectoryError(f"{where}: tests_status.{group} is not an object")
        for key, result in (("success", "passed"), ("failure", "failed")):
            names = lists.get(key) or []
            if not isinstance(names, list):
                raise TrajectoryError(f"{where}: tests_status.{group}.{key} is not a list")
            tests.extend(Test(name=_test_name(name), result=result) for name in names)
    return tuple(tests)


def _test_name(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
