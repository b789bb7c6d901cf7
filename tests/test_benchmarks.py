"""The benchmark scripts (benchmarks/, not a package; no test times anything): every module
imports, and `bench.py --help` answers with the options benchmarks/README.md documents, so a
split or a rename that breaks one is caught here, not in the next measuring run."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
# Modules that need an optional extra: imported only where it is installed.
OPTIONAL = {"spark_bench": "pyspark"}  # pip install -e '.[spark]'

IMPORT_EACH = """
import importlib, json, sys
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as error:
        failed[name] = f"{type(error).__name__}: {error}"
print(json.dumps(failed))
"""


def test_every_benchmark_module_imports() -> None:
    names = sorted(path.stem for path in BENCHMARKS.glob("*.py"))
    assert {"bench", "make_demo", "generate"} <= set(names)
    absent = {
        name for name, package in OPTIONAL.items() if importlib.util.find_spec(package) is None
    }
    # In a fresh interpreter whose first path entry is benchmarks/, as `python benchmarks/X.py`
    # has it (the scripts import their siblings by name).
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH, *(name for name in names if name not in absent)],
        cwd=BENCHMARKS,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {}


def test_bench_help_lists_every_option_the_readme_documents() -> None:
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    running = readme.split("## Running `bench.py`", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`(--[a-z][a-z-]*)", running))
    assert {"--sizes", "--only", "--repeat"} <= documented
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: bench.py")
    offered = set(re.findall(r"(--[a-z][a-z-]*)", done.stdout))
    assert documented <= offered, f"documented but not offered: {sorted(documented - offered)}"
    # The README's list of sections is --only's default, every section (argparse wraps the
    # help inside the list's words: read it with the whitespace taken out).
    readme_sections = re.search(r"`--only` \| all \| `([a-z_,]+)`", running)
    offered_sections = re.search(r"defaultall:([a-z_,]+)\)", "".join(done.stdout.split()))
    assert readme_sections is not None and offered_sections is not None
    assert set(readme_sections.group(1).split(",")) == set(offered_sections.group(1).split(","))


def test_the_interactive_benchmark_reads_the_summary_pane() -> None:
    """`interactive_bench` counts a keystroke's figures drawn when the summary pane shows the
    filtered groups' figures only, and the screen settled when nothing is computing either (a
    pane split at `││`)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import interactive_bench
    finally:
        sys.path.remove(str(BENCHMARKS))
    every = ["lean-loop", "steady-planner"]
    both = [
        "│ lean-loop  task-1 ││ lean-loop       12,499  │",
        "│ steady-planner  t ││ steady-planner  35,033  │",
    ]
    filtered = [both[0], "│ lean-loop  task-2 ││                          │"]
    assert interactive_bench._settled(both, every, every)
    assert not interactive_bench._settled(both, every, ["lean-loop"])
    assert interactive_bench._settled(filtered, every, ["lean-loop"])
    busy = [*filtered, "computing on Spark · 1.2 s"]
    assert not interactive_bench._settled(busy, every, ["lean-loop"])
    assert interactive_bench._summary_names(busy, every) == {"lean-loop"}  # drawn, not settled
    assert not interactive_bench._settled(["││ lean-loop  …"], every, ["lean-loop"])
