"""Candidate pools: reading pool files and choosing which problems and candidates a run covers.

A pool file is JSONL, one candidate per line: `{"problem_id", "candidate_id", "text", "source"?,
"meta"?}`. Every line is validated; the first bad line stops the run with its file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.config import PoolConfig
from harness.core import Candidate, HarnessError, PublicProblem
from judges import check_model


class PoolLine(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    problem_id: str
    candidate_id: str
    text: str
    source: str | None = None
    meta: dict[str, Any] = {}


def check_pool(config: PoolConfig) -> None:
    """Refuse a pool config that cannot work, by field, before any candidate is read or generated."""
    source = config.base if config.kind == "adversarial" else config.kind
    if source == "file" and not config.path:
        raise HarnessError(f"pool={config.kind} needs pool.path=<file.jsonl>")
    if config.kind == "generate":
        if config.generator is None:
            raise HarnessError("pool=generate needs a policy model: pool/generator=<judge model>, e.g. pool/generator=llama_tiny")
        if config.samples < 1 or config.max_tokens < 1:
            raise HarnessError("pool.samples and pool.max_tokens must be at least 1")
        check_model(config.generator)


def check_counts(limit: int, n: int | None) -> None:
    """`limit` problems (at least 1) and `n` candidates each (at least 1, or None for all)."""
    if limit < 1:
        raise HarnessError(f"limit must be at least 1 (got {limit})")
    if n is not None and n < 1:
        raise HarnessError(f"n must be at least 1 or null for all candidates (got {n})")


def read_pool_file(path: str | Path, known_problem_ids: Collection[str] | None = None) -> list[Candidate]:
    """The file's candidates, every line validated. With `known_problem_ids` (the task's), a line
    naming any other problem id is refused with its line, as every other bad line is."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise HarnessError(f"cannot read pool file {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise HarnessError(f"{path}: not UTF-8 text ({error.reason})") from error
    candidates: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            raise HarnessError(f"{path}:{number}: malformed JSON ({error.msg} at column {error.colno})") from error
        unencodable = _lone_surrogate_field(raw)
        if unencodable is not None:
            raise HarnessError(f"{path}:{number}: field {unencodable!r}: a lone surrogate escape (\\ud800-\\udfff) is no text")
        try:
            entry = PoolLine.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "line"
            raise HarnessError(f"{path}:{number}: field {field!r}: {first['msg']}") from error
        if known_problem_ids is not None and entry.problem_id not in known_problem_ids:
            raise HarnessError(f"{path}:{number}: field 'problem_id': unknown problem id {entry.problem_id!r} (the task has no such problem)")
        key = (entry.problem_id, entry.candidate_id)
        if key in seen:
            raise HarnessError(f"{path}:{number}: duplicate candidate {entry.candidate_id!r} for problem {entry.problem_id!r}")
        seen.add(key)
        candidates.append(Candidate(entry.problem_id, entry.candidate_id, entry.text, entry.source, entry.meta))
    if not candidates:
        raise HarnessError(f"pool file {path} has no candidates")
    return candidates


def _lone_surrogate_field(raw: object) -> str | None:
    """The first top-level field whose strings hold a lone surrogate (valid JSON, `"\\ud800"`, but no
    text: it cannot be encoded, digested or logged), or None."""
    if not isinstance(raw, dict):
        return None
    for key, value in raw.items():
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return str(key)
    return None


def write_pool_file(path: Path, candidates: Sequence[Candidate]) -> Path:
    """Write `candidates` as a pool file that `read_pool_file` reads back unchanged."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for candidate in candidates:
            line = PoolLine(
                problem_id=candidate.problem_id,
                candidate_id=candidate.candidate_id,
                text=candidate.text,
                source=candidate.source,
                meta=dict(candidate.meta),
            )
            handle.write(json.dumps(line.model_dump(), ensure_ascii=False) + "\n")
    return path


def select_run(
    problems: Sequence[PublicProblem],
    candidates: Sequence[Candidate],
    *,
    limit: int,
    n: int | None,
    origin: str,
) -> list[tuple[PublicProblem, list[Candidate]]]:
    """The problems the pool names, in dataset order, capped by `limit`, each with its first `n` candidates.

    A candidate for a problem id the task does not have is an error, not a silent drop.
    """
    check_counts(limit, n)
    known = {problem.problem_id for problem in problems}
    grouped: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        if candidate.problem_id not in known:
            raise HarnessError(f"{origin}: candidate {candidate.candidate_id!r} names unknown problem id {candidate.problem_id!r}")
        grouped.setdefault(candidate.problem_id, []).append(candidate)
    selected = [(problem, grouped[problem.problem_id]) for problem in problems if problem.problem_id in grouped]
    return [(problem, group if n is None else group[:n]) for problem, group in selected[:limit]]
