"""ps8's expectations and probes against torch itself: what the judges compare with is
nn.LayerNorm in float64, the family's torch formulas are the members they name, the spirals
run is reproducible, and the probes see torch's LayerNorm wherever it hides."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from normlab.answer_key import torch_layer_norms
from normlab.grading.ps8_in_a_model import OTHER_CELLS, TRAINING_RTOL
from normlab_sandbox import module_probes, spirals

torch = pytest.importorskip("torch")

SOLUTION = """
class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.shape, self.eps = tuple(shape), eps
        self.weight = torch.nn.Parameter(torch.ones(self.shape))
        self.bias = torch.nn.Parameter(torch.zeros(self.shape))

    def forward(self, x):
        dims = tuple(range(-len(self.shape), 0))
        centred = x - x.mean(dim=dims, keepdim=True)
        var = (centred * centred).mean(dim=dims, keepdim=True)
        return centred / torch.sqrt(var + self.eps) * self.weight + self.bias
"""


def _solution():
    namespace = {"torch": torch}
    exec(SOLUTION, namespace)  # noqa: S102 (the test's own module)
    return namespace["LayerNorm"]


def _module_run(module_cls, shape, x, weight, bias, dy):
    module = module_cls(shape).double()
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(weight))
        module.bias.copy_(torch.from_numpy(bias))
    xt = torch.tensor(x, requires_grad=True)
    y = module(xt)
    y.backward(torch.from_numpy(dy))
    grads = (xt.grad, module.weight.grad, module.bias.grad)
    return [t.detach().numpy() for t in (y, *grads)]


@pytest.mark.parametrize(("shape", "x_shape"), [(8, (3, 8)), ((3, 4), (2, 3, 4))])
def test_the_oracles_layer_norm_is_nn_layer_norm_in_float64(shape, x_shape):
    rng = np.random.default_rng(0)
    x, dy = rng.normal(size=x_shape) * 3 + 1, rng.normal(size=x_shape)
    sizes = (shape,) if isinstance(shape, int) else shape
    weight, bias = rng.normal(size=sizes), rng.normal(size=sizes)
    found = torch_layer_norms.layer_norm(x, shape, weight, bias, dy=dy)
    want = _module_run(torch.nn.LayerNorm, shape, x, weight, bias, dy)
    for key, value in zip(("y", "dx", "dweight", "dbias"), want, strict=True):
        np.testing.assert_allclose(found[key], value, rtol=1e-14, atol=1e-14)  # an ulp or two


def test_the_familys_torch_formula_with_the_right_choices_is_nn_layer_norm():
    rng = np.random.default_rng(1)
    x, dy = rng.normal(size=(4, 6)) * 5, rng.normal(size=(4, 6))
    weight, bias = rng.normal(size=6), rng.normal(size=6)
    want = torch_layer_norms.layer_norm(x, 6, weight, bias, dy=dy)
    spelled = torch_layer_norms.layer_norm(x, 6, weight, bias, dy=dy, axes=(1,), fixed_eps=1e-9)
    for key in want:
        np.testing.assert_allclose(spelled[key], want[key], rtol=1e-12, atol=1e-13)
    # n - 1: torch.var's default, unbiased
    sample = torch_layer_norms.layer_norm(x, 6, weight, bias, divisor="n-1")["y"]
    xt = torch.from_numpy(x)
    z = (xt - xt.mean(-1, keepdim=True)) / torch.sqrt(xt.var(-1, keepdim=True) + 1e-5)
    np.testing.assert_allclose(sample, (z * torch.from_numpy(weight) + torch.from_numpy(bias)))


def test_detached_statistics_change_dx_and_nothing_else():
    rng = np.random.default_rng(2)
    x, dy = rng.normal(size=(3, 5)) * 2, rng.normal(size=(3, 5))
    weight, bias = rng.normal(size=5), rng.normal(size=5)
    right = torch_layer_norms.layer_norm(x, 5, weight, bias, dy=dy)
    mean, var = torch_layer_norms.DETACHABLE
    for detach in ((mean,), (var,), (mean, var)):
        cut = torch_layer_norms.layer_norm(x, 5, weight, bias, dy=dy, detach=detach)
        np.testing.assert_allclose(cut["y"], right["y"], rtol=1e-12)
        np.testing.assert_allclose(cut["dweight"], right["dweight"], rtol=1e-12)
        np.testing.assert_allclose(cut["dbias"], right["dbias"], rtol=1e-12)
        assert np.abs(cut["dx"] - right["dx"]).max() > 1e-2, detach
    with pytest.raises(ValueError, match="detach names"):
        torch_layer_norms.layer_norm(x, 5, weight, bias, dy=dy, detach=("std",))


def test_the_spirals_run_is_reproducible_and_leaves_the_callers_state_alone():
    torch.manual_seed(123)
    state, threads = torch.random.get_rng_state(), torch.get_num_threads()
    first = spirals.train_losses(torch.nn.LayerNorm)
    again = spirals.train_losses(torch.nn.LayerNorm)
    assert np.array_equal(first, again) and first.shape == (spirals.RUN["steps"],)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.get_num_threads() == threads
    assert abs(first[0] - np.log(3)) < 0.2 and first[-10:].mean() < 0.2  # it learns


def test_a_hand_written_layer_norm_trains_as_nn_layer_norm_well_within_the_tolerance():
    mine = spirals.train_losses(_solution())
    reference = torch_layer_norms.training_losses(spirals.RUN)
    assert np.abs(mine - reference).max() < 1e-4 * TRAINING_RTOL * np.abs(reference).max()


MEMBERS = [member for member, _, _ in OTHER_CELLS]


@pytest.mark.parametrize("member", MEMBERS, ids=[str(m) for m in MEMBERS])
def test_each_other_cells_mistake_trains_visibly_otherwise(member):
    """The training cell lets a run that matches one of these pass, apart from that mistake
    (another cell names it): each must differ from nn.LayerNorm's run by far more than the
    tolerance."""
    reference = torch_layer_norms.training_losses(spirals.RUN)
    other = torch_layer_norms.training_losses(spirals.RUN, **member)
    assert np.abs(other - reference).max() > 1e3 * TRAINING_RTOL * np.abs(reference).max()


def test_the_forward_probe_sees_torchs_layer_norm_wherever_it_hides():
    x = np.random.default_rng(3).normal(size=(2, 4))
    args = (4, x, np.ones(4), np.zeros(4), np.ones_like(x))
    assert module_probes.forward_pass(_solution(), *args)["kernels"] == ()

    class Hidden(torch.nn.Module):  # the aten op itself: no Python function of torch's runs
        def __init__(self, shape, eps=1e-5, elementwise_affine=True):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(shape))
            self.bias = torch.nn.Parameter(torch.zeros(shape))

        def forward(self, x):
            return torch.ops.aten.native_layer_norm(x, [4], self.weight, self.bias, 1e-5)[0]

    seen = module_probes.forward_pass(Hidden, *args)["kernels"]
    assert "torch.ops.aten.native_layer_norm" in seen
    assert any("NativeLayerNormBackward0" in label for label in seen)


def test_the_probes_answer_plain_data():
    found = module_probes.state_dict(_solution(), (3, 4), np.ones((2, 3, 4)), *np.ones((2, 3, 4)))
    assert found["into_error"] is None and found["out_error"] is None
    assert set(found["state"]) == {"weight", "bias"}
    assert all(isinstance(v, np.ndarray) for v in found["state"].values())
    params = module_probes.parameters(_solution(), 8)
    assert params["weight"] == params["bias"] == "parameter"
    assert params["parameters"] == (("weight", (8,), True), ("bias", (8,), True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_forward_probes_gradients_are_torchs_backward_of_dy_to_the_last_bit(dtype):
    rng = np.random.default_rng(5)
    x, dy = rng.normal(size=(3, 2, 6)).astype(dtype), rng.normal(size=(3, 2, 6)).astype(dtype)
    weight, bias = rng.normal(size=6).astype(dtype), rng.normal(size=6).astype(dtype)
    found = module_probes.forward_pass(_solution(), 6, x, weight, bias, dy)
    module = _solution()(6).to(torch.float64 if dtype == np.float64 else torch.float32)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(weight))
        module.bias.copy_(torch.from_numpy(bias))
    xt = torch.tensor(x, requires_grad=True)
    module(xt).backward(torch.from_numpy(dy))
    for key, grad in (
        ("dx", xt.grad),
        ("dweight", module.weight.grad),
        ("dbias", module.bias.grad),
    ):
        np.testing.assert_array_equal(found[key], grad.numpy())


def test_a_dy_of_another_shape_gets_torchs_own_error_not_a_broadcast():
    x = np.random.default_rng(6).normal(size=(3, 4))

    class Pooled(torch.nn.Module):  # one value per record: a dy of x's shape does not fit
        def __init__(self, shape, eps=1e-5, elementwise_affine=True):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(shape))

        def forward(self, x):
            return (x * self.weight).mean(dim=-1, keepdim=True)

    found = module_probes.forward_pass(Pooled, 4, x, None, None, np.ones_like(x))
    assert found["backward_error"].startswith("RuntimeError: Mismatch in shape")
    assert found["dx"] is None


def test_a_probe_keeps_torch_compile_out_of_the_kernel():
    """The probes compile nothing: their dispatch mode must not be wrapped in torch.compile's
    guard, which imports torch._dynamo on the first op and slows every op after it (the
    sandboxed grader imports torch._dynamo before any cell, for torch.optim's sake)."""
    script = (
        "import sys, numpy as np, torch\n"
        "from normlab_sandbox import module_probes\n"
        "x = (np.ones((2, 4)) + np.arange(4)).astype(np.float32)\n"
        "found = module_probes.forward_pass(torch.nn.LayerNorm, 4, x, None, None, x)\n"
        "assert found['dx'] is not None\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
