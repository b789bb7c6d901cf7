"""What each key costs the app's recompute worker, key by key, on one ledger (issue 43).

    python benchmarks/keys_bench.py FILE... [--reps 3] [--against OTHER_PYTHON]

For each file, a fresh process loads it once (and compacts it as the app does, `compact_text`),
then builds its cube as the app does next (`cube.build_cube`, in a tree that has cubes: its
build counts in the load time, and is also printed apart), then plays a sequence of keys
through `snapshot.compute_snapshot`, as the app's worker runs it (the figures on screen handed
on as final when grouped alike, as once the app has settled), and times each: the view toggle
(`t`: what the screen needs of the DROP FAILURES rows, their count and the table's first page,
`FIRST_PAGE` rows; then End, their last page, which picks every one where the rows are picked
as they are read, `rows.PickedRows`), number filter keys (`tokens>2000`, a `0` typed,
Backspace), word keys (one letter more, Backspace, the app benchmark's `lea` -> `lean`), a
cleared filter, and group changes (a new grouping, one changed back, two keys). "fresh" keys
ask for what the process has not computed before; "back" keys for what it had (Backspace, a
cleared filter, a grouping changed back). The last column is this tree's `matching_rows` alone
for each key: the rows a filter keeps, picked from the frame whether or not the figures came
from the cube.

`--against PYTHON`: the same in another tree's interpreter (`/work/main/.venv/bin/python`, say),
the two alternating process by process, so both columns are measured side by side on the same
machine load. Times are medians over `--reps` processes, in ms. Run by hand; nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

# (name, what the key asks) in the order played: a filter's text, or `by:` and the grouping.
KEYS: tuple[tuple[str, str], ...] = (
    ("first figures (unfiltered, warm-up)", ""),
    ("t toggle, unfiltered", "toggle"),
    ("End after the toggle, unfiltered", "end"),
    ("`tokens>2000` (fresh, from unfiltered)", "tokens>2000"),
    ("t toggle, `tokens>2000`", "toggle"),
    ("End after the toggle, `tokens>2000`", "end"),
    ("`0`: `tokens>20000` (fresh, narrower)", "tokens>20000"),
    ("Backspace: `tokens>2000` (back)", "tokens>2000"),
    ("`0`: `tokens>20000` (back)", "tokens>20000"),
    ("clear the filter (back)", ""),
    ("`issue-0` (fresh, every row)", "issue-0"),
    ("`0`: `issue-00` (fresh, narrower)", "issue-00"),
    ("`1`: `issue-001` (fresh, narrower)", "issue-001"),
    ("Backspace: `issue-00` (back)", "issue-00"),
    ("`lea` (fresh)", "lea"),
    ("`n`: `lean` (fresh)", "lean"),
    ("Backspace: `lea` (back)", "lea"),
    ("clear the filter (back)", ""),
    ("group by model (fresh)", "by:model"),
    ("group by workflow (back)", "by:workflow"),
    ("group by model (back)", "by:model"),
    ("group by workflow, model (fresh)", "by:workflow,model"),
    ("group by workflow (back)", "by:workflow"),
)

FIRST_PAGE = 60
"""The table's rows read after the toggle (a screen of a tall terminal); End reads as many from
the end."""


def play(path: str) -> dict[str, Any]:
    """One process's pass over `KEYS` on `path`: seconds per key, rows kept, the load."""
    from tui_ledger.allocator import use_fewer_arenas

    use_fewer_arenas()  # as `ledger-tui` runs the app

    import threading

    from tui_ledger.accounting.compact import compact_text
    from tui_ledger.accounting.rows import matching_rows
    from tui_ledger.filtering.query import parse_filter
    from tui_ledger.load import load
    from tui_ledger.tui.snapshot import Request, Snapshot, compute_snapshot

    started = time.perf_counter()
    attempts, values = compact_text(load([path]).attempts)
    compacted = time.perf_counter()
    peak_before = _peak_bytes()
    cube_bytes = _build_cube(attempts)
    peak_after = _peak_bytes()
    loaded = time.perf_counter() - started
    cube_seconds = time.perf_counter() - compacted
    text, by = "", ("workflow",)
    shown: Snapshot | None = None
    seconds: list[float] = []
    picking: list[float | None] = []  # per key: the rows alone (None: the toggle)
    rows: list[int] = []
    for _, key in KEYS:
        if key in ("toggle", "end"):
            # The same reads in any tree: where the toggle picked every row, End costs nothing.
            assert shown is not None
            started = time.perf_counter()
            picked = shown.drop_rows
            if key == "toggle":
                count = picked.height
                picked.head(FIRST_PAGE)
            else:
                picked.tail(FIRST_PAGE)
                count = picked.height
            seconds.append(time.perf_counter() - started)
            picking.append(None)
            rows.append(count)
            continue
        if key.startswith("by:"):
            by = tuple(key[3:].split(","))
        else:
            text = key
        expression = parse_filter(text, attempts.schema, values)
        request = Request(expression, by, None, False, "keep")
        final = shown if shown is not None and shown.comparison.by == by else None
        started = time.perf_counter()
        snapshot = compute_snapshot(1, attempts, request, None, threading.Event(), final)
        seconds.append(time.perf_counter() - started)
        assert snapshot is not None
        rows.append(snapshot.matching.height)
        shown = snapshot
        # The rows alone (picked from the frame whether or not the figures came from a cube).
        started = time.perf_counter()
        matching_rows(attempts, expression)
        picking.append(time.perf_counter() - started)
    return {
        "rows": attempts.height,
        "load": loaded,
        "cube": cube_seconds if cube_bytes is not None else None,
        "cube_bytes": cube_bytes,
        "peak_before_cube": peak_before,
        "peak_after_cube": peak_after,
        "seconds": seconds,
        "rows_seconds": picking,
        "kept": rows,
    }


def _peak_bytes() -> int:
    """The process's peak resident memory so far (Linux: ru_maxrss in KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _build_cube(attempts: Any) -> int | None:
    """Build the compact frame's cube as the app does once compacted (`cube.build_cube`), so
    the keys after it read it; its size in bytes, or None in a tree without cubes or for a
    frame that has none."""
    try:
        from tui_ledger.accounting.cube import build_cube, remember_cube
    except ImportError:  # a tree from before the cube (`--against`)
        return None
    cube = build_cube(attempts)
    if cube is None:
        return None
    remember_cube(attempts, cube)
    return cube.estimated_size()


def _child(python: str, path: str) -> dict[str, Any]:
    done = subprocess.run(
        [python, __file__, "--child", path], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(
    path: str, trees: Sequence[tuple[str, str]], reps: int, say: Callable[[str], None]
) -> dict[str, list[dict[str, Any]]]:
    """`reps` passes per tree (name, python), alternating tree by tree."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
    for rep in range(reps):
        for name, python in trees if rep % 2 == 0 else list(reversed(trees)):
            say(f"  {path}: {name}, pass {rep + 1} of {reps}")
            runs[name].append(_child(python, path))
    return runs


def table(path: str, runs: dict[str, list[dict[str, Any]]]) -> str:
    """Median ms per key, a column per tree (and the second's share of the first's)."""
    names = list(runs)
    first = runs[names[0]][0]
    lines = [f"{path}: {first['rows']:,} rows, {len(runs[names[0]])} passes per tree"]
    header = f"{'key':44s} {'rows kept':>11s}" + "".join(f" {name:>10s}" for name in names)
    lines.append(header + ("   new/old" if len(names) == 2 else "") + "  rows alone")
    for index, (label, _) in enumerate(KEYS):
        medians = [
            statistics.median(run["seconds"][index] for run in runs[name]) * 1000 for name in names
        ]
        kept = first["kept"][index]
        line = f"{label:44s} {kept:>11,}" + "".join(f" {value:>8.1f}ms" for value in medians)
        if len(medians) == 2 and medians[0] > 0:
            line += f" {medians[1] / medians[0]:>8.0%}"
        alone = [run["rows_seconds"][index] for run in runs[names[-1]] if "rows_seconds" in run]
        if alone and alone[0] is not None:
            line += f" {statistics.median(alone) * 1000:>9.1f}ms"
        lines.append(line)
    loads = [statistics.median(run["load"] for run in runs[name]) for name in names]
    lines.append(
        f"{'load + compact + cube (s)':56s}" + "".join(f" {value:>9.2f}s" for value in loads)
    )
    for name in names:
        built = [run for run in runs[name] if run.get("cube") is not None]
        if built:
            seconds = statistics.median(run["cube"] for run in built)
            size = built[0]["cube_bytes"] / 1e6
            peaks = [run["peak_before_cube"] / 1e9 for run in built]
            grown = [(run["peak_after_cube"] - run["peak_before_cube"]) / 1e9 for run in built]
            lines.append(
                f"  {name}: of which the cube's build {seconds:.2f}s; it holds {size:,.0f} MB;"
                f" peak RSS {statistics.median(peaks):.2f} GB before it,"
                f" +{statistics.median(grown):.2f} GB while building it"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="ledgers (benchmarks/generate.py's CSV)")
    parser.add_argument("--reps", type=int, default=3, help="processes per tree (median)")
    parser.add_argument("--against", help="another tree's python, measured alternately")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(play(args.files[0])))
        return 0
    trees = [("this", sys.executable)]
    if args.against:
        trees = [("other", args.against), ("this", sys.executable)]
    for path in args.files:
        runs = measure(path, trees, args.reps, lambda line: print(line, file=sys.stderr))
        print(table(path, runs), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
