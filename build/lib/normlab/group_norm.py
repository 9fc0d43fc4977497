"""Group normalization: LayerNorm and InstanceNorm as the two ends of one family.

Wu and He, Group Normalization (2018, arXiv:1803.08494), eq. (1)-(3) and Figure 2:
split the C channels of each sample into G groups of C / G channels, and standardize
each group of each sample with its own statistics, taken over its channels and all
its positions (an image's H and W, a sequence's T),

    GroupNorm(x)_{n,c,s} = gamma_c * (x_{n,c,s} - mu_{n,g}) / sqrt(sigma^2_{n,g} + eps) + beta_c,

where g = c // (C / G). The gain and bias are per channel. With G = 1 every channel
of a sample is in one group: LayerNorm over (C, ...) (Ba, Kiros and Hinton, 2016,
arXiv:1607.06450) with a per-channel gain. With G = C every channel is its own group:
InstanceNorm (Ulyanov, Vedaldi and Lempitsky, 2016, arXiv:1607.08022). No statistic
ever crosses the batch axis, so, like LayerNorm and unlike batch-norm, a batch of
one normalizes exactly as it would inside a larger batch.

Layout as `torch.nn.functional.group_norm`: (N, C, ...), channels on axis 1.
"""

from __future__ import annotations

import numpy as np

from ._inputs import (
    as_channels_first,
    as_feature_param,
    check_eps,
    check_num_groups,
    raise_if_undefined,
)
from .stats import centered_and_var


def group_norm(x, num_groups, gamma=None, beta=None, eps: float = 1e-5) -> np.ndarray:
    """GroupNorm of `x`, shape (N, C, ...), with `num_groups` groups of channels.

    Wu and He (2018), eq. (1)-(3); equal to `torch.nn.functional.group_norm(x, num_groups,
    gamma, beta, eps)`. `num_groups` must divide C. `gamma` and `beta` have shape (C,);
    None means gamma = 1 and beta = 0. Statistics: mean and population variance of each
    (sample, group) over its C / num_groups channels and every position; eps inside the
    square root. Dtype rule as in `layer_norm`; the input is never modified.

    >>> x = np.arange(8.0).reshape(1, 4, 2)             # (N, C, L) = (1, 4, 2)
    >>> group_norm(x, num_groups=2, eps=0.0)[0, :2].round(4).tolist()   # group 0: 0, 1, 2, 3
    [[-1.3416, -0.4472], [0.4472, 1.3416]]
    """
    arr, out_dtype = as_channels_first(x)
    n, channels = arr.shape[:2]
    groups = check_num_groups(num_groups, channels)
    counted = f"x has C = {channels} channels"
    gamma = as_feature_param(gamma, channels, arr.dtype, name="gamma", counted=counted)
    beta = as_feature_param(beta, channels, arr.dtype, name="beta", counted=counted)
    eps = check_eps(eps)
    if arr.size == 0:  # no sample, or no position: nothing to normalize, as in torch
        return np.zeros(arr.shape, dtype=out_dtype)

    # one record per (sample, group): its C / G channels times every position
    records = arr.reshape(n, groups, -1)  # (N, G, C/G * positions)
    _, xc, var = centered_and_var(records)  # xc: (N, G, m), var: (N, G, 1)
    # 1 / sqrt(sigma^2 + eps), eps inside the square root as in LayerNorm
    denom = np.sqrt(var + arr.dtype.type(eps))  # (N, G, 1)
    raise_if_undefined(
        denom,
        eps,
        "has zero variance and eps = 0: GroupNorm is undefined there (0 / 0)",
        record=lambda where: f"group {where[1]} of sample {where[0]}",
    )
    y = np.divide(xc, denom, out=xc).reshape(arr.shape)  # (N, C, ...)
    per_channel = (channels,) + (1,) * (arr.ndim - 2)  # gamma_c broadcast over positions
    if gamma is not None:
        y *= gamma.reshape(per_channel)
    if beta is not None:
        y += beta.reshape(per_channel)
    return y.astype(out_dtype, copy=False)
