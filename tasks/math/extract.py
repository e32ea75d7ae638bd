"""Read a candidate's final answer the way a reader of the rendered solution would.

Only visible text counts (`tasks.visible.visible_text`: no HTML comments, code or quotes; dashes are
minus). Two kinds of final statement are read:
- the last `\\boxed{...}` / `\\fbox{...}` (balanced braces; `\\boxed 5` too), a trailing period
  inside it dropped (`\\boxed{9.}` is 9);
- the last marker line: "Final Answer: The final answer is $9$. I hope it is correct." (Minerva,
  lm-eval `minerva_math`), "The final answer is ...", "Final answer: ...", "The answer is ...",
  "Answer: ..." at a line's start (case-insensitive; markdown `**` and `$`/`\\(`/`\\[` removed).

Precedence: the last box is the answer. Other boxes in its paragraph and a marker line after it that
state something else are kept in `ReadAnswer.also`: the checker requires every such final
statement to be right, so a box and a later statement that disagree, or `\\boxed{8}` or
`\\boxed{9}`, are never read as the right one of the two (while `\\boxed{15\\frac{39}{40}}`, or
`\\boxed{\\frac{639}{40}}` is right twice); a box in an earlier paragraph is superseded. "Answer:" counts only at a line's start. A text without either
kind of statement has no answer (`no_answer`): a parse failure is never a verdict, and the last
number is never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.visible import MAX_TEXT_CHARS, drop_regions, visible_text

MAX_ANSWER_CHARS = 1000  # a longer final answer is not checked (`answer_too_long`)
_BOX_COMMANDS = ("\\boxed", "\\fbox")
# Longest first, so "the final answer is" wins over "answer is" at the same place.
_MARKERS = ("final answer is", "final answer:", "the answer is")
_LINE_MARKER = "answer:"  # only where a line starts with it ("**Answer:** 9"), not "check our answer: ..."
_HOPE = "i hope it is correct"
_EMPHASIS = re.compile(r"(?<![\w*\\])(?:\*{1,3}|_{2,3})(?=[\w$\\])|(?<=[\w:.)$}])(?:\*{1,3}|_{2,3})(?![\w*])")
_BARE_BOX = re.compile(r"[^\s$]{1,200}")
_AFTER_BOX = re.compile(r"[\s$]*(?:(?P<hedge>\(\s*or\b[^()\n]{0,40}\)|or\s+\S{1,40})|(?P<words>[A-Za-z]+(?: [A-Za-z]+)?))")


@dataclass(frozen=True)
class ReadAnswer:
    """What the candidate states as final: `answer`, plus later final statements (`also`) that
    must agree with it, plus `trailing` words after the last box's and a marker's math in their
    sentence (units, "(or 9)"): they are read for units and hedges."""

    answer: str | None
    also: tuple[str, ...] = ()
    trailing: str = ""
    boxes_on_last_line: tuple[str, ...] = ()  # the different boxes of the last box's paragraph
    unit_words: str = ""  # the words right after the last box, read for units only
    after: str = ""  # all visible text after the final statement (the last box, else the marker line)
    too_long: bool = False


def _read_braced(text: str, start: int, limit: int) -> int | None:
    """Index of the `}` closing the group that opens at `text[start]` before `limit`, or None."""
    depth = 0
    for index in range(start, limit):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _box_at(text: str, position: int, limit: int | None = None) -> tuple[str, int] | None:
    """(content, end) of the box command starting at `position` and closing before `limit`, or None."""
    limit = len(text) if limit is None else limit
    command = next(c for c in _BOX_COMMANDS if text.startswith(c, position))
    rest = position + len(command)
    while rest < limit and text[rest] == " ":
        rest += 1
    if rest < limit and text[rest] == "{":
        close = _read_braced(text, rest, limit)
        return (_strip_period(text[rest + 1 : close].strip()), close + 1) if close is not None else None
    if rest > position + len(command):
        bare = _BARE_BOX.match(text[rest : min(rest + 200, limit)])
        if bare:
            return _strip_period(bare.group(0)), rest + bare.end()
    return None


def _strip_period(content: str) -> str:
    """`9.` -> `9`: a sentence period typed inside the box is not part of the number."""
    return content[:-1].rstrip() if content.endswith(".") and not content.endswith("..") else content


def _box_starts(text: str) -> list[int]:
    """Positions of every box command, in order (linear: one `find` pass per command)."""
    found: list[int] = []
    for command in _BOX_COMMANDS:
        position = text.find(command)
        while position >= 0:
            found.append(position)
            position = text.find(command, position + 1)
    return sorted(found)


def _closing_braces(text: str) -> dict[int, int]:
    """The index of the `}` closing each `{` of `text` that is closed: one pass with a stack."""
    closing: dict[int, int] = {}
    stack: list[int] = []
    for index, char in enumerate(text):
        if char == "{":
            stack.append(index)
        elif char == "}" and stack:
            closing[stack.pop()] = index
    return closing


def _all_boxes(text: str) -> list[str]:
    """The content of every well-formed box of `text`, in order. Linear overall: braces are matched
    once for the whole text, so many unclosed openers are not each read to the text's end."""
    closing = _closing_braces(text)
    found: list[str] = []
    for position in _box_starts(text):
        command = next(c for c in _BOX_COMMANDS if text.startswith(c, position))
        rest = position + len(command)
        while rest < len(text) and text[rest] == " ":
            rest += 1
        if rest < len(text) and text[rest] == "{":
            if rest in closing:
                found.append(_strip_period(text[rest + 1 : closing[rest]].strip()))
        elif rest > position + len(command) and (bare := _BARE_BOX.match(text, rest)) is not None:
            found.append(_strip_period(bare.group(0)))
    return found


def last_boxed(text: str) -> str | None:
    """Content of the last well-formed `\\boxed{...}` / `\\fbox{...}` (or `\\boxed 5`) in `text`."""
    found = _last_box(text)
    return found[0] if found else None


def _last_box(text: str) -> tuple[str, int] | None:
    """(content, start) of the last well-formed box. A box is read once: the `}` search stops at the
    next box start, so a text of many unclosed boxes costs linear time."""
    starts = _box_starts(text)
    limit = len(text)
    for position in reversed(starts):
        box = _box_at(text, position, limit)
        if box is not None:
            return box[0], position
        limit = position
    return None


def _math_span(value: str) -> tuple[str, str] | None:
    """(content, rest) when `value` starts with `$...$`, `$$...$$`, `\\(...\\)`, `\\[...\\]` or `**...**`."""
    for opener, closer in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"), ("**", "**")):
        if value.startswith(opener):
            end = value.find(closer, len(opener))
            while closer == "$" and end > 0 and value[end - 1] == "\\":  # `$\$32,348$`: an escaped `\$` is a dollar sign
                end = value.find(closer, end + 1)
            if end > len(opener):
                return value[len(opener) : end], value[end + len(closer) :]
    return None


def _sentence(value: str) -> str:
    """`value` up to its sentence's end: a period followed by a space or the end (not `3.5`)."""
    for index, char in enumerate(value):
        if char == "." and (index + 1 == len(value) or value[index + 1].isspace()):
            return value[:index]
    return value


def _clean(answer: str, *, math: bool = False) -> str:
    """The marked answer without delimiters. A box inside it is the answer, unless a number comes
    before the box ("The answer is 8, i.e. $\\boxed{9}$"): then the whole statement, unboxed, so
    the two values are seen."""
    answer = answer.strip().strip("*").strip()
    found = _last_box(answer)
    if found is not None:
        if math or not _number_outside_math(answer[: found[1]]):
            return found[0]
        answer = answer[: found[1]] + found[0] + answer[_box_end(answer, found[1]) :]
    return _strip_period(answer.strip("$").strip()).strip("$").strip()


def _number_outside_math(prefix: str) -> bool:
    """A digit in `prefix` outside `$...$` (the math that leads to the box, `$2^3 = \\boxed{8}$`, is not a value)."""
    if prefix.count("$") % 2:
        prefix = prefix[: prefix.rfind("$")]
    return re.search(r"\d", re.sub(r"\$[^$]*\$", " ", prefix)) is not None


def _after_box(text: str) -> tuple[str, str]:
    """What a reader reads with the box: an immediate "(or 9)" / "or 9" (a hedge) and up to two
    words right after it ("dollars", "square units": units); not the rest of its sentence."""
    found = _AFTER_BOX.match(text[:120])
    return (found.group("hedge") or "", found.group("words") or "") if found else ("", "")


def _box_end(text: str, position: int) -> int:
    box = _box_at(text, position)
    return box[1] if box is not None else len(text)


def _without_emphasis(line: str) -> str:
    """`line` without markdown emphasis around words (`**Final Answer**:`, `*The answer is*`,
    `__Answer__`); a `*` between operands (`2*3`, `2 * 3`) is kept."""
    return _EMPHASIS.sub("", line)


def _marked(line: str) -> tuple[str, str] | None:
    """(answer, trailing words) of the last marker in `line`, or None when the line has none."""
    line = _without_emphasis(line)
    lower = line.lower()
    best: tuple[int, int] | None = None
    for marker in _MARKERS:
        start = lower.rfind(marker)
        if start >= 0 and (best is None or start + len(marker) > best[1]):
            best = (start, start + len(marker))
    head = line.lstrip(" \t*#").lower()
    if best is None and head.startswith(_LINE_MARKER):
        start = len(line) - len(head)
        best = (start, start + len(_LINE_MARKER))
    if best is None:
        return None
    value = line[best[1] :]
    hope = value.lower().find(_HOPE)
    if hope >= 0:
        value = value[:hope]
    value = value.strip().lstrip(":：").strip()
    while value.startswith("**") and not value.startswith("**", 2) and _math_span(value) is None:
        value = value[2:].lstrip()
    span = _math_span(value)
    if span is not None:
        inner = _math_span(span[0].strip())  # **$9$**
        content = inner[0] if inner else span[0]
        in_math = inner is not None or not value.startswith("**")  # a derivation in math leads to its box
        return _clean(content, math=in_math), _sentence(span[1]).strip(" .*$")
    return _clean(_sentence(value)), ""


def _normal_form(answer: str) -> str:
    """A spelling-blind form for telling whether two final statements say the same thing."""
    text = answer.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\left", "").replace("\\right", "")
    for token in ("\\!", "\\,", "\\;", "\\ ", "$", " "):
        text = text.replace(token, "")
    return text.rstrip(".")


def read_answer(text: str) -> ReadAnswer:
    """Every final statement of `text` (see the module doc for precedence)."""
    if len(text) > MAX_TEXT_CHARS:
        return ReadAnswer(None, too_long=True)
    seen = visible_text(text)
    box = _last_box(seen)
    lines = seen.split("\n")
    marked: tuple[str, str] | None = None
    marked_line = -1
    for index in range(len(lines) - 1, -1, -1):
        found = _marked(lines[index])
        if found is not None and found[0]:
            marked, marked_line = found, index
            break
    if box is None:
        if marked is None:
            return ReadAnswer(None)
        return ReadAnswer(marked[0], trailing=marked[1], after="\n".join(lines[marked_line + 1 :]))
    box_line = seen.count("\n", 0, box[1])
    paragraph_start = seen.rfind("\n\n", 0, box[1]) + 1
    paragraph_end = seen.find("\n\n", box[1])
    paragraph = seen[paragraph_start : paragraph_end if paragraph_end >= 0 else len(seen)]
    contents = tuple(dict.fromkeys(_all_boxes(paragraph)))
    statements = [content for content in contents if _normal_form(content) != _normal_form(box[0])]
    trailing = ""
    if marked is not None and marked_line >= box_line:
        statements.append(marked[0])
        trailing = marked[1]
    also = tuple(dict.fromkeys(s for s in statements if _normal_form(s) != _normal_form(box[0])))
    hedge, words = _after_box(seen[_box_end(seen, box[1]) :])
    after = drop_regions(seen[_box_end(seen, box[1]) :], "[asy]", "[/asy]")
    return ReadAnswer(box[0], also=also, trailing=f"{hedge} {trailing}".strip(), boxes_on_last_line=contents, unit_words=words, after=after)


def extract_answer(text: str) -> str | None:
    """The candidate's final answer as a LaTeX string, or None when it marks none (`read_answer`)."""
    return read_answer(text).answer
