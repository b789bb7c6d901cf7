"""The right-hand pane: per-group figures, the focused group in both views, the callout, the bars.

Everything here is drawn from one `Comparison` (computed once per filter or group-by change), the
current view and the headline metric (tokens or cost per accepted result); a toggle of either
only re-draws. Intervals stay out of the groups table (a `†` marks a figure whose interval says
little); the focused group's block shows them. The text itself is built by `summary_text`;
this widget lays it out and keeps the groups table's cursor on the group under focus.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static

from tui_ledger.accounting.ledger import VIEW_TITLES, Comparison, Metric, View
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import format_count
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import listing, plural
from tui_ledger.tui.theme import KEY_STYLE, LABEL_STYLE, MISSING_STYLE, VIEW_STYLES
from tui_ledger.tui.widgets.bars import Bars
from tui_ledger.tui.widgets.cap_lines import CapByLabel, cap_lines
from tui_ledger.tui.widgets.focus_text import (
    FOCUS_LABEL_WIDTH,
    FOCUS_NAME_WIDTH,
    callout_text,
    focus_block,
)
from tui_ledger.tui.widgets.groups_table import GroupsTable
from tui_ledger.tui.widgets.summary_text import (
    MAX_TABLE_GROUPS,
    TOKENS,
    MetricColumns,
    cell,
    fit_columns,
    group_columns,
    group_row,
    metric_columns,
    missing_notes,
)

__all__ = ["SummaryPane"]

MIN_LABEL = 12
"""A group's label is never cut below this many cells (`…` and eleven of the name)."""
MAX_LABEL = 30
"""Nor kept wider than this: past it the figures need the room more."""
COMING_WORDS = {"intervals": "intervals", "pairs": "noise check"}
"""What the warnings line says still follows the figures on screen (the checks say it in
their own words: "checking for warnings…", "⚠ 2 warnings so far")."""


class LabelIndex(Mapping[str, int]):
    """A label's place among every group's labels, looked up when asked (a few lookups a
    draw), not a map of every group made each draw (200,000 groups: 70 ms a draw)."""

    def __init__(self, labels: list[str]) -> None:
        self._labels = labels

    def __getitem__(self, label: str) -> int:
        try:
            return self._labels.index(label)
        except ValueError:
            raise KeyError(label) from None

    def __contains__(self, label: object) -> bool:
        return label in self._labels

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)


class SummaryPane(VerticalScroll, can_focus=False):
    """Per-group summary of the current view, the focused group in both views, callout, bars."""

    view: var[View] = var("keep")
    """The view drawn (bound to the app's): the groups table's figures, the colours."""
    metric: var[Metric] = var("tokens")
    """The headline metric asked for (bound to the app's); tokens without cost figures."""

    class GroupSelected(Message):
        """The user moved the summary's cursor to a group."""

        def __init__(self, label: str) -> None:
            super().__init__()
            self.label = label

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._comparison: Comparison | None = None
        self._columns: MetricColumns = TOKENS  # the headline metric's, as drawn
        self._labels: list[str] = []  # the rows of the groups table (at most MAX_TABLE_GROUPS)
        self._all_labels: list[str] = []  # every group of the comparison, in summary order
        self._shown: list[str] = []  # the table's rows' labels as drawn (`fit_labels`)
        self._block: list[str] = []  # the same, as the focus block's heading reads them
        self._index: Mapping[str, int] = {}
        self.focus_label: str | None = None
        """The group under focus, shown in both views below the table."""
        # Shown before the first layout: the table waits for a width (`on_resize`), and this
        # is the group to put its cursor on then.
        self._unfitted = False
        self._unfitted_focus: str | None = None
        # While the whole file is read (the table shows its first rows): what the pane says in
        # place of every figure (`show_progress`).
        self._progress: str | None = None
        self._pairs_coming = False  # the comparison's pairwise verdicts are being drawn
        self.cap_figures: CapByLabel | None = None
        """What the budget (`B`) did per group, by label; None without one."""
        self._empty: str | None = None  # why no attempt is selected, when not the filter
        self._grader: Text | None = None  # the grader's audit's line under the callout
        self._callout_first = False  # the callout sits right under the groups table

    def compose(self) -> ComposeResult:
        """The pieces, top to bottom."""
        yield GroupsTable(id="groups")
        yield Static(id="missing-note")
        yield Static(id="focus-name")
        yield Static(id="focus")
        yield Static(id="callout")
        yield Bars(id="bars")
        yield Static(id="warnings-line")

    def place_callout(self, *, first: bool) -> None:
        """The callout right under the groups table (`first`: a smaller terminal, where the
        first screen must still hold it), or under the focused group's block
        (`arrangement.callout_first`)."""
        if first == self._callout_first or not self.is_mounted:
            return
        self._callout_first = first
        callout = self.query_one("#callout", Static)
        if first:
            self.move_child(callout, before=self.query_one("#focus-name", Static))
        else:
            self.move_child(callout, after=self.query_one("#focus", Static))

    @property
    def groups_table(self) -> GroupsTable:
        """The per-group table."""
        return self.query_one(GroupsTable)

    @property
    def selected_label(self) -> str | None:
        """The group the summary's cursor is on."""
        row = self.groups_table.cursor_row
        return self._labels[row] if 0 <= row < len(self._labels) else None

    def watch_view(self, old: View, view: View) -> None:
        """Another view: its colour, and its figures (the comparison holds both)."""
        if view != old:
            self.set_class(view == "drop", "-drop")
            self._draw()

    def watch_metric(self, old: Metric, metric: Metric) -> None:
        """Another headline metric: the comparison holds both."""
        if metric != old:
            self._draw()

    def show(
        self,
        comparison: Comparison,
        focus_label: str | None,
        warning_count: int,
        note_count: int = 0,
        *,
        hint: str = "",
        pairs_coming: bool = False,
        coming: Sequence[str] = (),
        empty: str | None = None,
        grader: Text | None = None,
    ) -> None:
        """Draw a comparison in the current view and metric; `focus_label` is the group under
        focus; `hint` is a short line of keys shown after the warnings count; `pairs_coming`:
        its pairwise verdicts are still being drawn; `coming`: what else still follows the
        figures (`show_warnings`); `empty`: why no attempt is selected, when it is not the
        filter; `grader`: what the grader's audit adds to the callout."""
        self._comparison = comparison
        self._empty = empty
        self._grader = grader
        self._pairs_coming = pairs_coming
        # `Comparison.labels` is computed on each access: read it once per comparison.
        self._all_labels = comparison.labels
        self._index = LabelIndex(self._all_labels)
        self._labels = self._all_labels[:MAX_TABLE_GROUPS]
        self._shown, self._block = [], []  # fitted with the table, once it has a width
        self.focus_label = focus_label
        self._draw()
        self.show_warnings(warning_count, note_count, hint, coming)

    _FIGURES = ("#groups", "#missing-note", "#focus", "#bars", "#warnings-line")

    def show_progress(self, text: str | None) -> None:
        """While the whole file is read: `text` (how far the read is) in place of every figure,
        so no figure of the rows read so far passes for final; None: the figures again."""
        if text is None:
            if self._progress is None:
                return
            self._progress = None
            for selector in self._FIGURES:
                self.query_one(selector).display = selector != "#missing-note"
            self._draw()
            return
        if self._progress is None:
            for selector in self._FIGURES:
                self.query_one(selector).display = False
            self.border_title = Text.assemble(
                ("Summary", "bold"), ("  reading the file…", LABEL_STYLE)
            )
        self._progress = text
        self.query_one("#callout", Static).update(Text(text, style=LABEL_STYLE))

    def _draw(self) -> None:
        """Draw the comparison in the current view and metric (the warnings line aside)."""
        comparison = self._comparison
        if comparison is None or self._progress is not None:
            return
        view = self.view
        self._columns = metric_columns(comparison, self.metric)
        title = Text.assemble(
            ("Summary by ", "bold"),
            (safe_text(" · ".join(comparison.by)), "bold"),
            ("  ", ""),
            (VIEW_TITLES[view], VIEW_STYLES[view]),
        )
        if comparison.has_cost:
            title.append(f"  {self._columns.name} per accepted result", style=LABEL_STYLE)
        self.border_title = title
        self._fill_table(comparison, view, self.focus_label)
        callout = callout_text(
            comparison, self._columns, pairs_coming=self._pairs_coming, empty=self._empty
        )
        if self._grader is not None and comparison.keep.height:
            callout.append("\n")
            callout.append_text(self._grader)
        self.query_one("#callout", Static).update(callout)
        self.focus_group(self.focus_label)

    def show_warnings(
        self, count: int, notes: int = 0, hint: str = "", coming: Sequence[str] = ()
    ) -> None:
        """The `⚠ N warnings (w)` line (and informational notes, and a hint of keys, if any).

        `coming`: what still follows the figures on screen (`checks`, `intervals`, `pairs`).
        Until the checks are in, the line never says there are no warnings: it says they are
        being checked, and a count is of what the load found so far."""
        line = self.query_one("#warnings-line", Static)
        text = Text()
        checking = "checks" in coming
        if count:
            noun = "warning" if count == 1 else "warnings"
            text.append(f"⚠ {format_count(count)} {noun}", style=KEY_STYLE)
            if checking:
                text.append(" so far", style=LABEL_STYLE)
        elif checking:
            text.append("checking for warnings…", style=LABEL_STYLE)
        else:
            text.append("✓ no warnings", style=LABEL_STYLE)
        if notes:
            text.append(f" · {plural(notes, 'note')}", LABEL_STYLE)
        if count or notes:
            text.append(" (w)", style=LABEL_STYLE)
        later = [COMING_WORDS[name] for name in coming if name in COMING_WORDS]
        if later:
            text.append(f" · {listing(later, joiner='and')} coming", style=LABEL_STYLE)
        if hint:
            text.append(f"   {hint}", style=LABEL_STYLE)
        line.update(text)

    def focus_group(self, label: str | None) -> None:
        """Show a group's figures in both views side by side, and put the summary cursor on it."""
        self.focus_label = label
        focus = self.query_one("#focus", Static)
        name_line = self.query_one("#focus-name", Static)
        comparison = self._comparison
        if comparison is None or label is None or label not in self._index:
            focus.update("")
            name_line.display = False
            return
        index = self._index[label]
        # The block's heading reads the group as the table does (cut, distinct); a name cut
        # there is shown whole above it, wrapping as it needs.
        if not self._block and self._labels:  # shown before the table has a width
            self._block = fit_labels(self._labels, FOCUS_NAME_WIDTH)
        whole = safe_text(label)
        shown = self._block[index] if index < len(self._block) else whole
        name_line.display = shown != whole or cell_len(whole) > FOCUS_NAME_WIDTH
        name_line.styles.margin = (1, 0, 0, 0)
        focus.styles.margin = (0, 0, 0, 0) if name_line.display else (1, 0, 0, 0)
        name_line.update(
            Text.assemble(
                (safe_text(" · ".join(comparison.by)) + ": ", LABEL_STYLE), (whole, "bold")
            )
        )
        block = focus_block(comparison, index, shown, self._columns, self.view, self._table_width())
        if self.cap_figures is not None:
            block.append_text(cap_lines(self.cap_figures.get(label), FOCUS_LABEL_WIDTH))
        focus.update(block)
        table = self.groups_table
        if index < table.row_count and table.cursor_row != index and not table.has_focus:
            table.move_cursor(index)

    # ------------------------------------------------------------------ drawing

    def _table_width(self) -> int:
        """Cells the groups table can use without scrolling sideways (0: not laid out yet)."""
        return max(0, self.content_size.width - 1)  # the vertical scrollbar's column

    def _label_width(self) -> int:
        """Cells for a group's label in the table and the bars: a third of the table, between
        `MIN_LABEL` and `MAX_LABEL`."""
        return max(MIN_LABEL, min(MAX_LABEL, self._table_width() // 3))

    def on_resize(self) -> None:
        """Fit the groups table, and the focus block's wrapped notes, to the new width (the
        first time, when shown before layout: figures that arrive before the first frame are
        laid out at no width)."""
        if self._comparison is not None and self._progress is None:
            label = self._unfitted_focus if self._unfitted else self.selected_label
            self._fill_table(self._comparison, self.view, label)
            self.focus_group(self.focus_label)

    def _fill_table(self, comparison: Comparison, view: View, focus_label: str | None) -> None:
        if self._table_width() == 0:
            # Not laid out yet (the app shows a small file before its first frame): with every
            # column, the table would scroll sideways and keep that scrollbar's line once fitted.
            self._unfitted, self._unfitted_focus = True, focus_label
            return
        self._unfitted = False
        table = self.groups_table
        frame = comparison.view(view)
        columns = group_columns(comparison, view, self._columns)
        previous = table.cursor_row
        rows: list[list[Text]] = []
        notes: set[str] = set()
        for label, row, trap_row in zip(
            self._labels,
            frame.head(MAX_TABLE_GROUPS).iter_rows(named=True),
            comparison.trap.head(MAX_TABLE_GROUPS).iter_rows(named=True),
            strict=False,
        ):
            cells, row_notes = group_row(label, row, trap_row, columns, view)
            rows.append(cells)
            notes |= row_notes
        # Labels cut together, so that no two groups read the same (`labels.fit_labels`),
        # to a third of the pane: the figures keep their room, the focus block names the
        # group under focus whole.
        width = self._label_width()
        self._shown = fit_labels(self._labels, width)
        self._block = (
            self._shown if width <= FOCUS_NAME_WIDTH else fit_labels(self._labels, FOCUS_NAME_WIDTH)
        )
        for cells, shown in zip(rows, self._shown, strict=False):
            cells[0] = cell(shown, justify="left")
        headings, rows, left_out = fit_columns(
            [heading for heading, _ in columns.headings], rows, self._table_width()
        )
        justify = dict(columns.headings)
        target = self._index.get(focus_label, previous) if focus_label else previous
        target = target if target < len(self._labels) else previous
        table.fill(
            [
                (original, Text(heading, style="bold"), justify[original])  # type: ignore[misc]
                for heading, original in headings
            ],
            rows,
            max(target, 0),
        )
        extra = missing_notes(
            left_out, notes, frame, self._columns, len(self._all_labels), columns.noise_ranks
        )
        note_widget = self.query_one("#missing-note", Static)
        note_widget.update(Text("  ·  ".join(extra), style=MISSING_STYLE))
        note_widget.display = bool(extra)
        self.query_one(Bars).show(comparison, self._shown, self._columns.name)

    # ------------------------------------------------------------------ events

    def on_groups_table_cursor_moved(self, event: GroupsTable.CursorMoved) -> None:
        """A row chosen in the summary puts its group under focus."""
        event.stop()
        if not self.groups_table.has_focus:
            return  # the app moved it to follow the attempts table's cursor
        if 0 <= event.row < len(self._labels):
            self.post_message(self.GroupSelected(self._labels[event.row]))
