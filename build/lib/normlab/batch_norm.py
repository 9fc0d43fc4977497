"""Batch normalization, for contrast: the same formula, the axis turned ninety degrees.

Ioffe and Szegedy (2015, arXiv:1502.03167) standardize each *feature* with
statistics taken across the batch; Ba, Kiros and Hinton (2016, arXiv:1607.06450)
turn the axis and standardize each *record* across its own features. Batch-norm
therefore needs a crowd: its statistics couple the records of a batch, a batch of
one has nothing to average over, and at inference it must fall back on running
statistics collected during training.

Features sit on the last axis, as everywhere in normlab: an input of shape
(B, T, d) is normalized per feature over all B * T records, like
`torch.nn.BatchNorm1d` applied to `x.reshape(-1, d)`.
"""

from __future__ import annotations

import numpy as np

from ._inputs import as_feature_param, as_records, check_eps, raise_if_undefined


def feature_stats(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature mean and population variance of an (n, d) block, two passes."""
    mean = flat.mean(axis=0)  # (d,)
    centred = flat - mean  # (n, d)
    return mean, np.mean(centred * centred, axis=0)  # (d,), (d,)


def _affine(xhat: np.ndarray, gamma, beta) -> np.ndarray:
    if gamma is not None:
        xhat *= gamma
    if beta is not None:
        xhat += beta
    return xhat


def _records_of(x, name: str = "x") -> tuple[np.ndarray, np.dtype, np.ndarray]:
    arr, out_dtype = as_records(x, name=name)
    return arr, out_dtype, arr.reshape(-1, arr.shape[-1])


def batch_norm(x, gamma=None, beta=None, eps: float = 1e-5) -> np.ndarray:
    """Training-mode batch-norm: statistics per feature over every leading axis.

    Ioffe and Szegedy (2015), Algorithm 1, with population (biased) variance as in
    training. `x` has shape (..., d); `gamma`, `beta` shape (d,) or None. A batch
    holding a single record has nothing to average over (every output would be
    beta), so it raises, as `torch.nn.functional.batch_norm` does in training.
    """
    arr, out_dtype, flat = _records_of(x)
    d = arr.shape[-1]
    gamma = as_feature_param(gamma, d, arr.dtype, name="gamma")
    beta = as_feature_param(beta, d, arr.dtype, name="beta")
    eps = check_eps(eps)
    require_a_crowd(arr.shape, "batch_norm")
    mean, var = feature_stats(flat)  # (d,), (d,)
    raise_if_constant_feature(var, eps)
    xhat = (flat - mean) / np.sqrt(var + eps)  # (n, d)
    return _affine(xhat, gamma, beta).reshape(arr.shape).astype(out_dtype, copy=False)


def require_a_crowd(shape: tuple[int, ...], who: str) -> int:
    """The number of records per feature of an input of `shape`; a ValueError below 2."""
    n = int(np.prod(shape[:-1]))
    if n < 2:
        raise ValueError(
            f"{who} in training mode needs more than one record per feature; x has shape "
            f"{shape} ({n} record): batch-norm needs a crowd (layer-norm does not)"
        )
    return n


def raise_if_constant_feature(var: np.ndarray, eps: float) -> None:
    """With eps = 0, a feature of zero variance makes 0 / 0: name it instead of returning nan."""
    raise_if_undefined(
        var[:, None],  # (d, 1): one denominator per feature
        eps,
        "has zero variance over the batch and eps = 0: batch-norm is undefined there (0 / 0)",
        record=lambda where: f"feature {where[0]}",
    )


def batch_norm_forward(
    x,
    gamma,
    beta,
    running_mean,
    running_var,
    momentum: float = 0.1,
    training: bool = True,
    eps: float = 1e-5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One batch-norm step with running statistics, in torch's convention:
    `(y, new_running_mean, new_running_var)`.

    Ioffe and Szegedy (2015, arXiv:1502.03167), Algorithm 1 in training and section 3.1 at
    inference. Features on the last axis, statistics over every other axis. In training,
    `x` is normalized with the batch's mean and population variance, and each running
    statistic moves toward the batch's, `(1 - momentum) * running + momentum * batch`, where
    the batch's variance is the unbiased one (divide by n - 1), as `torch.nn.BatchNorm1d`
    keeps it; a batch of one record raises (nothing to average over). In eval mode `x` is
    normalized with the running statistics, which come back unchanged, so a batch of one
    works. No argument is written into: the running statistics returned are new arrays.
    `gamma`, `beta`: shape (d,) or None; running statistics: shape (d,).
    """
    arr, out_dtype, flat = _records_of(x)
    d = arr.shape[-1]
    gamma = as_feature_param(gamma, d, arr.dtype, name="gamma")
    beta = as_feature_param(beta, d, arr.dtype, name="beta")
    running_mean = _running(running_mean, d, "running_mean")
    running_var = _running(running_var, d, "running_var")
    eps = check_eps(eps)
    if not 0.0 <= float(momentum) <= 1.0:
        raise ValueError(f"momentum must be in [0, 1]; got {momentum!r}")
    if training:
        n = require_a_crowd(arr.shape, "batch_norm_forward")
        mean, var = feature_stats(flat)  # (d,), (d,): population variance, to normalize
        m = float(momentum)
        new_mean = (1 - m) * running_mean + m * mean
        new_var = (1 - m) * running_var + m * var * n / (n - 1)  # unbiased, as torch keeps it
    else:
        mean, var = running_mean, running_var
        new_mean, new_var = running_mean.copy(), running_var.copy()
    raise_if_constant_feature(var, eps)
    xhat = (flat - mean.astype(arr.dtype)) / np.sqrt(var.astype(arr.dtype) + eps)  # (n, d)
    y = _affine(xhat, gamma, beta).reshape(arr.shape).astype(out_dtype, copy=False)
    return y, new_mean, new_var


def _running(stat, d: int, name: str) -> np.ndarray:
    """A running statistic of shape (d,), as a new float array (never the caller's)."""
    arr = np.array(stat, dtype=np.result_type(np.asarray(stat).dtype, np.float32))
    if arr.dtype.kind != "f":
        raise TypeError(f"{name} must hold real numbers; got dtype {np.asarray(stat).dtype}")
    if arr.shape != (d,):
        raise ValueError(f"{name} has shape {arr.shape}, but the records have d = {d} features")
    return arr


class BatchNorm:
    """A small stateful batch-norm with running statistics, like `torch.nn.BatchNorm1d`.

    In training mode (the default) it normalizes with the batch's own statistics
    and updates the running estimates:

        running_mean <- (1 - momentum) * running_mean + momentum * batch_mean
        running_var  <- (1 - momentum) * running_var  + momentum * batch_var_unbiased

    (unbiased: divide by n - 1, as torch does for the running estimate; the
    normalization itself uses the population variance). With momentum=None the
    running statistics are a cumulative average, as in torch. In eval mode the
    running statistics are used and nothing is updated, so the output of a record
    depends on the batches seen in training: the state layer-norm never has.
    `weight` (gamma) and `bias` (beta) are the 2d learned parameters; the running
    statistics are buffers, not parameters.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
    ):
        if not isinstance(num_features, int | np.integer) or num_features < 1:
            raise ValueError(f"num_features must be a positive integer; got {num_features!r}")
        if momentum is not None and not 0.0 <= float(momentum) <= 1.0:
            raise ValueError(f"momentum must be in [0, 1] or None; got {momentum!r}")
        self.num_features = int(num_features)
        self.eps = check_eps(eps)
        self.momentum = momentum
        self.weight = np.ones(self.num_features) if affine else None
        self.bias = np.zeros(self.num_features) if affine else None
        self.running_mean = np.zeros(self.num_features)
        self.running_var = np.ones(self.num_features)
        self.num_batches_tracked = 0
        self.training = True

    def train(self, mode: bool = True) -> BatchNorm:
        self.training = bool(mode)
        return self

    def eval(self) -> BatchNorm:
        return self.train(False)

    def __call__(self, x) -> np.ndarray:
        """Normalize `x` (..., num_features) with `batch_norm_forward`, keeping its running
        statistics (momentum None: their cumulative average, as torch's)."""
        arr = np.asarray(x)
        if arr.ndim >= 1 and arr.shape[-1] != self.num_features:
            raise ValueError(
                f"x has shape {arr.shape} but this BatchNorm was built for "
                f"{self.num_features} features (last axis)"
            )
        tracked = self.num_batches_tracked + self.training
        m = 1.0 / tracked if self.momentum is None else float(self.momentum)
        y, mean, var = batch_norm_forward(
            x, self.weight, self.bias, self.running_mean, self.running_var,
            momentum=m, training=self.training, eps=self.eps,
        )  # fmt: skip
        if self.training:
            self.num_batches_tracked = tracked
            self.running_mean, self.running_var = mean, var
        return y
