"""What each filter expression was parsed from, while it lives (`query.parse_filter` notes it,
`narrowing.narrows` reads it): by the expression's identity, the last few only.

Its own module so that the parser can note what it made without importing what reads it.
"""

from __future__ import annotations

import threading
import weakref

import polars as pl

_MAX = 64
_lock = threading.Lock()
_origins: dict[int, tuple[weakref.ref[pl.Expr], object]] = {}


def remember(expression: pl.Expr, origin: object) -> None:
    """Note that `expression` was made from `origin` (held as long as the note is)."""
    with _lock:
        if len(_origins) >= _MAX:
            for key in [key for key, (ref, _) in _origins.items() if ref() is None] or list(
                _origins
            )[: _MAX // 2]:
                del _origins[key]
        _origins[id(expression)] = (weakref.ref(expression), origin)


def origin_of(expression: pl.Expr) -> object | None:
    """What `expression` itself (not an equal one) was made from, if noted."""
    with _lock:
        noted = _origins.get(id(expression))
    if noted is None or noted[0]() is not expression:
        return None
    return noted[1]
