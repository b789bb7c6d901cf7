"""The demo's invented tasks and the hostile notes cells (`make_demo.py` builds on them)."""

from __future__ import annotations

TASKS: tuple[str, ...] = (
    "fix-login-redirect",
    "add-csv-export",
    "paginate-search-results",
    "handle-null-avatar",
    "upgrade-date-parser",
    "fix-timezone-off-by-one",
    "add-rate-limit-header",
    "retry-webhook-delivery",
    "fix-race-in-cache-warmup",
    "add-dark-mode-toggle",
    "migrate-settings-table",
    "fix-unicode-filename-upload",
    "add-audit-log-entry",
    "speed-up-report-query",
    "fix-memory-leak-in-worker",
    "add-password-reset-email",
    "validate-iban-input",
    "fix-flaky-checkout-test",
    "add-api-key-rotation",
    "fix-broken-sitemap",
    "support-gzip-responses",
    "fix-double-charge-on-retry",
    "add-health-check-endpoint",
    "deduplicate-notifications",
    "fix-sort-stability",
    "remove-stale-feature-flags",
    "fix-locale-number-format",
    "add-bulk-delete",
    "fix-session-timeout",
    "refactor-config-loader",
)

# Notes a hostile or careless harness might write: markup, a spreadsheet formula, quotes and
# commas, non-ASCII. No raw control bytes. Keyed by (workflow, task index, attempt).
HOSTILE_NOTES: dict[tuple[str, int, int], str] = {
    ("lean-loop", 3, 2): "[bold]not markup[/bold]",
    ("retry-storm", 7, 1): "[link=https://example.invalid]click me[/link] [red]",
    ("steady-planner", 12, 3): "=SUM(A1:A9)",
    ("careful-reviewer", 20, 2): 'reviewer said "LGTM, ship it", then rejected',
    ("lean-loop", 25, 1): "naïve fix; tests ✓ locally — CI ✘",
}
