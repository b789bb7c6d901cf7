"""The signals of one attempt: what in its steps and its verdict says the grader cannot vouch
for its result (or that the harness failed before the agent acted).

```python
from tui_ledger.grader.signals import attempt_signals

signals = attempt_signals(row, trajectory)   # row: the attempt's fields; trajectory: read_attempt
```

Four kinds (README "Can the grader vouch for it?"):

- `touched_grader`: an agent step wrote, moved, truncated or deleted a file the grader uses: a
  file holding a test the verdict names (the part of a test id before `::`, matched on its
  path's tail), the tests' configuration (`conftest.py`, `pytest.ini`, `tox.ini`,
  `setup.cfg`), or the verifier's own files (under `/tests/` or `/logs/verifier/`,
  `reward.txt`, `reward.json`). The writes are `commands.py`'s.
- `answer_lookup`: a command read the repository's history beyond the checked-out branch.
- `verdict_contradiction`: accepted while the verdict lists a failed or errored test, accepted
  though the agent never acted, or rejected while every listed test passed.
- `infrastructure_error`: the harness failed, not the agent (`agent_never_acted` says whether
  the agent ever started: then its usage is 0 tokens, known).

Each `Signal` names its step (`Step.index`, as `trace` numbers it; None where it comes from the
verdict or the row) and its evidence, shortened. No textual: one attempt's rules.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tui_ledger.grader.commands import (
    PATH_KEYS,
    Effect,
    call_effects,
    parse_arguments,
    shell_effects,
)
from tui_ledger.importers.harbor import EXCEPTION_POLICY
from tui_ledger.trajectory.files import load_document
from tui_ledger.trajectory.model import Step, ToolCall, Trajectory, TrajectoryError, Verdict

SignalKind = Literal[
    "touched_grader", "answer_lookup", "verdict_contradiction", "infrastructure_error"
]
KINDS: tuple[SignalKind, ...] = (
    "touched_grader",
    "answer_lookup",
    "verdict_contradiction",
    "infrastructure_error",
)
TAMPERING: frozenset[str] = frozenset({"touched_grader", "answer_lookup"})
"""The kinds `check --fail-on tampering` fails on (when the attempt was accepted)."""
UNVOUCHED: frozenset[str] = frozenset({"touched_grader", "answer_lookup", "verdict_contradiction"})
"""The kinds that make an accepted attempt not vouched for (a failure in the vouched view)."""

EVIDENCE_WIDTH = 160
"""Characters of evidence kept (the command or call on one line, cut with …)."""

TEST_CONFIG = frozenset({"conftest.py", "pytest.ini", "tox.ini", "setup.cfg"})
REWARD_FILES = frozenset({"reward.txt", "reward.json"})
VERIFIER_FOLDERS = ("/tests", "/logs/verifier")
SCRATCH_FOLDERS = ("/tmp", "/dev", "/var/tmp")
"""A copy under these is scratch, never the grader's (`cp tests/x /tmp/`)."""

_FAILED_RESULTS = frozenset({"failed", "fail", "failure", "error", "errored"})
_TYPED_LOGS = ("commands.txt", ".cast", "agent.log")
# Terminal-Bench's failure_mode and Harbor's exception types that mean the harness failed before
# the agent acted (Harbor's error policy: not graded, no valid reward).
_HARNESS_FAILURE_MODES = frozenset({"agent_installation_failed"})


@dataclass(frozen=True)
class Signal:
    """One reason to look: its kind, the step (`trace`'s number; None: from the verdict or the
    row) and the evidence (the command or call, shortened)."""

    kind: SignalKind
    step: int | None
    evidence: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "evidence": self.evidence}


@dataclass(frozen=True)
class GraderFiles:
    """The files the grader uses, as far as the verdict names them."""

    tests: tuple[tuple[str, ...], ...] = ()
    """Each test file's path parts (`tests/test_parse.py` -> ("tests", "test_parse.py"))."""

    @classmethod
    def of(cls, verdict: Verdict) -> GraderFiles:
        files = {test_file(test.name) for test in verdict.tests}
        parts = {tuple(_parts(file)) for file in files if file}
        return cls(tuple(sorted(parts)))

    def holds(self, effect: Effect) -> bool:
        """Whether a write of `effect.path` changes something the grader uses."""
        if effect.path is None:
            return False
        path = _normal(effect.path)
        if path is None or path.startswith(tuple(f"{folder}/" for folder in SCRATCH_FOLDERS)):
            return False
        for folder in VERIFIER_FOLDERS:
            if path == folder or path.startswith(f"{folder}/"):
                return True
            if effect.recursive and (folder.startswith(f"{path}/") or path == "/"):
                return True
        name = posixpath.basename(path)
        if name in TEST_CONFIG or name in REWARD_FILES:
            return True
        written = _parts(path)
        absolute = path.startswith("/")
        for test in self.tests:
            if _tail_matches(written, test, absolute):
                return True
            if effect.recursive and any(
                _tail_matches(written, test[:cut], absolute) for cut in range(1, len(test))
            ):
                return True
        return False


def test_file(name: str) -> str | None:
    """The file a test id names: the part before `::` (`tests/test_a.py::test_b` ->
    `tests/test_a.py`); a bare name (`test_b`, `test_b (module.Case)`) names none."""
    if "::" not in name:
        return None
    file = name.split("::", 1)[0].strip()
    return file or None


def attempt_signals(
    row: Mapping[str, Any], trajectory: Trajectory | None, *, accepted: bool | None = None
) -> list[Signal]:
    """Every signal of one attempt, in step order, the verdict's and the row's last.

    `trajectory` None: no log was read (then only the row speaks). `accepted` defaults to the
    row's outcome being `passed`; None outcome (ungraded) raises no contradiction.
    """
    outcome = row.get("outcome")
    if accepted is None and outcome is not None:
        accepted = outcome == "passed"
    graded = outcome not in (None, "ungraded")
    signals: list[Signal] = []
    acted: bool | None = None
    if trajectory is not None:
        signals.extend(
            step_signals(
                trajectory.steps, GraderFiles.of(trajectory.verdict), typed=_typed(trajectory.files)
            )
        )
        acted = _acted(trajectory)
        if graded:
            signals.extend(_verdict_signals(trajectory.verdict, bool(accepted)))
    never = _never_acted(row, trajectory, acted)
    harness = _harness_failure(row)
    if graded and accepted and never is not None:
        signals.append(Signal("verdict_contradiction", None, f"accepted, but {never}"))
    if not accepted and (harness is not None or never is not None):
        signals.append(Signal("infrastructure_error", None, harness or str(never)))
    return signals


def step_signals(steps: Iterable[Step], files: GraderFiles, *, typed: bool = False) -> list[Signal]:
    """touched_grader and answer_lookup, one per step and kind (the first evidence)."""
    signals = []
    for step in steps:
        if step.source != "agent":
            continue
        found: dict[str, str] = {}
        for evidence, effects in _step_effects(step, typed):
            for effect in effects:
                if effect.kind == "lookup":
                    found.setdefault("answer_lookup", evidence)
                elif files.holds(effect):
                    found.setdefault("touched_grader", evidence)
        for kind in ("touched_grader", "answer_lookup"):
            if kind in found:
                signals.append(Signal(kind, step.index, found[kind]))
    return signals


def _step_effects(step: Step, typed: bool) -> Iterable[tuple[str, list[Effect]]]:
    """(evidence, effects) for each call of the step that has an effect (the evidence is
    written only then)."""
    for call in step.tool_calls:
        effects = call_effects(call)
        if effects:
            yield _call_evidence(call), effects
    if typed and not step.tool_calls and step.text.strip():
        effects = shell_effects(step.text)
        if effects:
            yield shorten(step.text), effects


def _call_evidence(call: ToolCall) -> str:
    """A call as evidence: a shell command as typed, else `name(arguments)`."""
    arguments = parse_arguments(call.arguments)
    if isinstance(arguments, dict) and not any(key in arguments for key in PATH_KEYS):
        for key in ("command", "cmd", "keystrokes", "script"):
            value = arguments.get(key)
            if isinstance(value, str):
                return shorten(value)
    return shorten(f"{call.name}({call.arguments})")


def shorten(text: str, width: int = EVIDENCE_WIDTH) -> str:
    """Text on one line, at most `width` characters (cut with …)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _verdict_signals(verdict: Verdict, accepted: bool) -> list[Signal]:
    tests = verdict.tests
    if not tests:
        return []
    failed = [test for test in tests if test.result.lower() in _FAILED_RESULTS]
    if accepted and failed:
        names = ", ".join(test.name for test in failed[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return [
            Signal(
                "verdict_contradiction",
                None,
                shorten(f"accepted, but the verdict lists {len(failed)} failed: {names}{more}"),
            )
        ]
    if not accepted and all(test.passed for test in tests):
        return [
            Signal(
                "verdict_contradiction",
                None,
                f"rejected, but all {len(tests)} listed test(s) passed",
            )
        ]
    return []


def _typed(files: Sequence[str]) -> bool:
    """Steps that are what was typed into a terminal (Terminal-Bench 1.x), not tool calls."""
    return any(str(file).endswith(_TYPED_LOGS) for file in files)


def _acted(trajectory: Trajectory) -> bool | None:
    """Whether the log shows an agent step; None where the log cannot tell (none was found, or
    a terminal's keystrokes: an agent may run its commands through its own channel)."""
    if not trajectory.files or trajectory.looked_for or _typed(trajectory.files):
        return None
    return any(step.source == "agent" for step in trajectory.steps)


def _never_acted(
    row: Mapping[str, Any], trajectory: Trajectory | None, acted: bool | None
) -> str | None:
    """Why the agent never acted, or None (it did, or nothing says)."""
    calls = row.get("api_calls")
    if isinstance(calls, int) and not isinstance(calls, bool) and calls == 0:
        stop = row.get("stop_reason")
        return f"no model call was made (api_calls 0{f', {stop}' if stop else ''})"
    if acted is False and trajectory is not None:
        return f"no agent step in its log ({posixpath.basename(str(trajectory.files[0]))})"
    return _no_call_in_agent_log(row)


HARBOR_MINI_LOG = ("agent", "mini-swe-agent.trajectory.json")
"""Where Harbor keeps a mini-swe-agent's own log in a trial folder."""


def _no_call_in_agent_log(row: Mapping[str, Any]) -> str | None:
    """A mini-swe-agent under Harbor whose own log says no model call was made (`info.
    model_stats.api_calls` 0: a real published trial passed its tests so, untouched)."""
    source = row.get("source")
    if not isinstance(source, str) or not source.endswith("result.json"):
        return None
    log = Path(source).parent.joinpath(*HARBOR_MINI_LOG)
    if not log.is_file():
        return None
    try:
        document = load_document(log)
    except TrajectoryError:
        return None
    info = document.get("info") if isinstance(document, dict) else None
    stats = info.get("model_stats") if isinstance(info, dict) else None
    calls = stats.get("api_calls") if isinstance(stats, dict) else None
    if calls != 0 or isinstance(calls, bool):
        return None
    status = info.get("exit_status") if isinstance(info, dict) else None
    shown = f", {status}" if isinstance(status, str) and status else ""
    return f"no model call was made ({posixpath.join(*HARBOR_MINI_LOG)}: api_calls 0{shown})"


def _harness_failure(row: Mapping[str, Any]) -> str | None:
    """The harness's own failure, as the row records it (Harbor's exceptions it does not grade,
    Terminal-Bench's failed installation), or None."""
    exceptions = row.get("exception_type")
    if isinstance(exceptions, str):
        for name in (part.strip() for part in exceptions.split(",")):
            if name in BEFORE_START:
                return f"the harness raised {name} before the agent started"
            if EXCEPTION_POLICY.get(name) == (False, False):
                return f"the harness raised {name} (not graded)"
    stop = row.get("stop_reason")
    if isinstance(stop, str) and stop in _HARNESS_FAILURE_MODES:
        return f"failure_mode {stop} (before the agent started)"
    return None


# Harbor's exceptions raised before the agent starts (its environment, its setup, the model's
# account or name): no model call was made. The others it does not grade (a sandbox out of
# memory, a lost connection, a cancelled trial) can come after the agent spent tokens.
BEFORE_START = frozenset(
    {
        "EnvironmentStartTimeoutError",
        "SandboxBuildFailedError",
        "AgentSetupTimeoutError",
        "HealthcheckError",
        "AgentAuthenticationError",
        "ModelNotFoundError",
        "ApiProviderResourceNotFoundError",
        "AuthenticationError",
        "PermissionDeniedError",
        "NotFoundError",
        "ServiceOperationsUnsupportedError",
        "DspyImportError",
        "MissingExtraError",
    }
)


def agent_never_acted(row: Mapping[str, Any], trajectory: Trajectory | None) -> bool:
    """Whether the agent never acted, so its recorded 0 or missing usage means 0 tokens spent:
    its log shows no agent step, or says no model call was made, or the harness failed before
    the agent started. A log that shows an agent step wins over the row."""
    acted = None if trajectory is None else _acted(trajectory)
    if acted:
        return False
    if _never_acted(row, trajectory, acted) is not None:
        return True
    failure = _harness_failure(row)
    return failure is not None and "before the agent started" in failure


# --- paths ------------------------------------------------------------------------------------


def _normal(path: str) -> str | None:
    path = path.strip()
    if not path or path.startswith("$"):
        return None
    if path.startswith("~"):
        return None  # a home folder: never the grader's
    normal = posixpath.normpath(path)
    return "/" if normal == "//" else normal


def _parts(path: str) -> list[str]:
    return [part for part in posixpath.normpath(path).split("/") if part not in ("", ".")]


def _tail_matches(written: Sequence[str], test: Sequence[str], absolute: bool) -> bool:
    """The test file's parts are the tail of the written path's (a relative written path may
    also be the tail of the test's: the agent's folder is not known). Globs match per part."""
    if not written or not test:
        return False
    if len(written) >= len(test):
        return all(fnmatch.fnmatchcase(test[-k], written[-k]) for k in range(1, len(test) + 1))
    if absolute:
        return False
    return all(fnmatch.fnmatchcase(test[-k], written[-k]) for k in range(1, len(written) + 1))
