"""A judge protocol as a value: a template file, what the judge sees of a candidate, and verdict parsing.

Templates are Jinja2 files rendered in a sandboxed environment; their content hash stamps every
verdict and enters the cache key, so editing a template never reuses stale judgments. Candidate text
is hostile input: it is inserted as data (never re-parsed as a template), capped in length, and any
run of three or more `<` or `>` is broken up so a candidate cannot close the template's fences.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from harness.config import ProtocolConfig
from harness.errors import HarnessError
from judges.types import CandidateView
from tasks.types import Candidate, PublicProblem

_VIEWS = ("full", "final_answer")
_FENCE_RUN = re.compile(r"[<>]{3,}")
NO_FINAL_ANSWER = "(no final answer given)"


def neutralise(text: str, max_chars: int) -> str:
    """Cap `text` and break up fence-like runs (`<<<`, `>>>`) so it cannot escape its fence.

    GSM8K's own `<<48/2=24>>` calculator annotations use two brackets and pass through unchanged.
    """
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[... truncated {len(text) - max_chars} characters]"
    return _FENCE_RUN.sub(lambda match: " ".join(match.group(0)), text)


@dataclass(frozen=True)
class Protocol:
    """A loaded protocol: renders prompts from public views and knows its verdict options."""

    name: str
    template_source: str
    template_hash: str
    view: str
    options: tuple[str, ...]
    max_candidate_chars: int

    def candidate_view(self, candidate: Candidate, extract_answer: Callable[[str], str | None]) -> CandidateView:
        """The part of a candidate this protocol shows: all of it, or its final answer only."""
        if self.view == "final_answer":
            answer = extract_answer(candidate.text)
            return CandidateView(candidate.candidate_id, answer if answer is not None else NO_FINAL_ANSWER)
        return CandidateView(candidate.candidate_id, candidate.text)

    def render(self, problem: PublicProblem, candidate: CandidateView) -> str:
        environment = SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=False, autoescape=False)
        template = environment.from_string(self.template_source)
        return template.render(
            problem=neutralise(problem.question, self.max_candidate_chars),
            candidate=neutralise(candidate.text, self.max_candidate_chars),
            options=self.options,
        ).strip()


def _template_text(reference: str) -> str:
    path = Path(reference)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    bundled = resources.files("judges").joinpath("templates", reference)
    if bundled.is_file():
        return bundled.read_text(encoding="utf-8")
    raise HarnessError(f"protocol template {reference!r} not found (neither a file nor a bundled template in judges/templates)")


def load_protocol(config: ProtocolConfig) -> Protocol:
    """Build a protocol from its config; template errors and bad fields are reported by name."""
    if config.view not in _VIEWS:
        raise HarnessError(f"protocol.view={config.view!r} is not one of {', '.join(_VIEWS)}")
    if config.mode != "verdict":
        raise HarnessError(f"protocol.mode={config.mode!r} is not supported; use mode=verdict")
    if len(config.verdict_options) != 2 or len(set(config.verdict_options)) != 2:
        raise HarnessError("protocol.verdict_options must name two distinct options, the positive one first")
    source = _template_text(config.template)
    try:
        SandboxedEnvironment().parse(source)
    except TemplateError as error:
        raise HarnessError(f"protocol template {config.template!r}: {error}") from error
    return Protocol(
        name=config.name,
        template_source=source,
        template_hash=hashlib.sha256(source.encode("utf-8")).hexdigest()[:16],
        view=config.view,
        options=tuple(config.verdict_options),
        max_candidate_chars=config.max_candidate_chars,
    )


def parse_verdict(text: str, options: Sequence[str]) -> tuple[str | None, str | None]:
    """The last verdict word in `text` that is one of `options` (case-insensitive).

    Returns (option, None) or (None, reason). A missing or foreign verdict is never guessed.
    """
    pattern = re.compile(r"\b(" + "|".join(re.escape(option) for option in options) + r")\b", re.IGNORECASE)
    found = pattern.findall(text)
    if not found:
        return None, f"no verdict among {list(options)} in output"
    last = found[-1].lower()
    return next(option for option in options if option.lower() == last), None
