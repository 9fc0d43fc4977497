"""Properties LayerNorm must have whatever the data (Ba, Kiros and Hinton, 2016, section 3)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normlab

# records whose spread is well above eps, so that eps does not blur the invariances
values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_subnormal=False)
shapes = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6).filter(
    lambda s: s[-1] >= 2
)


def spread_out(x: np.ndarray) -> np.ndarray:
    """Add a fixed ramp, so that most records are far from constant."""
    return x + 10.0 * np.arange(x.shape[-1])


def std_at_least_one(x: np.ndarray) -> bool:
    """The ramp can still cancel against the data: keep records of standard deviation >= 1."""
    return bool(np.all(x.std(axis=-1) >= 1.0))


records = hnp.arrays(np.float64, shapes, elements=values).map(spread_out).filter(std_at_least_one)


@settings(max_examples=60, deadline=None)
@given(records, st.floats(min_value=-1e4, max_value=1e4))
def test_shift_invariance(x, c):
    np.testing.assert_allclose(normlab.layer_norm(x + c), normlab.layer_norm(x), atol=1e-8)


@settings(max_examples=60, deadline=None)
@given(records, st.floats(min_value=1e-1, max_value=1e3))
def test_positive_scale_invariance(x, a):
    # std >= 1 and a >= 0.1 leave a variance >= 1e-2, so eps = 1e-5 moves each output by at most
    # |y| * eps / (2 var) <= sqrt(d) * 5e-4 (about 1.2e-3 for d = 6): allow for it
    np.testing.assert_allclose(normlab.layer_norm(a * x), normlab.layer_norm(x), atol=2e-3)
    np.testing.assert_allclose(
        normlab.layer_norm(a * x, eps=0), normlab.layer_norm(x, eps=0), atol=1e-9
    )


@settings(max_examples=60, deadline=None)
@given(records, st.data())
def test_records_are_independent_bit_for_bit(x, data):
    index = data.draw(st.tuples(*(st.integers(0, n - 1) for n in x.shape[:-1])))
    before = normlab.layer_norm(x)
    changed = x.copy()
    changed[index] = changed[index] * -3.0 + 17.0
    after = normlab.layer_norm(changed)
    others = np.ones(x.shape[:-1], dtype=bool)
    others[index] = False
    np.testing.assert_array_equal(after[others], before[others])


@settings(max_examples=60, deadline=None)
@given(records, st.data())
def test_a_batch_of_one_normalizes_as_inside_the_batch(x, data):
    index = data.draw(st.tuples(*(st.integers(0, n - 1) for n in x.shape[:-1])))
    alone = normlab.layer_norm(x[index][None, :])[0]
    np.testing.assert_array_equal(alone, normlab.layer_norm(x)[index])


@settings(max_examples=60, deadline=None)
@given(
    records,
    st.floats(min_value=-5, max_value=5).filter(lambda g: abs(g) > 1e-3),
    st.floats(min_value=-5, max_value=5),
)
def test_each_record_lands_at_mean_beta_and_std_abs_gamma(x, g, b):
    d = x.shape[-1]
    y = normlab.layer_norm(x, gamma=np.full(d, g), beta=np.full(d, b), eps=0)
    mean, var = normlab.row_stats(y)
    np.testing.assert_allclose(mean, b, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(var), abs(g), rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(records)
def test_rms_norm_equals_layer_norm_on_zero_mean_records(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose(
        normlab.rms_norm(centred, eps=1e-5), normlab.layer_norm(centred, eps=1e-5), atol=1e-9
    )
