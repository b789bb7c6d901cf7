"""The detail panel (Enter on an attempt) draws only the fields on screen (issue 14, item 8).

A file with 2,000 columns once froze the app for seconds building a widget per field; the
panel now measures each field and renders a field's lines when they are first shown.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.pilot_helpers import press, screen_text, settle, wait_until
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.detail_screen import DetailScreen, FieldList

SIZE = (160, 45)


def wide_file(tmp_path: Path, columns: int = 2_000) -> Path:
    data: dict[str, list[object]] = {"workflow": ["a"], "tokens": [10], "passed": [True]}
    for index in range(columns):
        data[f"extra_{index:04}"] = [f"value {index}"]
    data["huge"] = ["word " * 200_000]
    path = tmp_path / "wide.csv"
    pl.DataFrame(data).write_csv(path)
    return path


async def test_two_thousand_columns_build_only_the_visible_fields(tmp_path: Path) -> None:
    app = LedgerApp([str(wide_file(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.table.focus()
        await press(pilot, "i")
        assert isinstance(app.screen, DetailScreen)
        fields = app.screen.query_one(FieldList)
        shown = fields.scrollable_content_region.height
        assert 0 < len(fields.built) <= shown < 60  # not 2,004
        text = screen_text(app)
        assert "workflow" in text and "extra_0000" in text and "value 0" in text
        assert "extra_1999" not in text

        await press(pilot, "end")
        names = [name for name, _ in fields._fields]
        last = names.index("line")
        await wait_until(pilot, lambda: last in fields.built, "the last field drawn")
        assert names.index("huge") in fields.built  # reached by scrolling, then drawn
        assert "…" in "".join(strip.text for strip in fields.built[names.index("huge")])
        assert fields.virtual_size.height > 2_000  # every field is there to scroll to
