"""The filter language, as examples of what each term keeps (UX.md, "Filter language")."""

from __future__ import annotations

import datetime as dt
import string

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting.compact import compact_text, text_values
from tui_ledger.filtering.filter_terms import filter_term, quote_value
from tui_ledger.filtering.query import (
    FilterError,
    describe_terms,
    parse_filter,
    tokenize,
)
from tui_ledger.schema import OUTCOME_DTYPE

# The article's six attempts, plus what real files bring: a missing task, missing usage, an
# unknown `passed`, mixed case, a timestamp, and a column with a space in its name.
ATTEMPTS = pl.DataFrame(
    {
        "workflow": ["lean", "lean", "lean", "steady", "steady", "steady"],
        "task": ["fix login", "t2", None, "t1", "Fix Login page", "t3"],
        "outcome": ["passed", "failed", "failed", "passed", "passed", "timeout"],
        "tokens": [1000, 1000, None, 1600, 1600, 1_200_000],
        "passed": [True, False, False, True, True, None],
        "model": ["gpt-x", "gpt-x", "claude", "claude", "claude", "[bold]"],
        "timestamp": [
            dt.datetime(2024, 5, 1, 10),
            dt.datetime(2024, 5, 1, 23),
            dt.datetime(2024, 5, 2),
            None,
            dt.datetime(2024, 4, 30),
            dt.datetime(2024, 6, 1),
        ],
        "duration_s": [1.5, 2.0, None, 30.25, 0.0, 600.0],
        "day": [dt.date(2024, 5, d) for d in (1, 1, 2, 3, 3, 4)],
        "run note": ["a", "b", "c", "d", "e", "f"],
        "source": ["runs.csv"] * 6,
        "line": [2, 3, 4, 5, 6, 7],
    },
    schema_overrides={"outcome": OUTCOME_DTYPE},
)


def lines(text: str, frame: pl.DataFrame = ATTEMPTS) -> list[int]:
    """The file lines of the attempts `text` keeps."""
    expression = parse_filter(text, frame.schema)
    kept = frame if expression is None else frame.filter(expression)
    return kept["line"].to_list()


def error(text: str, frame: pl.DataFrame = ATTEMPTS) -> FilterError:
    with pytest.raises(FilterError) as caught:
        parse_filter(text, frame.schema)
    return caught.value


def pointed_at(text: str) -> str:
    """The part of `text` a FilterError points at."""
    problem = error(text)
    return text[problem.position : problem.end]


ALL = [2, 3, 4, 5, 6, 7]

# --- examples: one line, what it keeps ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # empty filters filter nothing
        ("", ALL),
        ("   ", ALL),
        ('""', ALL),
        # a bare word: substring of any text column, ignoring case
        ("lean", [2, 3, 4]),
        ("LEAN", [2, 3, 4]),
        ("login", [2, 6]),
        ("gpt", [2, 3]),
        # ... including the outcome, and literal (not a regex, not markup)
        ("time", [7]),
        ("[bold]", [7]),
        ("t.", []),
        # outcome shortcuts are exact; quoting turns the shortcut back into a search
        ("passed", [2, 5, 6]),
        ("failed", [3, 4]),
        ("timeout", [7]),
        ("error", []),
        ("ungraded", []),
        ("FAILED", [3, 4]),
        ('"pass"', [2, 5, 6]),
        # terms are ANDed
        ("lean failed", [3, 4]),
        ("steady passed claude", [5, 6]),
        # col:value is a substring for text, ignoring case
        ("task:login", [2, 6]),
        ("task:LOGIN", [2, 6]),
        ('task:"fix login"', [2, 6]),
        ("task:'fix login'", [2, 6]),
        ("workflow:st", [5, 6, 7]),
        ("outcome:pass", [2, 5, 6]),
        # col=value is exact, ignoring case
        ("task=t2", [3]),
        ("task=T2", [3]),
        ("task=t", []),
        ('task="fix login"', [2]),
        ("task==t2", [3]),
        ("outcome=FAILED", [3, 4]),
        # numbers: `:` and `=` are equality; comparisons; separators and suffixes
        ("tokens:1000", [2, 3]),
        ("tokens=1600", [5, 6]),
        ("tokens>1000", [5, 6, 7]),
        ("tokens>=1000", [2, 3, 5, 6, 7]),
        ("tokens<1600", [2, 3]),
        ("tokens<=1600", [2, 3, 5, 6]),
        ("tokens>1,000", [5, 6, 7]),
        ("tokens>1_000", [5, 6, 7]),
        ("tokens>=1.2m", [7]),
        ("tokens<1.6K", [2, 3]),
        ("tokens:>1000", [5, 6, 7]),
        ("tokens:<=1000", [2, 3]),
        ("duration_s>=30.25", [5, 7]),
        ("duration_s:0", [6]),
        ("duration_s<-1", []),
        ("tokens>1e400", []),
        ("tokens<99999999999999999999999", [2, 3, 5, 6, 7]),
        # booleans take the schema's true/false words
        ("passed:true", [2, 5, 6]),
        ("passed:yes", [2, 5, 6]),
        ("passed=1", [2, 5, 6]),
        ("passed:false", [3, 4]),
        ("passed:no", [3, 4]),
        # regex: case-insensitive unless `(?-i)`, over the text of the cell
        ("task~^fix", [2, 6]),
        ("task~(?-i)^fix", [2]),
        ("task~^t\\d$", [3, 5, 7]),
        ('task~"login( page)?$"', [2, 6]),
        ("tokens~^1", [2, 3, 5, 6, 7]),
        # negation
        ("-lean", [5, 6, 7]),
        ("-failed", [2, 5, 6, 7]),
        # only a leading `-` negates: after an empty quoted part it is text
        ('""-1', []),
        ('-""-1', ALL),
        ('""-lean', []),
        ("-task:login", [3, 4, 5, 7]),
        ("-tokens>1000", [2, 3, 4]),
        ("lean -failed", [2]),
        ("-passed:true", [3, 4, 7]),
        # != is exactly a negated =
        ("task!=t2", [2, 4, 5, 6, 7]),
        ("tokens!=1000", [4, 5, 6, 7]),
        ("passed!=true", [3, 4, 7]),
        # missing cells
        ("task:null", [4]),
        ("tokens:missing", [4]),
        ("tokens=—", [4]),
        ("-tokens:null", [2, 3, 5, 6, 7]),
        ("tokens!=null", [2, 3, 5, 6, 7]),
        ("passed:null", [7]),
        ('task:"null"', []),
        # column names: any case, spaces as `_`, aliases
        ("Workflow:lean", [2, 3, 4]),
        ("agent:lean", [2, 3, 4]),
        ("Task_ID:t2", [3]),
        ("total-tokens>1000", [5, 6, 7]),
        ("run_note:c", [4]),
        ('"run note":c', [4]),
        ("RUN.NOTE=c", [4]),
        # dates and datetimes
        ("timestamp>2024-05-01T12:00", [3, 4, 7]),
        ('timestamp>="2024-05-01 23:00"', [3, 4, 7]),
        ("timestamp=2024-05-01", [2, 3]),
        ("timestamp>2024-05-01", [4, 7]),
        ("timestamp<=2024-05-01", [2, 3, 6]),
        ("timestamp:2024-05", [2, 3, 4]),
        ("timestamp:2024-05-01T10", [2]),
        ("timestamp:null", [5]),
        ("day>=2024-05-03", [5, 6, 7]),
        ("day=2024-05-01", [2, 3]),
        ("day:2024-05-0", ALL),
        # quotes: backslash escapes the quote and the backslash, nothing else
        (r'model:"gpt\-x"', []),
        ('model:"gpt-x" lean', [2, 3]),
        # an unclosed quote runs to the end, so typing mid-quote already filters
        ('task:"fix lo', [2, 6]),
        # `:<` on text is a search for the text
        ("model:<x", []),
        ("-model:>x", ALL),
    ],
)
def test_filter_keeps(text: str, kept: list[int]) -> None:
    assert lines(text) == kept


def test_text_search_uses_categorical_and_enum_columns() -> None:
    frame = ATTEMPTS.with_columns(pl.col("model").cast(pl.Categorical))
    assert lines("claude", frame) == [4, 5, 6]
    assert lines("model=claude", frame) == [4, 5, 6]
    assert lines("-model:claude", frame) == [2, 3, 7]


def test_shortcuts_search_text_when_there_is_no_outcome_column() -> None:
    frame = ATTEMPTS.drop("outcome").with_columns(note=pl.lit("nothing passed here"))
    assert lines("passed", frame) == ALL


def test_timezone_aware_datetimes() -> None:
    frame = ATTEMPTS.with_columns(pl.col("timestamp").dt.replace_time_zone("Europe/Paris"))
    assert lines("timestamp>2024-05-01T12:00", frame) == [3, 4, 7]
    # 10:00 in Paris (summer) is 08:00 UTC.
    assert lines("timestamp=2024-05-01T08:00Z", frame) == [2]
    assert lines("timestamp=2024-05-01", frame) == [2, 3]
    # A wall-clock time that does not exist in that zone matches nothing rather than failing.
    assert lines("timestamp>2024-03-31T02:30", frame) == []
    assert lines("-timestamp>2024-03-31T02:30", frame) == ALL


def test_all_null_column() -> None:
    frame = ATTEMPTS.with_columns(empty=pl.lit(None))
    assert lines("empty:null", frame) == ALL
    assert lines("empty:x", frame) == []
    assert lines("-empty:x", frame) == ALL


def test_result_is_one_boolean_named_filter() -> None:
    expression = parse_filter("lean -failed", ATTEMPTS.schema)
    assert expression is not None
    result = ATTEMPTS.select(expression)
    assert result.columns == ["filter"]
    assert result["filter"].to_list() == [True, False, False, False, False, False]


def test_schema_may_be_a_plain_dict_of_dtype_classes() -> None:
    schema = {"workflow": pl.String, "tokens": pl.Int64, "timestamp": pl.Datetime}
    frame = pl.DataFrame(
        {"workflow": ["a", "b"], "tokens": [1, 2], "timestamp": [dt.datetime(2024, 1, 1)] * 2}
    )
    expression = parse_filter("workflow:a tokens<2 timestamp<2025-01-01", schema)
    assert expression is not None
    assert frame.filter(expression)["workflow"].to_list() == ["a"]


# --- errors: one line for people, pointing at the bad part ----------------------------------------


def test_unknown_column_suggests_the_closest() -> None:
    problem = error("taks:login")
    assert problem.message == "unknown column 'taks'; did you mean 'task'?"
    assert (problem.position, problem.end) == (0, 4)


def test_unknown_column_suggests_an_alias() -> None:
    assert "did you mean 'agent' (another name for 'workflow')?" in error("agnet:x").message


def test_unknown_column_without_a_close_one_lists_columns_and_how_to_search() -> None:
    problem = error("see http://example.com")
    assert problem.message.startswith("unknown column 'http' (columns: workflow, task, ")
    assert problem.message.endswith('quote it: "http://example.com"')
    assert problem.position == 4


@pytest.mark.parametrize(
    ("text", "part", "says"),
    [
        ("lean tokens:abc", "abc", "not a number"),
        ("tokens>", ">", "needs a value"),
        ("task>3", ">", "compares numbers or dates; task is text"),
        ("passed>1", ">", "passed is true/false"),
        ("passed:maybe", "maybe", "neither"),
        ("task~(unclosed", "(unclosed", "bad regular expression"),
        ("task~[z-a]", "[z-a]", "bad regular expression"),
        ("task~(?<=a)b", "(?<=a)b", "bad regular expression"),
        ("outcome=pased", "pased", "did you mean 'passed'"),
        ("lean -", "-", "needs a term after it"),
        (":x", ":", "a column name is needed"),
        ("-=x", "=", "a column name is needed"),
        ("timestamp>yesterday", "yesterday", "not one (e.g. 2024-05-01T14:30)"),
        ("day>2024-05-01T10:00", "2024-05-01T10:00", "not one (e.g. 2024-05-01)"),
        ("tokens>1,00", "1,00", "not a number"),
        ("-taks:x", "taks", "did you mean 'task'"),
    ],
)
def test_errors_point_at_the_bad_part(text: str, part: str, says: str) -> None:
    assert pointed_at(text) == part
    assert says in error(text).message


def test_filter_error_is_a_value_error_whose_str_is_the_message() -> None:
    problem = error("taks:x")
    assert isinstance(problem, ValueError)
    assert str(problem) == problem.message


def test_list_columns_cannot_be_searched_but_can_be_tested_for_missing() -> None:
    frame = ATTEMPTS.with_columns(tags=pl.Series([["a"], None, [], ["b"], ["c"], ["d"]]))
    assert "cannot search" in error("tags:a", frame).message
    assert lines("tags:null", frame) == [3]
    assert lines("lean", frame) == [2, 3, 4]  # bare words skip what is not text


# --- tokenize and describe ------------------------------------------------------------------------


def test_tokenize_reports_parts_and_offsets() -> None:
    first, second = tokenize('-task:"fix \\"login\\"" tokens:>=1k')
    assert (first.negated, first.column, first.op, first.value) == (
        True,
        "task",
        ":",
        'fix "login"',
    )
    assert first.value_quoted and (first.start, first.column_start, first.op_start) == (0, 1, 5)
    assert (second.column, second.op, second.value, second.start) == ("tokens", ":>=", "1k", 22)


def test_tokenize_bare_words_and_quoted_columns() -> None:
    bare, quoted = tokenize('lean "run note"=a')
    assert (bare.column, bare.op, bare.value, bare.value_quoted) == (None, None, "lean", False)
    assert (quoted.column, quoted.op, quoted.value) == ("run note", "=", "a")


def test_backslash_outside_quotes_is_literal() -> None:
    (term,) = tokenize(r"task~^t\d$")
    assert term.value == r"^t\d$"


def test_describe_terms() -> None:
    assert describe_terms('agent:lean -failed tokens>1.5k task:null "x"', ATTEMPTS.schema) == [
        'workflow contains "lean"',
        "not (outcome is failed)",
        "tokens > 1,500",
        "task is missing",
        'any text contains "x"',
    ]


# --- writing terms for `f` / `F` ------------------------------------------------------------------


def test_filter_term_examples() -> None:
    assert filter_term("task", "fix login") == 'task="fix login"'
    assert filter_term("task", "t2") == "task=t2"
    assert filter_term("task", None) == "task:null"
    assert filter_term("task", "t2", exclude=True) == "-task=t2"
    assert filter_term("tokens", 1000) == "tokens=1000"
    assert filter_term("passed", False) == "passed=false"
    assert filter_term("run note", "a") == '"run note"=a'
    assert filter_term("day", dt.date(2024, 5, 1)) == "day=2024-05-01"
    assert quote_value("null") == '"null"'
    assert quote_value('say "hi"\\') == '"say \\"hi\\"\\\\"'


@pytest.mark.parametrize(
    ("column", "row"),
    [
        (c, r)
        for c in ("task", "tokens", "passed", "timestamp", "day", "duration_s")
        for r in range(6)
    ],
)
def test_filter_term_round_trips_on_every_cell(column: str, row: int) -> None:
    value = ATTEMPTS[column][row]
    expected = [
        line
        for line, cell in zip(ATTEMPTS["line"], ATTEMPTS[column], strict=True)
        if (cell is None and value is None)
        or (cell is not None and value is not None and str(cell).lower() == str(value).lower())
    ]
    assert lines(filter_term(column, value)) == expected
    assert lines(filter_term(column, value, exclude=True)) == [x for x in ALL if x not in expected]


@given(st.text(min_size=1))
def test_filter_term_round_trips_any_text(value: str) -> None:
    frame = pl.DataFrame({"task": [value, value + "x", None], "line": [1, 2, 3]})
    term = filter_term("task", value)
    assert term.isprintable()  # the app's filter box never holds a file's control bytes
    assert lines(term, frame) == [1]


def test_filter_term_writes_hostile_text_as_printable_escapes() -> None:
    value = "esc\x1b[31mred\u202e"
    assert filter_term("task", value) == 'task~"^esc\\x{1b}\\[31mred\\x{202e}$"'
    frame = pl.DataFrame({"note \x1b[1m": [value, "ESC"], "line": [1, 2]})
    term = filter_term("note \x1b[1m", "ESC", exclude=True)
    assert term == '-"note \\\\x1b[1m"=ESC'  # the column as the screen shows it
    assert lines(term, frame) == [1]
    with pytest.raises(FilterError) as caught:
        parse_filter("nosuch:x", frame.schema)
    assert "\x1b" not in caught.value.message and "note \\x1b[1m" in caught.value.message


# --- properties: never crash, negation partitions -------------------------------------------------

# A frame with one column of every kind the loader may produce.
EVERY_KIND = pl.DataFrame(
    {
        "workflow": ["lean", "steady", None],
        "task": ["a b", None, 'q"x'],
        "outcome": pl.Series(["passed", "failed", "error"], dtype=OUTCOME_DTYPE),
        "tokens": [1, None, 3],
        "passed": [True, None, False],
        "cost": [0.5, float("nan"), None],
        "model": pl.Series(["m", None, "n"], dtype=pl.Categorical),
        "timestamp": pl.Series([dt.datetime(2024, 1, 1), None, dt.datetime(2024, 3, 31, 2)]),
        "zoned": pl.Series([dt.datetime(2024, 3, 31, 1)] * 3).dt.replace_time_zone("Europe/Paris"),
        "day": [dt.date(2024, 1, 1), None, dt.date(1, 1, 1)],
        "clock": [dt.time(10), None, dt.time(0)],
        "small": pl.Series([1, 2, None], dtype=pl.Int8),
        "unsigned": pl.Series([1, 2, None], dtype=pl.UInt64),
        "tags": [["a"], None, []],
        "empty": [None, None, None],
        "odd name": ["x", "y", "z"],
    }
)

SYNTAX = st.sampled_from(
    [
        *EVERY_KIND.columns,
        *("agent", "Task", "-", ":", "=", "==", "!=", ">", ">=", "<", "<=", "~"),
        *('"', "'", "\\", " ", "null", "missing", "—", "passed", "1k", "1,000", "-1", "1e9"),
        *("nan", "2024-01-01", "2024-03-31T02:30", "10:00", "true", "(", ")", "[", "]", ".*"),
        *("{99}", "?", "(?-i)", "(?P<x>", "\\d", "\u202e", "\x1b", "x" * 5),
    ]
)


def syntax_soup() -> st.SearchStrategy[str]:
    return st.lists(SYNTAX, max_size=12).map("".join)


def evaluate(text: str) -> pl.DataFrame | None:
    try:
        expression = parse_filter(text, EVERY_KIND.schema)
    except FilterError as problem:
        assert isinstance(problem.message, str) and problem.message
        assert 0 <= problem.position <= problem.end <= len(text) + 1
        return None
    return EVERY_KIND if expression is None else EVERY_KIND.filter(expression)


@settings(max_examples=400, deadline=None)
@given(st.one_of(syntax_soup(), st.text(), st.text(alphabet=string.printable)))
def test_any_text_raises_only_filter_error_and_evaluates(text: str) -> None:
    evaluate(text)


@settings(max_examples=300, deadline=None)
@given(syntax_soup())
def test_a_term_and_its_negation_split_the_rows(text: str) -> None:
    terms = text.split()
    if len(terms) != 1 or terms[0].startswith("-") or not terms[0].strip('"'):
        return
    term = terms[0]
    try:
        positive = parse_filter(term, EVERY_KIND.schema)
        negative = parse_filter("-" + term, EVERY_KIND.schema)
    except FilterError:
        return
    if positive is None or negative is None:
        return
    kept = EVERY_KIND.with_row_index("i").filter(positive)["i"].to_list()
    dropped = EVERY_KIND.with_row_index("i").filter(negative)["i"].to_list()
    assert sorted(kept + dropped) == [0, 1, 2]


# --- matching through the distinct text values -------------------------------------------------


def test_text_terms_through_distinct_values_keep_the_same_rows() -> None:
    rows = 400
    frame = pl.DataFrame(
        {
            "workflow": [["lean", "steady", "Lean-2", None][i % 4] for i in range(rows)],
            "task": [f"t{i % 7}" for i in range(rows)],
            "note": [f"note {i}" for i in range(rows)],  # one per row: matched row by row
            "model": pl.Series(
                [["gpt", "claude"][i % 2] for i in range(rows)], dtype=pl.Categorical
            ),
            "tokens": list(range(rows)),
        }
    )
    values = text_values(frame)
    assert "workflow" in values and "task" in values and "model" in values
    assert "note" not in values
    for text in [
        "lean",
        "-lean",
        "LEAN",
        "workflow=lean",
        "workflow!=lean",
        "task~^t[12]$",
        "model:CLA",
        "model=gpt",
        "nothing-matches",
        "note:7",
        "-workflow:lean tokens>100",
        "workflow:null",
    ]:
        plain = parse_filter(text, frame.schema)
        fast = parse_filter(text, frame.schema, values)
        assert plain is not None and fast is not None
        assert frame.filter(fast).equals(frame.filter(plain)), text
    # A word no value holds is a constant false, not a scan of the rows.
    assert frame.filter(parse_filter("zzz", frame.schema, values)).height == 0


def test_compact_text_keeps_values_and_rows_and_makes_repetitive_text_categorical(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = pl.DataFrame({"workflow": ["lean"] * 10})
    same, no_values = compact_text(small)
    assert same is small and no_values is None  # small frames are left as they are
    monkeypatch.setattr("tui_ledger.accounting.compact.COMPACT_MIN_ROWS", 0)
    rows = 400
    frame = pl.DataFrame(
        {
            "workflow": [["lean", "steady", None][i % 3] for i in range(rows)],
            "note": [f"note {i}" for i in range(rows)],
            "tokens": list(range(rows)),
        }
    )
    compact, values = compact_text(frame)
    assert compact.schema["workflow"] == pl.Categorical
    assert compact.schema["note"] == pl.String  # one value per row: kept as it is
    assert compact.schema["tokens"] == pl.Int64
    assert compact.with_columns(pl.col("workflow").cast(pl.String)).equals(frame)
    assert "workflow" in values and "note" not in values
    for text in ["lean", "workflow=steady", "-workflow:lean", "workflow~^s", "note:12"]:
        expected = frame.filter(parse_filter(text, frame.schema))
        got = compact.filter(parse_filter(text, compact.schema, values))
        assert got.with_columns(pl.col("workflow").cast(pl.String)).equals(expected), text
