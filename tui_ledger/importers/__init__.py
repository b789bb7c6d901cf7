"""Importers: a harness's own result files -> a raw attempts frame the loader validates.

```python
from tui_ledger.importers import find_importer, get_importer

importer = find_importer(path)            # by path and a peek at the content, or None
frame = importer.read(path)               # raw frame; raises ImporterError (a ValueError)
frame = get_importer("inspect").read(path)  # explicit --format / --importer choice
imported = importer.read_imported(path, ImportOptions(pass_threshold=0.5))
imported.frame, imported.conventions, imported.warnings  # for the load report
```

Every importer returns canonical column names where they map (workflow, task, passed, status,
the token buckets, tokens, model, run, timestamp, duration_s, cost), its harness's other useful
fields under names that are no alias of a canonical column, then `source` (the file each row
came from) and `line` (1-based record number in that file). `status` always holds a word the
loader's vocabulary knows; the harness's raw reason stays in `stop_reason`. Unknown usage is
null, a reported 0 stays 0. docs/IMPORTERS.md documents each mapping.
"""

from __future__ import annotations

from pathlib import Path

from tui_ledger.importers._base import (
    DEFAULT_OPTIONS,
    Imported,
    Importer,
    ImporterError,
    ImportOptions,
)
from tui_ledger.importers.aider import AiderImporter
from tui_ledger.importers.claude_code import ClaudeCodeImporter
from tui_ledger.importers.codex import CodexImporter
from tui_ledger.importers.harbor import HarborImporter
from tui_ledger.importers.inspect_ai import InspectImporter
from tui_ledger.importers.openhands import OpenHandsImporter
from tui_ledger.importers.otel import OtelImporter
from tui_ledger.importers.promptfoo import PromptfooImporter
from tui_ledger.importers.swebench import SWEBenchImporter
from tui_ledger.importers.terminal_bench import TerminalBenchImporter

# Tried in this order by find_importer, the most distinctive signature first; each `matches`
# peeks at most a few KB of a file, one folder listing, or a few folders.
IMPORTERS: tuple[Importer, ...] = (
    InspectImporter(),
    PromptfooImporter(),
    TerminalBenchImporter(),
    HarborImporter(),
    SWEBenchImporter(),
    OpenHandsImporter(),
    AiderImporter(),
    ClaudeCodeImporter(),
    CodexImporter(),
    OtelImporter(),
)

# Other spellings accepted by get_importer (compared lower-case, `_` and spaces read as `-`).
_ALIASES: dict[str, str] = {
    "tb": "terminal-bench",
    "terminalbench": "terminal-bench",
    "inspect-ai": "inspect",
    "inspect-eval": "inspect",
    "tb2": "harbor",
    "terminal-bench-2": "harbor",
    "harbor-job": "harbor",
    "swebench": "swe-bench",
    "mini-swe-agent": "swe-bench",
    "mini": "swe-bench",
    "swe-agent": "swe-bench",
    "sweagent": "swe-bench",
    "open-hands": "openhands",
    "openhands-eval": "openhands",
    "aider-benchmark": "aider",
    "aider-chat": "aider",
    "claude": "claude-code",
    "claude-code-sessions": "claude-code",
    "ccusage": "claude-code",
    "codex-cli": "codex",
    "codex-rollout": "codex",
    "opentelemetry": "otel",
    "otlp": "otel",
    "otlp-json": "otel",
    "gen-ai": "otel",
}


def find_importer(path: Path | str) -> Importer | None:
    """The importer whose format `path` (a file or a folder) is in, or None for plain tables."""
    path = Path(path)
    for importer in IMPORTERS:
        if importer.matches(path):
            return importer
    return None


def get_importer(name: str) -> Importer:
    """The importer called `name` ("terminal-bench", "inspect", "promptfoo" or an alias)."""
    key = "-".join(name.strip().lower().replace("_", "-").split())
    key = _ALIASES.get(key, key)
    for importer in IMPORTERS:
        if importer.name == key:
            return importer
    known = ", ".join(importer.name for importer in IMPORTERS)
    raise ImporterError(f"unknown importer {name!r}; choose one of: {known}")


def importer_names() -> tuple[str, ...]:
    """The names get_importer accepts, for a CLI's choices and help text."""
    return tuple(importer.name for importer in IMPORTERS)


# docs/ARCHITECTURE.md calls it `detect`.
detect = find_importer


__all__ = [
    "DEFAULT_OPTIONS",
    "IMPORTERS",
    "AiderImporter",
    "ClaudeCodeImporter",
    "CodexImporter",
    "HarborImporter",
    "ImportOptions",
    "Imported",
    "Importer",
    "ImporterError",
    "InspectImporter",
    "OpenHandsImporter",
    "OtelImporter",
    "PromptfooImporter",
    "SWEBenchImporter",
    "TerminalBenchImporter",
    "detect",
    "find_importer",
    "get_importer",
    "importer_names",
]
