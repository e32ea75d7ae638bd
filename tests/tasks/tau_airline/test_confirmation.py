"""The confirmation parser: its accuracy on the hand-labelled real user turns, and the turns the
issue names (a "yes" inside a question does not confirm; "Oui, please proceed" does)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from tasks.tau_airline.confirmation import agrees, answer, asks_to_confirm, confirms, heldout_turns, labelled_turns, measure
from tasks.tau_airline.db import data_file

ASK = "Here are the details: flight HAT041 on 2024-05-20, economy, $86.\n\nPlease confirm if you would like to proceed with this change."


@cache
def labelled() -> dict[str, Any]:
    return json.loads(data_file("confirmations.json").read_text(encoding="utf-8"))


def labelled_pairs() -> list[tuple[str | None, str | None, bool]]:
    return [(turn.agent_text, turn.user_text, turn.confirms) for turn in labelled_turns()]  # refuses a label of no real turn


def test_the_labelled_set_is_what_its_description_says() -> None:
    items = labelled()["items"]
    assert len(items) == 244
    assert sum(item["before_write"] for item in items) == 184
    assert sum(item["confirms"] for item in items) == 145
    assert all(item["reason"] for item in items)


def test_accuracy_on_the_labelled_real_turns() -> None:
    accuracy = measure(labelled_pairs())
    counts = (accuracy.true_positive, accuracy.false_positive, accuracy.false_negative, accuracy.true_negative)
    assert counts == (144, 1, 1, 98)
    assert round(accuracy.precision, 3) == 0.993 and round(accuracy.recall, 3) == 0.993
    # The two it gets wrong (docs/tau-bench.md): a yes under a condition ("If that's the only option,
    # then yes"), flagged unclear, and a payment choice after "let me know how you'd like to proceed".
    wrong = [labelled()["items"][index] for index in accuracy.wrong]
    assert [(item["task_id"], item["trial"], item["user_index"]) for item in wrong] == [(16, 3, 31), (32, 0, 27)]


TURNS = [
    ("yes-inside-a-question", "If I say yes, do I pay the difference? Don't change anything yet.", False),
    ("question-only", "Would I get a refund if I say yes?", False),
    ("yes-but-first", "Yes, but I need to know the cost of upgrading first.", False),
    ("hold", "Yes. Actually wait, hold on.", False),
    ("no", "No, I'd rather keep it as it is.", False),
    ("im-sure", "I'm sure there were three of us.", False),
    ("oui", "Oui, please proceed with the change. Merci!", True),
    ("looks-good", "Everything looks good. Please go ahead with the update.", True),
    ("i-confirm", "I confirm the upgrade. Please go ahead.", True),
    ("yes-and-question", "Yes, please proceed. Also, do I have any other upcoming flights?", True),
    ("curly-apostrophe", "That\u2019s correct, go ahead.", True),
    ("stop-marker", "Sure, please go ahead. ###STOP###", True),
    # The red-team's turns (shield report, class C): a deferral or a retraction voids the agreement,
    # an agreement phrased with a negation ("won't be a problem") is still one.
    ("deferral", "Okay, let me think about it and get back to you.", False),
    ("retraction", "Yes. Actually, no, keep my reservation.", False),
    ("discuss-first", "OK, I need to discuss it with my husband.", False),
    ("wont-be-a-problem", "Yes, that won't be a problem. Thank you!", True),
]


@pytest.mark.parametrize(("text", "expected"), [t[1:] for t in TURNS], ids=[t[0] for t in TURNS])
def test_a_turn_confirms_only_when_it_agrees_now(text: str, expected: bool) -> None:
    assert agrees(text) is expected
    assert confirms(ASK, text) is expected


REQUESTS = [
    ("confirm-to-proceed", ASK, True),
    ("offer", "I can cancel it for you. Would you like me to proceed with the cancellation?", True),
    ("which-option", "1. HAT041\n2. HAT012\n\nPlease let me know which option you would like to book, and I will proceed.", False),
    ("one-of-these", "Would you like to proceed with one of these options? If so, please confirm which option.", False),
    ("details", "Could you please provide your user ID so I can proceed?", False),
    ("confirm-a-fact", "Could you please confirm if the reservation was made within the last 24 hours?", False),
    ("relative-which", "It is a business ticket, which can be cancelled. Please confirm if you would like me to proceed.", True),
    ("shall-we", "The refund of $408 goes to your credit card.\n\nShall we proceed with the cancellation?", True),
    ("do-you-confirm", "Reservation 9HBUV8, refund $408.\n\nDo you confirm the cancellation?", True),
    ("payment-too", "Would you like to proceed? If so, please confirm and let me know which payment method you'd like to use.", True),
]


@pytest.mark.parametrize(("text", "expected"), [r[1:] for r in REQUESTS], ids=[r[0] for r in REQUESTS])
def test_only_a_request_to_confirm_an_action_can_be_confirmed(text: str, expected: bool) -> None:
    assert asks_to_confirm(text) is expected
    assert confirms(text, "Yes, please proceed.") is expected


def test_no_agent_message_or_no_user_turn_confirms_nothing() -> None:
    assert not confirms(None, "Yes, please proceed.")
    assert not confirms(ASK, None)


ANSWERS = [
    # Three values: an unclear answer is flagged (confirmation_unclear), never passed.
    ("yes", "Yes, please go ahead.", "yes"),
    ("refusal", "No, keep it.", "no"),
    ("no-agreement", "What is the refund amount?", "no"),
    ("deferral", "Sure, I'll get back to you on that tomorrow.", "no"),
    ("retraction", "Sure. Wait, actually, I changed my mind.", "no"),
    ("condition", "Yes, as long as it costs less than $500.", "unclear"),
    ("only-if", "Okay, only if I get the full refund.", "unclear"),
    ("yes-in-a-question", "Yes? What would the refund be exactly?", "unclear"),
    ("negated-agreement", "Yes, I don't know about that.", "unclear"),
]


@pytest.mark.parametrize(("text", "expected"), [a[1:] for a in ANSWERS], ids=[a[0] for a in ANSWERS])
def test_an_answer_is_yes_no_or_unclear(text: str, expected: str) -> None:
    assert answer(text) == expected


def test_accuracy_on_the_held_out_set() -> None:
    turns = heldout_turns()
    assert (len(turns), sum(turn.confirms for turn in turns)) == (39, 13)
    accuracy = measure([(turn.agent_text, turn.user_text, turn.confirms) for turn in turns])
    assert (accuracy.true_positive, accuracy.false_positive, accuracy.false_negative, accuracy.true_negative) == (13, 0, 0, 26)


def test_the_held_out_set_is_apart_from_the_set_the_parser_was_written_against() -> None:
    written_against = {item["user"] for item in labelled()["items"]}
    turns = heldout_turns()
    assert all(turn.reason for turn in turns)
    assert not {turn.user_text for turn in turns} & written_against
