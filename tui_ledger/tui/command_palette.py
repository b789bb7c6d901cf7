"""The command palette's provider: the registry's commands that make sense now, titled for the
moment ("Show DROP FAILURES (the trap)", "Filter to workflow = lean", ...), matched without
reading a title as markup (titles hold file values)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TypeGuard

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from tui_ledger.tui.command_model import ATTEMPT_SCOPE, CommandContext
from tui_ledger.tui.commands import COMMANDS


class LedgerCommands(Provider):
    """Command palette provider: the registry's commands that make sense now."""

    def _offers(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        context = self.app
        if not _is_context(context):
            return
        for command in COMMANDS:
            if not command.palette or not command.available(context):
                continue
            action = command.action
            if command.scope == ATTEMPT_SCOPE:
                action = f"screen.{action}"  # the attempt screen's own action
            runner = partial(context.run_action_now, action)
            yield command.palette_title(context), command.help, runner

    async def discover(self) -> Hits:
        """Everything available now, in registry order."""
        for title, help_text, runner in self._offers():
            yield DiscoveryHit(Content(title), runner, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy-match the available commands' titles."""
        matcher = self.matcher(query)
        for title, help_text, runner in self._offers():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, literal_highlight(matcher, title), runner, text=title, help=help_text
                )


def literal_highlight(matcher: Matcher, candidate: str) -> Content:
    """`Matcher.highlight` without reading the candidate as markup (titles hold file values)."""
    content = Content(candidate)
    score, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
    if not score:
        return content
    for offset in offsets:
        if not candidate[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _is_context(app: object) -> TypeGuard[CommandContext]:
    return all(hasattr(app, name) for name in ("loaded", "view", "run_action_now"))
