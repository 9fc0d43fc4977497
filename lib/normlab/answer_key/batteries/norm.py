"""The batteries of the normalization cells (`normlab.grading.normchecks`), one per builder
(`SHARED`), each `battery(kind, rng, hidden) -> [Case]` for any `NormKind`: LayerNorm (ps2),
batch-norm (ps3) and RMSNorm (ps4) (Ba, Kiros and Hinton, 2016, arXiv:1607.06450; Ioffe and
Szegedy, 2015; Zhang and Sennrich, 2019)."""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Case

from ...grading import normchecks
from ...grading.normchecks.kind import NormKind, call
from ..random_inputs import messy, signed_gain


def axis(kind: NormKind, rng, hidden: bool) -> list[Case]:
    # every shape, in the order they are drawn; the visible battery is the first two, and
    # for a per-record norm also the square input (where a wrong axis keeps the shape) and
    # the single record (where x.shape[:-1] is ())
    first = (4, 5) if kind.leading_axes else (3, 5)
    records = [] if kind.leading_axes else [(7,), (1, 6)]
    shapes = [first, (2, 3, 4), (6, 6), (2, 3, 2, 5), (3, 1, 7), *records]
    visible = [first, (2, 3, 4)] if kind.leading_axes else [first, (2, 3, 4), (6, 6), (7,)]

    drawn = {s: call(kind, messy(rng, s), tag="axes") for s in shapes}
    return [drawn[s] for s in visible] + [drawn[s] for s in shapes if hidden and s not in visible]


def centering(kind: NormKind, rng, hidden: bool) -> list[Case]:
    # records whose mean is far from zero relative to their spread: centring shows
    shapes = [(3, 5)] + ([(2, 3, 6), (5, 5)] if hidden else [])
    cases = [call(kind, messy(rng, s, offset=6.0), tag="centring") for s in shapes]
    return [call(kind, np.array([[1.0, 2.0, 3.0, 4.0]]), tag="centring"), *cases]


def population_variance(kind: NormKind, rng, hidden: bool) -> list[Case]:
    # large spread: eps is negligible, only the divisor shows
    shapes = [(3, 4), (2, 3, 5)] + ([(8, 8), (2, 2, 3, 6)] if hidden else [])
    return [call(kind, messy(rng, s, spread=(2.0, 40.0)), tag="divisor") for s in shapes]


def eps_inputs(kind: NormKind, rng, hidden: bool) -> list[tuple[np.ndarray, float | None]]:
    """(x, eps) of an eps cell (None: the default eps); ps8's module is judged on LayerNorm's.

    The first is a block of three records of variance 1e-6, one constant record and two
    ordinary ones. For batch-norm the same block is transposed: the features carry the tiny and
    the zero variance. RMSNorm's tiny records sit at zero (its statistic is the mean square),
    LayerNorm's anywhere.
    """
    d = 6 if not kind.leading_axes else 5
    base = rng.uniform(-5, 5, size=(3, 1)) if kind.center else 0.0
    tiny = base + 1e-3 * rng.standard_normal((3, d))  # variance about 1e-6 < eps = 1e-5
    constant = np.full((1, d), 3.0 if kind.center else 0.0)
    block = np.concatenate([tiny, constant, messy(rng, (2, d), spread=(0.5, 5.0))])  # (6, d)
    block = block.T.copy() if kind.leading_axes else block
    found = [(block, None), (messy(rng, (4, 3), spread=(0.05, 0.2)), 0.1)]
    if hidden:
        found += [
            (block * 10.0, 1e-3),
            (messy(rng, (2, 3, 5), spread=(0.01, 0.05)), 1e-3),
            (block.reshape(1, *block.shape), None),
        ]
    return found


def eps_placement(kind: NormKind, rng, hidden: bool) -> list[Case]:
    (block, _), *rest = eps_inputs(kind, rng, hidden)
    small = "features" if kind.leading_axes else "records"
    label = f"{small} of variance 1e-6 and 0, shape {block.shape}"
    cases = [call(kind, x, eps=eps, tag="eps") for x, eps in rest]
    return [call(kind, block, tag="eps", label=label), *cases]


def gain_and_bias(kind: NormKind, rng, hidden: bool) -> list[Case]:
    # the seed's example: gamma_1 = 2 doubles only the first normalized feature
    gamma = np.array([2.0, 1.0, 1.0, 1.0])
    beta = np.array([0.0, 0.0, 0.0, 0.5]) if kind.has_beta else None
    setups = [(messy(rng, (3, 4)), gamma, beta)]
    for shape in [(5, 5), (2, 3, 6)] if hidden else []:
        g = signed_gain(rng, shape[-1], high=3.0)
        b = rng.normal(size=shape[-1]) if kind.has_beta else None
        setups.append((messy(rng, shape), g, b))
    cases = []
    for pair, (x, g, b) in enumerate(setups):
        cases.append(call(kind, x, tag="plain", pair=pair))
        cases.append(call(kind, x, gamma=g, beta=b, tag="affine", pair=pair))
    return cases


def independence(kind: NormKind, rng, hidden: bool) -> list[Case]:
    shapes = [(3, 3, 5)] + ([(3, 4, 4)] if hidden else [])
    cases = []
    for block, shape in enumerate(shapes):
        x = messy(rng, shape)
        b, t, d = shape
        cases.append(call(kind, x, tag="base", block=block))
        cases.append(call(kind, messy(rng, shape) * 100.0, tag="other", block=block))
        cases.append(call(kind, x, tag="again", block=block))
        for target in ((0, t - 1), (b - 1, 0)):
            x2 = x.copy()
            x2[target] = x2[target] * 7.0 + 10.0 * np.arange(d)  # not a shift or scale
            cases.append(call(kind, x2, tag="changed", block=block, record=target))
        alone = (b - 1, t - 1)
        cases.append(call(kind, x[alone][None, None, :], tag="alone", block=block, record=alone))
        if hidden:
            cases.append(call(kind, x[(0, 0)], tag="alone", block=block, record=(0, 0)))
    return cases


def dtype_and_shape(kind: NormKind, rng, hidden: bool) -> list[Case]:
    specs = [((5, 7), np.float64), ((2, 3, 6), np.float32)]
    if hidden:
        specs += [((2, 3, 2, 5), np.float64), ((6, 6), np.float32), ((4, 3, 5), np.float64)]
    return [call(kind, messy(rng, s, spread=(0.5, 5.0)).astype(t), tag="dtype") for s, t in specs]


def input_untouched(kind: NormKind, rng, hidden: bool) -> list[Case]:
    shapes = [(3, 5)] + ([(2, 3, 4)] if hidden else [])
    cases = []
    for shape in shapes:
        d = shape[-1]
        beta = rng.normal(size=d) if kind.has_beta else None
        x, gamma = messy(rng, shape), rng.uniform(0.5, 2, d)
        cases.append(call(kind, x, gamma=gamma, beta=beta, tag="io"))
    return cases


def numerics(kind: NormKind, rng, hidden: bool) -> list[Case]:
    setups = [((3, 4, 8), 1e4)] + ([((6, 16), 1e4), ((4, 5, 12), -3e4)] if hidden else [])
    cases = []
    for pair, (shape, offset) in enumerate(setups):
        far32 = (offset + rng.normal(size=shape)).astype(np.float32)
        far64 = far32.astype(np.float64)  # exactly the same numbers
        label = f"float32 records at offset {offset:g} with spread 1, shape {shape}"
        cases += [call(kind, x, tag=x.dtype.name, pair=pair, label=label) for x in (far64, far32)]
    return cases


def reference_reuse(kind: NormKind, rng, hidden: bool) -> list[Case]:
    shapes = [(3, 5)] + ([(2, 3, 4)] if hidden else [])
    return [call(kind, messy(rng, s), tag="reuse") for s in shapes]


def batch_of_one(kind: NormKind, rng, hidden: bool) -> list[Case]:
    setups = [((1, 5), "one"), ((2, 5), "two")] + ([((1, 1, 4), "one")] if hidden else [])
    return [call(kind, messy(rng, shape), tag=tag) for shape, tag in setups]


# the battery of each builder's cells, for the kind it builds for
SHARED = {
    normchecks.axis_spec: axis,
    normchecks.centering_spec: centering,
    normchecks.population_variance_spec: population_variance,
    normchecks.eps_placement_spec: eps_placement,
    normchecks.gain_and_bias_spec: gain_and_bias,
    normchecks.independence_spec: independence,
    normchecks.dtype_and_shape_spec: dtype_and_shape,
    normchecks.input_untouched_spec: input_untouched,
    normchecks.numerics_spec: numerics,
    normchecks.reference_reuse_spec: reference_reuse,
    normchecks.batch_of_one_spec: batch_of_one,
}
