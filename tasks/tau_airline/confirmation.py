"""Did the user confirm the action? A confirmation is the user's answer to the agent's request to
confirm that action, never a literal `yes` found anywhere in the last user message.

The policy: before a write "you must list the action details and obtain explicit user confirmation
(yes) to proceed". `confirms(agent_text, user_text)` decides it from the pair: the agent message
with text that the user's turn answers, and that turn.

1. The agent must have put an action to the user (`asks_to_confirm`): in the message's last
   paragraph, a request to confirm or a yes/no offer to proceed ("Please confirm if you would like
   to proceed", "Would you like me to proceed with ...?"), and not a request to choose ("which
   option", "one of these") or to give details.
2. The user must agree now (`agrees`): a sentence of the turn holds an agreement ("yes", "oui",
   "please proceed", "go ahead", "everything looks good", "I confirm") and is neither a question,
   nor conditional on saying yes ("If I say yes, do I pay...?"), nor deferred or negated ("yes, but
   ... first", "not yet"); and no sentence of the turn holds the action ("Don't change anything",
   "wait", "hold on").

Its accuracy is measured on hand labels of 244 real user turns from the shipped trajectories
(`data/confirmations.json`, `measure`); docs/tau-bench.md lists what it gets wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.core import HarnessError
from tasks.tau_airline.db import data_file, read_json_gz

_STOP = re.compile(r"###STOP###")  # τ-bench's user simulator marks the end of the conversation

# Agent side: a request to confirm an action, or a yes/no offer to carry one out.
_CONFIRM = re.compile(r"\bconfirm")
_CONFIRM_WHAT = re.compile(
    r"\b(proceed|go ahead|yes|correct|like me to|would like to|want to|these changes|this change|the details)\b"
    r"|\b(the|this|these|that) (cancellation|booking|changes?|modifications?|upgrade|update|purchase|certificate|compensation)\b"
)
_OFFER = re.compile(
    r"would you like me to\b|\bshall (i|we)\b|\bshould (i|we) (proceed|go ahead)\b|do you want (me )?to (proceed|go ahead)\b"
    r"|would you like to (proceed|go ahead|continue|book|cancel|change|upgrade|downgrade|use|issue|receive|add|update|modify|make)\b"
    r"|let me know (if|how) you(?:'d| would) like (me )?to proceed"
    r"|are you sure you (want|would like) to (proceed|go ahead|continue|cancel|book|change)\b"
    r"|is it (ok|okay|alright|all right) (if i|for me to|to) (proceed|go ahead)\b"
)
# "which" asking to choose, not a relative pronoun ("which is eligible") nor the payment method a
# confirmation may also ask for ("... and let me know which payment method").
_CHOICE = re.compile(
    r"\bwhich\b(?!\s+(is|are|was|were|can|will|would|has|have|had|means|includes|costs?|payment|refund)\b)"
    r"|\b(one|any) of (these|those|the following|your)\b"
)

# User side.
_AGREE = re.compile(
    r"\b(yes|yeah|yep|yup|(?<!i'm )(?<!i am )(?<!not )sure|ok|okay|oui|sí|confirm(ed|ing)?|proceed|go ahead|go for it|please do|do it|move forward"
    r"|sounds (good|great|fine)|looks? (good|correct|perfect|great|fine)|(that's|that is|is|all|everything's) correct"
    r"|(that's|that is) (right|fine|acceptable|perfect)|will work|that works|i'm fine with|absolutely|of course"
    r"|let's (do|go ahead|proceed|use|book|cancel))\b"
)
# Phrases that read as negations and agree: removed before the negation rules look.
_AGREEING_NEGATION = re.compile(
    r"\b(no|not an?|isn't an?|is not an?|(won't|wouldn't|shouldn't|will not|would not|should not) be an?) (problem|issue)s?\b"
    r"|\bno (worries|problem)\b|\b(i )?(don't|do not) mind\b|\bwhy not\b"
)
# Anywhere in the turn, these void an agreement: the user holds the action, takes the yes back, or puts it off.
_HOLD = re.compile(
    r"\b(don't|do not|dont)\s+(change|proceed|book|cancel|do|make|update|go ahead|modify|touch|issue|send)\b"
    r"|\b(wait|hold on|hold off|not yet|not now|not right now|stop)\b"
    r"|(^|[.,;:!?]\s*)(no|nope|nah)\b(?=\s*([.,;:!?]|$|wait|keep|don't|do not|hold|stop|thanks|thank|i\b|let))"
)
_RETRACT = re.compile(
    r"\bactually,?\s+(no|wait|don't|do not|i changed|never|hold|let me|i'd rather|i would rather|keep)\b"
    r"|\bon second thoughts?\b|\bchanged? my mind\b|\bnever ?mind\b|\bscratch that\b|\bforget (it|that|about it)\b"
    r"|\b(i'd|i would) rather (not|keep)\b|\bkeep (it|my reservation|my booking|the reservation|the booking)\b"
)
_DEFER = re.compile(
    r"\b(later|tomorrow|undecided|not sure yet|maybe later)\b"
    r"|\b(think|thinking) (about|it over|this over|on it|it through)\b|\blet me think\b|\bsleep on\b"
    r"|\bbut (first|before)\b|\bfirst,? (tell|let me|i need|i want|can you|could you)\b"
    r"|\bget back to you\b|\blet you know\b|\b(discuss|consult)\b|\btalk (to|with|it over)\b|\bcheck with\b|\bask my\b"
)
# A hedge voids the agreement it is said with ("yes, maybe"), or said alone ("Maybe."); "I'm not sure
# what the reservation number was" beside a plain yes is about something else.
_HEDGE = re.compile(r"\b(maybe|perhaps|not sure|unsure|probably|i guess so|i think so)\b")
_ALONE = re.compile(r"^\W*(maybe|perhaps|not sure|i'm not sure|probably|i guess|i think so)\W*$")
# A condition said with the agreement, or as a statement of its own ("Only if it's free."), makes it
# conditional: not a confirmation, not a refusal (a question "If so, what is the total?" asks).
_CONDITION = re.compile(r"\b(if|unless|as long as|provided that|providing that|assuming|on condition)\b")
# In the agreeing sentence itself, these void it: a negation or a reservation ("yes, but ... first").
_QUALIFIED = re.compile(r"\b(not|never|before|first|yet)\b|n't\b|\b(yes|sure|ok|okay|good|fine)\W+but\b")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")

Answer = Literal["yes", "no", "unclear"]


def _normal(text: str) -> str:
    return _STOP.sub(" ", text).replace("\u2019", "'").replace("\u2018", "'").lower()


def _last_paragraph(text: str) -> str:
    paragraphs = [part for part in re.split(r"\n\s*\n", text) if part.strip()]
    return paragraphs[-1] if paragraphs else ""


def asks_to_confirm(agent_text: str) -> bool:
    """The agent's message ends by putting an action to the user (confirm, or a yes/no offer)."""
    last = _normal(_last_paragraph(agent_text))
    if _CHOICE.search(last):
        return False
    return bool((_CONFIRM.search(last) and _CONFIRM_WHAT.search(last)) or _OFFER.search(last))


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE.findall(text) if part.strip()]


def answer(user_text: str) -> Answer:
    """The user's turn as an answer to a request to confirm: `yes` when a sentence agrees plainly
    and nothing in the turn holds, retracts, defers or conditions it; `no` when the turn holds,
    retracts or defers the action, or agrees to nothing; `unclear` when it agrees only under a
    condition, in a question or beside a negation (flagged, never passed)."""
    turn = _AGREEING_NEGATION.sub(" ", _normal(user_text))
    sentences = _sentences(turn)
    agreeing = [sentence for sentence in sentences if _AGREE.search(sentence)]
    if any(_HOLD.search(sentence) or _RETRACT.search(sentence) or _DEFER.search(sentence) or _ALONE.match(sentence) for sentence in sentences):
        return "no"
    if not agreeing:
        return "no"
    if any(_HEDGE.search(sentence) for sentence in agreeing):
        return "no"
    if any(_CONDITION.search(sentence) and (sentence in agreeing or not sentence.endswith("?")) for sentence in sentences):
        return "unclear"
    plain = [sentence for sentence in agreeing if not sentence.endswith("?") and not _QUALIFIED.search(sentence)]
    return "yes" if plain else "unclear"


def agrees(user_text: str) -> bool:
    """The user's turn agrees now, plainly (`answer` is `yes`)."""
    return answer(user_text) == "yes"


def confirmation(agent_text: str | None, user_text: str | None) -> Answer:
    """The user's turn as an answer to the agent's message: `no` unless the message asked the user
    to confirm an action and there is a turn; else `answer` of the turn."""
    if not (agent_text and user_text and asks_to_confirm(agent_text)):
        return "no"
    return answer(user_text)


def confirms(agent_text: str | None, user_text: str | None) -> bool:
    """The user's turn confirms the action the agent's message asked them to confirm."""
    return confirmation(agent_text, user_text) == "yes"


@dataclass(frozen=True)
class Accuracy:
    """The parser against hand labels: counts, and the items it gets wrong (by their label index)."""

    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int
    wrong: tuple[int, ...]

    @property
    def precision(self) -> float:
        return self.true_positive / max(1, self.true_positive + self.false_positive)

    @property
    def recall(self) -> float:
        return self.true_positive / max(1, self.true_positive + self.false_negative)

    @property
    def accuracy(self) -> float:
        total = self.true_positive + self.false_positive + self.false_negative + self.true_negative
        return (self.true_positive + self.true_negative) / max(1, total)


def measure(pairs: Sequence[tuple[str | None, str | None, bool]]) -> Accuracy:
    """Score `confirms` on `(agent_text, user_text, label)` pairs."""
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    wrong = []
    for index, (agent_text, user_text, label) in enumerate(pairs):
        said = confirms(agent_text, user_text)
        counts[(said, label)] += 1
        if said != label:
            wrong.append(index)
    return Accuracy(counts[(True, True)], counts[(True, False)], counts[(False, True)], counts[(False, False)], tuple(wrong))


LABELS = "confirmations.json"


@dataclass(frozen=True)
class LabelledTurn:
    """One hand-labelled user turn: where it is, the agent message it answers, and its label."""

    task_id: int
    trial: int
    user_index: int
    agent_text: str | None
    user_text: str
    confirms: bool
    reason: str


def labelled_turns() -> tuple[LabelledTurn, ...]:
    """The shipped labels (`data/confirmations.json`) with their texts read from the shipped
    trajectories; a label whose turn is not the trajectory's is an error."""
    items: list[Any] = json.loads(data_file(LABELS).read_text(encoding="utf-8"))["items"]
    by_trial = {(entry["task_id"], entry["trial"]): entry["traj"] for entry in read_json_gz("trajectories-gpt-4o.json.gz")}
    turns = []
    for number, item in enumerate(items):
        traj = by_trial.get((item["task_id"], item["trial"]))
        if traj is None or traj[item["user_index"]].get("content") != item["user"]:
            raise HarnessError(f"{LABELS}: items[{number}]: not the user turn of task {item['task_id']} trial {item['trial']}")
        agent = traj[item["agent_index"]].get("content") if item["agent_index"] is not None else None
        turns.append(LabelledTurn(item["task_id"], item["trial"], item["user_index"], agent, item["user"], item["confirms"], item["reason"]))
    return tuple(turns)


HELD_OUT = "confirmations_heldout.json"


def heldout_turns() -> tuple[LabelledTurn, ...]:
    """The held-out labels (`data/confirmations_heldout.json`): pairs the parser was not written
    against (the shield red-team's turns and more of their kinds), with no trajectory position."""
    items: list[Any] = json.loads(data_file(HELD_OUT).read_text(encoding="utf-8"))["items"]
    return tuple(LabelledTurn(-1, -1, -1, item["agent"], item["user"], item["confirms"], item["reason"]) for item in items)
