"""Group names cut to fit: no two names that differ read the same (UX.md, Layout)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from tui_ledger.labels import fit_labels

DROID = [
    "20250923_droid_claude-4-1-opus",
    "20250923_droid_claude-4-sonnet",
    "20250924_droid_gpt-5",
    "20250923_orchestrator_qwen-3-coder-480B",
]


def test_names_that_fit_stay_whole() -> None:
    assert fit_labels(["lean", "steady"], 24) == ["lean", "steady"]


def test_leaderboard_names_sharing_a_long_prefix_read_differently_when_cut() -> None:
    for width in (12, 16, 20, 24):
        shown = fit_labels(DROID, width)
        assert len(set(shown)) == len(DROID), (width, shown)
        assert all(cell_len(text) <= width for text in shown), (width, shown)
    # Cut in the middle: the start and the end both show.
    shown = fit_labels(DROID, 24)
    assert shown[0].startswith("2025092") and shown[0].endswith("opus")
    assert shown[1].endswith("sonnet")


def test_a_prefix_every_name_shares_is_dropped_first() -> None:
    names = ["20250923_droid_claude-4-1-opus", "20250923_droid_claude-4-sonnet"]
    assert fit_labels(names, 16) == ["…claude-4-1-opus", "…claude-4-sonnet"]


def test_names_differing_only_deep_in_the_middle_show_the_difference() -> None:
    names = ["run-" + "x" * 30 + "-alpha-" + "y" * 30, "run-" + "x" * 30 + "-omega-" + "y" * 30]
    shown = fit_labels(names, 20)
    assert len(set(shown)) == 2 and all(cell_len(text) <= 20 for text in shown)


def test_hostile_and_huge_names_are_safe_and_cheap() -> None:
    huge = "a" * 5_000_000
    shown = fit_labels([huge + "1", huge + "2", "\x1b]0;pwned\x07"], 16)
    assert shown[0] != shown[1] and all(cell_len(text) <= 16 for text in shown)
    assert "\x1b" not in shown[2] and "\x07" not in shown[2]


def test_equal_names_stay_equal_and_wide_characters_count_two_cells() -> None:
    shown = fit_labels(["模型评测工作流甲", "模型评测工作流乙", "模型评测工作流甲"], 9)
    assert shown[0] == shown[2] != shown[1]
    assert all(cell_len(text) <= 9 for text in shown)


names = st.lists(st.text(st.sampled_from("ab-_1"), min_size=0, max_size=30), max_size=10)


@settings(max_examples=400, deadline=None)
@given(names, st.integers(4, 30))
def test_any_names_read_differently_within_the_width(given_names: list[str], width: int) -> None:
    shown = fit_labels(given_names, width)
    assert len(shown) == len(given_names)
    assert all(cell_len(text) <= width for text in shown)
    for i, a in enumerate(given_names):
        for j, b in enumerate(given_names):
            assert (shown[i] == shown[j]) == (a == b), (given_names, shown)
