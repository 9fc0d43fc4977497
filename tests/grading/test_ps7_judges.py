"""ps7's judges: what they read from a student's output, that a planted bug stays in its cell
whatever the seed, that a correct answer written otherwise passes, and that no message quotes
the right answer."""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pytest
from course_bank import BANK
from course_helpers import read, run_in_process, source_path, with_bug

import normlab
from normlab.answer_key import wrong_implementations as vf
from normlab.answer_key.batteries.ps7_family import gcall
from normlab.answer_key.live import LIVE
from normlab.grading import CHECKS, DEFAULT_SEED, cell_verdict, gradients, run_case, run_cases
from normlab.grading.evidence import fmt
from normlab.grading.judges import Seen
from normlab.grading.ps7_backward import FEATURES, FIRST, LEADING, means_over
from normlab.grading.ps7_group_norm import (
    CONTIGUOUS,
    INSTANCE,
    LAST_AXIS,
    LAYER,
    STRIDED,
    WRONG,
    sharing_of,
)
from normlab.grading.selfcheck import run_check

PS7 = "ps7_family"


def test_the_wrong_group_norms_the_judges_ask_for_are_the_oracles():
    assert set(WRONG) == {f.__name__ for f in vf.GROUP_NORM}


@pytest.mark.parametrize(
    ("made_by", "sharing"),
    [
        (lambda x: normlab.group_norm(x, 3), CONTIGUOUS),
        (lambda x: normlab.group_norm(x, 6), INSTANCE),
        (lambda x: normlab.group_norm(x, 1), LAYER),
        (lambda x: vf.strided_groups(x, 3), STRIDED),
        (lambda x: vf.channels_from_the_last_axis(x, 3, np.ones(6), np.zeros(6)), LAST_AXIS),
        (lambda x: vf.sample_variance(x, 3), CONTIGUOUS),  # the divisor does not change it
        (lambda x: vf.eps_outside_the_root(x, 3), CONTIGUOUS),
        (lambda x: x, None),
    ],
)
def test_which_entries_share_statistics_is_read_from_the_output(made_by, sharing):
    x = np.random.default_rng(0).normal(size=(2, 6, 6)) * 3 + np.arange(6.0)
    assert sharing_of(gcall(x, 3), made_by(x)) == sharing


@pytest.mark.parametrize(
    ("made_by", "axes"),
    [
        (normlab.batch_norm_backward, LEADING),
        (vf.missing_mean_term, LEADING),  # still orthogonal to x_hat over the batch
        (vf.variance_as_a_constant, LEADING),  # still sums to zero over the batch
        (normlab.layer_norm_backward, FEATURES),
        (vf.statistics_over_the_first_axis, FIRST),
        (lambda dy, x, gamma, eps: (np.zeros_like(x), None, None), None),
    ],
)
def test_the_axes_of_the_gradients_means_are_read_from_dx(made_by, axes):
    rng = np.random.default_rng(1)
    x, dy, gamma = rng.normal(size=(4, 3, 5)) * 3, rng.normal(size=(4, 3, 5)), np.ones(5)
    case = gradients.call("batch_norm_backward", dy, x, gamma)
    dx = made_by(dy, x, gamma, 1e-5)[0]
    assert means_over(Seen(case, None, None, LIVE), dx) == axes


@pytest.fixture(scope="module")
def bank() -> dict[str, tuple[dict, set[str]]]:
    source = read(source_path(PS7))
    found = {"solution": (run_in_process(source), set())}
    for bug, (edits, expected) in BANK[PS7].items():
        found[bug] = (run_in_process(with_bug(source, edits)), expected)
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_planted_bug_loses_its_own_cells_whatever_the_seed(bank, seed):
    for name, (namespace, expected) in bank.items():
        failed = {g for g in CHECKS[PS7] if not cell_verdict(PS7, g, namespace, seed).passed}
        assert failed == expected, name


def test_the_visible_checks_show_each_planted_bug(bank):
    """A student running the notebook sees the cells the bug will lose at grading."""
    for name, (namespace, expected) in bank.items():
        failed = set()
        for grade_id, spec in CHECKS[PS7].items():
            if not run_check(spec, partial(run_case, namespace), hidden=False).passed:
                failed.add(grade_id)
        assert failed == expected, name


LOOPS_IN_THE_INPUT_DTYPE = """
def group_norm(x, num_groups, gamma, beta, eps=1e-5):
    n, c = x.shape[:2]
    if c % num_groups:
        raise ValueError(f"{c} channels do not split into {num_groups} groups")
    out, k = np.empty_like(x), c // num_groups
    for i in range(n):
        for g in range(num_groups):
            block = x[i, g * k : (g + 1) * k]
            out[i, g * k : (g + 1) * k] = (block - block.mean()) / np.sqrt(block.var() + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return out * gamma.reshape(shape).astype(x.dtype) + beta.reshape(shape).astype(x.dtype)

def batch_norm_backward(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    flat, dflat = x.reshape(-1, d), dy.reshape(-1, d)
    n = flat.shape[0]
    inv = 1.0 / np.sqrt(flat.var(0) + eps)
    x_hat = (flat - flat.mean(0)) * inv
    g = dflat * gamma
    dx = inv / n * (n * g - g.sum(0) - x_hat * (g * x_hat).sum(0))
    out = (dx.reshape(x.shape), (dflat * x_hat).sum(0), dflat.sum(0))
    return tuple(a.astype(x.dtype) for a in out)
"""


def test_a_right_answer_written_otherwise_passes_every_cell():
    """Loops, np.var, the textbook's form of dx, float32 kept in float32."""
    namespace = {"np": np}
    exec(LOOPS_IN_THE_INPUT_DTYPE, namespace)  # noqa: S102 (the test's own answer)
    failed = {g: v for g in CHECKS[PS7] if not (v := cell_verdict(PS7, g, namespace)).passed}
    assert failed == {}


NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _right_answers(case) -> set[str]:
    """Every entry of the reference's answer to the case, as a message would print it."""
    answer = getattr(normlab, case.target)(*case.args)
    arrays = answer if isinstance(answer, tuple) else (answer,)
    return {fmt(v) for a in arrays for v in np.asarray(a, dtype=np.float64).ravel()}


def test_no_message_quotes_the_right_answer(bank):
    """The failing cells of the bank: no number in a message is an entry of the right output."""
    checked = 0
    for name, (namespace, expected) in bank.items():
        for grade_id in expected:
            spec = CHECKS[PS7][grade_id]
            cases = spec.make_cases(DEFAULT_SEED, hidden=False)
            verdict = spec.judge(cases, run_cases(namespace, cases), LIVE)
            if verdict.passed or "Reference reuse" in verdict.message:
                continue
            answers = set()
            for case in cases:
                try:
                    answers |= _right_answers(case)
                except ValueError:  # num_groups that does not divide C: no right output
                    pass
            quoted = [n for n in NUMBER.findall(verdict.message) if n in answers]
            assert quoted == [], (name, grade_id, verdict.message)
            checked += 1
    assert checked >= 15
