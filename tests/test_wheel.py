"""The wheel holds the whole package: built (not installed editable), installed into a fresh
virtual environment, it answers `ledger-tui summary` on its bundled sample.

An editable install reads the source tree, so it cannot notice a package the build leaves
out (pyproject.toml finds them rather than listing them). Here the wheel's modules are
compared with the source tree's, and the installed command runs from outside the repository.
The dependencies (polars, textual) come from the environment running the tests, never from the
index, so the test takes seconds; building uses the index for setuptools when it can reach it
and this environment's setuptools when it cannot.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "tui_ledger"


def run(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv], cwd=cwd, capture_output=True, text=True, timeout=240
    )


def build_wheel(out: Path) -> Path:
    """The project's wheel, built in `out` from a copy of the source (a build writes into the
    tree it builds); skips when pip cannot build one here."""
    if run(sys.executable, "-m", "pip", "--version", cwd=out).returncode != 0:
        pytest.skip("no pip in this environment to build the wheel with")
    source = out / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for folder in ("tui_ledger", "sample_data"):
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(REPO / folder, source / folder, symlinks=True, ignore=ignore)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, source]
    built = run(*build, cwd=out)
    if built.returncode != 0:
        # No index to fetch the build requirements from: build with this environment's.
        built = run(*build, "--no-build-isolation", cwd=out)
    if built.returncode != 0:
        pytest.skip(f"pip could not build the wheel here: {built.stderr.strip()[-300:]}")
    (wheel,) = out.glob("ledger_tui-*.whl")
    return wheel


def source_modules() -> set[str]:
    """Every module file of the package in the source tree, as the wheel would hold it."""
    found = set()
    for path in PACKAGE.rglob("*"):
        if (
            path.suffix in (".py", ".tcss", ".csv", ".toml", ".json")
            and "__pycache__" not in path.parts
        ):
            found.add(path.relative_to(REPO).as_posix())
    return found


def test_the_installed_wheel_holds_every_module_and_runs_summary(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("tui_ledger/")}
    missing = source_modules() - shipped
    assert not missing, f"left out of the wheel: {sorted(missing)}"

    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", venv, cwd=tmp_path).returncode == 0
    python = venv / "bin" / "python"
    installed = run(python, "-m", "pip", "install", "--no-deps", "--quiet", wheel, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    # The dependencies from this environment; `tui_ledger` itself only from the wheel (an
    # editable install's finder is a .pth file, which a path added this way does not run).
    site = Path(
        run(
            python, "-c", "import site; print(site.getsitepackages()[0])", cwd=tmp_path
        ).stdout.strip()
    )
    (site / "test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    where = run(
        python,
        "-c",
        "import json, tui_ledger, tui_ledger.tui.app; from tui_ledger.cli_options import "
        "sample_path; print(json.dumps([tui_ledger.__file__, str(sample_path('runs.csv'))]))",
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    package_file, sample = json.loads(where.stdout)
    assert Path(package_file).is_relative_to(venv), package_file  # the wheel's, not the tree's
    assert Path(sample).is_relative_to(venv) and Path(sample).is_file(), sample

    env = {**os.environ, "PYTHONPATH": ""}
    summary = subprocess.run(
        [str(venv / "bin" / "ledger-tui"), "summary", sample, "--format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert summary.returncode == 0, summary.stderr
    document = json.loads(summary.stdout)
    assert document["views"]["keep"]["lean"]["tokens_per_accepted_result"] == 3000

    # The demo's trajectories ship beside it and open from the installed copy.
    demo = str(Path(sample).with_name("demo.csv"))
    trace = subprocess.run(
        [str(venv / "bin" / "ledger-tui"), "trace", demo, "--row", "1", "--format", "json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert trace.returncode == 0, trace.stderr
    opened = json.loads(trace.stdout)
    assert opened["tokens_match"] == "equal", opened
