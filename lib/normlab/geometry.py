"""LayerNorm's geometry: a projection onto a hyperplane, then onto a sphere (chapter 2).

Layer normalization (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) of a record r of d features,
with gamma = 1, beta = 0 and eps = 0, is two steps, and each has a picture:

    centring   z = r - mean(r)        the orthogonal projection onto the hyperplane of zero-mean
                                      records, {z : z_1 + ... + z_d = 0}: it removes r's
                                      component along the all-ones vector
    scaling    y = z / std(z)         sum_k y_k^2 = d * var(y) = d, so y lies on the sphere of
                                      radius sqrt(d), inside that hyperplane

On that sphere no single output can exceed sqrt(d - 1) in size: if y_k = a, the other d - 1
outputs sum to -a and their squares to at least a^2 / (d - 1), so a^2 * d / (d - 1) <= d. The
bound is reached by a record whose other d - 1 features are equal (`extreme_record`).

`geometry_figure` draws both steps for d = 3, where the hyperplane is a plane and the sphere a
circle of radius sqrt(3); the face-on panel shows the band |y_k| <= sqrt(2) that the circle
touches, at distance sqrt(3) from the centre in the plane's own coordinates (`bound_distance`).
"""

from __future__ import annotations

import numpy as np

from . import figures
from .layer_norm import layer_norm


def centre(r) -> np.ndarray:
    """r minus its own mean, over the last axis: the projection onto the zero-mean hyperplane."""
    r = np.asarray(r, dtype=np.float64)
    return r - r.mean(axis=-1, keepdims=True)  # (..., d)


def hyperplane_basis(d: int) -> np.ndarray:
    """An orthonormal basis of the zero-mean hyperplane of R^d, shape (d - 1, d).

    Helmert's rows: row k (from 1) is (1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1)), with k ones;
    each sums to zero and they are orthonormal.
    """
    if d < 2:
        raise ValueError(f"the zero-mean hyperplane needs d >= 2; got d = {d}")
    basis = np.zeros((d - 1, d))
    for k in range(1, d):
        basis[k - 1, :k] = 1.0
        basis[k - 1, k] = -float(k)
        basis[k - 1] /= np.sqrt(k * (k + 1))
    return basis


def plane_coordinates(z) -> np.ndarray:
    """Coordinates of zero-mean records z (..., d) in `hyperplane_basis(d)`: shape (..., d - 1)."""
    z = np.asarray(z, dtype=np.float64)
    return z @ hyperplane_basis(z.shape[-1]).T


def output_bound(d: int) -> float:
    """sqrt(d - 1): no output of LayerNorm (gamma 1, beta 0, eps 0) is larger in size."""
    return float(np.sqrt(d - 1))


def axis_shrink(d: int, k: int = -1) -> float:
    """How much of a unit step along feature k's arrow in the zero-mean hyperplane is y_k.

    Feature k's axis e_k leans out of the hyperplane; its projection there has length
    sqrt((d - 1) / d), so a point at distance s from the origin along that projection has
    y_k = s * sqrt((d - 1) / d). For d = 3: sqrt(2/3).
    """
    return float(np.linalg.norm(hyperplane_basis(d)[:, k]))


def bound_distance(d: int) -> float:
    """Distance from the origin, inside the hyperplane, of the line y_k = sqrt(d - 1).

    sqrt(d - 1) / sqrt((d - 1) / d) = sqrt(d): the band |y_k| <= sqrt(d - 1) touches the
    sphere of radius sqrt(d), which is why a picture of the plane draws the bound sqrt(2) of
    d = 3 at distance sqrt(3).
    """
    return output_bound(d) / axis_shrink(d)


def extreme_record(d: int) -> np.ndarray:
    """A record whose LayerNorm output reaches the bound: d - 1 equal features, one apart."""
    record = np.zeros(d)
    record[-1] = 1.0
    return record


def sample_records(n: int, d: int = 3, seed: int = 0) -> np.ndarray:
    """n records of d features at scattered locations and scales, shape (n, d)."""
    rng = np.random.default_rng(seed)
    location = rng.uniform(-1.0, 2.0, size=(n, 1))  # (n, 1) each record's own level
    spread = rng.uniform(0.3, 1.2, size=(n, 1))  # (n, 1) and its own size
    return location + spread * rng.standard_normal((n, d))


def _circle(radius: float, points: int = 200) -> np.ndarray:
    angle = np.linspace(0.0, 2.0 * np.pi, points)
    return radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)  # (points, 2)


def geometry_figure(records: np.ndarray):
    """Two panels for records of d = 3 features, shape (n, 3).

    Left, in 3-D: the records, their centred versions on the zero-mean plane (a grey disc),
    and their LayerNorm outputs on the circle of radius sqrt(3); a thin line joins each record
    to its projection. Right, the plane seen face on: the centred records, the circle, the
    direction of each feature axis in the plane, and the two lines y_3 = +-sqrt(2) that the
    circle touches (the sqrt(d - 1) bound on one output), with `extreme_record`'s output there.
    The plane's coordinates are distances in the plane: the lines y_3 = +-sqrt(2) lie at
    distance sqrt(3) from the centre (`bound_distance`), and their label says so.
    """
    records = np.asarray(records, dtype=np.float64)
    if records.ndim != 2 or records.shape[1] != 3:
        raise ValueError(f"the picture is for records of 3 features, (n, 3); got {records.shape}")
    d = 3
    z = centre(records)  # (n, 3) on the plane
    y = layer_norm(records, eps=0.0)  # (n, 3) on the circle
    basis = hyperplane_basis(d)  # (2, 3)
    radius = np.sqrt(d)
    ring = _circle(radius) @ basis  # (points, 3): the circle, back in R^3

    fig, (flat_axes, ax2) = figures.new(1, 2, width=10.0, height=5.2)
    flat_axes.remove()
    ax3 = fig.add_subplot(1, 2, 1, projection="3d")

    disc = _circle(2.6 * radius / np.sqrt(d), 60) @ basis  # (60, 3) a patch of the plane
    ax3.plot_trisurf(
        disc[:, 0], disc[:, 1], disc[:, 2], color=figures.color("muted"), alpha=0.35, linewidth=0
    )
    for raw, flat in zip(records, z, strict=True):
        ax3.plot(*np.stack([raw, flat]).T, color=figures.color("reference"), linewidth=0.5)
    ax3.scatter(*records.T, s=10, color=figures.color("reference"), label="records r")
    ax3.scatter(*z.T, s=10, color=figures.color("batch_norm"), label="centred: r - mean(r)")
    ax3.plot(*ring.T, color=figures.color("layer_norm"), linewidth=1.2)
    ax3.scatter(*y.T, s=14, color=figures.color("layer_norm"), label="LayerNorm(r)")
    ones = np.stack([-np.ones(d), 2.5 * np.ones(d)])  # the all-ones direction, removed
    ax3.plot(*ones.T, "--", color=figures.color("reference"), linewidth=1, label="(1, 1, 1)")
    ax3.set(xlabel="$r_1$", ylabel="$r_2$", zlabel="$r_3$")
    ax3.view_init(elev=22, azim=-55)
    ax3.set_title("in $R^3$: onto the plane, then onto the circle", fontsize=10)
    ax3.legend(loc="upper left", fontsize=8)

    flat2 = plane_coordinates(z)  # (n, 2)
    out2 = plane_coordinates(y)  # (n, 2)
    ax2.plot(*_circle(radius).T, color=figures.color("layer_norm"), linewidth=1.2)
    ax2.scatter(*flat2.T, s=10, color=figures.color("batch_norm"), label="centred records")
    ax2.scatter(*out2.T, s=14, color=figures.color("layer_norm"), label="LayerNorm outputs")
    for k in range(d):
        axis = basis[:, k] / np.linalg.norm(basis[:, k])  # feature k's direction in the plane
        arrow = {"arrowstyle": "->", "color": figures.color("reference")}
        ax2.annotate("", xy=2.2 * axis, xytext=(0, 0), arrowprops=arrow)
        ax2.text(*(2.5 * axis), f"$y_{k + 1}$", ha="center", va="center")
    last = basis[:, -1] / axis_shrink(d)  # y_3's arrow: y_3 = (distance along it) * sqrt(2/3)
    normal = np.array([-last[1], last[0]])
    for sign in (1.0, -1.0):
        # y_3 = +-sqrt(2) lies at distance sqrt(2) / sqrt(2/3) = sqrt(3) along y_3's arrow
        centre_of_line = sign * bound_distance(d) * last
        line = centre_of_line + np.outer(np.linspace(-3, 3, 2), normal)
        label = (
            "$y_3 = \\pm\\sqrt{2}$, the bound, drawn at distance $\\sqrt{3}$" if sign > 0 else None
        )
        ax2.plot(*line.T, ":", color=figures.color("red_team"), linewidth=1.2, label=label)
    peak = plane_coordinates(layer_norm(extreme_record(d), eps=0.0))
    ax2.scatter(
        *peak,
        s=40,
        marker="*",
        color=figures.color("red_team"),
        zorder=3,
        label="LayerNorm(0, 0, 1): $y_3 = \\sqrt{2}$",
    )
    ax2.set(
        aspect="equal",
        xlim=(-3.2, 3.2),
        ylim=(-3.2, 3.2),
        xlabel="plane coordinate 1",
        ylabel="plane coordinate 2",
    )
    ax2.set_title("the plane, face on: circle of radius $\\sqrt{3}$", fontsize=10)
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)
    return fig
