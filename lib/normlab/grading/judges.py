"""The one judge interface, and the shapes judges take.

    judge(cases, results, oracle) -> Verdict | str | None

None passes; a str is the message of the cell's own misconception (`check_spec` makes it a
`Verdict` of the check's category); a `Verdict` carries its own category. Most judges are
built here from a reader and a rule:

    read(case, result) -> (value, None) | (None, problem)   the value, or why there is none
    rule(seen) -> Verdict | str | None                       one case as `Seen`

The first problem wins: a student sees one message, about the first case that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from normlab_sandbox.cases import Case, Result

from .evidence import array_output, failure_of_call


@dataclass(frozen=True)
class Seen:
    """One case as a rule sees it."""

    case: Case
    value: object  # what the reader made of the result
    result: Result
    oracle: object  # where expectations come from (normlab.grading.oracle)
    first: object = None  # `each_pair`: the value of the pair's first call


def returned(case, result):
    """Reader: the output as it came back; the problem when the call raised."""
    return result.output, failure_of_call(case.target, case, result)


def an_array(case, result):
    """Reader: the output as a float64 array of the first argument's shape, or the problem."""
    return array_output(case.target, case, result)


def each_case(read, rule=None):
    """judge: read each result, then rule(seen) (no rule: reading is the check). The one loop
    over a battery's cases: every other judge shape is built on it."""

    def judge(cases, results, oracle):
        for case, result in zip(cases, results, strict=True):
            value, problem = read(case, result)
            if problem:
                return problem
            found = rule(Seen(case, value, result, oracle)) if rule else None
            if found:
                return found
        return None

    return judge


def each_pair(read, rule):
    """judge for cases made in pairs: rule(seen) sees the second call, the first's value as
    `seen.first`. Judging a function against itself (gamma = 1, then gamma; float64, then
    float32) keeps every other misconception out of the cell."""

    def judge(cases, results, oracle):
        pairs = zip(cases[0::2], results[0::2], cases[1::2], results[1::2], strict=True)
        for first_case, first_result, second_case, second_result in pairs:
            first, problem = read(first_case, first_result)
            if problem:
                return problem
            second, problem = read(second_case, second_result)
            if problem:
                return problem
            found = rule(Seen(second_case, second, second_result, oracle, first))
            if found:
                return found
        return None

    return judge


def must_raise(rule):
    """judge for a cell that asks for an error: rule(seen) sees what each call raised, (type
    name, message) or None. No call raising and every one returning None is the blank
    notebook's comment stub: "not written"."""
    by_case = each_case(lambda case, result: (result.error, None), rule)

    def judge(cases, results, oracle):
        if all(r.error is None and r.output_type == "NoneType" for r in results):
            return failure_of_call(cases[0].target, cases[0], results[0])
        return by_case(cases, results, oracle)

    return judge


def read_all(read, cases, results) -> tuple[list | None, object]:
    """(every case's value, in order; None), or (None, the first problem)."""
    values: list = []
    problem = each_case(read, lambda seen: values.append(seen.value))(cases, results, None)
    return (None, problem) if problem else (values, None)
