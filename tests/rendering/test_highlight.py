"""Code highlighting, and webui/highlight.css kept equal to what generates it."""

from __future__ import annotations

from api.rendering.highlight import highlight, stylesheet
from tests.support.repository import REPOSITORY_ROOT

CSS_FILE = REPOSITORY_ROOT / "webui" / "highlight.css"


def test_highlight_css_is_current() -> None:
    assert CSS_FILE.read_text(encoding="utf-8") == stylesheet(), (
        "webui/highlight.css is stale: run scripts/highlight-css"
    )


def test_the_stylesheet_has_a_light_and_a_dark_half_for_the_same_classes() -> None:
    css = stylesheet()
    light, dark = css.split("@media (prefers-color-scheme: dark) {")
    assert "@media not all and (prefers-color-scheme: dark) {" in light
    for half in (light, dark):
        assert ".hl { background:" in half
        assert ".hl .hl-k {" in half
    assert "pre {" not in css  # nothing outside .hl is styled


def test_unknown_languages_are_left_to_the_caller() -> None:
    assert highlight("x", "no-such-language") is None


def test_spans_escape_the_code() -> None:
    assert highlight("<b>", "html") == (
        '<span class="hl-p">&lt;</span><span class="hl-nt">b</span><span class="hl-p">&gt;</span>\n'
    )
