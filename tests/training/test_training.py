"""normlab.training: the runs of the training chapter, at a tiny size (seconds in all)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from normlab import torch_twins, training  # noqa: E402
from normlab.training.mlp import MLP, make_norm  # noqa: E402

TINY = dict(depth=2, width=8, points_per_class=20, steps=15, batch_size=8)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors, as in the chapter: one thread is fastest (restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _norm_outputs(model: MLP, x: torch.Tensor) -> torch.Tensor:
    """What the first norm layer of `model` returns on the batch x."""
    seen = []
    handle = model.norms[0].register_forward_hook(lambda module, args, out: seen.append(out))
    model(x)
    handle.remove()
    return seen[0].detach().double()  # (B, width)


# -- the data ------------------------------------------------------------------------------------


def test_spirals_are_seeded_balanced_and_inside_the_unit_disc():
    x, y = training.spirals(50, classes=3, seed=2)
    x2, y2 = training.spirals(50, classes=3, seed=2)
    assert x.shape == (150, 2) and y.shape == (150,) and x.dtype == torch.float32
    torch.testing.assert_close(x, x2, rtol=0, atol=0)
    assert torch.bincount(y).tolist() == [50, 50, 50]
    assert float(x.norm(dim=1).max()) <= 1.0 + 1e-6
    assert not torch.equal(x, training.spirals(50, classes=3, seed=3)[0])


def test_reversal_targets_are_the_inputs_reversed():
    ids, target = training.reversal_batch(3, 5, 7, torch.Generator().manual_seed(0))
    assert ids.shape == target.shape == (3, 5)
    assert int(ids.max()) < 7
    for t in range(5):
        assert torch.equal(target[:, t], ids[:, 4 - t])


# -- the four networks really use their norm -----------------------------------------------------


@pytest.mark.parametrize("norm", training.NORMS + ("dyt",))
def test_the_four_networks_share_their_initial_linear_weights(norm):
    torch.manual_seed(5)
    plain = MLP("none", depth=3, width=8)
    torch.manual_seed(5)
    other = MLP(norm, depth=3, width=8)
    for a, b in zip(plain.linears, other.linears, strict=True):
        torch.testing.assert_close(a.weight, b.weight, rtol=0, atol=0)


def test_the_norm_layers_are_the_course_twins_and_torch_batch_norm():
    assert isinstance(make_norm("layer_norm", 4), torch_twins.LayerNorm)
    assert isinstance(make_norm("rms_norm", 4), torch_twins.RMSNorm)
    assert isinstance(make_norm("batch_norm", 4), torch.nn.BatchNorm1d)
    assert isinstance(make_norm("none", 4), torch.nn.Identity)
    assert isinstance(make_norm("dyt", 4), torch_twins.DyT)
    with pytest.raises(ValueError, match="norm must be one of .*'dyt'.*; got 'tanh'"):
        make_norm("tanh", 4)


def test_each_norm_standardizes_along_its_own_axis():
    x = torch.randn(16, 2, generator=torch.Generator().manual_seed(0)) * 3 + 1  # (B, 2)
    zeros, ones = torch.zeros(16, dtype=torch.float64), torch.ones(16, dtype=torch.float64)
    torch.manual_seed(0)
    ln = _norm_outputs(MLP("layer_norm", width=8).train(), x)  # per record
    torch.testing.assert_close(ln.mean(1), zeros, atol=1e-5, rtol=0)
    torch.testing.assert_close(ln.var(1, unbiased=False), ones, atol=1e-3, rtol=0)
    rms = _norm_outputs(MLP("rms_norm", width=8).train(), x)  # per record, no centring
    torch.testing.assert_close(rms.pow(2).mean(1), ones, atol=1e-3, rtol=0)
    bn = _norm_outputs(MLP("batch_norm", width=8).train(), x)  # per feature, over the batch
    torch.testing.assert_close(bn.mean(0), zeros[:8], atol=1e-5, rtol=0)
    torch.testing.assert_close(bn.var(0, unbiased=False), ones[:8], atol=1e-3, rtol=0)


@pytest.mark.parametrize("norm", training.NORMS + ("dyt",))
def test_only_batch_norm_couples_the_records_of_a_batch_in_train_mode(norm):
    torch.manual_seed(1)
    model = MLP(norm, depth=2, width=8).train()
    x = torch.randn(6, 2, generator=torch.Generator().manual_seed(1))  # (B, 2)
    others_moved = x.clone()
    others_moved[1:] = others_moved[1:] * 4 + 3  # record 0 unchanged
    with torch.no_grad():
        same = torch.allclose(model(x)[0], model(others_moved)[0], rtol=1e-6, atol=1e-6)
    assert same == (norm != "batch_norm")


# -- the classifier runs -------------------------------------------------------------------------


def test_a_classifier_run_is_deterministic_for_its_seed():
    a = training.train_classifier("batch_norm", seed=3, **TINY)
    b = training.train_classifier("batch_norm", seed=3, **TINY)
    np.testing.assert_array_equal(a.losses, b.losses)
    assert a.test_accuracy == b.test_accuracy
    assert a.train_eval_gap == b.train_eval_gap
    c = training.train_classifier("batch_norm", seed=4, **TINY)
    assert not np.array_equal(a.losses, c.losses)


def test_taking_the_layer_snapshot_does_not_change_the_run():
    plain = training.train_classifier("batch_norm", seed=0, **TINY)
    probed = training.train_classifier("batch_norm", seed=0, snapshot=True, **TINY)
    np.testing.assert_array_equal(plain.losses, probed.losses)
    torch.testing.assert_close(
        plain.model.norms[0].running_mean, probed.model.norms[0].running_mean, rtol=0, atol=0
    )
    stats = probed.stats_init
    assert len(stats.activations) == len(stats.gradients) == TINY["depth"]
    assert stats.activations[0].shape == (3 * TINY["points_per_class"] * TINY["width"],)
    assert stats.percentiles("gradients").shape == (TINY["depth"], 5)
    assert np.all(np.abs(stats.activations[0]) <= 1)  # tanh outputs
    assert np.all(stats.std("gradients") > 0)


@pytest.mark.parametrize("norm", ["none", "layer_norm", "rms_norm"])
def test_per_record_norms_have_no_train_eval_gap(norm):
    run = training.train_classifier(norm, seed=0, **TINY)
    assert run.train_accuracy_train_mode == run.train_accuracy_eval_mode


def test_the_loss_falls_on_the_spirals():
    run = training.train_classifier(
        "layer_norm", depth=2, width=16, points_per_class=30, steps=150, turns=0.5, lr=1e-2
    )
    assert run.losses[-20:].mean() < 0.6 * run.losses[:10].mean()
    assert run.test_accuracy > 0.6  # chance is 1/3


# -- the transformer runs and the warm-up --------------------------------------------------------


def test_warmup_lr_ramps_linearly_then_holds():
    assert [training.warmup_lr(t, 1.0, 4) for t in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    assert training.warmup_lr(9, 1e-3, 50) == pytest.approx(2e-4, rel=1e-12)
    assert training.warmup_lr(0, 3e-4, 0) == 3e-4  # no warm-up: the full rate at once


def test_a_sequence_run_is_deterministic_and_its_loss_falls():
    tiny = dict(layers=1, d_model=16, heads=2, tokens=4, vocab=4, batch=16, steps=60, lr=3e-3)
    a = training.train_sequence_model("pre_ln", warmup_steps=10, seed=0, **tiny)
    b = training.train_sequence_model("pre_ln", warmup_steps=10, seed=0, **tiny)
    np.testing.assert_array_equal(a.losses, b.losses)
    assert np.isfinite(a.losses).all()
    assert a.losses[-10:].mean() < 0.8 * a.losses[:5].mean()
    post = training.train_sequence_model("post_ln", warmup_steps=0, seed=0, **tiny)
    assert not np.array_equal(post.losses, a.losses)


def test_first_step_below_reads_the_moving_average():
    losses = [3.0, 2.0, 1.0, 0.4, 0.3]
    np.testing.assert_allclose(training.smooth(losses, 2), [2.5, 1.5, 0.7, 0.35])
    assert training.first_step_below(losses, 0.5, window=1) == 3
    assert training.first_step_below(losses, 0.5, window=2) == 4  # the mean of steps 3 and 4
    assert training.first_step_below(losses, 0.1, window=2) is None


def test_tail_mean_averages_the_last_share_of_the_steps():
    losses = np.arange(20.0)
    assert training.tail_mean(losses, share=10) == 18.5  # the last 2 of 20
    assert training.tail_mean(losses, share=4) == 17.0  # the last 5: 15..19
    assert training.tail_mean([3.0, 2.0], share=10) == 2.0  # fewer than 10: the last one
    assert np.isnan(training.tail_mean([1.0, np.nan], share=1))


# -- bad arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: training.train_classifier("group_norm", **TINY), "norm must be one of"),
        (lambda: training.train_classifier("batch_norm", batch_size=1), "batch_norm needs"),
        (lambda: training.train_classifier("none", batch_size=0), "batch_size >= 1"),
        (lambda: training.train_classifier("none", steps=0), "steps >= 1"),
        (lambda: training.train_classifier("none", lr=0.0), "lr > 0"),
        (lambda: training.train_classifier("none", batch_size=10_000), "exceeds the 600"),
        (lambda: training.train_sequence_model("mid_ln", warmup_steps=0), "placement must be"),
        (lambda: training.train_sequence_model("pre_ln", warmup_steps=-1), "warmup_steps >= 0"),
        (lambda: training.train_sequence_model("pre_ln", warmup_steps=0, steps=0), "steps must"),
        (lambda: training.warmup_lr(-1, 1e-3, 10), "step >= 0"),
        (lambda: training.warmup_lr(0, float("nan"), 10), "base_lr must be > 0"),
        (lambda: training.spirals(0), "points_per_class >= 1"),
        (lambda: training.spirals(5, classes=1), "classes >= 2"),
        (lambda: training.reversal_batch(2, 1, 4, torch.Generator()), "tokens >= 2"),
        (lambda: MLP("none", depth=0), "depth >= 1"),
        (lambda: training.smooth([1.0, 2.0], 3), "window must be in 1..2"),
        (lambda: training.tail_mean([1.0], share=0), "share >= 1"),
        (lambda: training.tail_mean([]), "at least one loss"),
        (
            lambda: training.LayerStats([np.zeros(2)], [np.zeros(2)]).percentiles("weights"),
            "which must be",
        ),
    ],
)
def test_bad_arguments_are_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_dyt_trains_its_alpha_gain_and_bias():
    run = training.train_classifier("dyt", seed=0, **TINY)
    layer = run.model.norms[0]
    assert layer.alpha.item() != 0.5  # Adam moved it from the paper's initial value
    assert not torch.equal(layer.weight, torch.ones(TINY["width"]))
    assert np.isfinite(run.final_loss)
