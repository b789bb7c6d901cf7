"""The workers' reports in the queue: a stale one never supersedes the one the screen waits for
(Textual drops a queued message when the one after it `can_replace` it)."""

from __future__ import annotations

from tests.test_app import RUNS
from tui_ledger.accounting.ledger import compare
from tui_ledger.load import load
from tui_ledger.tui.messages import ChecksReady, IntervalsReady, PairsReady


def test_checks_of_newer_figures_supersede_older_ones_and_never_the_reverse() -> None:
    older, newer = ChecksReady(1, [], 0.0), ChecksReady(2, [], 0.0)
    assert older.can_replace(newer)  # the newer, queued next, is handled instead
    assert not newer.can_replace(older)  # a superseded worker that ended last is not


def test_intervals_and_pairs_are_each_handled() -> None:
    comparison = compare(load([str(RUNS)]).attempts)
    first, second = IntervalsReady(comparison, None, 0.0), IntervalsReady(comparison, None, 0.0)
    assert not first.can_replace(second) and not second.can_replace(first)
    one, other = PairsReady(comparison, None, 0.0), PairsReady(comparison, None, 0.0)
    assert not one.can_replace(other) and not other.can_replace(one)
