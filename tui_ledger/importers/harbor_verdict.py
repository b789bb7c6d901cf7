"""A Harbor trial's verdict: its reward, its exceptions, and Harbor's error policy over them.

What a trial's `result.json` says about its outcome, read as Harbor itself reads it
(importers/harbor.py reads the files and builds the rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_ledger.importers._base import ImporterError, real_number

# Harbor's error_policy.py (0.26): exception type -> (should_grade, has_valid_reward). A type
# not listed is graded with a valid reward, as Harbor's UNKNOWN_ERROR_POLICY says.
_INFRASTRUCTURE = (
    "EnvironmentStartTimeoutError",
    "SandboxBuildFailedError",
    "AgentSetupTimeoutError",
    "HealthcheckError",
    "SandboxLikelyOutOfMemoryError",
    "MemoryLimitExceededError",
    "SSHAccessError",
    "GKEExecStreamClosedError",
    "GKEPodNotFoundError",
    "RuntimeRequestError",
    "AddTestsDirError",
    "DownloadVerifierDirError",
    "AgentAuthenticationError",
    "ModelNotFoundError",
    "ApiProviderResourceNotFoundError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ServiceOperationsUnsupportedError",
    "VercelScopeError",
    "DspyImportError",
    "MissingExtraError",
    "RegradeError",
    "CancelledError",
)
_GRADED_INVALID_REWARD = (
    "ApiError",
    "ApiRateLimitError",
    "ApiInternalServerError",
    "ApiOverloadedError",
    "ApiConnectionClosedError",
    "ApiResponseStalledError",
    "UnknownApiError",
    "NetworkConnectionError",
    "ApiConnectionError",
    "ApiUsageLimitError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIConnectionError",
    "APIError",
    "Timeout",
    "UnsupportedModelParametersError",
    "BadRequestError",
    "UnprocessableEntityError",
    "UnsupportedParamsError",
    "APIResponseValidationError",
    "BudgetExceededError",
    "VerifierTimeoutError",
    "RewardFileNotFoundError",
    "RewardFileEmptyError",
    "VerifierOutputParseError",
)
EXCEPTION_POLICY: dict[str, tuple[bool, bool]] = {
    **dict.fromkeys(_INFRASTRUCTURE, (False, False)),
    **dict.fromkeys(_GRADED_INVALID_REWARD, (True, False)),
}
# Valid-reward exceptions that mean the agent ran out of time (the rest are its own failures:
# a non-zero exit, a full context window, a refusal).
TIMEOUT_EXCEPTIONS = frozenset({"AgentTimeoutError"})


def outcome(
    reward: float | None, exceptions: list[dict[str, Any]], threshold: float
) -> tuple[bool | None, str, bool]:
    """(passed, status, whether the reward counts) of a trial, as Harbor's error policy reads it.

    - An exception whose policy has no valid reward (API, verifier and infrastructure errors)
      makes the trial an `error` with no verdict, whatever reward it may hold.
    - Otherwise the reward decides: >= threshold is passed, even after an AgentTimeoutError (a
      timed-out agent whose work still passed the tests is accepted); below it, `timeout` after
      an AgentTimeoutError, else `failed`.
    - No reward: `timeout` after an AgentTimeoutError, `error` after any other exception,
      ungraded (`unset`) when nothing went wrong (the verifier gave nothing).
    """
    valid = all(exception["has_valid_reward"] for exception in exceptions)
    if not valid:
        return None, "error", False
    timed_out = any(exception["exception_type"] in TIMEOUT_EXCEPTIONS for exception in exceptions)
    if reward is not None:
        if reward >= threshold:
            return True, "passed", True
        return False, "timeout" if timed_out else "failed", True
    if timed_out:
        return None, "timeout", True
    return None, ("error" if exceptions else "unset"), True


def exceptions_of(trial: Mapping[str, Any], steps: list[Any], file: Path) -> list[dict[str, Any]]:
    """The trial's exception, then its steps', each with `has_valid_reward` resolved."""
    found = []
    infos = [("exception_info", trial.get("exception_info"))]
    infos += [
        (f"step_results[{index}].exception_info", step.get("exception_info"))
        for index, step in enumerate(steps)
        if isinstance(step, dict)
    ]
    for where, info in infos:
        if info is None:
            continue
        if not isinstance(info, dict):
            raise ImporterError.at(file, f"{where} is not an object")
        kind = info.get("exception_type")
        if not isinstance(kind, str):
            raise ImporterError.at(file, f"{where}.exception_type is {kind!r}, not a type name")
        found.append(
            {
                "exception_type": kind,
                "exception_message": info.get("exception_message"),
                "has_valid_reward": _has_valid_reward(kind, info),
            }
        )
    return found


def _has_valid_reward(kind: str, info: Mapping[str, Any]) -> bool:
    """The policy Harbor wrote beside the exception (newer files), else its table's."""
    for key in ("policy", "policy_override"):
        policy = info.get(key)
        if isinstance(policy, dict) and isinstance(policy.get("has_valid_reward"), bool):
            return bool(policy["has_valid_reward"])
    return EXCEPTION_POLICY.get(kind, (True, True))[1]


def reward_of(verifier: Any, file: Path) -> float | None:
    """The `reward` of `verifier_result.rewards` (or its only value); None when there is none."""
    if verifier is None:
        return None
    if not isinstance(verifier, dict):
        raise ImporterError.at(file, "verifier_result is not an object")
    rewards = verifier.get("rewards")
    if rewards is None or rewards == {}:
        return None
    if not isinstance(rewards, dict):
        raise ImporterError.at(file, f"verifier_result.rewards is {rewards!r}, not an object")
    if "reward" in rewards:
        key = "reward"
    elif len(rewards) == 1:
        key = next(iter(rewards))
    else:
        names = ", ".join(sorted(map(str, rewards)))
        raise ImporterError.at(
            file, f"verifier_result.rewards has {names} but no 'reward'; one verdict is needed"
        )
    return real_number(rewards[key], path=file, record=None, field=f"verifier_result.rewards.{key}")


def valid_flag(value: Any, file: Path) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ImporterError.at(file, f"reward_valid is {value!r}, not true or false")
