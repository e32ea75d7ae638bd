"""The part of a MATH candidate that a reader sees, capped, scanned in linear time.

A rendered solution hides HTML comments (`<!-- ... -->`), shows code (fenced ```` ``` ```` blocks,
inline `` `...` ``) and block quotes (lines starting with `>`) as material that is not the author's
answer, and renders every dash between a space and a digit as a minus. `visible_text` removes the
hidden and quoted regions (an unclosed comment or fence hides the rest of the text, as a renderer
does), drops zero-width characters and reads every Unicode dash as `-`. Every scan here is a
`str.find` loop: no regex with backtracking touches the raw candidate text.

`MAX_TEXT_CHARS` bounds every later stage: a longer candidate has no answer (the anchor reports
`too_long`; the shield reads only the first `MAX_TEXT_CHARS` characters).
"""

from __future__ import annotations

MAX_TEXT_CHARS = 100_000

# En dash, em dash, minus sign, figure dash, hyphen, non-breaking hyphen, small and full-width hyphen-minus.
_DASHES = str.maketrans(dict.fromkeys("\u2013\u2014\u2212\u2012\u2010\u2011\ufe63\uff0d", "-"))
_INVISIBLE = str.maketrans(dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad", None))
_SPACES = str.maketrans(dict.fromkeys("\u00a0\u2009\u202f\u2007", " "))
_HIDDEN = (("<!--", "-->"), ("```", "```"), ("~~~", "~~~"), ("\\begin{verbatim}", "\\end{verbatim}"), ("\\begin{comment}", "\\end{comment}"))


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


def visible_text(text: str) -> str:
    """`text` without hidden, quoted and code regions, with dashes as minus (see the module doc)."""
    text = normalise_characters(text[:MAX_TEXT_CHARS])
    for opener, closer in _HIDDEN:
        text = drop_regions(text, opener, closer)
    text = drop_regions(text, "\\begin{quote}", "\\end{quote}")
    lines = [_drop_inline_code(line) for line in text.split("\n") if not line.lstrip().startswith(">")]
    return "\n".join(lines)
