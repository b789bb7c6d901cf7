"""JSON and NDJSON: numbers read exactly (never through a float), bare NaN as missing,
records wrapped in an object, and the line of anything polars refuses."""

from __future__ import annotations

import io
import json
import re

import polars as pl

from tui_ledger import schema
from tui_ledger.load.errors import LoadError
from tui_ledger.load.formats import Head, read_bytes
from tui_ledger.load.helper_columns import LINE, VALIDATED
from tui_ledger.load.inputs import Input
from tui_ledger.load.opened import Opened, empty
from tui_ledger.text.wording import first_line


def open_json(item: Input, found: Head, *, lazy: bool) -> Opened:
    """Open a JSON (array or one record) or NDJSON file, its numbers read exactly. `found`:
    its size and first bytes, read once (`opened.checked` has refused an empty file)."""
    ndjson = item.fmt == "ndjson"
    unit = "line" if ndjson else "record"
    compressed = found.compressed
    if lazy and ndjson and not compressed:
        frame = pl.scan_ndjson(item.path, infer_schema_length=None)
        try:
            types = frame.collect_schema()
        except pl.exceptions.PolarsError:
            pass  # the eager reader below says what is wrong, and where
        else:
            # Decimal numbers in a validated column are read eagerly (below): polars parses
            # them through a float even when asked for their text.
            if not _inexact_numbers(types):
                _check_wrapped(item, frame.head(2).collect())
                frame = frame.with_row_index(LINE, offset=1)
                frame = frame.with_columns(pl.col(LINE).cast(pl.Int64))
                return Opened(item, "ndjson", frame, types.names(), unit, in_memory=False)
    raw = read_bytes(item.path, compressed)
    if not raw.strip():
        raise empty(item)
    try:
        raw.decode("utf-8")
        lossy = False
    except UnicodeDecodeError:
        raw = raw.decode("utf-8", errors="replace").encode("utf-8")
        lossy = True
    reader = pl.read_ndjson if ndjson else pl.read_json
    try:
        data = reader(io.BytesIO(raw), infer_schema_length=None)
    except pl.exceptions.PolarsError as error:
        without_nan = _json_without_nan(item, raw)
        if without_nan is None:
            raise _json_error(item, raw, error) from None
        try:
            data = reader(io.BytesIO(without_nan), infer_schema_length=None)
        except pl.exceptions.PolarsError as again:
            raise _json_error(item, raw, again) from None
        raw = without_nan
    if data.width == 0 or data.height == 0:
        raise empty(item)
    _check_wrapped(item, data)
    names = data.columns
    inexact = _inexact_numbers(data.schema)
    if inexact:
        exact = _numbers_as_text(raw, set(inexact))
        data = reader(io.BytesIO(exact), infer_schema_length=None, schema_overrides=inexact)
    frame = data.lazy().with_row_index(LINE, offset=1).with_columns(pl.col(LINE).cast(pl.Int64))
    return Opened(item, item.fmt or "json", frame, names, unit, lossy=lossy)


# A JSON string, then (for a key) the number after its colon.
_JSON_KEYED_NUMBER = re.compile(
    r'"(?:[^"\\]|\\.)*"(?:(\s*:\s*)(-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)(?![0-9.eE]))?'
)


def _numbers_as_text(raw: bytes, keys: set[str]) -> bytes:
    """The JSON text with every number under one of `keys` written as a string of its digits.

    polars reads a decimal number through a float even when asked for its text, so
    `9007199254740993.0` would become 9007199254740992; quoted, it is validated as written.
    Keys are matched at any depth (a nested object's `tokens` is quoted too).
    """
    text = raw.decode("utf-8", errors="replace")

    def quote(match: re.Match[str]) -> str:
        whole = match.group(0)
        if match.group(2) is None:
            return whole
        key = whole[: len(whole) - len(match.group(1)) - len(match.group(2))]
        try:
            name = json.loads(key)
        except ValueError:
            return whole
        if name not in keys:
            return whole
        return f'{key}{match.group(1)}"{match.group(2)}"'

    return _JSON_KEYED_NUMBER.sub(quote, text).encode("utf-8")


def _check_wrapped(item: Input, data: pl.DataFrame) -> None:
    """One JSON object holding the records in a list (`{"runs": [...]}`): say where they are."""
    if data.height != 1 or any(schema.canonical_for(name) == "workflow" for name in data.columns):
        return
    for name, dtype in data.schema.items():
        if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
            raise LoadError(
                f"{item.display}: one object whose {name!r} holds a list of records; "
                f"ledger-tui reads the records themselves: extract them, for example "
                f"jq '.[{json.dumps(name)}]' FILE > runs.json.",
                source=item.display,
                column=name,
            )


def _inexact_numbers(types: pl.Schema) -> dict[str, pl.DataType]:
    """Validated columns the JSON reader guessed as floats, or as text (numbers mixed with
    strings): read them as their text instead, so a count is checked as written, never
    through a float (polars writes `9223372036854775296.0` as `9223372036854776000`)."""
    return {
        name: pl.String()
        for name, dtype in types.items()
        if schema.canonical_for(name) in VALIDATED and (dtype.is_float() or dtype == pl.String)
    }


def _json_error(item: Input, raw: bytes, error: Exception) -> LoadError:
    """Name the line (or record) of JSON polars refused; the locating runs only after polars
    has failed. Valid JSON that polars still refuses is named by what is wrong with it."""
    text = raw.decode("utf-8", errors="replace")
    if "can only deserialize json objects" in str(error):
        return LoadError(
            f"{item.display}: the JSON holds values that are not records; write an array of "
            "objects, one per attempt.",
            source=item.display,
        )
    label = "NDJSON" if item.fmt == "ndjson" else "JSON"
    line: int | None = None
    place = ""
    detail = first_line(error)
    if item.fmt == "ndjson":
        for number, row in enumerate(text.split("\n"), start=1):
            if not row.strip():
                continue
            try:
                value = json.loads(row)
            except json.JSONDecodeError as decode_error:
                line, place = number, f", column {decode_error.colno}"
                detail = decode_error.msg.removesuffix(" starting at")
                break
            except ValueError:
                line = number
                break
            if not isinstance(value, dict):
                return _not_a_record(item, f"line {number}", value, number)
    else:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as decode_error:
            line, place = decode_error.lineno, f", column {decode_error.colno}"
            detail = decode_error.msg.removesuffix(" starting at")
        except ValueError:
            pass
        else:
            if isinstance(document, list):
                for number, value in enumerate(document, start=1):
                    if not isinstance(value, dict):
                        return _not_a_record(item, f"record {number}", value, None)
    if line is None:
        # Valid for Python, refused by polars (say, 1e400): polars names the byte.
        found = re.search(r"at character (\d+)", str(error))
        if found is not None:
            line = raw[: int(found.group(1))].count(b"\n") + 1
    where = f"{item.display} line {line}{place}" if line is not None else item.display
    return LoadError(
        f"{where}: not valid {label} ({detail}); fix the file (cut off?), or export it again.",
        source=item.display,
        line=line,
    )


def _not_a_record(item: Input, where: str, value: object, line: int | None) -> LoadError:
    kind = {
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), "not an object")
    return LoadError(
        f"{item.display} {where}: {kind}, not a record; every attempt is an object with named "
        "fields, one per line (NDJSON) or in one array (JSON).",
        source=item.display,
        line=line,
    )


# NaN and Infinity are not JSON, but Python's json module writes them for float('nan') and
# float('inf'). A string is matched whole first, so a NaN inside one is left alone.
_JSON_CONSTANTS = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity)\b|\bNaN\b')


def _json_without_nan(item: Input, raw: bytes) -> bytes | None:
    """The JSON text with every bare NaN written as null (missing), or None when there is none.

    A bare Infinity is refused, naming its line: no count is infinite, and guessing a value
    for it would be inventing data.
    """
    text = raw.decode("utf-8", errors="replace")
    if "NaN" not in text and "Infinity" not in text:
        return None
    replaced = 0

    def swap(match: re.Match[str]) -> str:
        nonlocal replaced
        if match.group(0).startswith('"'):
            return match.group(0)
        if match.group(1) is not None:
            line = text.count("\n", 0, match.start()) + 1
            raise LoadError(
                f"{item.display} line {line}: {match.group(1)} is not a number JSON can hold, "
                "and no count is infinite; write null where the value is unknown.",
                source=item.display,
                line=line,
            )
        replaced += 1
        return "null"

    rewritten = _JSON_CONSTANTS.sub(swap, text)
    return rewritten.encode("utf-8") if replaced else None
