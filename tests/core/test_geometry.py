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


@pytest.mark.parametrize("d", [2, 3, 9])
def test_the_bound_lies_sqrt_d_from_the_centre_in_the_plane(d):
    # feature k's arrow in the plane has length sqrt((d - 1) / d): walking bound_distance
    # along it reaches a point whose y_k is the bound sqrt(d - 1), on the sphere's radius
    basis = geometry.hyperplane_basis(d)
    for k in range(d):
        assert np.isclose(geometry.axis_shrink(d, k), np.sqrt((d - 1) / d))
    arrow = basis[:, -1] / geometry.axis_shrink(d)  # unit length, in plane coordinates
    point = (geometry.bound_distance(d) * arrow) @ basis  # back in R^d
    assert np.isclose(point[-1], geometry.output_bound(d))
    assert np.isclose(geometry.bound_distance(d), np.sqrt(d))
    extreme = normlab.layer_norm(geometry.extreme_record(d), eps=0.0)
    assert np.allclose(point, extreme)  # the point where the band touches the sphere


def test_the_figure_draws_both_panels_and_refuses_other_widths():
    fig = geometry.geometry_figure(geometry.sample_records(8))
    assert sorted(ax.name for ax in fig.axes) == ["3d", "rectilinear"]
    (ax2,) = [ax for ax in fig.axes if ax.name == "rectilinear"]
    labels = [t.get_text() for t in ax2.get_legend().get_texts()]
    (bound,) = [label for label in labels if "bound" in label]
    assert "sqrt{2}" in bound and "sqrt{3}" in bound  # the value, and where it is drawn
    (line,) = [ln for ln in ax2.lines if "bound" in ln.get_label()]
    start, end = line.get_xydata()  # a segment of the line y_3 = +sqrt(2), in the plane
    along = (end - start) / np.linalg.norm(end - start)
    foot = start - (start @ along) * along  # the line's point nearest the centre
    assert np.isclose(np.linalg.norm(foot), np.sqrt(3))
    with pytest.raises(ValueError, match="3 features"):
        geometry.geometry_figure(np.zeros((4, 5)))
