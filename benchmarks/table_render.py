"""How long the attempts table takes to show and page through 1M and 10M attempts, headlessly.

    python benchmarks/table_render.py            # 1M and 10M rows
    python benchmarks/table_render.py --rows 1000000 --pages 300

For each size it builds an attempts-shaped frame in polars (no Python loop per row), mounts an
`AttemptsTable` in a headless app (`App.run_test`) and prints:

- `set_frame`: the call that swaps the data in (column widths from a sample, cursor lookup);
- first screen: from `set_frame` until the first screen is painted;
- page down ×N: N PageDown key presses through Pilot, each painted (includes Pilot's own
  waiting between key presses, which is most of it);
- page up ×N direct: the table's own cost per page, the action plus `render_line` for every
  visible line, called directly;
- end: jump to the last row;
- set_frame again: a filter-sized swap (every other row) that keeps the cursor on its attempt.

Figures, not assertions: the point is that they do not grow with the row count.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import polars as pl
from textual.app import App, ComposeResult

from tui_ledger.schema import OUTCOME_DTYPE, OUTCOMES
from tui_ledger.tui.widgets.attempts_table import AttemptsTable


def attempts_frame(rows: int) -> pl.DataFrame:
    """A synthetic attempts frame with the loader's columns, built with polars expressions."""
    index = pl.int_range(rows, dtype=pl.Int64)
    outcome_codes = (index.hash(1) % 100).cast(pl.Int64)
    return (
        pl.select(index.alias("row"))
        .with_columns(
            workflow=pl.format("workflow-{}", (pl.col("row").hash(2) % 6).cast(pl.Int64)),
            task=pl.format("task-{}", (pl.col("row").hash(3) % 5_000).cast(pl.Int64)),
            outcome=pl.when(outcome_codes < 55)
            .then(pl.lit(OUTCOMES[0]))
            .when(outcome_codes < 85)
            .then(pl.lit(OUTCOMES[1]))
            .when(outcome_codes < 93)
            .then(pl.lit(OUTCOMES[2]))
            .when(outcome_codes < 98)
            .then(pl.lit(OUTCOMES[3]))
            .otherwise(pl.lit(OUTCOMES[4]))
            .cast(OUTCOME_DTYPE),
            tokens=pl.when(pl.col("row").hash(4) % 50 == 0)
            .then(None)
            .otherwise((pl.col("row").hash(5) % 2_000_000).cast(pl.Int64)),
            model=pl.format("model-{}", (pl.col("row").hash(6) % 3).cast(pl.Int64)),
            duration_s=(pl.col("row").hash(7) % 100_000).cast(pl.Float64) / 100,
            source=pl.lit("runs.csv"),
            line=pl.col("row") + 2,
        )
        .drop("row")
    )


class _Host(App[None]):
    """A screen holding only the table."""

    def compose(self) -> ComposeResult:
        yield AttemptsTable()


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


async def _measure(frame: pl.DataFrame, pages: int, size: tuple[int, int]) -> None:
    app = _Host()
    async with app.run_test(size=size) as pilot:
        table = app.query_one(AttemptsTable)
        table.focus()
        await pilot.pause()

        started = time.perf_counter()
        table.set_frame(frame)
        set_frame_done = time.perf_counter()
        await pilot.pause()
        first_screen_done = time.perf_counter()
        print(f"  set_frame           {_ms(set_frame_done - started)}")
        print(f"  first screen        {_ms(first_screen_done - started)}")

        started = time.perf_counter()
        for _ in range(pages):
            await pilot.press("pagedown")
        await pilot.pause()
        paged = time.perf_counter() - started
        print(
            f"  page down ×{pages:<4}     {_ms(paged)}  ({_ms(paged / pages).strip()} each,"
            f" cursor at row {table.cursor_row:,})"
        )

        # The table's own share: the action and every visible line, without Pilot's pacing.
        started = time.perf_counter()
        for _ in range(pages):
            table.action_page_up()
            for y in range(table.size.height):
                table.render_line(y)
        direct = time.perf_counter() - started
        print(
            f"  page up ×{pages:<4} direct {_ms(direct)}  ({_ms(direct / pages).strip()} each:"
            " action + render_line for every visible line)"
        )

        started = time.perf_counter()
        await pilot.press("end")
        await pilot.pause()
        print(f"  end (last row)      {_ms(time.perf_counter() - started)}")

        every_other = frame.gather_every(2)
        started = time.perf_counter()
        table.set_frame(every_other)
        await pilot.pause()
        print(
            f"  set_frame (filter)  {_ms(time.perf_counter() - started)}"
            f"  (cursor on row {table.cursor_row:,} of {every_other.height:,})"
        )


def main() -> None:
    """Print the figures for each requested size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows", type=int, nargs="*", default=[1_000_000, 10_000_000], help="frame sizes"
    )
    parser.add_argument("--pages", type=int, default=100, help="PageDown presses")
    parser.add_argument("--width", type=int, default=160)
    parser.add_argument("--height", type=int, default=50)
    args = parser.parse_args()
    for rows in args.rows:
        started = time.perf_counter()
        frame = attempts_frame(rows)
        print(f"{rows:,} rows (frame built in {time.perf_counter() - started:.1f} s)")
        asyncio.run(_measure(frame, args.pages, (args.width, args.height)))


if __name__ == "__main__":
    main()
