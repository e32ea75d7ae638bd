"""The part of a candidate's answer text that a reader sees, capped, scanned in linear time.

Task-neutral: every task that reads a final answer from free text (MATH, GSM8K) reads it from
`visible_text`, so text a renderer hides cannot decide the answer.

What is kept is decided by what a renderer (Markdown with HTML and MathJax/LaTeX) displays, an
allow-list: where the reader is unsure whether something shows, it is dropped, so the answer is
unreadable rather than read from hidden text.
- HTML: only the elements in `RENDERED_ELEMENTS` (`b`, `i`, `em`, `strong`, `p`, `div`, `span`,
  `sub`, `sup`, lists, tables, headings...) written with no attribute show their content (the tags
  themselves go). Any other element (`template`, `script`, `style`, `del`, `s`, `details`, an
  unknown `<foo>`), and an allowed one with any attribute (`hidden`, `style=`, `title=`...), is
  removed up to its closing tag, to the end when never closed. A void tag (`<img alt=...>`, `<br>`)
  is removed with its attributes. HTML comments, `\\iffalse ... \\fi` go.
- Markdown: struck text (`~~...~~`), link reference definitions and comments at a line's start
  (`[//]: # (...)`, `[x]: url "title"`), images (`![alt](url)`), the target and title of links
  (`[text](url "title")` keeps `text`), fenced and inline code and block quotes (`> ...`) go.
- LaTeX: `\\phantom{}` (and `\\hphantom`, `\\vphantom`), struck or cancelled text (`\\sout`,
  `\\st`, `\\xout`, `\\cancel`, `\\bcancel`, `\\xcancel`, `\\cancelto`, `\\strikeout`), the MathJax styling
  commands whose look is unknown (`\\style`, `\\class`, `\\cssId`, `\\texttip`, `\\mathtip`,
  `\\toggle`), `\\textcolor{c}{...}` and `\\colorbox{c}{...}` unless `c` is one of
  `VISIBLE_COLOURS`, and everything after `\\color{c}` to the end of its group (or of the
  paragraph) unless `c` is visible; `verbatim`/`comment`/`quote` environments go.
Every dash a reader reads as minus becomes `-`; zero-width characters are dropped. Every scan is a
`str.find` or bounded-regex loop that moves forward: linear in the text.

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
RENDERED_ELEMENTS = frozenset(
    "b i u em strong p div span sub sup small big mark center ol ul li table thead tbody tfoot tr td th h1 h2 h3 h4 h5 h6 section article main".split()
)
_VOID = frozenset("br hr img input wbr meta link source area col embed param track base".split())
# A tag: `<name` then whitespace, `/` or `>` (so `$a<b$` is no tag), attributes without `<`/`>`.
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]{0,30})(?=[\s/>])([^<>]{0,1000})>")
VISIBLE_COLOURS = frozenset("black red blue green magenta cyan brown purple orange violet teal olive darkgray gray grey maroon navy".split())
_DROPPED_GROUPS = {  # command -> brace groups it takes (all dropped)
    "\\sout": 1, "\\st": 1, "\\xout": 1, "\\cancel": 1, "\\bcancel": 1, "\\xcancel": 1, "\\cancelto": 2, "\\strikeout": 1,
    "\\style": 2, "\\class": 2, "\\cssId": 2, "\\texttip": 2, "\\mathtip": 2, "\\toggle": 2,
}
_COLOURED = {"\\textcolor": 2, "\\colorbox": 2}
_MD_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]{1,200}\]:")
_MD_IMAGE = re.compile(r"!\[[^\]\n]{0,500}\]\([^)\n]{0,1000}\)")
_MD_LINK = re.compile(r"\[([^\]\n]{0,500})\]\([^)\n]{0,1000}\)")
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


def _rendered_html(text: str) -> str:
    """Keep the content of attribute-free `RENDERED_ELEMENTS`; remove every other element up to its
    closing tag (to the end when never closed) and every tag's markup. One forward pass: each
    closing tag searched once from its opener."""
    out: list[str] = []
    position = 0
    lower = text.lower()
    while (tag := _TAG.search(text, position)) is not None:
        out.append(text[position : tag.start()])
        closing, name, attributes = tag.group(1), tag.group(2).lower(), tag.group(3).strip().rstrip("/").strip()
        position = tag.end()
        if closing or name in _VOID or tag.group(3).rstrip().endswith("/"):
            continue
        if name in RENDERED_ELEMENTS and not attributes:
            continue
        end = lower.find(f"</{name}", position)
        if end < 0:
            return "".join(out)
        close = text.find(">", end)
        position = len(text) if close < 0 else close + 1
    out.append(text[position:])
    return "".join(out)


def _group_end(text: str, start: int) -> int | None:
    """Index after the `{...}` group opening at `text[start]` (spaces skipped), or None."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    return None


def _drop_commands(text: str) -> str:
    """Remove struck, styled and invisibly coloured LaTeX groups (see the module doc). An unclosed
    group hides the rest. Forward scan: each group is read once."""
    commands = {**_DROPPED_GROUPS, **_COLOURED, "\\color": 1}
    pattern = re.compile("(?:" + "|".join(re.escape(c) for c in sorted(commands, key=len, reverse=True)) + r")(?![A-Za-z])")
    out: list[str] = []
    position = 0
    while (found := pattern.search(text, position)) is not None:
        out.append(text[position : found.start()])
        command, index = found.group(0), found.end()
        if index < len(text) and text[index] == "[":  # \textcolor[rgb]{1,1,1}: a model, never a listed colour
            close = text.find("]", index)
            index = len(text) if close < 0 else close + 1
            colour_ok = False
        else:
            colour_ok = True
        ends: list[int] = []
        for _ in range(commands[command]):
            end = _group_end(text, ends[-1] if ends else index)
            if end is None:
                return "".join(out)
            ends.append(end)
        colour = text[index:ends[0]].strip(" {}").lower()
        visible = colour_ok and colour in VISIBLE_COLOURS
        if command == "\\color":
            position = ends[0] if visible else _scope_end(text, found.start())
        elif command in _COLOURED and visible:
            out.append(text[ends[0] : ends[1]])
            position = ends[1]
        else:
            position = ends[-1]
    out.append(text[position:])
    return "".join(out)


def _scope_end(text: str, start: int) -> int:
    """Where a `\\color` switch at `start` stops applying: its group's `}`, else the paragraph's end."""
    depth = 0
    paragraph = text.find("\n\n", start)
    limit = len(text) if paragraph < 0 else paragraph
    for index in range(start, limit):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index
            depth -= 1
    return limit


def _rendered_markdown(text: str) -> str:
    """Drop struck text, link definitions and comments, images and link targets (module doc)."""
    lines = [line for line in text.split("\n") if not _MD_DEFINITION.match(line)]
    text = _MD_LINK.sub(r"\1", _MD_IMAGE.sub(" ", "\n".join(lines)))
    return drop_regions(text, "~~", "~~", unclosed_hides=False)


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
    text = _drop_phantoms(_drop_commands(_rendered_markdown(_rendered_html(text))))
    text = drop_regions(text, "\\begin{quote}", "\\end{quote}")
    lines = [_drop_inline_code(line) for line in text.split("\n") if not line.lstrip().startswith(">")]
    return "\n".join(lines)
