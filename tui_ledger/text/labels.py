"""Group names cut to fit a width so that no two read the same (UX.md, Layout).

Real names are long and share prefixes (`20250923_droid_claude-4-1-opus`,
`20250923_droid_claude-4-sonnet`). Cutting each at its end makes both read
`20250923_droid_claude-4…`, and a room reads one group twice. `fit_labels` cuts a set of
names together:

1. names that fit stay whole; one name alone (a filter to it) keeps its start, after any
   leading stamps (`fix-login…`, as the column read before the filter; `…orchestrator_qw…`);
1b. else each name drops whole words, those that tell it least from the others first: run
   stamps and dates (`20250811`), words every name has, then the words most names share (a
   common model suffix, `claude-4-sonnet`), keeping its first telling word (the agent:
   `openhands`, `droid`) and at least one word no other name has; a run of dropped words
   reads `…`, at the start too (`…openhands…sonnet`, `…droid…gpt-5`): a cut label never
   passes for a whole name. If the labels still collide, the rules below apply;
2. a prefix every name shares (at least `MIN_SHARED` cells, ending at a separator such as
   `_` or `-`) goes first, from its start and only as much as needed, shown as `…`: it tells
   no group from another;
3. what is still too long is cut in the middle, keeping its start and its end; the split is
   chosen for the whole set, the most even one under which every name reads differently;
4. where no split tells two names apart (they differ only deep in the middle), each such
   name shows the window around its first difference from the others;
5. and if even that cannot (a width of a few cells), the names that still collide end in a
   number of their own (`…~2`), so they at least read differently.

The name under focus is shown whole elsewhere (the focus block); this is for lists. Every
name is made terminal-safe first (`textsafe.safe_text`), and only a window at each end of a
very long name is looked at, so a 5 MB label costs what a short one costs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from rich.cells import cell_len

from tui_ledger.text.textsafe import ELLIPSIS, safe_text

__all__ = ["MIN_SHARED", "fit_labels"]

MIN_SHARED = 4
"""A shared prefix shorter than this many cells is kept: dropping it saves too little."""

_WINDOW = 512
"""Characters kept from each end of a very long name (what a list can ever show of it)."""


def _shown(name: str) -> str:
    """The terminal-safe text of a name, reduced to its two ends when it is very long."""
    if len(name) <= 4 * _WINDOW:
        return safe_text(name)
    return safe_text(name[:_WINDOW]) + ELLIPSIS + safe_text(name[-_WINDOW:])


def _head(text: str, cells: int) -> str:
    """The longest start of `text` at most `cells` wide."""
    width = 0
    for index, character in enumerate(text):
        width += cell_len(character)
        if width > cells:
            return text[:index]
    return text


def _tail(text: str, cells: int) -> str:
    """The longest end of `text` at most `cells` wide."""
    width = 0
    for index in range(len(text) - 1, -1, -1):
        width += cell_len(text[index])
        if width > cells:
            return text[index + 1 :]
    return text


def _middle_cut(text: str, width: int, head: int) -> str:
    """`text` in at most `width` cells: `head` cells of its start, `…`, the rest from its end."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head = min(head, width - 1)
    return _head(text, head) + ELLIPSIS + _tail(text, width - 1 - head)


_SEPARATORS = frozenset("_-./:· ")


def _shared_prefix(names: Sequence[str]) -> str:
    """The prefix every name starts with, up to its last separator (`20250923_droid_`, never
    `2025092`); empty for fewer than two different names."""
    if len(set(names)) < 2:
        return ""
    first, last = min(names), max(names)
    size = 0
    for a, b in zip(first, last, strict=False):
        if a != b:
            break
        size += 1
    while size and first[size - 1] not in _SEPARATORS:
        size -= 1
    return first[:size]


def _distinct(shown: Sequence[str], names: Sequence[str]) -> bool:
    """Whether names that differ read differently."""
    seen: dict[str, str] = {}
    return all(seen.setdefault(text, name) == name for text, name in zip(shown, names, strict=True))


def _splits(width: int) -> list[int]:
    """Head widths to try for a middle cut, the most even first, then ever more uneven."""
    even = (width - 1) // 2
    order = [even]
    for step in range(1, width):
        for head in (even - step, even + step):
            if 1 <= head <= width - 2 and head not in order:
                order.append(head)
    return order


def _first_difference(a: str, b: str) -> int:
    """The index of the first character where `a` and `b` differ (or the shorter's length)."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def _around_difference(text: str, others: Sequence[str], width: int) -> str:
    """`text` cut to show where it first differs from each of `others` (a window there)."""
    first = min(_first_difference(text, other) for other in others)
    if width < 3:
        return _middle_cut(text, width, width - 1)
    window = width - 2  # `…` on each side
    start = max(0, first - window // 2)
    piece = text[start:]
    if start == 0:
        return _middle_cut(text, width, width - 1)
    return ELLIPSIS + _middle_cut(piece, width - 1, window)


_SEPARATOR_TEXT = "".join(sorted(_SEPARATORS))
_WORD = re.compile(
    f"[^{re.escape(_SEPARATOR_TEXT)}]+[{re.escape(_SEPARATOR_TEXT)}]*|[{re.escape(_SEPARATOR_TEXT)}]+"
)
"""A word and the separators after it (`_SEPARATORS`: the ones `_shared_prefix` cuts at)."""
_STAMP = re.compile(r"\d{4,}")
_MAX_WORDS = 48
"""Names of more words than this are cut by characters only (the word rule's cost is the
square of a name's words)."""


def _word_key(token: str) -> str:
    """A word without the separators after it."""
    return token.rstrip(_SEPARATOR_TEXT)


def _render(tokens: Sequence[str], kept: Sequence[bool]) -> str:
    """The kept tokens in order; a run of dropped ones reads `…`, at the start too (a label
    that lost words says so: `…orchestrator_qwen-3-coder-480B`)."""
    parts: list[str] = []
    dropped = False
    for token, keep in zip(tokens, kept, strict=True):
        if not keep:
            dropped = True
            continue
        if dropped:
            if parts:
                parts[-1] = _word_key(parts[-1]) + ELLIPSIS
            else:
                parts.append(ELLIPSIS)
        dropped = False
        parts.append(token)
    if dropped and parts:
        parts[-1] = _word_key(parts[-1]) + ELLIPSIS
    return "".join(parts)


def _word_cut(shown: Sequence[str], width: int) -> list[str] | None:
    """Each name cut by whole words (rule 1b), or None when a name has too many words."""
    tokens = [_WORD.findall(text) for text in shown]
    if any(len(words) > _MAX_WORDS for words in tokens):
        return None
    keys_by_text = {
        text: {_word_key(token) for token in words}
        for text, words in zip(shown, tokens, strict=True)
    }
    frequency: Counter[str] = Counter()
    for name_keys in keys_by_text.values():
        frequency.update(name_keys)
    everyone = len(keys_by_text)
    labels: dict[str, str] = {}
    for text, words in zip(shown, tokens, strict=True):
        if text in labels:
            continue
        if cell_len(text) <= width:
            labels[text] = text
            continue
        keys = [_word_key(token) for token in words]
        stamp = [not key or bool(_STAMP.fullmatch(key)) for key in keys]
        weak = [
            is_stamp or frequency[key] == everyone
            for is_stamp, key in zip(stamp, keys, strict=True)
        ]
        head = next((index for index, is_weak in enumerate(weak) if not is_weak), None)
        order = sorted(
            (index for index in range(len(words)) if index != head),
            # Stamps, then words every name has (from the start), then the most shared (from
            # the end: a model suffix before the agent's words).
            key=lambda index: (
                0 if stamp[index] else 1 if weak[index] else 2,
                -frequency[keys[index]],
                index if weak[index] else -index,
            ),
        )
        kept = [True] * len(words)
        telling = sum(
            1 for index, key in enumerate(keys) if frequency[key] == 1 and not weak[index]
        )
        for index in order:
            if cell_len(_render(words, kept)) <= width:
                break
            if not weak[index] and frequency[keys[index]] == 1:
                if telling <= 1 and (head is None or frequency[keys[head]] > 1):
                    continue  # the last word no other name has stays
                telling -= 1
            kept[index] = False
        label = _render(words, kept)
        if cell_len(label) > width and head is not None:
            # The agent and one word no other name has, whichever one fits beside it
            # (`…orchestrator…480B` where `…orchestrator_qwen…` is a cell too wide).
            for index in reversed(range(len(words))):
                if index == head or weak[index] or frequency[keys[index]] != 1:
                    continue
                alone = [position in (head, index) for position in range(len(words))]
                if cell_len(_render(words, alone)) <= width:
                    label = _render(words, alone)
                    break
        if cell_len(label) > width:
            label = _middle_cut(label, width, max(1, (2 * width) // 3))
        labels[text] = label
    return [labels[text] for text in shown]


def fit_labels(names: Sequence[str], width: int) -> list[str]:
    """Each name, terminal-safe, in at most `width` cells; names that differ read differently.

    Order and length follow `names`; equal names stay equal.
    """
    shown = [_shown(name) for name in names]
    if width <= 0:
        return ["" for _ in shown]
    if all(cell_len(text) <= width for text in shown) and _distinct(shown, names):
        return shown
    if len(set(shown)) == 1:  # one name (a filter to it): its start, as the column read
        return [_one_name(shown[0], width)] * len(shown)
    by_words = _word_cut(shown, width)
    if (
        by_words is not None
        and all(cell_len(label) <= width for label in by_words)
        and _distinct(by_words, names)
    ):
        return by_words
    shared = _shared_prefix(shown)
    if cell_len(shared) >= MIN_SHARED:
        # Drop what every name shares (from its start, as little as needed), `…` in its place.
        for head in _splits(width - 1):
            cut = [
                text
                if cell_len(text) <= width
                else ELLIPSIS + _tail(text, width - 1)
                if cell_len(text) - cell_len(shared) <= width - 1
                else ELLIPSIS + _middle_cut(text[len(shared) :], width - 1, head)
                for text in shown
            ]
            if _distinct(cut, names):
                return cut
    for head in _splits(width):
        cut = [_middle_cut(text, width, head) for text in shown]
        if _distinct(cut, names):
            return cut
    cut = [_middle_cut(text, width, (width - 1) // 2) for text in shown]
    clashes: dict[str, list[int]] = {}
    for index, text in enumerate(cut):
        clashes.setdefault(text, []).append(index)
    for indexes in clashes.values():
        if len({names[index] for index in indexes}) > 1:
            for index in indexes:
                others = [shown[other] for other in indexes if names[other] != names[index]]
                cut[index] = _around_difference(shown[index], others, width)
    if _distinct(cut, names):
        return cut
    return _numbered(cut, names, width)


def _one_name(text: str, width: int) -> str:
    """One name alone in `width` cells: its start after any leading run stamps or dates
    (`…orchestrator_qw…`, `fix-login-redir…`)."""
    words = _WORD.findall(text)
    kept = [True] * len(words)
    for index, token in enumerate(words[:-1]):
        if not _STAMP.fullmatch(_word_key(token)):
            break
        kept[index] = False
    label = _render(words, kept) if not all(kept) else text
    return _middle_cut(label, width, width - 1)


def _numbered(cut: list[str], names: Sequence[str], width: int) -> list[str]:
    """Names that still read alike end in a number of their own (`…~2`)."""
    owners: dict[str, list[str]] = {}
    for text, name in zip(cut, names, strict=True):
        owners.setdefault(text, [])
        if name not in owners[text]:
            owners[text].append(name)
    result = []
    for text, name in zip(cut, names, strict=True):
        if len(owners[text]) == 1:
            result.append(text)
            continue
        mark = f"~{owners[text].index(name) + 1}"
        result.append(_head(text, max(width - cell_len(mark), 0)) + mark)
    return result
