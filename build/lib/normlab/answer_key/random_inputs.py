"""The random inputs every check draws from: one stream per check, records on many scales."""

from __future__ import annotations

import numpy as np


def rng_for(seed: int, salt: str) -> np.random.Generator:
    """An independent random stream per (seed, check): cases never depend on each other."""
    return np.random.default_rng([seed, *salt.encode()])


def messy(rng, shape, *, spread=(0.5, 50.0), offset=3.0) -> np.ndarray:
    """Records on different scales and offsets (std from spread[0] to spread[1]).

    Features get their own scale too, so that statistics down any axis differ from
    statistics along any other: a wrong axis cannot be right by coincidence.
    """
    lead = (*shape[:-1], 1)
    lo, hi = np.log10(spread[0]), np.log10(spread[1])
    scale = 10.0 ** rng.uniform(lo, hi, size=lead)
    shift = scale * rng.uniform(-offset, offset, size=lead)
    feature_scale = 10.0 ** rng.uniform(-0.3, 0.3, size=shape[-1])
    return shift + scale * feature_scale * rng.standard_normal(shape)
