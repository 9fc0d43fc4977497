"""The blue team's witness: audit any normalization function for LayerNorm's promises.

LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) standardizes every
record (b, t) of a (B, T, d) tensor with that record's own mean and population
variance. A wrong axis keeps the output shape, so the shape never gives it away;
the witness watches behaviour instead:

- standardized: with gamma = 1 and beta = 0 every record lands at mean 0, variance 1;
- independence: changing one record changes no other record, bit for bit;
- batch of one: a record alone, shape (1, 1, d), gives what it gives inside the batch;
- shift: adding a constant to a record (even 1e6 of its standard deviations) changes nothing;
- scale: multiplying a record by a positive number changes nothing;
- epsilon: a record of tiny variance lands at variance var / (var + eps), and a
  constant record at 0, as eps inside the square root demands;
- input untouched: the function does not write into its argument.

`audit(norm_fn)` runs them all on a batch of records on wildly different scales
and returns an `Audit` whose `ok` is True only when every check passes; each
failed check carries its smallest evidence. The planted mistakes it must catch
live in `normlab.red_team`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STANDARD_ATOL = 1e-4  # |var - 1|: eps moves it by at most var_eps / var ~ 1e-8 here
MEAN_ATOL = 1e-6
INVARIANCE_ATOL = 1e-6
BATCH_OF_ONE_ATOL = 1e-12


@dataclass(frozen=True)
class Check:
    """The verdict of one check and its smallest evidence."""

    name: str
    passed: bool
    evidence: str

    def __str__(self) -> str:
        mark = "pass" if self.passed else "FAIL"
        return f"{mark:4}  {self.name:15} {self.evidence}"


@dataclass(frozen=True)
class Audit:
    """What the witness saw: per-record output statistics and every check."""

    out_mean: np.ndarray  # (B, T) mean of each output record
    out_var: np.ndarray  # (B, T) population variance of each output record
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check named {name!r}; have {[c.name for c in self.checks]}")

    def __str__(self) -> str:
        head = "witness: all promises kept" if self.ok else "witness: ALARM"
        return "\n".join([head, *map(str, self.checks)])


def witness_batch(batch: int = 3, tokens: int = 4, d: int = 8, seed: int = 0) -> np.ndarray:
    """Records on wildly different scales: std from about 30 to 3000, offsets up to +-3e5.

    B, T and d differ from each other, so an implementation that reads the wrong
    axis cannot be right by coincidence of shape.
    """
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(1.5, 3.5, size=(batch, tokens, 1))  # (B, T, 1)
    offset = scale * rng.uniform(-100, 100, size=(batch, tokens, 1))  # (B, T, 1)
    return offset + scale * rng.standard_normal((batch, tokens, d))  # (B, T, d)


class _Broken(Exception):
    """norm_fn raised or returned something that is not an output of x's shape."""


def _run(norm_fn, x: np.ndarray, *, copy: bool = True) -> np.ndarray:
    try:
        y = norm_fn(x.copy() if copy else x)
    except Exception as err:  # noqa: BLE001 - the witness reports, it does not crash
        raise _Broken(f"norm_fn raised {type(err).__name__}: {err}") from None
    y = np.asarray(y, dtype=float)
    if y.shape != x.shape:
        raise _Broken(f"norm_fn returned shape {y.shape} for input shape {x.shape}")
    return y


def _stats(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = y.mean(axis=-1)
    return mean, ((y - mean[..., None]) ** 2).mean(axis=-1)


def _record(index) -> tuple[int, ...]:
    return tuple(int(i) for i in index)


def _check_standardized(y: np.ndarray) -> Check:
    mean, var = _stats(y)
    bad_mean = ~(np.abs(mean) <= MEAN_ATOL)
    bad_var = ~(np.abs(var - 1) <= STANDARD_ATOL)
    if bad_mean.any():
        r = _record(np.argwhere(bad_mean)[0])
        return Check("standardized", False, f"record {r} has output mean {mean[r]:.6g}, not 0")
    if bad_var.any():
        r = _record(np.argwhere(bad_var)[0])
        return Check("standardized", False, f"record {r} has output variance {var[r]:.6g}, not 1")
    return Check("standardized", True, "every record has mean 0 and variance 1")


def _axis_crossed(changed: tuple[int, ...], other: tuple[int, ...]) -> str:
    return "the batch axis" if changed[0] != other[0] else "the token axis"


def _check_independence(norm_fn, x: np.ndarray, y: np.ndarray) -> Check:
    batch, tokens = x.shape[:2]
    for target in ((0, tokens - 1), (batch - 1, 0)):
        x2 = x.copy()
        x2[target] = x2[target] * 7.0 + 1e3 * np.arange(x.shape[-1])
        y2 = _run(norm_fn, x2)
        moved = np.any(y2 != y, axis=-1)  # (B, T)
        moved[target] = False
        if moved.any():
            # prefer evidence across the batch axis: it is the worse coupling
            across_batch = moved.copy()
            across_batch[target[0]] = False
            other = _record(np.argwhere(across_batch if across_batch.any() else moved)[0])
            size = np.max(np.abs(y2[other] - y[other]))
            return Check(
                "independence",
                False,
                f"changing record {target} changed record {other} (by up to {size:.3g}): "
                f"the statistics cross {_axis_crossed(target, other)}",
            )
    return Check("independence", True, "changing one record left every other record bit-identical")


def _check_batch_of_one(norm_fn, x: np.ndarray, y: np.ndarray) -> Check:
    for index in np.ndindex(*x.shape[:2]):
        alone = _run(norm_fn, x[index][None, None, :])[0, 0]
        gap = np.max(np.abs(alone - y[index]))
        if not gap <= BATCH_OF_ONE_ATOL:
            return Check(
                "batch_of_one",
                False,
                f"record {index} alone (shape (1, 1, {x.shape[-1]})) differs from the same "
                f"record inside the batch by {gap:.3g}",
            )
    return Check("batch_of_one", True, "every record alone equals itself inside the batch")


def _check_invariance(name: str, norm_fn, x2: np.ndarray, y: np.ndarray, how: str) -> Check:
    y2 = _run(norm_fn, x2)
    gap = np.abs(y2 - y).max(axis=-1)  # (B, T)
    bad = ~(gap <= INVARIANCE_ATOL)
    if bad.any():
        r = _record(np.argwhere(bad)[0])
        return Check(name, False, f"{how} record {r} moved its output by {gap[r]:.3g}")
    return Check(name, True, f"{how} every record left its output unchanged")


def _check_epsilon(norm_fn, d: int, eps: float) -> Check:
    rng = np.random.default_rng(1)
    tiny = 5.0 + 1e-3 * rng.standard_normal(d)  # variance ~1e-6, below eps = 1e-5
    probe = np.stack([tiny, np.full(d, 3.0)])[None]  # (1, 2, d)
    y = _run(norm_fn, probe)
    var_in = tiny.var()
    expected = var_in / (var_in + eps)
    _, var_out = _stats(y)
    if not np.all(np.isfinite(y[0, 1])) or not np.max(np.abs(y[0, 1])) <= MEAN_ATOL:
        return Check("epsilon", False, f"a constant record gave {y[0, 1][:3]}..., not 0 (beta)")
    if not abs(var_out[0, 0] - expected) <= 1e-3 * expected:
        return Check(
            "epsilon",
            False,
            f"a record of variance {var_in:.3g} has output variance {var_out[0, 0]:.4g}; "
            f"eps = {eps:g} inside the square root gives var / (var + eps) = {expected:.4g}",
        )
    return Check("epsilon", True, "tiny and zero variance handled as eps inside the sqrt demands")


def audit(norm_fn, x=None, *, eps: float = 1e-5, seed: int = 0) -> Audit:
    """Run every check of the witness on `norm_fn` (called as norm_fn(x), gamma 1, beta 0).

    `x` is a (B, T, d) batch; by default `witness_batch(seed=seed)`. `eps` is the
    epsilon the function is expected to use. Exceptions and wrong shapes from
    norm_fn are reported as failed checks, never raised.
    """
    x = witness_batch(seed=seed) if x is None else np.array(x, dtype=float)
    if x.ndim != 3:
        raise ValueError(f"the witness needs a (B, T, d) batch; got shape {x.shape}")
    original = x.copy()
    try:
        y = _run(norm_fn, x, copy=False)
    except _Broken as err:
        nan = np.full(x.shape[:2], np.nan)
        return Audit(nan, nan, (Check("runs", False, str(err)),))

    touched = not np.array_equal(x, original, equal_nan=True)
    x = original
    scale = x.std(axis=-1, keepdims=True)  # (B, T, 1)
    checks = [
        Check(
            "input_untouched",
            not touched,
            "norm_fn wrote into its input" if touched else "the input was not modified",
        ),
        _check_standardized(y),
    ]
    later = (
        ("independence", lambda: _check_independence(norm_fn, x, y)),
        ("batch_of_one", lambda: _check_batch_of_one(norm_fn, x, y)),
        (
            "shift",
            lambda: _check_invariance("shift", norm_fn, x + 1e6 * scale, y, "shifting by 1e6 std"),
        ),
        ("scale", lambda: _check_invariance("scale", norm_fn, x * 3.0, y, "scaling by 3")),
        ("epsilon", lambda: _check_epsilon(norm_fn, x.shape[-1], eps)),
    )
    for name, run_check in later:
        try:
            checks.append(run_check())
        except _Broken as err:
            checks.append(Check(name, False, str(err)))
    mean, var = _stats(y)
    return Audit(mean, var, tuple(checks))
