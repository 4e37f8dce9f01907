"""The page's CJK webfont holds every Chinese character the page and the API's explanation lines can show.

A new Chinese word in ``api/web/*`` or in a string of the scanned packages fails this test until
``python -m api.web.webfont`` regenerates the subset.
"""

from __future__ import annotations

import pytest

from api.web.webfont import CJK, FONT_FILE, page_characters
from scoring import settle
from scoring.rules import HAND_TYPES
from tests.scoring.settle_tables import EXAMPLES

pytest.importorskip("fontTools", reason="fontTools (dev extra) reads the font")
pytest.importorskip("brotli", reason="brotli (dev extra) decodes woff2")
from api.web.webfont import font_characters  # noqa: E402


def test_every_cjk_character_of_the_page_and_the_explanations_is_in_the_font():
    chars = page_characters()
    assert {"捉", "鸡", "番", "自", "摸", "点", "炮", "万", "筒", "条"} <= chars  # the scan finds the page's words
    missing = chars - font_characters()
    assert not missing, f"not in {FONT_FILE.name}: {''.join(sorted(missing))} — run python -m api.web.webfont"


def test_rule_names_and_the_explanation_lines_of_the_worked_examples_are_in_the_font():
    shown = "".join(zh for zh, _en in HAND_TYPES.values())
    for name, state in EXAMPLES.items():
        result = settle(state, state["rules"])
        shown += "".join(result.explanation) + "".join(t.reason for t in result.ledger) + name
    chars = set(CJK.findall(shown))
    assert len(chars) > 40
    assert not chars - font_characters(), "".join(sorted(chars - font_characters()))


def test_the_font_is_a_small_subset_with_its_licence():
    assert FONT_FILE.stat().st_size < 200_000
    assert len(font_characters()) < 1000  # a subset, not the 30,000-glyph font
    assert "SIL OPEN FONT LICENSE Version 1.1" in (FONT_FILE.parent / "zhuoji-cjk-OFL.txt").read_text()
