"""The policy clause table: every sentence of policy.md has exactly one entry, every rule kind is
some clause's (but the environment's), and docs/tau-bench.md shows the table as the code renders it."""

from __future__ import annotations

import pytest

from harness.core import HarnessError
from tasks.tau_airline import clauses
from tasks.tau_airline.clauses import CLAUSES, Clause, clause_table, main, mapping, policy_clauses
from tasks.tau_airline.policy import ENVIRONMENT_KINDS, POLICY_KINDS


def test_every_clause_of_the_policy_has_one_entry() -> None:
    rows = mapping()
    assert len(policy_clauses()) == 52 == len(rows) == len(CLAUSES)
    assert sum(1 for _, _, clause in rows if clause.kinds) == 28


def test_every_kind_but_the_environments_checks_some_clause() -> None:
    named = {kind for clause in CLAUSES for kind in clause.kinds}
    assert set(POLICY_KINDS) - named == set(ENVIRONMENT_KINDS)


def test_the_table_in_the_docs_is_fresh() -> None:
    assert main(["--check"]) == 0
    assert clause_table() in open(clauses.DOC, encoding="utf-8").read()


@pytest.mark.parametrize(
    "extra",
    [Clause("Refund", "Do not compensate if", (), "a second entry"), Clause("Refund", "Nothing says this", (), "matches no clause")],
    ids=["double-entry", "stale-entry"],
)
def test_a_mapping_that_drifts_from_the_policy_is_refused(monkeypatch: pytest.MonkeyPatch, extra: Clause) -> None:
    monkeypatch.setattr(clauses, "CLAUSES", (*CLAUSES, extra))
    with pytest.raises(HarnessError):
        mapping()


def test_a_clause_without_an_entry_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clauses, "CLAUSES", CLAUSES[1:])
    with pytest.raises(HarnessError, match="0 entries match clause 'The current time is"):
        mapping()
