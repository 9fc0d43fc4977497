"""ps8_in_a_model's batteries: probes of the student's LayerNorm module (`module_probes`).

Each case is a probe of the class: a forward on x (with a weight, a bias and a dy put in),
its parameters, its state_dict both ways, and one training run in the spirals network.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.spirals import RUN

from ...grading.normchecks import LAYER_NORM
from ...grading.ps8_in_a_model import CHECKS, built, forward_case, probe_case
from ..random_inputs import each, messy, signed_affine
from .norm import eps_inputs


def _plain(normalized_shape):
    """weight 1 and bias 0 (forward_case's keywords): the cells that read a choice of the
    formula put these in, so that neither the module's own start nor its gain matters there."""
    return {"weight": np.ones(normalized_shape), "bias": np.zeros(normalized_shape)}


def _forward(rng, shape):
    """One trailing axis, a random weight and bias, and a dy (the gradient cells use the same
    cases)."""
    x = messy(rng, shape, spread=(0.5, 5.0))
    weight, bias = signed_affine(rng, shape[-1])
    dy = rng.normal(size=shape)
    return forward_case(shape[-1], x, weight=weight, bias=bias, dy=dy, tag="forward")


values_cases = each(_forward, [(3, 8), (2, 3, 8)], [(4, 16), (2, 2, 3, 5), (1, 6), (5, 7)])


def _plain_forward(rng, setup, spread, tag: str):
    """A forward of a messy x, setup (normalized_shape, x's shape), weight 1 and bias 0."""
    normalized_shape, shape = setup
    x = messy(rng, shape, spread=spread)
    return forward_case(normalized_shape, x, **_plain(normalized_shape), tag=tag)


def _no_affine(rng, setup) -> list:
    normalized_shape, shape = setup
    label = f"a new {built(normalized_shape, affine=False)}"
    structure = probe_case(
        "parameters", normalized_shape, tag="structure", label=label, elementwise_affine=False
    )
    x = messy(rng, shape, spread=(0.5, 5.0))
    return [structure, forward_case(normalized_shape, x, affine=False, tag="plain")]


def _eps_cases(rng, hidden: bool) -> list:
    return [
        forward_case(x.shape[-1], x, **_plain(x.shape[-1]), eps=eps, tag="eps")
        for x, eps in eps_inputs(LAYER_NORM, rng, hidden)
    ]


def _float32(rng, setup):
    shape, x_shape = setup
    return forward_case(shape, messy(rng, x_shape, spread=(0.5, 5.0)).astype(np.float32), tag="f32")


def _registered(rng, shape):
    return probe_case("parameters", shape, tag="parameters", label=f"a new {built(shape)}")


def _state(rng, setup):
    shape, x_shape = setup
    weight, bias = signed_affine(rng, shape)
    x = rng.normal(size=x_shape) * 3.0 + 1.0
    label = f"{built(shape)} and nn.LayerNorm({shape})"
    return probe_case("state_dict", shape, x, weight, bias, tag="state", label=label)


def _training_cases(rng, hidden: bool) -> list:
    label = (
        f"the spirals network ({RUN['depth']} layers of {RUN['width']}, Linear -> LayerNorm -> "
        f"tanh) trained {RUN['steps']} Adam steps in float64 with your LayerNorm"
    )
    return [probe_case("training", tag="training", label=label, **RUN)]


BATTERIES = {
    CHECKS.cell.values: values_cases,
    CHECKS.cell.trailing_axes: each(
        _plain_forward,
        [((3, 4), (2, 3, 4))],
        [((5, 6), (4, 5, 6)), ((2, 7), (3, 2, 7)), ((6,), (3, 6))],
        spread=(0.5, 5.0),
        tag="trailing",
    ),
    CHECKS.cell.no_affine: each(_no_affine, [(8, (3, 8))], [((3, 4), (2, 3, 4)), (16, (2, 2, 16))]),
    # large spread: eps is negligible, only the divisor shows
    CHECKS.cell.population_variance: each(
        _plain_forward,
        [(8, (3, 8)), (5, (2, 3, 5))],
        [(12, (4, 12)), ((3, 4), (2, 3, 4))],
        spread=(2.0, 40.0),
        tag="divisor",
    ),
    CHECKS.cell.eps_placement: _eps_cases,
    CHECKS.cell.float32: each(_float32, [(8, (3, 8)), ((3, 4), (2, 3, 4))], [(16, (2, 5, 16))]),
    CHECKS.cell.reference_reuse: each(_forward, [(3, 8), (2, 3, 8)], [(4, 16), (2, 2, 3, 5)]),
    CHECKS.cell.stats_in_graph: values_cases,
    CHECKS.cell.parameter_gradients: values_cases,
    CHECKS.cell.registered: each(_registered, [8, (3, 4)], [16, (2, 3, 5)]),
    CHECKS.cell.state_dict: each(
        _state, [(8, (3, 8)), ((3, 4), (2, 3, 4))], [(16, (2, 5, 16)), ((2, 6), (4, 2, 6))]
    ),
    CHECKS.cell.training: _training_cases,
}
