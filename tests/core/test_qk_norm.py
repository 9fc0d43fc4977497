"""normlab.qk_norm: causal attention checked against torch's own, and QK-norm's bound on the
attention logits (chapter 8's modern placements)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from normlab import qk_norm  # noqa: E402


def _attention(qk: bool, seed: int = 0, d_model: int = 12, heads: int = 3):
    torch.manual_seed(seed)
    return qk_norm.CausalSelfAttention(d_model, heads, qk_norm=qk).double()


def test_plain_attention_equals_torchs_causal_scaled_dot_product_attention():
    attn = _attention(qk=False)
    x = torch.randn(2, 7, 12, dtype=torch.float64)  # (B, T, d)
    q, k, v = (p.view(2, 7, 3, 4).transpose(1, 2) for p in attn.qkv(x).split(12, dim=-1))
    want = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    want = attn.out(want.transpose(1, 2).reshape(2, 7, 12))
    torch.testing.assert_close(attn(x), want)


@pytest.mark.parametrize("qk", [False, True])
def test_no_position_reads_a_later_one(qk):
    attn = _attention(qk)
    x = torch.randn(1, 6, 12, dtype=torch.float64)
    later = x.clone()
    later[0, 4:] += 3.0  # only positions 4 and 5 change
    torch.testing.assert_close(attn(later)[0, :4], attn(x)[0, :4], rtol=0, atol=0)


@pytest.mark.parametrize("seed", range(5))
def test_qk_norm_bounds_every_logit_by_the_gains_whatever_the_weights(seed):
    attn = _attention(qk=True, seed=seed)
    with torch.no_grad():
        attn.qkv.weight.mul_(1e3)  # weights far too large: the logits would explode
        attn.q_norm.weight.uniform_(-3.0, 3.0)
        attn.k_norm.weight.uniform_(-2.0, 2.0)
    x = 50.0 * torch.randn(3, 9, 12, dtype=torch.float64)
    scores, _ = attn.logits(x)
    largest = scores[torch.isfinite(scores)].abs().max().item()
    gains = attn.q_norm.weight.abs().max() * attn.k_norm.weight.abs().max()
    assert attn.logit_bound() == pytest.approx(gains.item() * math.sqrt(4))
    assert largest <= attn.logit_bound() * (1 + 1e-12)
    attn(x)
    assert attn.largest_logit == pytest.approx(largest)  # what forward records


def test_the_plain_logits_grow_with_the_weights_and_have_no_bound():
    attn = _attention(qk=False)
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    attn(x)
    before = attn.largest_logit
    with torch.no_grad():
        attn.qkv.weight.mul_(10.0)  # q and k both 10 times larger: the logits 100 times
    attn(x)
    assert attn.largest_logit == pytest.approx(100 * before)
    with pytest.raises(ValueError, match="no bound"):
        attn.logit_bound()


def test_heads_must_divide_the_width():
    with pytest.raises(ValueError, match=r"d_model \(10\) must be a multiple of heads \(3\)"):
        qk_norm.CausalSelfAttention(10, 3, qk_norm=True)


def test_the_copy_task_repeats_its_first_half():
    ids = qk_norm.copy_batch(torch.Generator().manual_seed(0), batch=4, half=5, vocab=7)
    assert ids.shape == (4, 10)
    assert torch.equal(ids[:, :5], ids[:, 5:])
    assert int(ids.max()) < 7


def test_a_short_run_is_reproducible_and_stays_under_its_bound():
    a = qk_norm.logit_growth(True, steps=6, seed=3)
    b = qk_norm.logit_growth(True, steps=6, seed=3)
    assert sorted(a) == ["bound", "largest_logit", "loss"]
    for key in a:
        assert a[key].shape == (6,)
        np.testing.assert_array_equal(a[key], b[key])
    assert np.all(a["largest_logit"] <= a["bound"] * (1 + 1e-6))
    assert "bound" not in qk_norm.logit_growth(False, steps=2, seed=3)
