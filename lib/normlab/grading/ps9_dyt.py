"""ps9_dyt: the student writes Dynamic Tanh, `dyt(x, alpha, gamma, beta)`, and its backward,
`dyt_backward(dy, x, alpha, gamma) -> (dx, dalpha, dgamma, dbeta)`.

Zhu, Chen, He, LeCun and Liu ("Transformers without Normalization", CVPR 2025,
arXiv:2503.10622) replace LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) by

    y = gamma * tanh(alpha * x) + beta           alpha one number; gamma, beta one per feature

and with t = tanh(alpha x) and g = dy * gamma the chain rule gives

    dx     = g * alpha * (1 - t^2)               d tanh(u) / du = 1 - tanh(u)^2
    dalpha = sum over every element of g * x * (1 - t^2)
    dgamma = sum over the leading axes of dy * t,     dbeta = sum over the leading axes of dy

Each cell is judged where no other mistake shows (alpha on records of one feature, the tanh on
records already standardized, gamma and beta against the student's own output with gamma = 1
and beta = 0; each gradient against the wrong forms a student writes). `MANUAL`: by hand.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from . import gradients, normchecks
from .evidence import arrays_output, fmt, near, record, shown_type, where, worst
from .judges import an_array, each_case, each_pair, read_all, returned
from .oracle import ASK, ask
from .spec import check_spec, registry
from .verdict import PASSED, Verdict

ASSIGNMENT = "ps9_dyt"
MANUAL = {"what_dyt_gives_up": 3}
FORWARD, BACKWARD = "dyt", "dyt_backward"
PARTS = ("dx", "dalpha", "dgamma", "dbeta")


def call(x, alpha, gamma=None, beta=None, *, tag: str, label: str = "", **meta) -> Case:
    """A call of the student's dyt(x, alpha, gamma, beta) (gamma, beta: ones, zeros)."""
    x = np.asarray(x)
    gamma = np.ones(x.shape[-1], x.dtype) if gamma is None else np.asarray(gamma)
    beta = np.zeros(x.shape[-1], x.dtype) if beta is None else np.asarray(beta)
    label = label or f"x of shape {x.shape}{'' if x.dtype == np.float64 else ', ' + str(x.dtype)}"
    return Case(FORWARD, "call", (x, float(alpha), gamma, beta), tag=tag, label=label, meta=meta)


def bcall(dy, x, alpha, gamma, *, tag: str) -> Case:
    """A call of the student's dyt_backward(dy, x, alpha, gamma)."""
    x, label = np.asarray(x), f"x of shape {np.shape(x)}, alpha = {alpha:g}"
    args = (np.asarray(dy), x, float(alpha), np.asarray(gamma))
    return Case(BACKWARD, "call", args, tag=tag, label=label)


def _close(got, want, rtol: float = 1e-6) -> bool:
    return near(got, want, rtol, 1e-9)


def _at(got: np.ndarray, want: np.ndarray) -> str:
    """'at (0, 2) you returned 0.4621, expected 0.7616': the worst entry."""
    index = worst(got, want, 1e-6, 1e-12) or (0,) * got.ndim
    return f"at {record(index)} you returned {fmt(got[index])}, expected {fmt(want[index])}"


def _values(seen):
    want = seen.oracle.reference(FORWARD, seen.case.args[0], 1.0)
    if _close(seen.value, want, 1e-4):
        return None
    return (
        f"Values: for {where(seen.case)} (each record already of mean 0 and variance 1), "
        f"dyt(x, 1, ones, zeros) is not tanh(x): {_at(seen.value, want)}. DyT squashes every "
        f"number with tanh: gamma * tanh(alpha * x) + beta."
    )


def _alpha(cases, results, oracle):
    """Triples on records of one feature: (x, alpha), (alpha x, 1) and (x, 1)."""
    ys, problem = read_all(an_array, cases, results)
    if problem:
        return problem
    outputs = {(c.meta["group"], c.tag): (c, y) for c, y in zip(cases, ys, strict=True)}
    for group in sorted({g for g, _ in outputs}):
        case, y = outputs[group, "x_a"]
        inside, plain = outputs[group, "ax_1"][1], outputs[group, "x_1"][1]
        if _close(y, inside):
            continue
        a = case.args[1]
        why = "DyT scales the input by alpha inside the tanh, tanh(alpha * x)."
        if _close(y, a * plain):
            why = "You multiply the tanh by alpha, alpha * tanh(x): " + why
        elif _close(y, plain):
            why = "alpha changes nothing in your output: " + why
        return (
            f"alpha: for {where(case)} and alpha = {a:g}, dyt(x, alpha) differs from "
            f"dyt(alpha * x, 1) ({_at(y, inside)}). {why}"
        )
    return None


def _elementwise(seen):
    case, base, moved = seen.case, seen.first, seen.value
    changed = np.abs(moved - base) > 1e-12 * (1 + np.abs(base).max())
    changed[case.meta["index"]] = False
    if not changed.any():
        return None
    other = tuple(int(i) for i in np.argwhere(changed)[0])
    return (
        f"Statistics: for {where(case)}, changing x{list(case.meta['index'])} changed the output "
        f"at {record(other)} too. DyT has no statistics: no mean, no variance, each number is "
        f"mapped alone (gamma[k] * tanh(alpha * x[k]) + beta[k]), which is what lets it stand "
        f"where LayerNorm stood without computing one."
    )


def _gain_and_bias(seen):
    case, plain, y = seen.case, seen.first, seen.value
    gamma, beta = case.args[2], case.args[3]
    want = gamma * plain + beta
    if _close(y, want):
        return None
    if _close(y, gamma * plain):
        why = "beta was not added."
    elif _close(y, plain + beta):
        why = "gamma was not applied."
    elif _close(y, beta * plain + gamma):
        why = "gamma and beta are swapped: gamma scales, beta shifts."
    else:
        why = "apply them after the tanh, each feature k its own gamma[k] and beta[k]."
    return (
        f"Gain and bias: for {where(case)}, dyt(x, alpha, gamma, beta) is not gamma * dyt(x, "
        f"alpha, 1, 0) + beta: {_at(y, want)}; {why}"
    )


def _parts(case: Case, result):
    return arrays_output(BACKWARD, case, result, PARTS, shapes=(case.args[1].shape,))


def _questions(case: Case) -> list:
    """What a backward cell asks: the reference's gradients, tanh(alpha x) and tanh(x)."""
    dy, x, alpha, gamma = case.args
    return [
        ASK.reference(BACKWARD, dy, x, alpha, gamma),
        ASK.reference(FORWARD, x, alpha),
        ASK.reference(FORWARD, x, 1.0),
    ]


def _terms(seen):
    """(dy * gamma, alpha, x, tanh(alpha x), tanh(x), the reference's four gradients)."""
    dy, x, alpha, gamma = seen.case.args
    right, t, plain = (ask(seen.oracle, q) for q in _questions(seen.case))
    return dy * gamma, alpha, np.asarray(x, dtype=np.float64), t, plain, right


# the derivatives of tanh a student writes, by what a message calls them (d tanh(u)/du at u)
DERIVATIVES = {
    "1 - tanh(alpha x)^2": lambda t, plain: 1 - t * t,
    "1 - tanh(alpha x), not squared": lambda t, plain: 1 - t,
    "tanh(alpha x) (1 - tanh(alpha x)), the sigmoid's derivative": lambda t, plain: t * (1 - t),
    "1 - tanh(x)^2, at x instead of alpha x": lambda t, plain: 1 - plain * plain,
    "1: the tanh left out of the chain rule": lambda t, plain: np.ones_like(t),
}
RIGHT_DERIVATIVE = next(iter(DERIVATIVES))


def _dx_form(seen) -> tuple[str, bool] | None:
    """(the derivative of tanh, whether alpha multiplies it) of the student's dx, or None."""
    g, alpha, _, t, plain, _ = _terms(seen)
    for name, derivative in DERIVATIVES.items():
        for with_alpha in (True, False):
            if _close(seen.value[0], g * (alpha if with_alpha else 1.0) * derivative(t, plain)):
                return name, with_alpha
    return None


def _apart(words: str, cell) -> Verdict:
    return Verdict(PASSED, note=f"apart from {words}: see {cell.grade_id}")


def _dx(reads_alpha: bool):
    """The rule of dyt_dx_alpha (reads_alpha) or dyt_dx_tanh: each reads one part of the
    student's form of dx (`_dx_form`), and passes apart from the other."""

    def rule(seen):
        form = _dx_form(seen)
        if form is None:
            want = seen.oracle.reference(BACKWARD, *seen.case.args)[0]
            return (
                f"dx: for {where(seen.case)}, {_at(seen.value[0], want)}. With t = tanh(alpha x), "
                f"dx = dy * gamma * alpha * (1 - t^2)."
            )
        derivative, with_alpha = form
        if reads_alpha and not with_alpha:
            return (
                f"dx without alpha: for {where(seen.case)}, your dx misses the factor alpha = "
                f"{seen.case.args[2]:g}. The tanh is of u = alpha * x, so the chain rule "
                f"multiplies by du/dx = alpha."
            )
        if not reads_alpha and derivative != RIGHT_DERIVATIVE:
            return (
                f"Derivative of tanh: for {where(seen.case)}, your dx uses {derivative}. The "
                f"derivative of tanh(u) is 1 - tanh(u)^2, at u = alpha * x."
            )
        if derivative != RIGHT_DERIVATIVE:
            return _apart("the derivative of tanh", DX_TANH)
        return None if with_alpha else _apart("alpha", DX_ALPHA)

    return rule


def _dalpha_scalar(seen):
    dalpha, d = seen.value[1], seen.case.args[1].shape[-1]
    if dalpha.size == 1:
        return None
    per = " one per feature" if dalpha.shape == (d,) else ""
    return (
        f"dalpha is one number: for {where(seen.case)}, yours has shape {dalpha.shape}{per}. "
        f"alpha is a single number shared by every element of every record, so its gradient "
        f"sums over all of them: one number."
    )


def _dalpha_x(seen):
    """dalpha sums g * x * d tanh: judged with whichever derivative of tanh the student's
    dalpha uses (a wrong one is dyt_dx_tanh's), so only a missing x costs this cell."""
    g, _, x, t, plain, right = _terms(seen)
    got = float(seen.value[1].sum())  # one number, or a per-feature one summed (its own cell)
    for name, derivative in DERIVATIVES.items():
        du = g * derivative(t, plain)
        if _close(got, (du * x).sum(), 1e-5):
            return None if name == RIGHT_DERIVATIVE else _apart("the derivative of tanh", DX_TANH)
        if _close(got, du.sum(), 1e-5):
            return (
                f"dalpha without x: for {where(seen.case)}, your dalpha sums dy * gamma * "
                f"d tanh(u)/du but not x. The tanh is of u = alpha * x, and du/dalpha = x: "
                f"dalpha sums dy * gamma * x * (1 - t^2) over every element."
            )
    return (
        f"dalpha: for {where(seen.case)}, your dalpha is {fmt(got)}; it is the sum over every "
        f"element of dy * gamma * x * (1 - tanh(alpha x)^2) = {fmt(right[1])}."
    )


def _one_per_feature(seen, index: int):
    """(the student's part `index` as (d,), the reference's, dy and x as (records, d)), or
    (a message, None, ...) when it is not one number per feature."""
    dy, x, alpha, gamma = seen.case.args
    got, d = seen.value[index], x.shape[-1]
    want = seen.oracle.reference(BACKWARD, dy, x, alpha, gamma)[index]
    if got.size != d:
        shape = f"has shape {got.shape}; it is one number per feature, shape ({d},)"
        return f"{PARTS[index]}: for {where(seen.case)}, {PARTS[index]} {shape}.", None, None, None
    return got.reshape(d), want, dy.reshape(-1, d), np.asarray(x).reshape(-1, d)


def _dgamma(seen):
    got, want, dy, x = _one_per_feature(seen, 2)
    if want is None or _close(got, want):
        return got if want is None else None
    why = "dgamma sums dy * tanh(alpha x) over every leading axis: gamma multiplies the tanh."
    if _close(got, (dy * x).sum(axis=0)):
        why = "Yours sums dy * x, but " + why
    return f"dgamma: for {where(seen.case)}, {_at(got, want)}. {why}"


def _dbeta(seen):
    got, want, dy, _ = _one_per_feature(seen, 3)
    if want is None or _close(got, want):
        return got if want is None else None
    why = "dbeta sums dy over every leading axis."
    if _close(got, dy.mean(axis=0)):
        why = "You averaged; beta is added to every record, so its gradient is the sum."
    return f"dbeta: for {where(seen.case)}, {_at(got, want)}. {why}"


def _backward_dtype(seen):
    case, out, result = seen.case, seen.value, seen.result
    if not isinstance(out, tuple) or len(out) != 4:
        shown = shown_type(result)
        return f"Type: {BACKWARD} must return four things, {PARTS}; it returned {shown}."
    x = case.args[1]
    # dalpha is one number, a float or a 0-d array: its own cell
    for index, shape in ((0, x.shape), (2, x.shape[-1:]), (3, x.shape[-1:])):
        name, value = PARTS[index], np.asarray(out[index])
        if value.shape != shape:
            return f"Shape: for {where(case)}, {name} has shape {value.shape}; {shape} is due."
        if value.dtype != x.dtype:
            return (
                f"dtype: for {where(case)}, {name} is {value.dtype}; a {x.dtype} x gives {x.dtype}."
            )
    return None


DX_ALPHA = check_spec(
    "dyt_dx_alpha",
    BACKWARD,
    each_case(_parts, _dx(reads_alpha=True)),
    "dx carries alpha (the chain rule through alpha * x)",
    misconception="dx without alpha",
    points=2,
    questions=_questions,
)
DX_TANH = check_spec(
    "dyt_dx_tanh",
    BACKWARD,
    each_case(_parts, _dx(reads_alpha=False)),
    "dx uses the derivative of tanh, 1 - tanh(alpha x)^2",
    misconception="the derivative of tanh wrong",
    points=2,
    questions=_questions,
)
CHECKS = registry(
    ASSIGNMENT,
    check_spec(
        "dyt_values",
        FORWARD,
        each_case(an_array, _values),
        "with alpha = 1, gamma = 1 and beta = 0, tanh of every number",
        misconception="not tanh of each number",
        points=1,
        questions=lambda case: [ASK.reference(FORWARD, case.args[0], 1.0)],
    ),
    check_spec(
        "dyt_alpha",
        FORWARD,
        _alpha,
        "alpha scales the input inside the tanh",
        misconception="alpha applied after the tanh, or ignored",
        points=2,
    ),
    check_spec(
        "dyt_elementwise",
        FORWARD,
        each_pair(an_array, _elementwise),
        "each number mapped alone: no mean, no variance",
        misconception="statistics computed (a normalization before the tanh)",
        points=2,
    ),
    check_spec(
        "dyt_gain_and_bias",
        FORWARD,
        each_pair(an_array, _gain_and_bias),
        "gamma and beta per feature, after the tanh",
        misconception="gamma and beta misapplied",
        points=2,
    ),
    normchecks.like_the_input_spec("dyt_dtype_and_shape", FORWARD, points=1),
    normchecks.untouched_spec(
        "dyt_input_untouched",
        FORWARD,
        ("x", "alpha", "gamma", "beta"),
        points=1,
    ),
    normchecks.reuse_spec(
        "dyt_reference_reuse",
        FORWARD,
        points=1,
        library="a library DyT",
        summary="written by hand: no library DyT called",
        misconception="a library DyT called",
    ),
    DX_ALPHA,
    DX_TANH,
    check_spec(
        "dyt_dalpha_scalar",
        BACKWARD,
        each_case(_parts, _dalpha_scalar),
        "dalpha is one number",
        misconception="dalpha per feature",
        points=1,
    ),
    check_spec(
        "dyt_dalpha_x",
        BACKWARD,
        each_case(_parts, _dalpha_x),
        "dalpha sums dy * gamma * x * (1 - t^2) over every element",
        misconception="dalpha without x",
        points=2,
        questions=_questions,
    ),
    check_spec(
        "dyt_dgamma",
        BACKWARD,
        each_case(_parts, _dgamma),
        "dgamma sums dy * tanh(alpha x) over the leading axes",
        misconception="dgamma from x instead of tanh(alpha x)",
        points=2,
        questions=_questions,
    ),
    check_spec(
        "dyt_dbeta",
        BACKWARD,
        each_case(_parts, _dbeta),
        "dbeta sums dy over the leading axes",
        misconception="dbeta a mean",
        points=1,
        questions=_questions,
    ),
    check_spec(
        "dyt_backward_dtype_and_shape",
        BACKWARD,
        each_case(returned, _backward_dtype),
        "four gradients of the right shapes, in x's dtype",
        misconception="gradients of the wrong type, shape or dtype",
        points=1,
    ),
    normchecks.untouched_spec(
        "dyt_backward_input_untouched",
        BACKWARD,
        ("dy", "x", "alpha", "gamma"),
        points=1,
    ),
    gradients.gradient_reuse_spec("dyt_backward_reference_reuse", BACKWARD, points=1, read=_parts),
)
