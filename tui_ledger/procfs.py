"""What Linux's /proc says about this process, read one way: a line `Name: value` of
/proc/self/status or /proc/meminfo. Elsewhere (or when a line is missing) the answer is None,
and each caller falls back as it always did."""

from __future__ import annotations


def proc_field(path: str, name: str) -> str | None:
    """The value after `name:` in a /proc file of `Name: value` lines, stripped (`"1234 kB"`,
    `"0022"`); None when the file cannot be read or has no such line."""
    try:
        with open(path, encoding="ascii") as handle:
            for row in handle:
                if row.startswith(name + ":"):
                    return row[len(name) + 1 :].strip()
    except (OSError, ValueError):
        return None
    return None


def kilobytes(value: str | None) -> int | None:
    """A /proc size (`"1234 kB"`) in bytes; None when there is none or it does not read."""
    try:
        return int(value.split()[0]) * 1024 if value else None
    except (ValueError, IndexError):
        return None
