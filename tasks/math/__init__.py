"""Competition math: MATH-500 with Math-Verify anchors and a SymPy second opinion.

Data: MATH-500, the 500-problem test subset from "Let's Verify Step by Step" (Lightman et al.
2023, MIT licence, `data/LICENSE`), drawn from the MATH dataset ("Measuring Mathematical Problem
Solving With the MATH Dataset", Hendrycks et al. 2021). Ids are `math500-<i>`, the 0-based line index.

A candidate's final answer is its last `\\boxed{...}` or a marked "The answer is ..." /
"Final answer: ..." line (`extract_answer`). The anchor is Math-Verify's equivalence verdict,
computed in worker processes with a hard cap (`check_answer`, `CheckPool`); a plain
SymPy check runs beside it and disagreements are reported in the outcome's details.
`task.subset` takes `level=1,2;subject=Algebra` (see `subset`).
"""

from tasks.math.checker import check_answer, default_pool
from tasks.math.extract import extract_answer
from tasks.math.loader import load
from tasks.math.subset import MathSubset, parse_subset
from tasks.math.workers import CallResult, CheckPool

__all__ = [
    "CallResult",
    "CheckPool",
    "MathSubset",
    "check_answer",
    "default_pool",
    "extract_answer",
    "load",
    "parse_subset",
]
