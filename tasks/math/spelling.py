"""One spelling for a final answer, applied to the gold and to every final statement before the
hedge, unit and equivalence checks, so that a notation choice never decides a verdict.

`canonical` rewrites, in this order:
- digit-group separators between a digit and three digits (`32{,}348`, `32,\\!348`, `32\\,348`,
  `32\\ 348`) into a plain `32,348` (which every later stage reads as thousands);
- every other LaTeX spacing command (`\\,` `\\;` `\\:` `\\!` `\\ ` `\\quad` `\\qquad`) into one space,
  so `5.4\\,\\text{cents}` is `5.4 \\text{cents}`, not a comma between values;
- font commands that only change the look of their argument (`\\mathbf`, `\\boldsymbol`, `\\bm`,
  `\\textbf`, `\\mathit`, `\\textit`, `\\emph`, `\\mathsf`, `\\mathtt`...) into the argument; `\\displaystyle` goes. `\\text{}`/`\\mathrm{}` stay: they carry unit words.

`without_counted_noun(answer, problem)` drops the words (of three letters or more) after a plain
number when every one of them
names what the problem counts (each occurs in the problem statement: "9 divisors" for "How many
positive divisors..."), so the noun is not read as a unit or a second value. Words of logic or
comparison ("or", "not", "than"...) are never dropped.
"""

from __future__ import annotations

import re

_GROUP = re.compile(r"(\d)(?:\{,\}|,\s*\\!|,\s*\{\}|\\,|\\!|\\ |\\;|\\:)\s*(?=\d{3}(?!\d))")
_SPACING = re.compile(r"\\(?:qquad|quad)(?![A-Za-z])|\\[,;:! ]")
_STYLE = re.compile(r"\\(?:mathbf|boldsymbol|bm|textbf|mathit|textit|emph|mathsf|mathtt|textsf|texttt|textup|textnormal)\s*\{([^{}]*)\}")
_WORDS = re.compile(r"^(?P<number>-?\d[\d,.]*)\s*(?:\\(?:text|mbox|textrm|mathrm)\s*\{\s*(?P<braced>[A-Za-z][A-Za-z\s-]*?)\s*\}|(?P<plain>[A-Za-z][A-Za-z\s-]*?))\s*\.?$")
_NEVER_NOUNS = frozenset({"or", "and", "nor", "not", "no", "either", "than", "less", "more", "plus", "minus", "times", "about", "approximately",
                          "maybe", "perhaps", "possibly", "also", "but", "is", "are", "equals", "to", "of", "at", "most", "least"})


def canonical(latex: str) -> str:
    """`latex` with digit groups, spacing and font commands in one spelling (see the module doc)."""
    text = _GROUP.sub(r"\1,", latex)
    text = _SPACING.sub(" ", text)
    previous = None
    while previous != text:  # nested styles: \mathbf{\mathit{9}}
        previous, text = text, _STYLE.sub(r"\1", text)
    return re.sub(r"\s+", " ", text.replace("\\displaystyle", " ")).strip()


def _problem_words(problem: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]+", problem[:20_000].lower()))


def _names_counted_thing(word: str, problem_words: frozenset[str]) -> bool:
    stems = {word, word.rstrip("s"), word + "s", word[:-3] + "y" if word.endswith("ies") else word}
    return len(word) >= 3 and word not in _NEVER_NOUNS and any(stem in problem_words for stem in stems)


def without_counted_noun(answer: str, problem: str) -> str:
    """`answer` without trailing words that all name what the problem counts (see the module doc)."""
    found = _WORDS.match(answer.strip())
    if found is None:
        return answer
    words = re.split(r"[\s-]+", (found.group("braced") or found.group("plain") or "").lower().strip())
    problem_words = _problem_words(problem)
    if words and all(_names_counted_thing(word, problem_words) for word in words if word):
        return found.group("number").strip()
    return answer
