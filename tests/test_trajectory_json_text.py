"""Reading one record out of a JSON document's text (`trajectory._json_text`): the value any
path names is the value `json.loads` finds there, whatever the spacing, and a path the
document does not have is `Absent`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.trajectory import TrajectoryError
from tui_ledger.trajectory._json_text import Absent, items_of, value_at

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def paths(document: Any) -> list[tuple[str | int, ...]]:
    """Every path into `document`, the empty one included."""
    found: list[tuple[str | int, ...]] = [()]
    if isinstance(document, dict):
        for key, value in document.items():
            found.extend((key, *rest) for rest in paths(value))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend((index, *rest) for rest in paths(value))
    return found


def at(document: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


@settings(max_examples=200, deadline=None)
@given(document=documents, indent=st.sampled_from([None, 0, 2]), data=st.data())
def test_the_value_at_a_path_is_what_json_loads_finds(
    document: Any, indent: int | None, data: st.DataObject
) -> None:
    text = json.dumps(document, indent=indent)
    path = data.draw(st.sampled_from(paths(document)))
    assert value_at(text, path, "doc.json", "record") == at(document, path)
    missing = (*path, "no such key") if isinstance(at(document, path), dict) else (*path, 10**6)
    with pytest.raises(Absent):
        value_at(text, missing, "doc.json", "record")


def test_items_are_decoded_one_at_a_time_up_to_where_the_text_breaks() -> None:
    text = '{"resourceSpans": [ {"a": 1} , {"b": [2]}, {"c": "cut'
    items = items_of(text, ("resourceSpans",), "spans.json")
    assert next(items) == {"a": 1} and next(items) == {"b": [2]}
    with pytest.raises(TrajectoryError, match=r"spans\.json: resourceSpans #3: is cut off"):
        next(items)
    with pytest.raises(Absent):
        list(items_of('{"other": []}', ("resourceSpans",), "spans.json"))
    assert list(items_of('{"resourceSpans": []}', ("resourceSpans",), "spans.json")) == []
