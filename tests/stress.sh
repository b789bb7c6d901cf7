#!/usr/bin/env bash
# The screen tests under load: run the Pilot, snapshot and tmux test files N times in a row while
# busy loops keep every core occupied, and print how many runs passed. A test that waits for a
# clock instead of a condition fails here first.
#
#   tests/stress.sh [N]          N runs (default 10), with .venv/bin/python
#   PYTHON=python3 tests/stress.sh 3
#
# Each run's output is kept in $STRESS_LOGS (default: a new folder under /tmp) and the last
# lines of a failed run are printed.
set -u
cd "$(dirname "$0")/.."

runs=${1:-10}
python=${PYTHON:-.venv/bin/python}
logs=${STRESS_LOGS:-$(mktemp -d /tmp/ledger-stress.XXXXXX)}
files=(
  tests/test_app.py
  tests/test_app_keys.py
  tests/test_app_audit.py
  tests/test_attempts_table.py
  tests/test_terminal_safety.py
  tests/test_watch.py
  tests/test_snapshots.py
  tests/test_tmux.py
  tests/test_corpus_tmux.py
)

cores=$(nproc)
burners=()
for _ in $(seq "$cores"); do
  (while :; do :; done) &
  burners+=($!)
done
trap 'kill "${burners[@]}" 2>/dev/null' EXIT

passed=0
for run in $(seq "$runs"); do
  log="$logs/run-$run.log"
  started=$(date +%s)
  if "$python" -m pytest -q "${files[@]}" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "run $run: passed in $(($(date +%s) - started)) s ($(tail -n 1 "$log"))"
  else
    echo "run $run: FAILED in $(($(date +%s) - started)) s (log: $log)"
    tail -n 40 "$log"
  fi
done
echo "stress: $passed of $runs runs passed, with $cores busy loops beside them"
[ "$passed" -eq "$runs" ]
