"""Cells that call the function twice per setup and judge the second output by the first.

affine calls it with gamma = 1 and then with gamma (and beta); numerics with float64
numbers and then the very same numbers in float32. Judging the student's function
against itself keeps every other misconception out of the cell.
"""

from __future__ import annotations

from ..evidence import array_output
from .kind import NormKind


def paired_judge(kind: NormKind, judge_pair):
    """A judge for cases made in pairs (first, second), judged pair by pair.

    judge_pair(case, y_first, y_second, result) -> None | message, where case and
    result are the second call's and both outputs are float arrays of the input's shape.
    """

    def judge(cases, results):
        for i in range(0, len(cases), 2):
            y_first, problem = array_output(kind.function, cases[i], results[i])
            if problem:
                return problem
            y_second, problem = array_output(kind.function, cases[i + 1], results[i + 1])
            if problem:
                return problem
            message = judge_pair(cases[i + 1], y_first, y_second, results[i + 1])
            if message:
                return message
        return None

    return judge
