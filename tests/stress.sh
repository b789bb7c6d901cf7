#!/usr/bin/env bash
# The screen tests under load: run every Pilot, snapshot and tmux test file N times while busy
# loops keep every core occupied, and print how many runs passed. A test that waits for a
# clock instead of a condition fails here first.
#
#   tests/stress.sh [N]              N runs (default 10) one after another, with .venv/bin/python
#   STRESS_JOBS=2 tests/stress.sh 10 the same 10 runs in 2 lanes at once: each run then shares
#                                    the cores with the busy loops and the other lane (harder
#                                    than one lane, and done in less time on a small machine)
#   PYTHON=python3 tests/stress.sh 3
#
# Each run's output is kept in $STRESS_LOGS (default: a new folder under /tmp) and the last
# lines of a failed run are printed.
set -u
cd "$(dirname "$0")/.."

runs=${1:-10}
jobs=${STRESS_JOBS:-1}
python=${PYTHON:-.venv/bin/python}
logs=${STRESS_LOGS:-$(mktemp -d /tmp/ledger-stress.XXXXXX)}
mkdir -p "$logs"
# Every test file that opens the app (Pilot's `run_test`, a snapshot, a real terminal in
# tmux), found afresh each time: a screen test added later is stressed without editing a list.
# (tests/spark/ needs a Spark Connect server: .ci/run runs it.)
mapfile -t files < <(grep -l -E 'run_test\(|snap_compare|tmux' tests/test_*.py | sort)

cores=$(nproc)
burners=()
for _ in $(seq "$cores"); do
  (while :; do :; done) &
  burners+=($!)
done
trap 'kill "${burners[@]}" 2>/dev/null' EXIT

# One run: its log, and a line saying how it ended (a file per run, so lanes never interleave).
run_once() {
  local run=$1 log="$logs/run-$1.log" started
  started=$(date +%s)
  if "$python" -m pytest -q "${files[@]}" >"$log" 2>&1; then
    echo "run $run: passed in $(($(date +%s) - started)) s ($(tail -n 1 "$log"))" >"$log.result"
  else
    echo "run $run: FAILED in $(($(date +%s) - started)) s (log: $log)" >"$log.result"
  fi
  cat "$log.result"
}

# Lane k takes runs k, k + jobs, k + 2 jobs, ...
lanes=()
for lane in $(seq "$jobs"); do
  (for run in $(seq "$lane" "$jobs" "$runs"); do run_once "$run"; done) &
  lanes+=($!)
done
wait "${lanes[@]}"

passed=$(cat "$logs"/run-*.log.result 2>/dev/null | grep -c ': passed in ')
for result in "$logs"/run-*.log.result; do
  if grep -q ': FAILED in ' "$result"; then
    cat "$result"
    tail -n 40 "${result%.result}"
  fi
done
echo "stress: $passed of $runs runs passed, $jobs at a time, with $cores busy loops beside them"
[ "$passed" -eq "$runs" ]
