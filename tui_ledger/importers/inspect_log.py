"""Reading one Inspect AI log file: a JSON log, or an `.eval` archive (zip, zstd members too).

Both give (header, samples); importers/inspect_ai.py turns them into rows and the trajectory
reader reads an archive's members with `member_bytes`.
"""

from __future__ import annotations

import io
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

from tui_ledger.importers._base import ImporterError, load_json, parse_json

_ZIP_ZSTANDARD = 93  # zip compression method id of zstd (what recent Inspect versions write)
_JOURNAL_SUMMARY = re.compile(r"^_journal/summaries/(\d+)\.json$")
_SAMPLE_FILE = re.compile(r"^samples/.+_epoch_(\d+)\.json$")


def read_json_log(path: Path) -> tuple[dict[str, Any], list[Any]]:
    document = load_json(path)
    if not isinstance(document, dict):
        raise ImporterError.at(path, "is not an Inspect AI log (not a JSON object)")
    samples = document.get("samples") or []
    if not isinstance(samples, list):
        raise ImporterError.at(path, "has a samples field that is not a list")
    return document, samples


def read_eval_archive(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """(header, per-sample records) of a `.eval` zip: summaries if present, else samples."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImporterError.at(path, f"is not a readable .eval archive ({exc})") from None
    with archive:
        names = archive.namelist()
        if "header.json" in names:
            header = _member_json(archive, path, "header.json")
        elif "_journal/start.json" in names:
            header = _member_json(archive, path, "_journal/start.json")
            if isinstance(header, dict):
                header = {**header, "status": "started"}  # a log still being written
        else:
            raise ImporterError.at(path, "is not an Inspect AI log (no header.json)")
        if not isinstance(header, dict):
            raise ImporterError.at(path, "has a header.json that is not an object")

        records: list[Any] = []
        if "summaries.json" in names:
            records = _member_list(archive, path, "summaries.json")
        else:
            # An unfinished log keeps its summaries in numbered journal files.
            journal = sorted(
                (int(match.group(1)), name)
                for name in names
                if (match := _JOURNAL_SUMMARY.match(name))
            )
            for _, name in journal:
                records.extend(_member_list(archive, path, name))
        if not records:
            for name in sorted(name for name in names if _SAMPLE_FILE.match(name)):
                records.append(_member_json(archive, path, name))
        return header, records


def _member_list(archive: zipfile.ZipFile, path: Path, name: str) -> list[Any]:
    value = _member_json(archive, path, name)
    if not isinstance(value, list):
        raise ImporterError.at(path, "is not a list", record=name)
    return value


def _member_json(archive: zipfile.ZipFile, path: Path, name: str) -> Any:
    return parse_json(member_bytes(archive, path, name), path, record=name)


def member_bytes(archive: zipfile.ZipFile, path: Path, name: str) -> bytes:
    """A member's bytes; zstd members (unknown to zipfile before Python 3.14) decoded apart."""
    info = archive.getinfo(name)
    try:
        return archive.read(info)
    except NotImplementedError:
        if info.compress_type != _ZIP_ZSTANDARD:
            raise ImporterError.at(
                path, f"uses zip compression method {info.compress_type}", record=name
            ) from None
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ImporterError.at(path, f"is damaged ({exc})", record=name) from None
    return _zstd_decompress(_raw_member(archive, info), path, name)


def _raw_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The compressed bytes of a member, read past its local header."""
    handle = archive.fp
    if handle is None:  # pragma: no cover - the archive is open here
        raise ValueError("archive is closed")
    handle.seek(info.header_offset)
    local_header = handle.read(30)
    name_length = int.from_bytes(local_header[26:28], "little")
    extra_length = int.from_bytes(local_header[28:30], "little")
    handle.seek(info.header_offset + 30 + name_length + extra_length)
    return handle.read(info.compress_size)


def _zstd_decompress(data: bytes, path: Path, name: str) -> bytes:
    """A zstd member's bytes, with Python 3.14's decoder or the optional `zstandard` package."""
    try:
        if sys.version_info >= (3, 14):
            from compression import zstd  # type: ignore[import-not-found, unused-ignore]

            return bytes(zstd.decompress(data))
        try:
            import zstandard  # type: ignore[import-not-found, import-untyped, unused-ignore]
        except ImportError:
            raise ImporterError.at(
                path,
                "is zstd-compressed, as recent Inspect versions write .eval logs; install the "
                "`zstandard` package, use Python 3.14+, or run `inspect log convert --to json`",
                record=name,
            ) from None
        with zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(data), read_across_frames=True
        ) as reader:
            return bytes(reader.read())
    except ImporterError:
        raise
    except Exception as exc:  # the decoders raise their own error types for damaged data
        raise ImporterError.at(path, f"is damaged ({exc})", record=name) from None
