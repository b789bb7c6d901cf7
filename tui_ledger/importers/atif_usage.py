"""ATIF files (Agent Trajectory Interchange Format, Harbor's `agent/trajectory.json`): reading
one, and its token counts as the ledger's buckets.

One rule for both readers of these counts: the Harbor importer (usage a trial's result.json
lost) and the trajectory reader (`trajectory/atif.py`, each step's tokens). The trajectory
package imports this module, never the other way round.

Buckets (ATIF RFC 0001, MetricsSchema): `prompt_tokens` counts every input token, the cache
hits (`cached_tokens`) included, so input_tokens = prompt_tokens - cached_tokens,
cached_input_tokens = cached_tokens, output_tokens = completion_tokens (reasoning inside).
Cache writes are recorded only in `metrics.extra.cache_creation_input_tokens` (Anthropic, via
Harbor's Claude Code agent). They are part of `prompt_tokens` as the RFC defines it (Harbor's
Claude Code agent adds them in since late 2025) and are then taken out of input_tokens. Older
Harbor Claude Code files left them out of `prompt_tokens`, which shows as a step with more
writes than uncached prompt tokens; one such step is enough (one producer wrote the whole
file): every write in that file is read as outside the prompt and added on its own.
A count the file does not record stays None, never 0 and never estimated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUPPORTED = "ATIF-v1."
CACHE_WRITE_KEY = "cache_creation_input_tokens"
TOTAL_CACHE_WRITE_KEY = "total_cache_creation_input_tokens"
# A continuation chain (`continued_trajectory_ref`) longer than this is read as a loop.
MAX_CONTINUATIONS = 1000
_BINARY_PEEK = 8192


class AtifError(ValueError):
    """An ATIF file that cannot be read: `str()` is one line (the file, what is wrong)."""


@dataclass(frozen=True)
class Buckets:
    """Token counts in the ledger's buckets; None where the file records none."""

    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    writes_outside_prompt: bool = False
    """The cache writes exceed the uncached prompt: read as left out of `prompt_tokens`."""
    cache_outside_prompt: bool = False
    """The cache hits exceed `prompt_tokens`: read as left out of it (against the RFC)."""

    @property
    def tokens(self) -> int | None:
        """The sum of the buckets recorded; None when none is."""
        recorded = [
            value
            for value in (
                self.input_tokens,
                self.cached_input_tokens,
                self.cache_write_tokens,
                self.output_tokens,
            )
            if value is not None
        ]
        return sum(recorded) if recorded else None

    @property
    def recorded(self) -> bool:
        return self.tokens is not None


def buckets(
    prompt: int | None,
    cached: int | None,
    completion: int | None,
    writes: int | None,
    *,
    writes_in_prompt: bool = True,
) -> Buckets:
    """ATIF's counts (prompt including the cache hits) as the ledger's buckets; the writes
    taken out of the uncached prompt when `writes_in_prompt` and they fit in it."""
    uncached = prompt
    writes_outside = cache_outside = False
    if prompt is not None:
        if cached is not None and cached <= prompt:
            uncached = prompt - cached
        elif cached is not None:
            cache_outside = True
        if writes is not None and uncached is not None:
            if writes_in_prompt and writes <= uncached:
                uncached -= writes
            else:
                writes_outside = True
    return Buckets(uncached, cached, writes, completion, writes_outside, cache_outside)


def count(value: Any, where: str) -> int | None:
    """A token count: a whole number >= 0, or None; anything else raises AtifError."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise AtifError(f"{where} is {shown(value)}, not a whole number of tokens")
    if value < 0:
        raise AtifError(f"{where} is {value}, a negative number of tokens")
    return value


def step_buckets(metrics: Any, where: str, *, writes_in_prompt: bool = True) -> Buckets:
    """One step's `metrics` object as buckets (an empty Buckets when it has none)."""
    if metrics is None:
        return Buckets()
    if not isinstance(metrics, dict):
        raise AtifError(f"{where}.metrics is {shown(metrics)}, not an object")
    extra = metrics.get("extra")
    writes = None
    if isinstance(extra, dict):
        writes = count(extra.get(CACHE_WRITE_KEY), f"{where}.metrics.extra.{CACHE_WRITE_KEY}")
    return buckets(
        count(metrics.get("prompt_tokens"), f"{where}.metrics.prompt_tokens"),
        count(metrics.get("cached_tokens"), f"{where}.metrics.cached_tokens"),
        count(metrics.get("completion_tokens"), f"{where}.metrics.completion_tokens"),
        writes,
        writes_in_prompt=writes_in_prompt,
    )


def final_buckets(document: Mapping[str, Any], *, writes_in_prompt: bool = True) -> Buckets:
    """The file's `final_metrics` totals as buckets (empty when it records no token total)."""
    final = document.get("final_metrics")
    if final is None:
        return Buckets()
    if not isinstance(final, dict):
        raise AtifError(f"final_metrics is {shown(final)}, not an object")
    extra = final.get("extra")
    writes = None
    if isinstance(extra, dict):
        writes = count(
            extra.get(TOTAL_CACHE_WRITE_KEY), f"final_metrics.extra.{TOTAL_CACHE_WRITE_KEY}"
        )
    prompt = count(final.get("total_prompt_tokens"), "final_metrics.total_prompt_tokens")
    completion = count(
        final.get("total_completion_tokens"), "final_metrics.total_completion_tokens"
    )
    if prompt is None and completion is None:
        return Buckets()
    cached = count(final.get("total_cached_tokens"), "final_metrics.total_cached_tokens")
    return buckets(prompt, cached, completion, writes, writes_in_prompt=writes_in_prompt)


def final_cost(document: Mapping[str, Any]) -> float | None:
    final = document.get("final_metrics")
    if not isinstance(final, dict):
        return None
    cost = final.get("total_cost_usd")
    if isinstance(cost, bool) or not isinstance(cost, (int, float)):
        return None
    return float(cost)


def added(total: Buckets, more: Buckets) -> Buckets:
    """Two sets of buckets added bucket by bucket (None + None stays None)."""

    def plus(a: int | None, b: int | None) -> int | None:
        return b if a is None else a if b is None else a + b

    return Buckets(
        plus(total.input_tokens, more.input_tokens),
        plus(total.cached_input_tokens, more.cached_input_tokens),
        plus(total.cache_write_tokens, more.cache_write_tokens),
        plus(total.output_tokens, more.output_tokens),
        total.writes_outside_prompt or more.writes_outside_prompt,
        total.cache_outside_prompt or more.cache_outside_prompt,
    )


def steps_of(document: Mapping[str, Any]) -> list[Any]:
    steps = document.get("steps")
    if not isinstance(steps, list):
        raise AtifError(f"steps is {shown(steps)}, not a list of steps")
    return steps


def writes_in_prompt(document: Mapping[str, Any]) -> bool:
    """Whether the file counts its cache writes inside `prompt_tokens` (the RFC's reading):
    False once one step (or final_metrics) records more writes than its uncached prompt."""
    places: list[tuple[Any, str, str, str]] = [
        (step.get("metrics"), "prompt_tokens", "cached_tokens", CACHE_WRITE_KEY)
        for step in steps_of(document)
        if isinstance(step, dict)
    ]
    places.append(
        (
            document.get("final_metrics"),
            "total_prompt_tokens",
            "total_cached_tokens",
            TOTAL_CACHE_WRITE_KEY,
        )
    )
    for metrics, prompt_key, cached_key, writes_key in places:
        if not isinstance(metrics, dict) or not isinstance(metrics.get("extra"), dict):
            continue
        prompt, cached = _whole(metrics.get(prompt_key)), _whole(metrics.get(cached_key) or 0)
        writes = _whole(metrics["extra"].get(writes_key))
        if prompt is None or cached is None or writes is None:
            continue
        if cached <= prompt and writes > prompt - cached:
            return False
    return True


def steps_buckets(document: Mapping[str, Any], *, skip_copied: bool) -> Buckets:
    """The steps' metrics added up (copied-context steps left out when `skip_copied`)."""
    inside = writes_in_prompt(document)
    total = Buckets()
    for number, step in enumerate(steps_of(document), start=1):
        if not isinstance(step, dict):
            raise AtifError(f"step {number} is {shown(step)}, not an object")
        if skip_copied and step.get("is_copied_context") is True:
            continue
        counts = step_buckets(step.get("metrics"), f"step {number}", writes_in_prompt=inside)
        total = added(total, counts)
    return total


def read_document(path: Path) -> dict[str, Any]:
    """An ATIF file parsed (once; the text is dropped after). Raises AtifError naming it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AtifError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AtifError(f"{path}: is a folder, not an ATIF trajectory file") from None
    except PermissionError:
        raise AtifError(f"{path}: cannot be read (permission denied)") from None
    except OSError as error:
        raise AtifError(f"{path}: cannot be read ({error.strerror or error})") from None
    if b"\x00" in data[:_BINARY_PEEK]:
        raise AtifError(f"{path}: is a binary file, not an ATIF trajectory (JSON)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise AtifError(
            f"{path}: is not UTF-8 text (byte {error.start}), not an ATIF trajectory"
        ) from None
    del data
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        if not text.strip():
            raise AtifError(f"{path}: is empty, not an ATIF trajectory") from None
        # A string still open at the end, or a value or bracket missing there: cut off.
        if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
            raise AtifError(
                f"{path}: is cut off mid-file (the JSON ends at line {error.lineno} before it "
                "closes); the run may still be writing it, or it was truncated"
            ) from None
        raise AtifError(
            f"{path}: is not valid JSON (line {error.lineno} column {error.colno}: {error.msg})"
        ) from None
    except RecursionError:
        raise AtifError(f"{path}: is nested too deeply to read as JSON") from None
    del text
    return checked(document, path)


def checked(document: Any, path: Path) -> dict[str, Any]:
    """The document if it is ATIF v1.x (a `schema_version` and a `steps` list)."""
    if not isinstance(document, dict):
        raise AtifError(
            f"{path}: is JSON {type(document).__name__}, not an ATIF trajectory (an object "
            "with schema_version and steps)"
        )
    version = document.get("schema_version")
    if version is None:
        raise AtifError(f"{path}: has no schema_version, not an ATIF trajectory")
    if not isinstance(version, str):
        raise AtifError(f"{path}: schema_version is {shown(version)}, not text")
    if not version.upper().startswith(SUPPORTED.upper()):
        raise AtifError(
            f"{path}: schema_version is {shown(version)}; this reader reads {SUPPORTED}x"
        )
    try:
        steps_of(document)
    except AtifError as error:
        raise AtifError(f"{path}: {error}") from None
    return document


def chain(first: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The file and the continuations it names (`continued_trajectory_ref`, beside it), one
    parsed at a time: a continuation is read only once the one before is done with."""
    seen: set[Path] = set()
    path: Path | None = first
    while path is not None:
        if path in seen or len(seen) >= MAX_CONTINUATIONS:
            raise AtifError(f"{path}: continued_trajectory_ref leads back to a file already read")
        seen.add(path)
        document = read_document(path)
        after = document.get("continued_trajectory_ref")
        if after is not None and not isinstance(after, str):
            raise AtifError(f"{path}: continued_trajectory_ref is {shown(after)}, not a path")
        yield path, document
        del document
        path = path.parent / after if after else None


def usage(first: Path) -> tuple[Buckets, float | None]:
    """A trajectory's usage, continuations included, and its cost where recorded.

    The last file's `final_metrics` (a continuation's totals run on from the file before),
    else the steps' own metrics added up (copied-context steps, already counted, left out).
    Raises AtifError where a file breaks.
    """
    from_steps = Buckets()
    final = Buckets()
    cost: float | None = None
    for path, document in chain(first):
        try:
            from_steps = added(from_steps, steps_buckets(document, skip_copied=True))
            totals = final_buckets(document, writes_in_prompt=writes_in_prompt(document))
            if totals.recorded:
                final = totals
            spent = final_cost(document)
            if spent is not None:
                cost = spent
        except AtifError as error:
            raise AtifError(f"{path}: {error}") from None
    chosen = final if final.recorded else from_steps
    return chosen, cost


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:39] + "…"
