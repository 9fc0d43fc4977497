"""The random inputs every check draws from, and `each`, the battery of a list of setups."""

from __future__ import annotations

import numpy as np

F64, F32 = np.float64, np.float32  # the dtypes a battery casts its inputs to


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


def signed_gain(rng, size, high: float = 2.0) -> np.ndarray:
    """A gain of 0.5 to `high` in size and of either sign (`size` as NumPy takes sizes)."""
    return rng.uniform(0.5, high, size) * rng.choice([-1.0, 1.0], size)


def signed_affine(rng, size, high: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """A `signed_gain`, then a standard normal bias."""
    return signed_gain(rng, size, high), rng.normal(size=size)


def each(build, visible: list, hidden_too: list = (), *, number: str = "", **fixed):
    """The battery make(rng, hidden) of `build(rng, setup, **fixed)` (a case or a list of them)
    for each setup: the visible ones, then, in the hidden battery, those of hidden_too; the
    keyword `number` names, if given, gets the setup's index (a pair's, a block's)."""

    def make(rng, hidden: bool) -> list:
        cases = []
        for index, setup in enumerate([*visible, *(hidden_too if hidden else [])]):
            made = build(rng, setup, **fixed, **({number: index} if number else {}))
            cases += made if isinstance(made, list) else [made]
        return cases

    return make
