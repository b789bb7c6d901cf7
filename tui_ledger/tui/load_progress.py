"""What the summary pane says while a large file is read whole beside its first rows on screen:
rows and share read and time left, as estimates (`Partial`, `progress_text`).

No textual here: the pipeline (`tui.pipeline`) sets the text, the summary pane shows it.
"""

from __future__ import annotations

import dataclasses

# What the progress estimate assumes the whole load reads per second (this 2-core machine:
# 10M rows, 523 MB, load + first recompute in 1.8 s, so about 300 MB/s). Nothing reports a
# read's progress from inside polars' parser, so the share read and the time left are
# estimates, and say so; the figures themselves only ever come from the whole file.
LOAD_BYTES_PER_SECOND = 300e6


@dataclasses.dataclass(frozen=True)
class Partial:
    """The file's first records are on screen while the whole file is read (`Loaded.head`)."""

    rows: int  # records in the head
    head_bytes: int  # the bytes they came from (at most `HEAD_BYTES`)
    size: int  # bytes of the whole file
    since: float  # when the whole read began (`time.perf_counter`)

    @property
    def estimated_rows(self) -> int:
        """The whole file's rows, by the head's bytes per row."""
        return max(self.rows, round(self.size * self.rows / max(self.head_bytes, 1)))


def progress_text(partial: Partial, now: float, *, read: bool) -> str:
    """What the summary pane says while the whole file is read (`read`: it has been, and its
    first figures are being computed): rows and share read and time left, as estimates."""
    from tui_ledger.text.numbers import format_bytes

    shown = f"The table shows the file's first {partial.rows:,} rows; t, / and paging work on them."
    if read:
        return f"Computing the summary of every row…\n\n{shown}"
    elapsed = now - partial.since
    expected = partial.size / LOAD_BYTES_PER_SECOND
    total = partial.estimated_rows
    lines = [f"Reading the whole file ({format_bytes(partial.size)}, about {total:,} rows)…"]
    if elapsed < expected:
        share = elapsed / expected
        lines.append(
            f"about {round(total * share):,} rows read ({share:.0%}), "
            f"about {expected - elapsed:.1f} s left · {elapsed:.1f} s so far (estimates)"
        )
    else:
        lines.append(f"{elapsed:.1f} s so far, longer than estimated ({expected:.1f} s)")
    lines += ["", "The figures appear once every row is read; none is shown before.", shown]
    return "\n".join(lines)
