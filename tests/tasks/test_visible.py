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
    # an allow-list of what renders: everything else goes
    ("rendered-element-kept", "<b>9</b> and <p>8</p>", "9 and 8"),
    ("attributed-element-dropped", '<b class="x">9</b>8', "8"),
    ("template-dropped", "<template>9</template>8", "8"),
    ("unknown-element-dropped", "<foo>9</foo>8", "8"),
    ("unclosed-unknown-hides-rest", "8 <script>9", "8 "),
    ("void-tag-attributes-dropped", '<img alt="9" src="x">8', "8"),
    ("comparison-is-no-tag", "$a<b$ and $c>d$", "$a<b$ and $c>d$"),
    ("strike-md", "~~9~~ 8", " 8"),
    ("unpaired-tilde-kept", "~~9", "~~9"),
    ("md-comment-line", "[//]: # (9)\n8", "8"),
    ("md-link-keeps-text", '[8](http://x "9")', "8"),
    ("md-image-dropped", "![9](x.png)8", " 8"),
    ("sout", "\\sout{9}8", "8"),
    ("command-name-is-whole", "\\stackrel{a}{=} \\cancelto{2}{8}\\frac{1}{2}", "\\stackrel{a}{=} \\frac{1}{2}"),
    ("mathjax-style", "\\style{display:none}{9}8", "8"),
    ("textcolor-white", "\\textcolor{white}{9}8", "8"),
    ("textcolor-model", "\\textcolor[rgb]{1,1,1}{9}8", "8"),
    ("textcolor-red-kept", "\\textcolor{red}{9}", "{9}"),
    ("color-switch-to-group-end", "{\\color{white} 9}8", "{}8"),
    ("color-switch-to-paragraph-end", "\\color{white} 9\n\n8", "\n\n8"),
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
