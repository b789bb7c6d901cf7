"""Can the grader vouch for an accepted result? Signals per attempt, the grader's health, and
the vouched view (README: "Can the grader vouch for it?"). No textual: the CLI, the app and a
notebook call the same functions.

```python
from tui_ledger.grader import audit_ledger, grader_health

audit = audit_ledger(ledger, inputs)         # every attempt's logs read once, in threads
audit.signals      # DataFrame: row (0-based position in ledger.attempts), kind, step, evidence
audit.signals_of(row)                        # [Signal(kind, step, evidence)] of one attempt
audit.unvouched    # rows accepted as graded that the grader cannot vouch for
audit.tampered     # accepted rows with touched_grader or answer_lookup
audit.note         # "no trajectories: signals from verdicts only" when no log was read
attempts = audit.apply(ledger.attempts, "vouched")   # the frame the accounting reads
health = grader_health(ledger.attempts, audit)       # tests never passed, uninformative tasks
notice = vouched_notice(audit)               # the one-line warning the figures carry as vouched
```

For a front end showing the vouched view: compute from `audit.apply(attempts, "vouched")` and
tag the result, `dataclasses.replace(compare(...), accepted="vouched")` (the summary JSON's
`accepted`; a header can read it). Run the audit once per loaded ledger (it reads every log)
and apply it to each recompute's frame before any filter: `Audit.apply` takes the frame the
audit read, row for row. For one attempt (the attempt screen): `audit.signals_of(row)`, or
`attempt_signals(row, trajectory)` from a trajectory already read. A frame gathered to the
columns `compare` reads must keep `agent_never_acted`: `accounting.ledger.read_columns(by,
with_cost, known_zeros(schema))` (`schema.known_zeros`).

`ledger-tui grader`'s report (text, JSON, markdown) is `report.grader_report` and
`report.render_grader`; `check --fail-on tampering` reads `report.tampered_lines(audit)`.

`apply(attempts, "vouched")` turns each unvouched acceptance into a failure (its tokens stay in
the total), so every figure, rank, interval, noise verdict and the flip callout computed from
that frame are the vouched ones; `"graded"` keeps the verdicts as given. Both mark the
attempts whose agent never acted (`agent_never_acted`): their missing or 0 usage is 0 tokens,
neither suspect nor missing (docs/ACCOUNTING.md).

Modules: `commands.py` (what a shell command or tool call writes or looks up), `signals.py`
(one attempt's rules), `audit.py` (a ledger's audit, the vouched view), `health.py` (the
grader's health per task and per test), `report.py` (`ledger-tui grader`'s text, JSON, md).
"""

from tui_ledger.grader.audit import (
    ACCEPTED_MODES,
    NEVER_ACTED_COLUMN,
    NO_TRAJECTORIES,
    Accepted,
    Audit,
    audit_ledger,
    vouched_notice,
)
from tui_ledger.grader.health import Health, grader_health
from tui_ledger.grader.signals import (
    KINDS,
    TAMPERING,
    UNVOUCHED,
    Signal,
    agent_never_acted,
    attempt_signals,
)

__all__ = [
    "ACCEPTED_MODES",
    "KINDS",
    "NEVER_ACTED_COLUMN",
    "NO_TRAJECTORIES",
    "TAMPERING",
    "UNVOUCHED",
    "Accepted",
    "Audit",
    "Health",
    "Signal",
    "agent_never_acted",
    "attempt_signals",
    "audit_ledger",
    "grader_health",
    "vouched_notice",
]
