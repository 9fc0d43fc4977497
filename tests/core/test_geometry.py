"""normlab.geometry: centring is a projection onto the zero-mean hyperplane, LayerNorm's output
lies on the sphere of radius sqrt(d) in it, and no output exceeds sqrt(d - 1) (chapter 2)."""

from __future__ import annotations

import numpy as np
import pytest

import normlab
from normlab import geometry


@pytest.mark.parametrize("d", [2, 3, 5, 64])
def test_centring_is_the_orthogonal_projection_onto_the_zero_mean_hyperplane(d):
    r = np.random.default_rng(d).normal(3.0, 2.0, size=(50, d))
    z = geometry.centre(r)
    ones = np.ones(d) / np.sqrt(d)
    assert np.allclose(z.sum(axis=-1), 0.0)
    assert np.allclose(z, r - np.outer(r @ ones, ones))  # r minus its component along 1
    assert np.allclose(geometry.centre(z), z)  # a projection: twice is once


@pytest.mark.parametrize("d", [2, 3, 7])
def test_the_hyperplane_basis_is_orthonormal_and_zero_mean(d):
    basis = geometry.hyperplane_basis(d)
    assert basis.shape == (d - 1, d)
    assert np.allclose(basis @ basis.T, np.eye(d - 1))
    assert np.allclose(basis.sum(axis=1), 0.0)
    z = geometry.centre(np.random.default_rng(0).normal(size=(10, d)))
    assert np.allclose(geometry.plane_coordinates(z) @ basis, z)  # nothing of z is lost


def test_a_hyperplane_needs_two_features():
    with pytest.raises(ValueError, match="d >= 2"):
        geometry.hyperplane_basis(1)


@pytest.mark.parametrize("d", [2, 3, 16])
def test_layer_norm_lands_on_the_sphere_of_radius_sqrt_d_and_under_the_bound(d):
    r = np.random.default_rng(1).standard_normal((2000, d)) ** 3  # skewed: outliers
    y = normlab.layer_norm(r, eps=0.0)
    assert np.allclose(np.linalg.norm(y, axis=-1), np.sqrt(d))
    assert np.abs(y).max() <= geometry.output_bound(d) * (1 + 1e-12)
    extreme = normlab.layer_norm(geometry.extreme_record(d), eps=0.0)
    assert np.isclose(extreme.max(), geometry.output_bound(d))  # the bound is reached


def test_the_figure_draws_both_panels_and_refuses_other_widths():
    fig = geometry.geometry_figure(geometry.sample_records(8))
    assert sorted(ax.name for ax in fig.axes) == ["3d", "rectilinear"]
    (ax2,) = [ax for ax in fig.axes if ax.name == "rectilinear"]
    labels = [t.get_text() for t in ax2.get_legend().get_texts()]
    assert any("bound" in label for label in labels)
    with pytest.raises(ValueError, match="3 features"):
        geometry.geometry_figure(np.zeros((4, 5)))
