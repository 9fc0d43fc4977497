"""normlab.placement: the pre-LN / post-LN stack of chapter 8 and the claims the chapter makes."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from normlab import placement  # noqa: E402


def test_post_ln_block_output_is_layer_normalized_per_record():
    torch.manual_seed(0)
    block = placement.Block(16, 4, "post_ln")
    y = block(torch.randn(2, 5, 16) * 30 + 7).detach().double()  # (B, T, d)
    torch.testing.assert_close(
        y.mean(-1), torch.zeros(2, 5, dtype=torch.float64), atol=1e-5, rtol=0
    )
    torch.testing.assert_close(
        y.var(-1, unbiased=False), torch.ones(2, 5, dtype=torch.float64), atol=1e-4, rtol=0
    )


def test_pre_ln_block_is_the_identity_plus_branches():
    torch.manual_seed(0)
    block = placement.Block(16, 4, "pre_ln")
    with torch.no_grad():
        for branch in (block.attn.out_proj, block.ffn[2]):
            branch.weight.zero_()
            branch.bias.zero_()
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(block(x), x)  # branches silenced: the stream passes untouched


def test_unknown_placement_is_refused():
    with pytest.raises(ValueError, match="placement must be one of"):
        placement.Block(8, 2, "mid_ln")


@pytest.mark.parametrize("layers", [0, 2])
def test_a_stack_refuses_an_unknown_placement_even_with_no_layers(layers):
    with pytest.raises(ValueError, match="placement must be one of .*'bogus'"):
        placement.Stack(layers, 8, 2, "bogus")


def test_a_stack_refuses_a_negative_number_of_layers():
    with pytest.raises(ValueError, match="layers must be >= 0; got -1"):
        placement.Stack(-1, 8, 2, "pre_ln")


def test_gradient_norms_have_one_value_per_layer_and_are_reproducible():
    a = placement.gradient_norms("pre_ln", layers=3, d_model=16, heads=2, seed=4)
    b = placement.gradient_norms("pre_ln", layers=3, d_model=16, heads=2, seed=4)
    assert set(a) == {"ffn_w2", "all", "stream"}
    for key in a:
        assert a[key].shape == (3,)
        np.testing.assert_array_equal(a[key], b[key])
    assert np.all(a["ffn_w2"] > 0)


def test_post_ln_stream_is_renormalized_and_pre_ln_stream_grows():
    post = placement.gradient_norms("post_ln", layers=4, seed=0)
    pre = placement.gradient_norms("pre_ln", layers=4, seed=0)
    np.testing.assert_allclose(post["stream"], 1.0, atol=1e-4)
    assert np.all(np.diff(pre["stream"]) > 0)


def test_chapter_7_claim_pre_ln_top_gradient_shrinks_with_depth_post_ln_does_not():
    def top(p, layers):
        return placement.mean_gradient_norms(p, layers=layers, seeds=range(3))["ffn_w2"][-1]

    assert top("pre_ln", 16) < 0.6 * top("pre_ln", 2)
    assert top("post_ln", 16) > 0.9 * top("post_ln", 2)
