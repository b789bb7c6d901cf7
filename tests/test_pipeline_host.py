"""The pipeline talks to the app only by messages (docs/ARCHITECTURE.md, "The pipeline"): the
three modules that make it call nothing on the app (their `self.app`, a `host.PipelineHost`)
but starting workers, posting messages and timers, and, for the Spark pipeline's queries,
`call_from_thread`. Read from their source (static: no app is run)."""

from __future__ import annotations

import ast
from pathlib import Path

from tui_ledger.tui.host import PipelineHost

TUI = Path(__file__).resolve().parent.parent / "tui_ledger" / "tui"
ALLOWED = {"post_message", "run_worker", "set_timer"}
ALSO_ALLOWED = {"spark_pipeline.py": {"call_from_thread"}}  # its queries' counts, on screen
MODULES = ("pipeline.py", "loading.py", "follow_ups.py", "spark_pipeline.py")


def uses_of_the_app(source: str, allowed: set[str]) -> list[str]:
    """Every use of `self.app` in `source` other than a call of one of `allowed` on it, as
    "line: what" (an alias, an argument, an attribute read, another method's call)."""
    tree = ast.parse(source)
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    found: list[str] = []
    for node in ast.walk(tree):
        is_app = (
            isinstance(node, ast.Attribute)
            and node.attr == "app"
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        )
        if not is_app:
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Assign) and node in parent.targets:
            continue  # `self.app = app` in the constructor
        called = (
            isinstance(parent, ast.Attribute)
            and parent.attr in allowed
            and isinstance(parents.get(parent), ast.Call)
            and parents[parent].func is parent  # type: ignore[attr-defined]
        )
        if not called:
            found.append(f"{node.lineno}: {ast.unparse(parent or node)}")
    return sorted(found, key=lambda line: int(line.split(":")[0]))


def test_the_pipeline_calls_nothing_on_the_app_but_workers_messages_and_timers() -> None:
    for name in MODULES:
        source = (TUI / name).read_text(encoding="utf-8")
        allowed = ALLOWED | ALSO_ALLOWED.get(name, set())
        assert uses_of_the_app(source, allowed) == [], name
        assert "self.app.post_message(" in source, name  # the host is still `self.app`


def test_other_uses_of_the_app_are_caught() -> None:
    source = """
class P:
    def __init__(self, app):
        self.app = app
    def go(self):
        self.app.post_message(1)
        self.app.say("hi")
        app = self.app
        x = self.app.view
        f(self.app)
        self.app.call_from_thread(g)
"""
    found = uses_of_the_app(source, ALLOWED)
    assert [line.split(":")[0] for line in found] == ["7", "8", "9", "10", "11"]


def test_the_pipeline_host_is_what_a_worker_needs() -> None:
    members = {
        name
        for name in vars(PipelineHost)
        if not name.startswith("_") and callable(getattr(PipelineHost, name))
    }
    assert members == ALLOWED | {"call_from_thread"}
