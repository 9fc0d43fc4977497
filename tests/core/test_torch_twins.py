"""The torch twins agree with the NumPy reference and with torch's own modules."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import normlab
from normlab import torch_twins


@pytest.mark.parametrize("shape", [(5,), (3, 8), (2, 3, 8), (2, 2, 3, 8)])
def test_functions_match_the_reference_in_float64(shape):
    x = np.random.default_rng(0).normal(size=shape) * 40 + 7
    gamma, beta = np.linspace(0.5, 2, shape[-1]), np.linspace(-1, 1, shape[-1])
    t = torch.from_numpy(x)
    got = torch_twins.layer_norm(t, torch.from_numpy(gamma), torch.from_numpy(beta))
    np.testing.assert_allclose(got.numpy(), normlab.layer_norm(x, gamma, beta), atol=1e-12)
    got = torch_twins.rms_norm(t, torch.from_numpy(gamma))
    np.testing.assert_allclose(got.numpy(), normlab.rms_norm(x, gamma), atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_is_computed_in_float32(dtype):
    x = torch.randn(4, 64, dtype=torch.float32) * 3 + 100
    y = torch_twins.layer_norm(x.to(dtype))
    assert y.dtype == dtype
    in_float32 = torch_twins.layer_norm(x.to(dtype).float()).to(dtype)
    torch.testing.assert_close(y, in_float32, atol=0, rtol=0)
    torch.testing.assert_close(
        y.float(), F.layer_norm(x.to(dtype).float(), (64,)), atol=2e-2, rtol=1e-2
    )


def test_modules_count_their_parameters_like_normlab():
    def count(module):
        return sum(p.numel() for p in module.parameters())

    assert count(torch_twins.LayerNorm(512)) == normlab.param_count("layer_norm", 512)
    assert count(torch_twins.LayerNorm(512, bias=False)) == normlab.param_count(
        "layer_norm", 512, bias=False
    )
    assert count(torch_twins.RMSNorm(512)) == normlab.param_count("rms_norm", 512)


def test_modules_match_torch_modules():
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    ours, theirs = torch_twins.LayerNorm(16, dtype=torch.float64), torch.nn.LayerNorm(16)
    torch.testing.assert_close(ours(x), theirs.double()(x))
    ours, theirs = torch_twins.RMSNorm(16, dtype=torch.float64), torch.nn.RMSNorm(16, eps=1e-6)
    torch.testing.assert_close(ours(x), theirs.double()(x))


def test_modules_are_differentiable():
    layer = torch_twins.LayerNorm(8, dtype=torch.float64)
    x = torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(layer, (x,))


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match=r"gamma has shape \(3,\); expected \(4,\)"):
        torch_twins.layer_norm(torch.zeros(2, 4), torch.ones(3))


def test_dyt_module_is_the_reference_and_starts_as_the_paper():
    layer = torch_twins.DyT(6, dtype=torch.float64)
    # Zhu et al. (2025), Algorithm 1: alpha from 0.5, a gain of ones, a bias of zeros
    assert layer.alpha.tolist() == [0.5] and layer.alpha.shape == (1,)
    assert layer.weight.tolist() == [1.0] * 6 and layer.bias.tolist() == [0.0] * 6
    with torch.no_grad():
        layer.alpha.fill_(1.7)
        layer.weight.copy_(torch.linspace(-1, 2, 6, dtype=torch.float64))
        layer.bias.copy_(torch.linspace(0, 1, 6, dtype=torch.float64))
    x = torch.randn(2, 3, 6, dtype=torch.float64) * 3
    expected = normlab.dyt(
        x.numpy(), 1.7, layer.weight.detach().numpy(), layer.bias.detach().numpy()
    )
    np.testing.assert_allclose(layer(x).detach().numpy(), expected, rtol=0, atol=1e-15)
