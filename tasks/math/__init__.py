"""Competition math: MATH-500 with Math-Verify anchors and a SymPy second opinion.

Data: MATH-500, the 500-problem test subset from "Let's Verify Step by Step" (Lightman et al.
2023, MIT licence, `data/LICENSE`), drawn from the MATH dataset ("Measuring Mathematical Problem
Solving With the MATH Dataset", Hendrycks et al. 2021). Ids are `math500-<i>`, the 0-based line index.

A candidate's final answer is what a reader of the rendered text sees as final (`read_answer`,
`extract_answer`: the last visible `\\boxed{...}`, the Minerva "Final Answer: The final answer is
..." ending and other marker lines; hidden, quoted and code regions do not count). The anchor
(`check_answer`, docs/tasks.md "MATH-500 answers") refuses hedges and wrong units, reads decimals
exactly unless the problem asks for rounding, and decides between Math-Verify and a SymPy check,
run in worker processes with hard caps (`CheckPool`), by a stated rule it records per candidate.
`task.subset` takes `level=1,2;subject=Algebra` (see `subset`).
"""

from tasks.math.checker import MathAnchor, check_answer, default_pool
from tasks.math.extract import ReadAnswer, extract_answer, read_answer
from tasks.math.loader import load
from tasks.math.subset import MathSubset, parse_subset
from tasks.math.workers import CallResult, CheckPool

__all__ = [
    "CallResult",
    "CheckPool",
    "MathAnchor",
    "MathSubset",
    "check_answer",
    "default_pool",
    "extract_answer",
    "load",
    "parse_subset",
    "read_answer",
    "ReadAnswer",
]
