"""How many learned parameters a normalization layer adds, by convention.

LayerNorm as in Ba, Kiros and Hinton (2016, arXiv:1607.06450) learns a gain and a
bias per feature: 2 d. Conventions differ, so a count must name its convention:
`bias=False` (torch's `nn.LayerNorm(d, bias=False)`) keeps the gain only (d);
`affine=False` (torch's `elementwise_affine=False`) learns nothing; RMSNorm
(Zhang and Sennrich, 2019) has a gain and no bias by definition (d); batch-norm
learns 2 d, and its running mean and variance are buffers, not parameters.
"""

from __future__ import annotations

from numbers import Integral

KINDS = ("layer_norm", "rms_norm", "batch_norm")


def param_count(kind: str, d_model: int, *, bias: bool = True, affine: bool = True) -> int:
    """Learned parameters of one normalization layer over d_model features.

    "layer_norm": 2 d (d with bias=False); "rms_norm": d (it has no bias term, so
    `bias` does not apply); "batch_norm": 2 d (d with bias=False), running
    statistics not counted. affine=False: 0 for every kind.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if isinstance(d_model, bool) or not isinstance(d_model, Integral) or d_model < 1:
        raise ValueError(f"d_model must be a positive integer; got {d_model!r}")
    if not affine:
        return 0
    if kind == "rms_norm":
        return int(d_model)
    return int(2 * d_model if bias else d_model)
