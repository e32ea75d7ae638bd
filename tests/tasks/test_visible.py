"""tasks.visible: the task-neutral reader of what a renderer displays."""

from __future__ import annotations

import pytest

from tasks.visible import MAX_TEXT_CHARS, drop_regions, normalise_characters, visible_text

CASES = [
    ("html-comment", "a <!-- \\boxed{9} --> b", "a  b"),
    ("unclosed-comment-hides-rest", "a <!-- \\boxed{9}", "a "),
    ("fenced-code", "x\n```\n9\n```\ny", "x\n\ny"),
    ("inline-code", "a `9` b", "a  b"),
    ("block-quote", "> 9\nb", "b"),
    ("hidden-span", '<span style="display:none">9</span>8', "8"),
    ("phantom", "\\phantom{9}8", "8"),
    ("dash-is-minus", "\u22128", "-8"),
    ("zero-width-dropped", "8\u200b", "8"),
]


@pytest.mark.parametrize(("text", "seen"), [(t, s) for _, t, s in CASES], ids=[i for i, _, _ in CASES])
def test_visible_text(text: str, seen: str) -> None:
    assert visible_text(text) == seen


def test_visible_text_caps_the_input() -> None:
    assert len(visible_text("a" * (MAX_TEXT_CHARS + 50))) == MAX_TEXT_CHARS


def test_drop_regions_keeps_an_unclosed_region_when_asked() -> None:
    assert drop_regions("a [b", "[", "]", unclosed_hides=False) == "a [b"
    assert drop_regions("a [b] c", "[", "]") == "a  c"


def test_normalise_characters() -> None:
    assert normalise_characters("\u2013\u00a0\u00ad") == "- "
