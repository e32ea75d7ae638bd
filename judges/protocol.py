"""A judge protocol as a value: templates, what the judge sees of a candidate, and verdict parsing.

Templates are Jinja2 files rendered in a sandboxed environment; their content hash stamps every
verdict and enters the cache key, so editing a template never reuses stale judgments. Candidate text
is hostile input: it is inserted as data (never re-parsed as a template), capped in length, and any
run of three or more `<` or `>` is broken up so a candidate cannot close the template's fences.
A new protocol is a YAML file in `conf/protocol/` plus a template; no code.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from jinja2 import StrictUndefined, Template, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from harness.core import Candidate, CandidateView, HarnessError, PublicProblem, neutralise
from judges.config import ProtocolConfig

NO_FINAL_ANSWER = "(no final answer given)"
_ENVIRONMENT = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


@dataclass(frozen=True)
class LoadedTemplate:
    """A template's source, compiled form and content hash."""

    reference: str
    source: str
    hash: str
    compiled: Template

    @classmethod
    def load(cls, reference: str) -> LoadedTemplate:
        path = Path(reference)
        if path.is_file():
            source = path.read_text(encoding="utf-8")
        else:
            bundled = resources.files("judges").joinpath("templates", reference)
            if not bundled.is_file():
                raise HarnessError(f"protocol template {reference!r} not found (neither a file nor a bundled template in judges/templates)")
            source = bundled.read_text(encoding="utf-8")
        try:
            compiled = _ENVIRONMENT.from_string(source)
        except TemplateError as error:
            raise HarnessError(f"protocol template {reference!r}: {error}") from error
        return cls(reference, source, hashlib.sha256(source.encode("utf-8")).hexdigest()[:16], compiled)


@dataclass(frozen=True)
class SolveStep:
    """Solve-first's first step: the judge's own solution to a problem, shown no candidate."""

    template: LoadedTemplate
    max_tokens: int
    max_chars: int

    @property
    def template_hash(self) -> str:
        return self.template.hash

    def render(self, problem: PublicProblem) -> str:
        return self.template.compiled.render(problem=neutralise(problem.question, self.max_chars)).strip()


@dataclass(frozen=True)
class Protocol:
    """A loaded protocol: renders prompts from public views and knows how the judge answers."""

    name: str
    template: LoadedTemplate
    view: str
    options: tuple[str, ...]
    max_tokens: int
    temperature: float
    verdict_suffix: str
    solve: SolveStep | None
    shuffle: bool
    max_candidate_chars: int

    @property
    def template_hash(self) -> str:
        """Hash of everything that shapes the prompts: the template, and the solve template if any."""
        return self.template.hash if self.solve is None else f"{self.template.hash}+{self.solve.template_hash}"

    def candidate_view(self, candidate: Candidate, extract_answer: Callable[[str], str | None]) -> CandidateView:
        """The part of a candidate this protocol shows: all of it, or its final answer only."""
        if self.view == "final_answer":
            answer = extract_answer(candidate.text)
            return CandidateView(candidate.candidate_id, answer if answer is not None else NO_FINAL_ANSWER)
        return CandidateView(candidate.candidate_id, candidate.text)

    def render(self, problem: PublicProblem, candidate: CandidateView, own_solution: str | None = None) -> str:
        cap = self.max_candidate_chars
        return self.template.compiled.render(
            problem=neutralise(problem.question, cap),
            candidate=neutralise(candidate.text, cap),
            own_solution=neutralise(own_solution, cap) if own_solution is not None else None,
            options=self.options,
        ).strip()


def check_protocol(config: ProtocolConfig) -> None:
    """Refuse, by field name, a protocol config whose values do not fit together (no file is read)."""
    if (config.mode == "generate") != (config.max_tokens > 0):
        raise HarnessError(f"protocol {config.name}: mode=generate needs max_tokens > 0, and mode=verdict needs max_tokens=0")
    if len(config.verdict_options) != 2 or len(set(config.verdict_options)) != 2:
        raise HarnessError("protocol.verdict_options must name two distinct options, the positive one first")
    if config.solve_template is not None and config.solve_max_tokens < 1:
        raise HarnessError("protocol.solve_max_tokens must be at least 1")


def load_protocol(config: ProtocolConfig) -> Protocol:
    """Build a protocol from its config; template errors and inconsistent fields are reported by name."""
    check_protocol(config)
    solve = None
    if config.solve_template is not None:
        solve = SolveStep(LoadedTemplate.load(config.solve_template), config.solve_max_tokens, config.max_candidate_chars)
    return Protocol(
        name=config.name,
        template=LoadedTemplate.load(config.template),
        view=config.view,
        options=tuple(config.verdict_options),
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        verdict_suffix=config.verdict_suffix,
        solve=solve,
        shuffle=config.shuffle,
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
