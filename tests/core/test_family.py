"""normlab.family: the sets of cells that share statistics, found by running each normalization,
are the sets Wu and He (2018, arXiv:1803.08494, Figure 2) describe; and the figure draws them."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from normlab import family, figures

N, C, H, W = 3, 6, 2, 2
B, T, D = 3, 4, 6
GROUPS = 3  # groups of 2 channels


def _image_set(kind, n, c):
    """The closed-form description: a boolean (N, C, H, W) mask around sample n, channel c."""
    mask = np.zeros((N, C, H, W), dtype=bool)
    per = C // GROUPS
    if kind == "batch_norm":
        mask[:, c] = True  # one channel, every sample and pixel
    elif kind == "layer_norm":
        mask[n] = True  # one sample, every channel and pixel
    elif kind == "instance_norm":
        mask[n, c] = True  # one channel of one sample
    else:
        mask[n, c // per * per : (c // per + 1) * per] = True  # one group of one sample
    return mask


def _token_set(kind, b, t, k):
    mask = np.zeros((B, T, D), dtype=bool)
    per = D // GROUPS
    if kind == "batch_norm":
        mask[:, :, k] = True  # one feature, every token of every sequence
    elif kind == "layer_norm":
        mask[b, t] = True  # one token's features
    elif kind == "instance_norm":
        mask[b, :, k] = True  # one feature over the sequence's tokens
    else:
        mask[b, :, k // per * per : (k // per + 1) * per] = True
    return mask


@pytest.mark.parametrize("kind", family.KINDS)
@pytest.mark.parametrize("anchor", [(0, 1, 0, 0), (2, 5, 1, 0), (1, 2, 1, 1)])
def test_image_sets_are_wu_and_he_figure_2(kind, anchor):
    found = family.shared_with(family.image_norms(GROUPS)[kind], (N, C, H, W), anchor)
    np.testing.assert_array_equal(found, _image_set(kind, anchor[0], anchor[1]))


@pytest.mark.parametrize("kind", family.KINDS)
@pytest.mark.parametrize("anchor", [(0, 1, 2), (2, 3, 5), (1, 0, 0)])
def test_token_sets_follow_the_layout_torch_applies(kind, anchor):
    found = family.shared_with(family.token_norms(GROUPS)[kind], (B, T, D), anchor)
    np.testing.assert_array_equal(found, _token_set(kind, *anchor))


def test_the_image_norms_are_torchs_modules():
    x = np.random.default_rng(0).normal(size=(N, C, H, W))
    t = torch.from_numpy(x)
    norms = family.image_norms(GROUPS)
    theirs = {
        "batch_norm": F.batch_norm(t, None, None, training=True),
        "layer_norm": F.layer_norm(t, (C, H, W)),
        "instance_norm": F.instance_norm(t),
        "group_norm": F.group_norm(t, GROUPS),
    }
    for kind in family.KINDS:
        np.testing.assert_allclose(norms[kind](x), theirs[kind].numpy(), atol=1e-10, err_msg=kind)


def test_the_token_norms_are_torchs_modules_on_b_d_t():
    x = np.random.default_rng(1).normal(size=(B, T, D))
    channels_first = torch.from_numpy(x).transpose(1, 2)  # (B, d, T), as torch takes sequences
    norms = family.token_norms(GROUPS)
    theirs = {
        "instance_norm": F.instance_norm(channels_first).transpose(1, 2),
        "group_norm": F.group_norm(channels_first, GROUPS).transpose(1, 2),
        "layer_norm": F.layer_norm(torch.from_numpy(x), (D,)),
    }
    for kind, expected in theirs.items():
        np.testing.assert_allclose(norms[kind](x), expected.numpy(), atol=1e-10, err_msg=kind)


def test_draw_block_lights_exactly_the_mask():
    lit = _token_set("group_norm", 0, 1, 2)  # (B, T, d): 2 features over 4 tokens
    fig, ax = figures.new(projection="3d")
    figures.draw_block(ax, lit, "group_norm", ("d", "B", "T"))
    assert len(ax.collections) == lit.size  # one collection per voxel
    alphas = np.array([c.get_facecolor()[0][3] for c in ax.collections])
    assert np.sum(alphas > 0.9) == lit.sum() == 2 * T
