"""Group names cut to fit: no two names that differ read the same (UX.md, Layout)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from tui_ledger.text.labels import fit_labels

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
    # Cut by words: the date goes, the agent and the words that differ stay.
    shown = fit_labels(DROID, 16)
    assert shown[:3] == ["…droid…1-opus", "…droid…sonnet", "…droid_gpt-5"]
    assert shown[3].startswith("…orchestrator")


def test_words_every_name_shares_go_first() -> None:
    names = ["20250923_droid_claude-4-1-opus", "20250923_droid_claude-4-sonnet"]
    assert fit_labels(names, 16) == ["…claude-4-1-opus", "…claude-4-sonnet"]


# The public Terminal-Bench leaderboard's submissions (terminal-bench-core 0.1.1), and the
# agent each one names.
SUBMISSIONS = {
    "20250711_openhands_claude-4-sonnet": "openhands",
    "20250811_cursor-cli_claude-4-sonnet": "cursor-cli",
    "20250825_swe-agent-mini_claude-4-sonnet": "swe-agent",
    "20250829_goose_claude-4-opus": "goose",
    "20250829_goose_claude-4-sonnet": "goose",
    "20250902_orchestrator_claude-4-sonnet": "orchestrator",
    "20250902_orchestrator_qwen-3-coder-480B": "orchestrator",
    "20250911_chaterm_claude-4-sonnet": "chaterm",
    "20250923_droid_claude-4-1-opus": "droid",
    "20250923_droid_claude-4-sonnet": "droid",
    "20250924_droid_gpt-5": "droid",
    "ob1-09-10-25": "ob1",
}


def test_leaderboard_submissions_each_name_their_agent_at_table_widths() -> None:
    names = list(SUBMISSIONS)
    for width in (18, 22, 26, 30):  # the groups table gives labels 12-30 cells (18 at 120)
        shown = fit_labels(names, width)
        assert len(set(shown)) == len(names), (width, shown)
        for label, agent in zip(shown, SUBMISSIONS.values(), strict=True):
            assert agent in label and cell_len(label) <= width, (width, label)
    assert fit_labels(names, 18)[:3] == [
        "…openhands…sonnet",
        "…cursor-cli…sonnet",
        "…swe-agent-mini…",
    ]


def test_a_label_that_lost_words_says_so_where_they_left() -> None:
    """Issue 53 item 10: a dropped start reads `…` too, so a cut name never passes for a
    whole one (and a filter typed from it is not taken for the name)."""
    names = list(SUBMISSIONS)
    for width in (18, 22, 26, 30, 34):
        for name, label in zip(names, fit_labels(names, width), strict=True):
            assert label == name or "…" in label, (width, name, label)
    assert fit_labels(["20250902_orchestrator_qwen-3-coder-480B", "ob1"], 32)[0] == (
        "…orchestrator_qwen-3-coder-480B"
    )


def test_one_name_alone_keeps_its_start_and_says_it_is_cut() -> None:
    """Issue 53 item 10: after `f` on a task every row reads the same name; it read
    `login-redirect` (its first word dropped, unmarked), now `fix-login…`."""
    assert fit_labels(["fix-login-redirect"] * 3, 10) == ["fix-login…"] * 3
    assert fit_labels(["fix-login-redirect"], 14) == ["fix-login-red…"]
    # A run stamp or date in front tells nothing: it goes first, marked.
    assert fit_labels(["20250902_orchestrator_qwen-3-coder-480B"], 18) == ["…orchestrator_qwe…"]


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


def _is_cut_of(label: str, name: str) -> bool:
    """Whether `label`'s pieces between `…` appear in `name` in order."""
    at = 0
    for piece in label.split("…"):
        found = name.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


word = st.text(st.sampled_from("abcdefgh0123"), min_size=1, max_size=6)
separator = st.sampled_from("_-")
worded_names = st.lists(
    st.lists(word, min_size=1, max_size=5).flatmap(
        lambda words: st.lists(separator, min_size=len(words) - 1, max_size=len(words) - 1).map(
            lambda seps: "".join(w + s for w, s in zip(words, [*seps, ""], strict=True))
        )
    ),
    min_size=2,
    max_size=6,
    unique=True,
)


@settings(max_examples=300, deadline=None)
@given(worded_names, st.integers(min_value=20, max_value=30))
def test_labels_are_distinct_cuts_that_keep_a_word_no_other_name_has(
    given_names: list[str], width: int
) -> None:
    shown = fit_labels(given_names, width)
    assert len(set(shown)) == len(given_names)
    for label, name in zip(shown, given_names, strict=True):
        assert cell_len(label) <= width and _is_cut_of(label, name), (label, name)
    words = [set(name.replace("-", "_").split("_")) for name in given_names]
    unique = [
        mine - set().union(*(other for j, other in enumerate(words) if j != i))
        for i, mine in enumerate(words)
    ]
    if all(unique):  # every name has a word of its own: its label keeps one
        for label, own in zip(shown, unique, strict=True):
            kept = set(label.replace("…", "_").replace("-", "_").split("_"))
            assert kept & own, (label, own, given_names)
