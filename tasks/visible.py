"""The part of a candidate's answer text that a reader sees, capped, scanned in linear time.

Task-neutral: every task that reads a final answer from free text (MATH, GSM8K) reads it from
`visible_text`, so text a renderer hides cannot decide the answer.

A rendered solution hides HTML comments (`<!-- ... -->`), `\\iffalse ... \\fi`, `\\phantom{}` and
HTML elements (`span`, `div`, `p`, `font`, `details`...) styled or marked to hide (`hidden`,
`style=`, `class=`, `color=`: any attribute that can hide them), and shows code (fenced ```` ``` ```` blocks, inline `` `...` ``) and block quotes (lines
starting with `>`) as material that is not the author's answer; it renders every dash a reader
reads as minus as a minus. `visible_text` removes the hidden, code and quoted regions (an unclosed
one hides the rest of the text, as a renderer does), drops zero-width characters and reads every
Unicode dash as `-`. Every scan here is a
`str.find` loop: no regex with backtracking touches the raw candidate text.

`MAX_TEXT_CHARS` bounds every later stage: a longer candidate has no answer (the anchor reports
`too_long`; the shield reads only the first `MAX_TEXT_CHARS` characters).
"""

from __future__ import annotations

import re

MAX_TEXT_CHARS = 100_000

# En dash, em dash, minus sign, figure dash, hyphen, non-breaking hyphen, small and full-width hyphen-minus.
_DASHES = str.maketrans(dict.fromkeys("\u2013\u2014\u2212\u2012\u2010\u2011\ufe63\uff0d", "-"))
_INVISIBLE = str.maketrans(dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad", None))
_SPACES = str.maketrans(dict.fromkeys("\u00a0\u2009\u202f\u2007", " "))
# An HTML element whose attributes can hide it (`hidden`, `style="display:none"`, a zero font...).
_HIDING_TAG = re.compile(r"<(span|div|p|font|details|section|small|mark|b|i|u|s|em|strong|sub|sup|label|aside)\b([^<>]{0,500})>", re.IGNORECASE)
_HIDING_ATTRIBUTE = re.compile(r"\bhidden\b|\b(?:style|class|color|aria-hidden)\s*=", re.IGNORECASE)
_PHANTOMS = ("\\phantom{", "\\hphantom{", "\\vphantom{")
_HIDDEN = (("\\iffalse", "\\fi"), ("<!--", "-->"), ("```", "```"), ("~~~", "~~~"), ("\\begin{verbatim}", "\\end{verbatim}"), ("\\begin{comment}", "\\end{comment}"))


def normalise_characters(text: str) -> str:
    """Dashes read as minus become `-`; invisible characters go; odd spaces become spaces."""
    return text.translate(_DASHES).translate(_INVISIBLE).translate(_SPACES)


def drop_regions(text: str, opener: str, closer: str, *, unclosed_hides: bool = True) -> str:
    """Remove every `opener ... closer` region. An unclosed one runs to the end when
    `unclosed_hides`, else it is kept as text. Linear: one `find` per region."""
    out: list[str] = []
    position = 0
    while (start := text.find(opener, position)) >= 0:
        out.append(text[position:start])
        end = text.find(closer, start + len(opener))
        if end < 0:
            if not unclosed_hides:
                out.append(text[start:])
            return "".join(out)
        position = end + len(closer)
    out.append(text[position:])
    return "".join(out)


def _drop_inline_code(line: str) -> str:
    """Remove `` `...` `` spans of one line (an unpaired backtick is kept as text)."""
    out: list[str] = []
    position = 0
    while (start := line.find("`", position)) >= 0:
        end = line.find("`", start + 1)
        if end < 0:
            break
        out.append(line[position:start])
        position = end + 1
    out.append(line[position:])
    return "".join(out)


def _drop_hiding_elements(text: str) -> str:
    """Remove HTML elements with an attribute that can hide them, up to their closing tag (to the
    end when never closed). One pass: each closing tag searched once from its opener."""
    out: list[str] = []
    position = 0
    while (tag := _HIDING_TAG.search(text, position)) is not None:
        if not _HIDING_ATTRIBUTE.search(tag.group(2)):
            out.append(text[position : tag.end()])
            position = tag.end()
            continue
        out.append(text[position : tag.start()])
        end = text.find(f"</{tag.group(1)}", tag.end())
        if end < 0:
            return "".join(out)
        close = text.find(">", end)
        position = len(text) if close < 0 else close + 1
    out.append(text[position:])
    return "".join(out)


def _drop_phantoms(text: str) -> str:
    """Remove `\\phantom{...}` groups (typeset as blank space); an unclosed one runs to the end."""
    for opener in _PHANTOMS:
        out: list[str] = []
        position = 0
        while (start := text.find(opener, position)) >= 0:
            out.append(text[position:start])
            depth, index = 0, start + len(opener) - 1
            while index < len(text):
                depth += {"{": 1, "}": -1}.get(text[index], 0)
                if depth == 0:
                    break
                index += 1
            position = index + 1
        out.append(text[position:])
        text = "".join(out)
    return text


def visible_text(text: str) -> str:
    """`text` without hidden, quoted and code regions, with dashes as minus (see the module doc)."""
    text = normalise_characters(text[:MAX_TEXT_CHARS])
    for opener, closer in _HIDDEN:
        text = drop_regions(text, opener, closer)
    text = _drop_phantoms(_drop_hiding_elements(text))
    text = drop_regions(text, "\\begin{quote}", "\\end{quote}")
    lines = [_drop_inline_code(line) for line in text.split("\n") if not line.lstrip().startswith(">")]
    return "\n".join(lines)
