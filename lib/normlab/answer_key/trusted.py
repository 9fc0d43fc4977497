"""Trusted callables a check hands to the student's code, named by `Ref`.

- "layer_norm": the correct LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) from the
  graders' private copy, norm_fn(x) with gamma = 1, beta = 0, eps = 1e-5; "layer_norm_alt", a
  second one written differently, so a witness cannot pass by recognising one function;
- "red_team.<name>": normlab's planted wrong LayerNorms; "planted.<name>": more that exist only
  here, so a witness cannot pass by recognising the published red team;
- "scripted_timer.workload" / "scripted_timer.clock": ps6's fake clock (`scripted_timer`).

Every norm_fn is a fresh closure named `norm_fn`: nothing in its name or module says which.
"""

from __future__ import annotations

import numpy as np

from normlab_sandbox.cases import Ref

from ..grading import scripted_timer
from . import reference

# the private copy's red team (`reference`), whose helpers the planted ones below share
_RED = reference.PUBLIC["red_team"]


def _layer_norm_alt(x, eps=1e-5):
    x = np.asarray(x, dtype=np.float64)
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def _first_axis(x, eps=1e-5):
    """Statistics down axis 0 only: the batch axis of (B, T, d)."""
    return _RED._standardize(x, 0, None, None, eps)


def _whole_tensor(x, eps=1e-5):
    """One mean and one variance for the whole tensor."""
    return _RED._standardize(x, None, None, None, eps)


def _no_eps(x, eps=1e-5):
    """Forgets eps: a constant record gives 0/0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return _RED.eps_outside_sqrt(x, eps=0.0)


def _mean_abs_deviation(x, eps=1e-5):
    """Divides by the mean absolute deviation instead of the standard deviation."""
    x = _RED._as_float(x)
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / (np.abs(centred).mean(axis=-1, keepdims=True) + eps)


def _median_centred(x, eps=1e-5):
    """Centres on the median instead of the mean."""
    x = _RED._as_float(x)
    centred = x - np.median(x, axis=-1, keepdims=True)
    return centred / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)


def _one_pass_float32(x, eps=1e-5):
    """E[x^2] - E[x]^2 computed in float32 whatever the input."""
    return _RED.one_pass_variance(np.asarray(x, dtype=np.float32), eps=eps)


PLANTED = {
    "first_axis": _first_axis,
    "whole_tensor": _whole_tensor,
    "no_eps": _no_eps,
    "mean_abs_deviation": _mean_abs_deviation,
    "median_centred": _median_centred,
    "one_pass_float32": _one_pass_float32,
}


def _norm_fn(impl):
    def norm_fn(x):
        return impl(x)

    return norm_fn


def resolve(ref: Ref, made: dict):
    """The callable `ref` names; objects are shared through `made` by group."""
    name = ref.name
    if name == "layer_norm":
        return _norm_fn(reference.layer_norm)
    if name == "layer_norm_alt":
        return _norm_fn(_layer_norm_alt)
    if name.startswith("red_team."):
        planted = _RED.RED_TEAM.get(name.removeprefix("red_team."))
        if planted is None:
            raise KeyError(f"no red-team implementation named {name!r}")
        return _norm_fn(planted.fn)
    if name.startswith("planted."):
        return _norm_fn(PLANTED[name.removeprefix("planted.")])
    if name.startswith(scripted_timer.PREFIX):
        return scripted_timer.resolve(ref, made)
    raise KeyError(f"no trusted callable named {name!r}")
