"""s_curve: LayerNorm's input against its output, token by token, and the line or tanh fit."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import normlab  # noqa: E402
from normlab.placement import Stack  # noqa: E402
from normlab.training import s_curve  # noqa: E402


def test_normalized_io_sees_every_layer_norm_in_the_order_it_ran():
    torch.manual_seed(0)
    stack = Stack(2, 8, 2, "pre_ln")
    x = torch.randn(3, 5, 8)  # (B, T, d)
    with torch.no_grad():
        stack.final_ln.weight.fill_(3.0)  # the gain is left out of x_hat
    io = s_curve.normalized_io(stack, x)
    names = ["blocks.0.ln_attn", "blocks.0.ln_ffn", "blocks.1.ln_attn", "blocks.1.ln_ffn"]
    assert list(io) == names + ["final_ln"]
    first_in, first_out = io["blocks.0.ln_attn"]
    assert first_in.shape == first_out.shape == (15, 8)  # one row per token
    np.testing.assert_array_equal(first_in, x.double().reshape(15, 8).numpy())
    final_in, final_out = io["final_ln"]
    np.testing.assert_allclose(final_out, normlab.layer_norm(final_in), rtol=0, atol=1e-12)
    assert not any(m._forward_hooks for m in stack.modules())  # the hooks are gone


def _tokens(scales, seed=0, d=64):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((len(scales), d)) * np.asarray(scales)[:, None]


def test_tokens_of_one_scale_lie_on_a_line():
    x = _tokens(np.full(200, 2.0))
    found = s_curve.fit(x, normlab.layer_norm(x))
    # each token's own mean and sigma scatter the lines a little; a tanh does no better
    assert found.line_r2 > 0.95 and found.tanh_r2 < found.line_r2 + 0.01


def test_tokens_whose_scales_span_decades_bend_into_an_s():
    # the large tokens have a large sigma, so their lines are flat: LayerNorm squashes them
    x = _tokens(np.geomspace(0.1, 100, 400))
    found = s_curve.fit(x, normlab.layer_norm(x))
    assert found.tanh_r2 > found.line_r2 + 0.2


def test_a_tanh_is_fitted_exactly():
    x = np.linspace(-5, 5, 101)
    found = s_curve.fit(x, 1.5 * np.tanh(0.8 * x))
    assert found.tanh_r2 > 0.9999
    assert found.alpha == pytest.approx(0.8, rel=0.02)
    assert found.gain == pytest.approx(1.5, rel=0.02)


def test_bad_points_are_refused():
    with pytest.raises(ValueError, match="matching x and y"):
        s_curve.fit(np.ones(4), np.ones(5))
