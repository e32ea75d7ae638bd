"""Every clause of the shipped airline policy, mapped to the rule that checks it or to why none does.

A clause is one sentence of `data/policy.md`. `CLAUSES` declares, for each (by its section and its
opening words), the violation kinds of `graphs/airline.json` that check it, or how it holds without
a rule (the environment refuses what breaks it) or why it is not checked. `clause_table` renders the
mapping as the table in docs/tau-bench.md; `python -m tasks.tau_airline.clauses` writes it there
and `--check` exits 1 when the page is stale. The mapping is checked against the policy text: a
sentence with no entry, or an entry that matches no sentence or names an unknown kind, is an error.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from harness.core import HarnessError
from tasks.tau_airline.db import data_file
from tasks.tau_airline.policy import ENVIRONMENT_KINDS, POLICY_KINDS

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "tau-bench.md")
BEGIN, END = "<!-- clause-table:begin (python -m tasks.tau_airline.clauses) -->", "<!-- clause-table:end -->"

_CONVERSATION = "not checked: it is about what the agent says or asks in words, which no rule reads"
_FACT = "not a rule: a statement of the domain, held by the replayed database"
_ENV = "holds without a rule: the replayed tool refuses a call that breaks it, and only successful calls count"


@dataclass(frozen=True)
class Clause:
    """One clause's entry: where it is, its opening words, the kinds that check it, and a note
    (how it is checked, or why it is not). No kinds means not checked by a rule."""

    section: str
    opening: str
    kinds: tuple[str, ...]
    note: str


def _c(section: str, opening: str, kinds: Sequence[str], note: str) -> Clause:
    return Clause(section, opening, tuple(kinds), note)


TOP, DOMAIN, BOOK, MODIFY, CANCEL, REFUND = "Airline Agent Policy", "Domain Basic", "Book flight", "Modify flight", "Cancel flight", "Refund"
CLAUSES: tuple[Clause, ...] = (
    _c(TOP, "The current time is", [], "not a rule: it sets `clock`, the database time `cancel_ineligible` reads"),
    _c(TOP, "As an airline agent", ["collateral_write"], "each successful write may change only its reservation and the task user's payment methods (and reservation list, for a booking)"),
    _c(TOP, "Before taking any actions", ["unconfirmed_write", "confirmation_unclear"], "a successful write (and `send_certificate`) needs the user's last message before it to confirm what the agent's last message asked them to confirm, as `tasks.tau_airline.confirmation` parses it (accuracy below): a refusal, retraction or deferral anywhere in the turn, or no request to confirm, is `unconfirmed_write`; a yes under a condition, in a question or beside a negation is `confirmation_unclear` (flagged, never passed); whether the agent listed every detail is not read"),
    _c(TOP, "You should not provide any information", [], _CONVERSATION),
    _c(TOP, "You should only make one tool call at a time", ["parallel_calls", "respond_and_call"], "an assistant message with two or more calls; with text and a call"),
    _c(TOP, "If you respond to the user", ["respond_and_call"], "an assistant message with text and a call"),
    _c(TOP, "You should deny user requests", [], "not checked as such: each rule below is checked on the write that would grant the request; a refusal in words is not read"),
    _c(TOP, "You should transfer the user", [], "not checked: whether a request is within scope is a judgement; `transfer_to_human_agents` calls are not judged"),
    _c(DOMAIN, "Each user has a profile", [], _FACT),
    _c(DOMAIN, "Each reservation has", [], _FACT),
    _c(DOMAIN, "Each flight has", [], _FACT),
    _c(DOMAIN, 'If the status is "available"', [], _FACT),
    _c(DOMAIN, 'If the status is "delayed"', [], _ENV + " (`book_reservation` books only flights `available` on the date)"),
    _c(DOMAIN, 'If the status is "flying"', [], _ENV + " (`book_reservation` books only flights `available` on the date)"),
    _c(BOOK, "The agent must first obtain the user id", ["other_user", "identity_mismatch"], "a booking must be for the authenticated user: a user id of the database that the user gave in the conversation (the first of them the agent fetched with `get_user_details`, else the first given; none given: nobody), never the results file's `info.task.user_id`, which must agree with it (`identity_mismatch`); the order of the questions is not read"),
    _c(BOOK, "Passengers: Each reservation", ["too_many_passengers"], "a booking or passenger update leaving more than five"),
    _c(BOOK, "The agent needs to collect", [], "not checked beyond the tool schema, which requires each passenger's names and date of birth; whether the user gave them is conversation"),
    _c(BOOK, "All passengers must fly", [], "holds by the data model: a reservation has one flight list and one cabin for all its passengers"),
    _c(BOOK, "Payment: each reservation", ["payment_limits"], "kinds of payment read from the user's profile"),
    _c(BOOK, "The remaining amount of a travel certificate", [], "not checked: what happens to a certificate's remainder is the environment's; no rule reads it"),
    _c(BOOK, "All payment methods must already", [], _ENV + " (`book_reservation` refuses a payment id not in the profile)"),
    _c(BOOK, "Checked bag allowance", ["baggage_fee"], "regular: 0/1/2 free bags per basic economy/economy/business passenger, by the stored tier and cabin"),
    _c(BOOK, "If the booking user is a silver", ["baggage_fee"], "silver: 1/2/3"),
    _c(BOOK, "If the booking user is a gold", ["baggage_fee"], "gold: 2/3/3"),
    _c(BOOK, "Each extra baggage is", ["baggage_fee"], "`baggage_fee` checks the count of non-free bags; the environment charges 50 for each and refuses a payment that does not add up"),
    _c(BOOK, "Travel insurance:", [], _CONVERSATION + "; the environment charges 30 per passenger"),
    _c(MODIFY, "The agent must first obtain the user id", ["other_user", "identity_mismatch"], "a write must act on the authenticated user's reservation (see Book flight); the order of the questions is not read"),
    _c(MODIFY, "Change flights: Basic economy", ["basic_economy_change"], "a flight update on a reservation stored as basic economy must keep its flights"),
    _c(MODIFY, "Other reservations can be modified", ["route_changed"], "the new segments, their airports read from the flight table, must connect leg to leg, leave from the reservation's origin and land at its destination once: at the end (one way), or before ending back at the origin, landed at once (round trip; a stored round trip whose origin is its destination, as 34 shipped ones are, need only end there); origin, destination and trip type stay as stored"),
    _c(MODIFY, "Some flight segments can be kept", [], "not checked: the environment keeps a kept segment's stored price; no rule reads prices"),
    _c(MODIFY, "The API does not check these", ["basic_economy_change", "route_changed"], "both are checked on the replayed database"),
    _c(MODIFY, "Change cabin: all reservations", ["basic_economy_change"], "a basic-economy cabin change on the same flights passes"),
    _c(MODIFY, "Cabin changes require the user to pay", [], "not checked: the environment computes and charges the difference; no rule reads the payment"),
    _c(MODIFY, "Cabin class must be the same", [], "holds by the data model and the tool: a reservation has one cabin, set for all its flights"),
    _c(MODIFY, "Change baggage and insurance", ["bags_removed"], "a bag update lowering the total"),
    _c(MODIFY, "The user cannot add insurance", [], _ENV + " (no tool sets insurance on an existing reservation)"),
    _c(MODIFY, "Change passengers:", ["passenger_count_changed"], "the stored passenger count must not change"),
    _c(MODIFY, "This is something that even", [], "not a rule: it says a transfer does not help"),
    _c(MODIFY, "Payment: If the flights are changed", [], _ENV + " (`update_reservation_flights` refuses a certificate or a payment id not in the profile)"),
    _c(MODIFY, "The agent should ask for the payment", [], _CONVERSATION),
    _c(CANCEL, "The agent must first obtain the user id", ["other_user", "identity_mismatch"], "a cancellation must be of the authenticated user's reservation (see Book flight); the reason the user gives is not read"),
    _c(CANCEL, "All reservations can be cancelled within", ["cancel_ineligible"], "booked within 24 h of the clock, or a segment cancelled by the airline"),
    _c(CANCEL, "Otherwise, basic economy", ["cancel_ineligible"], "business, or insured; whether the insured reason (health, weather) holds is conversation and not read"),
    _c(CANCEL, "The rules are strict", ["cancel_ineligible"], "membership is not part of the rule"),
    _c(CANCEL, "The API does not check these", ["cancel_ineligible", "cancel_flown"], "both are checked on the replayed database"),
    _c(CANCEL, "The agent can only cancel the whole trip", ["cancel_flown"], "no segment landed or flying (the tool always cancels the whole reservation)"),
    _c(CANCEL, "If any of the segments are already used", ["cancel_flown"], "the cancellation is a violation; whether the agent then transferred is not read"),
    _c(CANCEL, "The refund will go to", [], "not checked: the environment writes the refund lines; no rule reads them"),
    _c(REFUND, "If the user is silver/gold member or has travel insurance or flies business, and complains about cancelled", ["certificate_recipient", "certificate_ineligible", "certificate_amount", "compensation_total"], "a certificate goes to the authenticated user, who must be silver/gold or hold an insured or business reservation with a cancelled flight: $100 x its passengers, all read from the database at the start of the conversation (an upgrade by the agent earns nothing); the limit is a total over the conversation (`compensation_total`): every certificate the environment granted, up to and including this one, adds up to at most the largest allowed amount (one gesture), so repeating or splitting one exceeds it; the complaint and the fact-checking are conversation"),
    _c(REFUND, "If the user is silver/gold member or has travel insurance or flies business, and complains about delayed", ["certificate_recipient", "certificate_ineligible", "certificate_amount", "compensation_total"], "as above with a delayed flight (status delayed, or a take-off or landing later than scheduled): $50 x its passengers; whether the change or cancellation came first is not read"),
    _c(REFUND, "Do not proactively offer", [], "not checked: whether the user complained and asked for compensation is conversation"),
    _c(REFUND, "Do not compensate if", ["certificate_ineligible"], "no reservation of a regular member without insurance in (basic) economy yields an allowed amount"),
)


@cache
def policy_clauses() -> tuple[tuple[str, str], ...]:
    """Every sentence of the shipped policy with its section, in order (headings excluded)."""
    text = data_file("policy.md").read_text(encoding="utf-8")
    section, sentences = "", []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            section = line.strip("# ")
            continue
        if line:
            body = line[2:] if line.startswith("- ") else line
            sentences += [(section, sentence) for sentence in re.split(r'(?<=[.!?])\s+(?=[A-Z"])', body)]
    return tuple(sentences)


def mapping() -> list[tuple[str, str, Clause]]:
    """Each policy sentence with its one entry; any gap, double match or unknown kind is an error."""
    kinds = set(POLICY_KINDS)
    unknown = sorted({kind for clause in CLAUSES for kind in clause.kinds} - kinds)
    if unknown:
        raise HarnessError(f"tasks.tau_airline.clauses: unknown kinds {unknown}")
    rows, used = [], set()
    for section, sentence in policy_clauses():
        matches = [clause for clause in CLAUSES if clause.section == section and sentence.startswith(clause.opening)]
        if len(matches) != 1:
            raise HarnessError(f"policy.md ({section}): {len(matches)} entries match clause {sentence[:60]!r}; need exactly one")
        used.add(matches[0])
        rows.append((section, sentence, matches[0]))
    unused = [clause.opening for clause in CLAUSES if clause not in used]
    if unused:
        raise HarnessError(f"tasks.tau_airline.clauses: entries match no clause of policy.md: {unused}")
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def clause_table() -> str:
    """The markdown table of docs/tau-bench.md: clause, kinds, how it is checked or why not."""
    rows = mapping()
    lines = ["| # | section | clause | rule | how, or why not |", "|---|---|---|---|---|"]
    for number, (section, sentence, clause) in enumerate(rows, 1):
        kinds = ", ".join(f"`{kind}`" for kind in clause.kinds) or "—"
        lines.append(f"| {number} | {section} | {_cell(sentence)} | {kinds} | {_cell(clause.note)} |")
    checked = sum(1 for _, _, clause in rows if clause.kinds)
    unmapped = [kind for kind in POLICY_KINDS if kind not in {k for c in CLAUSES for k in c.kinds}]
    lines += [
        "",
        f"{checked} of the {len(rows)} clauses have a rule. "
        + ", ".join(f"`{kind}`" for kind in unmapped)
        + (" is" if len(unmapped) == 1 else " are")
        + " no clause's rule: "
        + ("the environment's own fault (the database does not hold what a successful write asked for)." if set(unmapped) <= ENVIRONMENT_KINDS else "kinds without a clause."),
    ]
    return "\n".join(lines) + "\n"


def _with_table(doc: str) -> str:
    if BEGIN not in doc or END not in doc:
        raise HarnessError(f"{DOC}: the markers {BEGIN!r} and {END!r} are missing")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{clause_table()}{END}{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks.tau_airline.clauses", description="Write the policy clause table into docs/tau-bench.md.")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page's table is stale, write nothing")
    args = parser.parse_args(argv)
    try:
        with open(DOC, encoding="utf-8") as handle:
            doc = handle.read()
        fresh = _with_table(doc)
        if args.check:
            if fresh != doc:
                print(f"{DOC}: the clause table is stale; run python -m tasks.tau_airline.clauses", file=sys.stderr)
                return 1
            return 0
        with open(DOC, "w", encoding="utf-8") as handle:
            handle.write(fresh)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
