"""Where a served session may write an export: only inside the owner's export folder.

`ledger-tui serve` runs one app per browser tab. A file name typed into such an app comes from
whoever holds the page, and lands on the server's disk, so unless the owner named an export
folder when starting `serve` (`--export-dir`) the app sends exports to the browser instead of
writing them. With an export folder, `decide_export` says whether a requested name may be
written, and where:

- the path is resolved (symbolic links followed) and must lie inside the export folder;
- no `..` component, even one that would resolve back inside (a typed `..` is a mistake or a probe);
- never a file the ledger reads (by name or by inode: a hard link to an input is refused too),
  and never inside a folder it reads (the next session would load the export as attempts).

Plain Python, no textual: `serve` checks the folder with it before listening, and the app
checks every name with it before writing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

__all__ = [
    "EXPORT_DIR_VARIABLE",
    "ExportDecision",
    "decide_export",
    "delivery_name",
    "export_dir_from",
    "export_dir_problem",
]

# How `serve` tells each session's app the owner's export folder; an app not served ignores it.
EXPORT_DIR_VARIABLE = "LEDGER_TUI_EXPORT_DIR"


@dataclass(frozen=True)
class ExportDecision:
    """The verdict on one requested export path: where to write it, or a one-line reason not to."""

    allowed: bool
    path: Path | None
    reason: str

    @classmethod
    def refuse(cls, reason: str) -> ExportDecision:
        """A refusal, with what to do instead."""
        return cls(False, None, reason)


def export_dir_from(environ: Mapping[str, str]) -> Path | None:
    """The export folder `serve` named for this session, or None (exports go to the browser)."""
    value = environ.get(EXPORT_DIR_VARIABLE, "")
    return Path(value) if value else None


def _has_control_characters(text: str) -> bool:
    return any(ord(char) < 32 or ord(char) == 127 for char in text)


def _same_file(left: Path, right: Path) -> bool:
    try:
        return os.path.samefile(left, right)
    except OSError:  # one of them does not exist (yet): not the same file
        return False


def decide_export(
    requested: str, export_dir: str | Path, inputs: Sequence[str | Path]
) -> ExportDecision:
    """May `requested` be written by a served session whose owner named `export_dir`?

    A relative name is taken inside the export folder; an absolute one must already point
    inside it. `inputs` are the files and folders the ledger was loaded from.
    """
    if not requested:
        return ExportDecision.refuse("no file name given")
    if _has_control_characters(requested):
        return ExportDecision.refuse(f"{requested!r}: a file name cannot hold control characters")
    if ".." in PurePath(requested).parts:
        return ExportDecision.refuse(
            f"{requested}: '..' is not allowed here; name a file inside {export_dir}"
        )
    base = Path(export_dir).resolve()
    candidate = Path(requested)
    if not candidate.is_absolute():
        candidate = base / candidate
    # resolve() follows every symbolic link on the way, the last component's too: a link in the
    # export folder that points elsewhere is judged by where it points.
    target = candidate.resolve()
    if not target.is_relative_to(base):
        return ExportDecision.refuse(
            f"{requested}: outside the export folder {base}; name a file inside it"
        )
    if target == base or target.is_dir():
        return ExportDecision.refuse(f"{requested}: is a folder; name a file")
    for source in inputs:
        loaded = Path(source).resolve()
        if target == loaded or _same_file(target, loaded):
            return ExportDecision.refuse(
                f"{requested}: that is {source}, which this ledger reads; pick another name"
            )
        if loaded.is_dir() and target.is_relative_to(loaded):
            return ExportDecision.refuse(
                f"{requested}: inside {source}, a folder this ledger reads "
                "(the export would be loaded as attempts); pick another folder"
            )
    return ExportDecision(True, target, f"writes {target}")


def export_dir_problem(export_dir: str | Path, inputs: Sequence[str | Path]) -> str | None:
    """Why `export_dir` cannot be the served sessions' export folder (one line), or None."""
    folder = Path(export_dir)
    if not folder.exists():
        return f"--export-dir {export_dir}: no such folder; create it first"
    if not folder.is_dir():
        return f"--export-dir {export_dir}: not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"--export-dir {export_dir}: not writable by this user"
    base = folder.resolve()
    for source in inputs:
        loaded = Path(source).resolve()
        if loaded.is_dir() and base.is_relative_to(loaded):
            return (
                f"--export-dir {export_dir}: inside {source}, a folder being served "
                "(exports there would be loaded as attempts by later sessions); "
                "pick a folder outside it"
            )
    return None


def delivery_name(requested: str, default: str) -> str:
    """The file name a browser is offered for `requested`: its last component, printable only.

    Folders mean nothing to a download, so `../../etc/x.csv` is offered as `x.csv`.
    """
    name = PurePath(requested.replace("\\", "/")).name
    name = "".join(char for char in name if not _has_control_characters(char)).strip()
    return name if name not in ("", ".", "..") else default
