"""The shapes a judge takes: each case in turn, each pair of cases, or every case read first.

A judge reads the `Result` of each `Case` with a reader,

    read(case, result) -> (value, None) | (None, message)

which turns what came back into the value the verdict needs, or into the message when it
cannot (the call raised, or returned the wrong kind of thing). The first problem wins: a
student sees one message, about the first case that shows it.
"""

from __future__ import annotations

from .evidence import array_output, failure_of_call


def returned(case, result):
    """Reader: the output as it came back; the message when the call raised."""
    return result.output, failure_of_call(case.target, case, result)


def an_array(case, result):
    """Reader: the output as a float64 array of the first argument's shape, or the message."""
    return array_output(case.target, case, result)


def each_case(read, verdict=None):
    """judge(cases, results): read each result, then verdict(case, value, result) -> None |
    message (no verdict: reading is the check); the first message wins."""

    def judge(cases, results):
        for case, result in zip(cases, results, strict=True):
            value, problem = read(case, result)
            if problem:
                return problem
            message = verdict(case, value, result) if verdict else None
            if message:
                return message
        return None

    return judge


def each_pair(read, verdict):
    """judge(cases, results) for cases made in pairs (first, second), pair by pair:
    verdict(second_case, first_value, second_value, second_result) -> None | message.

    Checks that compare two calls of the student's function (with gamma = 1 and with
    gamma; float64 and float32) judge it against itself, which keeps every other
    misconception out of the cell.
    """

    def judge(cases, results):
        pairs = zip(cases[0::2], results[0::2], cases[1::2], results[1::2], strict=True)
        for first_case, first_result, second_case, second_result in pairs:
            first, problem = read(first_case, first_result)
            if problem:
                return problem
            second, problem = read(second_case, second_result)
            if problem:
                return problem
            message = verdict(second_case, first, second, second_result)
            if message:
                return message
        return None

    return judge


def read_all(read, cases, results) -> tuple[list | None, str | None]:
    """(every case's value, in order; None), or (None, the first problem)."""
    values = []
    for case, result in zip(cases, results, strict=True):
        value, problem = read(case, result)
        if problem:
            return None, problem
        values.append(value)
    return values, None
