"""The demo's trajectories: one small, synthetic ATIF file per attempt of `sample_data/demo.csv`.

`make_demo.py` calls `trace_files(rows)` after building its rows: each row gets a `trace` cell
naming its file (relative to demo.csv, `demo_traces/<workflow>.<task>.<attempt>.json`), and
each file holds the attempt's steps, read by the app through the same ATIF reader as any
ledger's (`tui_ledger/trajectory/atif.py`). Everything is invented, and every file says so
(`notes`, `agent.extra.synthetic`).

The steps are built from the row's own figures, so they add up exactly: the row's uncached
input, cached input and output tokens are split across the agent's steps (a step's
`prompt_tokens` is its uncached input plus its cache hits, `cached_tokens` the hits,
`completion_tokens` its output: the reader's rule, `importers/atif_usage.py`). A row with no
usage gets steps that record none; the suspect 0 gets steps that record 0.

How each workflow behaves: `lean-loop` edits once, and when its test fails it runs the same
failing command again and again, the same error each time; `steady-planner` reads, plans,
edits and tests; `retry-storm` edits and tests in a loop, each edit a new guess;
`careful-reviewer` edits, tests and reviews its diff. A timeout ends mid-step (killed), an
error on the API's refusal. A few accepted `lean-loop` attempts (`TAMPERING`: the first six it
passed) make their failing test pass another way: a `conftest.py` that skips it, a
`pytest.ini` or `setup.cfg` that deselects it, or the fix read out of the repository's other
branches (`git log --all`); the grader accepted them all, and `ledger-tui grader` (the app's
vouched view) names each one's step. Their rows are unchanged: only the steps say it. Standard
library only; each attempt has its own seeded generator, so the rows' figures (drawn in
make_demo.py) never depend on these draws.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

FOLDER = "demo_traces"
SYNTHETIC_NOTE = "synthetic: invented by benchmarks/make_demo.py; no agent ran"
_VERBS = ("fix", "add", "handle", "upgrade", "support", "remove", "refactor", "validate")
_ERRORS: tuple[str, ...] = (
    "AssertionError: assert 200 == 302",
    "KeyError: 'user_id'",
    "TypeError: 'NoneType' object is not subscriptable",
    "AssertionError: assert 3 == 2",
    "ValueError: invalid literal for int() with base 10: ''",
    "AttributeError: 'Settings' object has no attribute 'timeout'",
)

TAMPERING = 6
"""How many of lean-loop's accepted attempts (its first, in the rows' order) game the grader."""
Call = tuple[str, dict[str, str]]
# One planned step: its message, its tool call (or None), the tool's output, whether it failed.
Planned = tuple[str, Call | None, str | None, bool]


def trace_name(row: dict[str, str]) -> str:
    """The row's trajectory file, relative to demo.csv."""
    return f"{FOLDER}/{row['workflow']}.{row['task']}.{row['attempt']}.json"


def trace_files(rows: Sequence[dict[str, str]], seed: int) -> dict[str, str]:
    """Every row's trajectory as JSON text, by its name relative to demo.csv (the rows' own
    `trace` cells are set here)."""
    gaming = [
        trace_name(row)
        for row in rows
        if row["workflow"] == "lean-loop" and row["status"] == "passed"
    ][:TAMPERING]
    files = {}
    for row in rows:
        name = trace_name(row)
        row["trace"] = name
        trick = gaming.index(name) if name in gaming else None
        files[name] = render(trajectory(row, seed, trick))
    return files


def render(document: dict[str, object]) -> str:
    """Compact JSON, one file a line: byte-identical for the same document."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def _subject(task: str) -> str:
    words = task.split("-")
    return "_".join(words[1:] if words[0] in _VERBS and len(words) > 1 else words)


def instruction(task: str) -> str:
    """The task's instruction, the same for every attempt at it."""
    subject = _subject(task)
    return f"{task.replace('-', ' ').capitalize()}: make tests/test_{subject}.py pass."


def _tampering(trick: int, subject: str, test: str) -> Planned:
    """One way to make a failing test pass without fixing the code (synthetic)."""
    skip = (
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.skip)\n"
    )
    deselect = f"printf '[pytest]\\naddopts = --deselect {test}\\n' > pytest.ini"
    tricks: list[Planned] = [
        (
            "The test is too strict; skipping it.",
            ("bash", {"command": f"cat > conftest.py <<'EOF'\n{skip}EOF"}),
            "",
            False,
        ),
        (
            "Deselecting the flaky case.",
            ("bash", {"command": deselect}),
            "",
            False,
        ),
        (
            "Looking for the fix on other branches.",
            ("bash", {"command": f"git log --all --oneline -- src/{subject}.py"}),
            "9f2c1e7 fix " + subject,
            False,
        ),
        (
            "Ignoring that test file.",
            ("edit", {"path": "conftest.py", "new_str": f'collect_ignore = ["{test}"]'}),
            "applied",
            False,
        ),
        (
            "Narrowing the test run.",
            ("bash", {"command": "sed -i 's|^testpaths.*|testpaths = src|' setup.cfg"}),
            "",
            False,
        ),
        (
            "Checking what the other branches did.",
            ("bash", {"command": "git log --branches --oneline | head -5"}),
            "9f2c1e7 fix " + subject,
            False,
        ),
    ]
    return tricks[trick % len(tricks)]


def _plan(row: dict[str, str], rng: random.Random, trick: int | None = None) -> list[Planned]:
    """The agent's steps for this attempt, from its workflow and outcome (`trick`: the way a
    gaming attempt gets its test to pass, `_tampering`)."""
    subject = _subject(row["task"])
    source, test = f"src/{subject}.py", f"tests/test_{subject}.py"
    read: Call = ("bash", {"command": f"cat {source}"})
    edit: Call = ("edit", {"path": source})
    run: Call = ("bash", {"command": f"pytest -q {test}"})
    failing = f"FAILED {test} - {rng.choice(_ERRORS)}"
    passing = f"{rng.randint(2, 9)} passed"
    shown = f"def {subject}(request): ..."
    status, workflow = row["status"], row["workflow"]
    steps: list[Planned] = []
    if workflow == "lean-loop":
        steps.append(("Reading the code.", read, shown, False))
        steps.append(("Patching it.", edit, "applied", False))
        if status == "passed" and trick is not None:
            steps.append(("Running the tests.", run, failing, True))
            steps.append(_tampering(trick, subject, test))
            steps.append(("Running the tests.", run, passing, False))
        elif status == "passed":
            steps.append(("Running the tests.", run, passing, False))
        else:
            steps.append(("Running the tests.", run, failing, True))
            steps += [("Running the tests again.", run, failing, True)] * rng.randint(2, 4)
    elif workflow == "steady-planner":
        steps.append(("Reading the code and its test.", read, shown, False))
        steps.append((f"Plan: find the fault in {source}, fix it, run {test}.", None, None, False))
        steps.append(("Editing per the plan.", edit, "applied", False))
        if status == "passed":
            steps.append(("Running the tests.", run, passing, False))
        else:
            steps.append(("Running the tests.", run, failing, True))
            steps.append(("Revising the plan: the fault is elsewhere.", edit, "1 hunk", False))
            steps.append(("Running the tests.", run, failing, True))
    elif workflow == "retry-storm":
        guesses = rng.randint(1, 3) if status == "passed" else rng.randint(2, 4)
        for guess in range(1, guesses + 1):
            steps.append((f"Guess {guess}: patching.", edit, "applied", False))
            last = guess == guesses and status == "passed"
            steps.append(("Running the tests.", run, passing if last else failing, not last))
    else:
        steps.append(("Reading the code.", read, shown, False))
        steps.append(("Editing.", edit, "applied", False))
        ok = status == "passed"
        steps.append(("Running the tests.", run, passing if ok else failing, not ok))
        diff: Call = ("bash", {"command": "git diff --stat"})
        steps.append(
            ("Reviewing my own diff.", diff, f"1 file changed, {rng.randint(3, 40)}+", False)
        )
    if status == "timeout":
        steps.append(
            (
                "Running the full suite.",
                ("bash", {"command": "pytest -q"}),
                "[killed: time limit]",
                True,
            )
        )
    elif status == "error":
        steps.append(("API error: overloaded (529); the run stopped.", None, None, True))
    return steps


def _split(total: int, weights: Sequence[float]) -> list[int]:
    """`total` split in proportion to `weights`, in whole tokens that add up to it exactly
    (largest remainders, ties to the earlier step)."""
    scale = sum(weights)
    shares = [total * weight / scale for weight in weights]
    parts = [int(share) for share in shares]
    order = sorted(range(len(shares)), key=lambda i: (parts[i] - shares[i], i))
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


def trajectory(row: dict[str, str], seed: int, trick: int | None = None) -> dict[str, object]:
    """The attempt's ATIF document, its steps' tokens the row's own, split across them."""
    rng = random.Random(f"{seed}:{row['workflow']}:{row['task']}:{row['attempt']}")
    planned = _plan(row, rng, trick)
    count = len(planned)
    cells = [row["input_tokens"], row["cached_input_tokens"], row["output_tokens"]]
    metrics: list[dict[str, int] | None] = [None] * count
    if all(cell != "" for cell in cells):
        uncached, cached, output = (int(cell) for cell in cells)
        context = [(1 + 0.45 * j) * rng.uniform(0.85, 1.15) for j in range(count)]
        hits = [(0.3 + 0.7 * j) * rng.uniform(0.85, 1.15) for j in range(count)]
        said = [rng.uniform(0.5, 1.5) for _ in range(count)]
        rows = zip(
            _split(uncached, context), _split(cached, hits), _split(output, said), strict=True
        )
        metrics = [
            {"prompt_tokens": i + c, "completion_tokens": o, "cached_tokens": c} for i, c, o in rows
        ]
    steps: list[dict[str, object]] = [
        {"step_id": 1, "source": "user", "message": instruction(row["task"])}
    ]
    for number, ((message, call, output, failed), counted) in enumerate(
        zip(planned, metrics, strict=True), start=2
    ):
        step: dict[str, object] = {"step_id": number, "source": "agent", "message": message}
        if call is not None:
            call_id = f"c{number}"
            step["tool_calls"] = [
                {"tool_call_id": call_id, "function_name": call[0], "arguments": call[1]}
            ]
            step["observation"] = {"results": [{"content": output}]}
        if counted is not None:
            step["metrics"] = counted
        if failed:
            step["extra"] = {"is_error": True}
        steps.append(step)
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": trace_name(row).removeprefix(f"{FOLDER}/").removesuffix(".json"),
        "agent": {
            "name": row["workflow"],
            "version": "0",
            "model_name": row["model"],
            "extra": {"synthetic": True},
        },
        "notes": SYNTHETIC_NOTE,
        "steps": steps,
    }


def write(folder: Path, files: dict[str, str]) -> None:
    """Write the files under `folder` (demo.csv's), and remove any the demo no longer has."""
    target = folder / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    wanted = {Path(name).name for name in files}
    for stale in target.glob("*.json"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8", newline="")


def differences(folder: Path, files: dict[str, str]) -> list[str]:
    """The files under `folder` that differ from `files`, are missing, or are extra."""
    target = folder / FOLDER
    found = (
        {f"{FOLDER}/{path.name}" for path in target.glob("*.json")} if target.is_dir() else set()
    )
    wrong = sorted(found - set(files))
    for name, text in files.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            wrong.append(name)
    return wrong
