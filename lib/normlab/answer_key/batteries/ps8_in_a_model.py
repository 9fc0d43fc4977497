"""ps8_in_a_model's batteries: probes of the student's LayerNorm module (`module_probes`).

Each case is a probe of the class: a forward on x (with a weight, a bias and a dy put in),
its parameters, its state_dict both ways, and one training run in the spirals network.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.spirals import RUN

from ...grading.normchecks import LAYER_NORM
from ...grading.ps8_in_a_model import CHECKS
from ...grading.ps8_probes import built, forward_case, probe_case
from ..random_inputs import messy
from .norm import eps_inputs


def _affine(rng, shape):
    """A weight of size 0.5 to 2 and either sign, and a bias, of `shape` (a normalized_shape:
    an int or a tuple, as NumPy takes sizes)."""
    weight = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return weight, rng.normal(size=shape)


def _plain(normalized_shape):
    """weight 1 and bias 0 of normalized_shape: the cells that read a choice of the formula
    put these in, so that neither the module's own start nor its gain matters there."""
    return np.ones(normalized_shape), np.zeros(normalized_shape)


def values_cases(rng, hidden: bool) -> list:
    """One trailing axis, 2-D to 4-D x, a random weight and bias, and a dy (the gradient
    cells use the same cases)."""
    shapes = [(3, 8), (2, 3, 8)] + ([(4, 16), (2, 2, 3, 5), (1, 6), (5, 7)] if hidden else [])
    cases = []
    for shape in shapes:
        x = messy(rng, shape, spread=(0.5, 5.0))
        weight, bias = _affine(rng, shape[-1])
        dy = rng.normal(size=shape)
        cases.append(forward_case(shape[-1], x, weight=weight, bias=bias, dy=dy, tag="forward"))
    return cases


def _plain_forward_cases(rng, setups, spread, tag: str) -> list:
    """A forward of a messy x of each (normalized_shape, x's shape), weight 1 and bias 0."""
    cases = []
    for normalized_shape, shape in setups:
        x = messy(rng, shape, spread=spread)
        weight, bias = _plain(normalized_shape)
        cases.append(forward_case(normalized_shape, x, weight=weight, bias=bias, tag=tag))
    return cases


def _trailing_cases(rng, hidden: bool) -> list:
    setups = [((3, 4), (2, 3, 4))]
    if hidden:
        setups += [((5, 6), (4, 5, 6)), ((2, 7), (3, 2, 7)), ((6,), (3, 6))]
    return _plain_forward_cases(rng, setups, (0.5, 5.0), "trailing")


def _no_affine_cases(rng, hidden: bool) -> list:
    setups = [(8, (3, 8))] + ([((3, 4), (2, 3, 4)), (16, (2, 2, 16))] if hidden else [])
    cases = []
    for normalized_shape, shape in setups:
        label = f"a new {built(normalized_shape, affine=False)}"
        cases.append(
            probe_case(
                "parameters",
                normalized_shape,
                tag="structure",
                label=label,
                elementwise_affine=False,
            )
        )
        x = messy(rng, shape, spread=(0.5, 5.0))
        cases.append(forward_case(normalized_shape, x, affine=False, tag="plain"))
    return cases


def _spread_cases(rng, hidden: bool) -> list:
    # large spread: eps is negligible, only the divisor shows
    setups = [(8, (3, 8)), (5, (2, 3, 5))]
    if hidden:
        setups += [(12, (4, 12)), ((3, 4), (2, 3, 4))]
    return _plain_forward_cases(rng, setups, (2.0, 40.0), "divisor")


def _eps_cases(rng, hidden: bool) -> list:
    cases = []
    for x, eps in eps_inputs(LAYER_NORM, rng, hidden):
        weight, bias = _plain(x.shape[-1])
        cases.append(forward_case(x.shape[-1], x, weight=weight, bias=bias, eps=eps, tag="eps"))
    return cases


def _float32_cases(rng, hidden: bool) -> list:
    setups = [(8, (3, 8)), ((3, 4), (2, 3, 4))] + ([(16, (2, 5, 16))] if hidden else [])
    return [
        forward_case(shape, messy(rng, x_shape, spread=(0.5, 5.0)).astype(np.float32), tag="f32")
        for shape, x_shape in setups
    ]


def _reuse_cases(rng, hidden: bool) -> list:
    return values_cases(rng, hidden)[: 4 if hidden else 2]


def _registered_cases(rng, hidden: bool) -> list:
    shapes = [8, (3, 4)] + ([16, (2, 3, 5)] if hidden else [])
    return [
        probe_case("parameters", shape, tag="parameters", label=f"a new {built(shape)}")
        for shape in shapes
    ]


def _state_cases(rng, hidden: bool) -> list:
    setups = [(8, (3, 8)), ((3, 4), (2, 3, 4))]
    if hidden:
        setups += [(16, (2, 5, 16)), ((2, 6), (4, 2, 6))]
    cases = []
    for shape, x_shape in setups:
        weight, bias = _affine(rng, shape)
        x = rng.normal(size=x_shape) * 3.0 + 1.0
        label = f"{built(shape)} and nn.LayerNorm({shape})"
        cases.append(probe_case("state_dict", shape, x, weight, bias, tag="state", label=label))
    return cases


def _training_cases(rng, hidden: bool) -> list:
    label = (
        f"the spirals network ({RUN['depth']} layers of {RUN['width']}, Linear -> LayerNorm -> "
        f"tanh) trained {RUN['steps']} Adam steps in float64 with your LayerNorm"
    )
    return [probe_case("training", tag="training", label=label, **RUN)]


BATTERIES = {
    CHECKS.cell.values: values_cases,
    CHECKS.cell.trailing_axes: _trailing_cases,
    CHECKS.cell.no_affine: _no_affine_cases,
    CHECKS.cell.population_variance: _spread_cases,
    CHECKS.cell.eps_placement: _eps_cases,
    CHECKS.cell.float32: _float32_cases,
    CHECKS.cell.reference_reuse: _reuse_cases,
    CHECKS.cell.stats_in_graph: values_cases,
    CHECKS.cell.parameter_gradients: values_cases,
    CHECKS.cell.registered: _registered_cases,
    CHECKS.cell.state_dict: _state_cases,
    CHECKS.cell.training: _training_cases,
}
