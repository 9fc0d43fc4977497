"""normlab.jacobian: dy/dx of a batch, read off the backward pass (chapter 5)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba

import normlab
from normlab import jacobian
from normlab.gradcheck import numerical_gradient

X = np.random.default_rng(3).normal(2.0, 1.5, size=(4, 3))  # (n, d)


@pytest.mark.parametrize(
    ("kind", "forward"), [("layer_norm", normlab.layer_norm), ("batch_norm", normlab.batch_norm)]
)
def test_the_jacobian_equals_central_differences_of_the_forward(kind, forward):
    found = jacobian.batch_jacobian(jacobian.BACKWARDS[kind], X)
    for i in range(X.size):

        def output_i(x, i=i):
            return float(forward(x).reshape(-1)[i])

        row = numerical_gradient(output_i, X).reshape(-1)
        assert np.allclose(found[i], row, atol=1e-6), (kind, i)


def test_layer_norm_is_block_diagonal_and_batch_norm_is_not():
    ln = jacobian.batch_jacobian(jacobian.BACKWARDS["layer_norm"], X)
    bn = jacobian.batch_jacobian(jacobian.BACKWARDS["batch_norm"], X)
    assert jacobian.off_record_share(ln, d=3) == 0.0
    # batch-norm: output (r, k) reads feature k of every other record, one entry in d
    assert jacobian.off_record_share(bn, d=3) == pytest.approx(1 / 3)


def test_a_batch_must_be_two_dimensional():
    with pytest.raises(ValueError, match=r"shape \(n, d\)"):
        jacobian.batch_jacobian(jacobian.BACKWARDS["layer_norm"], np.zeros(3))


def test_the_figure_shares_one_log_scale_and_gives_exact_zeros_their_own_colour():
    fig = jacobian.jacobian_figure(X)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["LayerNorm", "batch-norm (training)"]
    images = [ax.images[0] for ax in panels]
    ln_image = images[0].get_array()
    assert ln_image.mask.sum() == X.size * X.size - X.shape[0] * 3 * 3  # off-block: masked
    assert images[0].norm is images[1].norm  # one colour scale for both panels
    sizes = [np.abs(jacobian.batch_jacobian(jacobian.BACKWARDS[k], X)) for k in jacobian.BACKWARDS]
    nonzero = np.concatenate([s[s > 0] for s in sizes])
    assert np.isclose(images[0].norm.vmin, nonzero.min())
    assert np.isclose(images[0].norm.vmax, nonzero.max())
    # the smallest non-zero entry is drawn in a colour far from the one of exact zeros
    zero = np.array(to_rgba(jacobian.ZERO_COLOR))
    assert np.allclose(images[0].cmap.get_bad(), zero)
    palette = images[0].cmap(np.linspace(0.0, 1.0, 256))
    assert np.abs(palette - zero).sum(axis=1).min() > 0.3
