"""Chapter 9's views of the recorded sweep, on records made by hand (sweep_views)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("torch")
from normlab.training import grid, sweep_views
from normlab.training.data import classification_task
from normlab.training.sweep_views import Sweep, outcome_of, steps_to

RATES = [1e-3, 1e-2]
FLAT = [0.1] * 31  # a curve at chance on the digits (ten classes)


def _run(norm="layer_norm", scale=1.0, lr=1e-3, seed=0, *, test=0.5, val=0.5, curve=FLAT, **more):
    return {
        "task": "digits",
        "norm": norm,
        "depth": 2,
        "init_scale": scale,
        "lr": lr,
        "seed": seed,
        "test_accuracy": test,
        "val_accuracy": val,
        "val_curve": list(curve),
        "eval_every": 20,
        "final_loss": more.pop("final_loss", 1.0),
        **more,
    }


def _record(runs, **settings):
    base = {
        "tasks": ["digits"],
        "norms": ["layer_norm"],
        "depths": [2],
        "init_scales": {"digits": [1.0]},
        "learning_rates": RATES,
        "seeds": [0, 1],
    }
    return {"settings": {**base, **settings}, "runs": runs}


def test_chance_is_one_over_the_classes_of_each_task():
    for task in sweep_views.CLASSES:
        classes = int(classification_task(task).y_train.max()) + 1
        assert sweep_views.chance(task) == 1 / classes


def test_the_best_rate_is_chosen_on_validation_and_reported_on_test():
    # at 1e-3 the test accuracy is higher, at 1e-2 the validation accuracy: 1e-2 is chosen
    runs = [_run(lr=1e-3, seed=s, test=0.9, val=0.6) for s in (0, 1)]
    runs += [_run(lr=1e-2, seed=s, test=[0.7, 0.8][s], val=0.8) for s in (1, 0)]
    best = Sweep(_record(runs)).best("digits", "layer_norm", 2, 1.0)
    assert best.lr == 1e-2 and best.val == pytest.approx(0.8)
    np.testing.assert_array_equal(best.test, [0.7, 0.8])  # by seed, not by record order


def test_a_tie_on_validation_takes_the_smaller_rate():
    runs = [_run(lr=lr, seed=s, val=0.8) for lr in RATES for s in (0, 1)]
    assert Sweep(_record(runs)).best("digits", "layer_norm", 2, 1.0).lr == 1e-3


def test_the_heatmap_is_the_mean_over_seeds_at_each_scale_and_rate():
    runs = [
        _run(scale=scale, lr=lr, seed=s, test=scale * lr * (1 + s))
        for scale in (0.5, 1.0)
        for lr in RATES
        for s in (0, 1)
    ]
    sweep = Sweep(_record(runs))
    assert sweep.scales("digits", "layer_norm") == (0.5, 1.0)
    expected = [[scale * lr * 1.5 for lr in RATES] for scale in (0.5, 1.0)]
    np.testing.assert_allclose(sweep.heatmap("digits", "layer_norm", 2), expected)
    with pytest.raises(KeyError, match="no runs of"):
        sweep.values("digits", "layer_norm", 2, 4.0, 1e-3)


def test_steps_to_target_reads_the_first_evaluation_at_the_target():
    curve = [0.1, 0.5, 0.89, 0.91, 0.85, 0.95]
    assert steps_to({"val_curve": curve, "eval_every": 20}, 0.9) == 60
    assert steps_to({"val_curve": curve, "eval_every": 50}, 0.5) == 50
    assert steps_to({"val_curve": curve, "eval_every": 20}, 0.96) == math.inf


def _curve(start, end):
    """31 evaluations: flat at `start` for the first 21, then a straight line to `end`."""
    return [start] * 21 + list(np.linspace(start, end, 10))


@pytest.mark.parametrize(
    ("curves", "losses", "expected"),
    [
        ([_curve(0.5, 0.95), _curve(0.5, 0.91)], [1.0, 1.0], "trains"),
        ([_curve(0.5, 0.95), _curve(0.5, 0.91)], [1.0, float("nan")], "diverged"),
        ([_curve(0.12, 0.14), _curve(0.15, 0.13)], [1.0, 1.0], "chance"),
        ([_curve(0.4, 0.8), _curve(0.4, 0.7)], [1.0, 1.0], "slow"),
        ([_curve(0.6, 0.61), _curve(0.6, 0.6)], [1.0, 1.0], "stalled"),
        ([_curve(0.9, 0.3), _curve(0.9, 0.3)], [1.0, 1.0], "stalled"),  # fell back, not rising
    ],
)
def test_an_outcome_reads_the_mean_curve_at_the_end(curves, losses, expected):
    runs = [
        _run(seed=s, curve=c, final_loss=loss)
        for s, (c, loss) in enumerate(zip(curves, losses, strict=True))
    ]
    assert outcome_of(runs, 0.1) == expected
    assert expected in sweep_views.OUTCOMES


def test_a_complete_grid_has_no_problem_and_each_missing_or_extra_run_is_named():
    settings = dict(norms=["none", "center_only"], init_scales={"digits": [1.0, 4.0]})
    configs = grid.configs(("digits",), ("none", "center_only"), (2,), RATES, (0, 1), (1.0, 4.0))
    runs = [_run(c.norm, c.init_scale, c.lr, c.seed) for c in configs]
    # the control runs at Kaiming's scale only: 2 norms x 2 rates x 2 seeds at 1, 1 norm at 4
    assert len(runs) == 12
    assert sweep_views.complete(_record(runs, **settings)) == []
    broken = runs[1:] + [runs[-1], _run("none", 2.0, 1e-3, 0)]
    problems = sweep_views.complete(_record(broken, **settings))
    assert len(problems) == 3
    assert problems[0].startswith("missing: Config(task='digits', norm='none'")
    assert problems[1].startswith("not in the grid:") and "init_scale=2.0" in problems[1]
    assert problems[2].startswith("repeated:")
