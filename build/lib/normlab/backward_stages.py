"""The backward pass of layer normalization, one stage of the computational graph at a time.

Layer normalization (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) of one record x of d
features is a chain of six small stages:

    stage 1  Mean        mu      = (1/d) sum_j x_j
    stage 2  Centre      xc      = x - mu
    stage 3  Variance    var     = (1/d) sum_j xc_j^2
    stage 4  InverseStd  inv_std = (var + eps)^(-1/2)
    stage 5  XHat        x_hat   = xc * inv_std
    stage 6  ScaleShift  y       = gamma * x_hat + beta

Each stage is a class with a `forward` and a `backward`. `backward(upstream, **inputs)` is
the stage's local gradient: given the gradient of the loss with respect to the stage's
output, it returns the gradient with respect to each input named in `inputs` (in that
order). Backpropagation walks the stages in reverse and, where one value feeds two stages
(x feeds Mean and Centre, xc feeds Variance and XHat), adds the two gradients:
`staged_layer_norm_backward`. `normlab.backward.layer_norm_backward` is the same walk
collapsed into one closed form. Shapes: x (..., d), per-record statistics (..., 1).
"""

from __future__ import annotations

import numpy as np

from .backward import backward_inputs
from .gradcheck import numerical_gradient


class Mean:
    """Stage 1: mu = (1/d) sum_j x_j, one mean per record."""

    inputs = ("x",)

    @staticmethod
    def forward(x):
        return x.mean(axis=-1, keepdims=True)  # (..., 1)

    @staticmethod
    def backward(d_mu, x):
        # d mu / d x_j = 1/d: every feature receives an equal share
        return (np.broadcast_to(d_mu / x.shape[-1], x.shape).copy(),)  # (..., d)


class Centre:
    """Stage 2: xc = x - mu."""

    inputs = ("x", "mu")

    @staticmethod
    def forward(x, mu):
        return x - mu  # (..., d)

    @staticmethod
    def backward(d_xc, x, mu):
        # d xc_i / d x_j = delta_ij; d xc_i / d mu = -1 for every i
        return d_xc, -d_xc.sum(axis=-1, keepdims=True)  # (..., d), (..., 1)


class Variance:
    """Stage 3: var = (1/d) sum_j xc_j^2, the population variance (xc is already centred)."""

    inputs = ("xc",)

    @staticmethod
    def forward(xc):
        return (xc * xc).mean(axis=-1, keepdims=True)  # (..., 1)

    @staticmethod
    def backward(d_var, xc):
        # d var / d xc_j = 2 xc_j / d
        return (d_var * 2.0 * xc / xc.shape[-1],)  # (..., d)


class InverseStd:
    """Stage 4: inv_std = 1 / sqrt(var + eps); eps is a constant, not differentiated."""

    inputs = ("var",)

    @staticmethod
    def forward(var, eps):
        return 1.0 / np.sqrt(var + eps)  # (..., 1)

    @staticmethod
    def backward(d_inv_std, var, eps):
        # d (var + eps)^(-1/2) / d var = -1/2 (var + eps)^(-3/2)
        return (d_inv_std * -0.5 * (var + eps) ** -1.5,)  # (..., 1)


class XHat:
    """Stage 5: x_hat = xc * inv_std, the standardized record."""

    inputs = ("xc", "inv_std")

    @staticmethod
    def forward(xc, inv_std):
        return xc * inv_std  # (..., d)

    @staticmethod
    def backward(d_x_hat, xc, inv_std):
        # d x_hat_i / d xc_j = delta_ij inv_std; d x_hat_i / d inv_std = xc_i
        return d_x_hat * inv_std, (d_x_hat * xc).sum(axis=-1, keepdims=True)


class ScaleShift:
    """Stage 6: y = gamma * x_hat + beta; gamma and beta are shared by every record."""

    inputs = ("x_hat", "gamma", "beta")

    @staticmethod
    def forward(x_hat, gamma, beta):
        return gamma * x_hat + beta  # (..., d)

    @staticmethod
    def backward(dy, x_hat, gamma, beta):
        # d y_i / d x_hat_i = gamma_i; d y_i / d gamma_i = x_hat_i; d y_i / d beta_i = 1,
        # and a shared parameter sums its gradient over every record (every leading axis)
        records = tuple(range(dy.ndim - 1))
        return dy * gamma, (dy * x_hat).sum(axis=records), dy.sum(axis=records)


STAGES = (Mean, Centre, Variance, InverseStd, XHat, ScaleShift)


def staged_layer_norm_backward(dy, x, gamma=None, eps: float = 1e-5):
    """(dx, dgamma, dbeta) of LayerNorm by walking the six stages backwards.

    Same arguments, checks and result as `normlab.layer_norm_backward` (gamma=None means
    ones); this is the walk that its closed form collapses.
    """
    dy, x, gamma, eps, out_dtype = backward_inputs(dy, x, gamma, eps)
    if gamma is None:
        gamma = np.ones(x.shape[-1], dtype=x.dtype)
    beta = np.zeros_like(gamma)
    # forward, keeping every intermediate value
    mu = Mean.forward(x)
    xc = Centre.forward(x, mu)
    var = Variance.forward(xc)
    inv_std = InverseStd.forward(var, eps)
    x_hat = XHat.forward(xc, inv_std)
    # backward, stage 6 down to stage 1
    d_x_hat, dgamma, dbeta = ScaleShift.backward(dy, x_hat, gamma, beta)
    d_xc, d_inv_std = XHat.backward(d_x_hat, xc, inv_std)
    (d_var,) = InverseStd.backward(d_inv_std, var, eps)
    (d_xc_via_var,) = Variance.backward(d_var, xc)
    d_xc = d_xc + d_xc_via_var  # xc feeds XHat and Variance: the gradients add
    dx, d_mu = Centre.backward(d_xc, x, mu)
    (dx_via_mu,) = Mean.backward(d_mu, x)
    dx = dx + dx_via_mu  # x feeds Centre and Mean: the gradients add
    return tuple(a.astype(out_dtype, copy=False) for a in (dx, dgamma, dbeta))


def stage_gradient_errors(stage, upstream, h: float = 1e-6, **inputs) -> dict[str, float]:
    """Largest |local gradient - central difference| for each differentiated input of `stage`.

    The loss is L = sum(upstream * stage.forward(**inputs)), whose gradient with respect to
    an input is exactly what `stage.backward(upstream, **inputs)` claims to return;
    `normlab.gradcheck.numerical_gradient` measures it without any calculus. Float64.
    """
    claimed = stage.backward(upstream, **inputs)
    errors = {}
    for name, grad in zip(stage.inputs, claimed, strict=True):

        def loss(value, name=name):
            return float(np.sum(upstream * stage.forward(**{**inputs, name: value})))

        measured = numerical_gradient(loss, inputs[name], h=h)
        errors[name] = float(np.max(np.abs(grad - measured)))
    return errors
