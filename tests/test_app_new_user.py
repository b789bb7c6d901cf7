"""Issue 53, the app's half: what a new user's hour found, each with the test that fails without
its fix (a theme from the palette, a failed recompute, the view's round trip, filter messages,
the chart of nothing, cut labels, the export dialog)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from tests.pilot_helpers import press, screen_text, settle
from tui_ledger.tui.app import LedgerApp

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
DEMO = str(resources.files("tui_ledger.sample_data").joinpath("demo.csv"))


def demo_app() -> LedgerApp:
    return LedgerApp([DEMO], demo=True)


# --------------------------------------------------------------------------- 1: every theme


async def test_every_theme_of_the_palette_draws_the_app_with_keep_and_drop_apart() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        themes = sorted(app.available_themes)
        assert len(themes) > 10  # the palette offers Textual's themes, not only ours
        for name in themes:
            app.theme = name
            await pilot.pause()
            assert app.theme == name and app.return_code is None, name
            variables = app.get_css_variables()
            assert variables["keep"] != variables["drop"], name
            assert "KEEP FAILURES" in screen_text(app), name
        await press(pilot, "t")
        assert "DROP FAILURES" in screen_text(app)
