"""normlab.figures: one style, colours by meaning, the (B, T, d) sharing masks of chapter 5."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from normlab import figures


def test_colours_are_named_by_meaning_and_unknown_names_fail_clearly():
    assert figures.color("layer_norm") == figures.color("blue_team")
    assert len({figures.color(k) for k in ("layer_norm", "batch_norm", "rms_norm")}) == 3
    with pytest.raises(KeyError, match="no colour named 'lyer_norm'"):
        figures.color("lyer_norm")


def test_new_gives_a_pyplot_free_figure_in_the_course_style():
    fig, axes = figures.new(1, 2, width=5, height=2)
    assert isinstance(fig, Figure)
    assert axes.shape == (2,)
    assert tuple(fig.get_size_inches()) == (5, 2)
    assert not axes[0].spines["top"].get_visible()


def test_save_writes_png_and_svg_and_refuses_other_suffixes(tmp_path):
    fig, ax = figures.new()
    ax.plot([0, 1], [0, 1])
    png = figures.save(fig, tmp_path / "deep" / "a.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = figures.save(fig, tmp_path / "a.svg").read_text()
    assert "<svg" in svg and "@font-face" not in svg  # text as paths: no font to fetch
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        figures.save(fig, tmp_path / "a.jpg")


@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_per_record_kinds_light_the_d_features_of_one_record(kind):
    mask = figures.shared_cells(kind, (3, 4, 6), record=(1, 2))
    assert mask.sum() == 6
    assert mask[1, 2].all()


def test_batch_norm_lights_one_feature_across_every_record():
    mask = figures.shared_cells("batch_norm", (3, 4, 6), feature=5)
    assert mask.sum() == 3 * 4
    assert mask[:, :, 5].all()


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        figures.shared_cells("group_norm", (2, 2, 2))


def test_draw_record_block_draws_every_cell_and_lights_the_shared_ones_solid():
    fig, ax = figures.new(projection="3d")
    figures.draw_record_block(ax, "batch_norm", shape=(2, 3, 4))
    assert len(ax.collections) == 2 * 3 * 4  # one collection per voxel
    alphas = np.array([c.get_facecolor()[0][3] for c in ax.collections])
    assert np.sum(alphas > 0.9) == 2 * 3  # one feature across all B * T records, solid


def test_draw_stream_rms_draws_the_mean_of_the_seeds_and_the_band_they_span():
    fig, ax = figures.new()
    pre = np.array([[1.0, 1.5, 2.0], [1.2, 1.9, 2.6]])  # (seeds, blocks)
    post = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    figures.draw_stream_rms(ax, {"pre_ln": pre, "post_ln": post})
    lines = {line.get_label().split(":")[0]: line for line in ax.lines}
    assert sorted(lines) == ["post-LN", "pre-LN"]
    assert lines["pre-LN"].get_xdata().tolist() == [1, 2, 3]
    assert np.allclose(lines["pre-LN"].get_ydata(), [1.1, 1.7, 2.3])
    assert lines["pre-LN"].get_color() == figures.color("pre_ln")
    assert "2 seeds" in lines["pre-LN"].get_label()
    band = ax.collections[0].get_paths()[0].vertices  # pre-LN's, drawn first
    assert np.isclose(band[:, 1].min(), 1.0) and np.isclose(band[:, 1].max(), 2.6)
    with pytest.raises(KeyError):
        figures.draw_stream_rms(ax, {"sandwich_ln": np.ones((2, 2))})
