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


def test_a_rate_beyond_the_grid_is_chosen_from_and_leaves_the_grid_rates_alone():
    # layer_norm also ran 1e-1, beyond the grid, and did best there; none ran the grid only
    none_val = dict(zip(RATES, (0.7, 0.6), strict=True))
    ln_val = dict(zip((*RATES, 1e-1), (0.5, 0.6, 0.8), strict=True))
    runs = [_run("none", lr=lr, seed=s, val=v) for lr, v in none_val.items() for s in (0, 1)]
    runs += [_run(lr=lr, seed=s, val=v) for lr, v in ln_val.items() for s in (0, 1)]
    sweep = Sweep(_record(runs, norms=["none", "layer_norm"]))
    assert sweep.rates == tuple(RATES)  # the rates every network ran
    assert sweep.rates_of("digits", "layer_norm", 2, 1.0) == (*RATES, 1e-1)
    assert sweep.best("digits", "layer_norm", 2, 1.0).lr == 1e-1
    assert sweep.heatmap("digits", "layer_norm", 2).shape == (1, len(RATES))
    # chosen at the top of what it ran: not bracketed; none chose the smallest: not either
    assert not sweep.bracketed("digits", "layer_norm", 2, 1.0)
    assert not sweep.bracketed("digits", "none", 2, 1.0)
    with pytest.raises(KeyError, match="no network"):
        sweep.rates_of("digits", "rms_norm", 2, 1.0)


def test_a_rate_with_a_run_on_each_side_is_bracketed():
    rates = (1e-4, 1e-3, 1e-2)
    runs = [_run(lr=lr, seed=0, val=v) for lr, v in zip(rates, (0.5, 0.8, 0.6), strict=True)]
    sweep = Sweep(_record(runs, learning_rates=list(rates), seeds=[0]))
    assert sweep.bracketed("digits", "layer_norm", 2, 1.0)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        ("trains", "trains"),
        ("slow", "trained worse"),
        ("stalled", "trained worse"),
        ("chance", "failed"),
        ("diverged", "failed"),
    ],
)
def test_a_verdict_reads_an_outcome_against_the_task(outcome, expected):
    assert sweep_views.verdict(outcome) == expected
    assert expected in sweep_views.VERDICTS


def test_a_verdict_of_an_unknown_outcome_names_it():
    with pytest.raises(ValueError, match="'trained'"):
        sweep_views.verdict("trained")


@pytest.mark.parametrize(
    ("t", "df", "p"),
    [  # two-sided 5 % critical values of Student's t (any printed table)
        (12.7062, 1, 0.05),
        (4.3027, 2, 0.05),
        (3.1824, 3, 0.05),
        (2.7764, 4, 0.05),
        (2.2281, 10, 0.05),
        (4.6041, 4, 0.01),
        (0.0, 4, 1.0),
        (math.inf, 4, 0.0),
    ],
)
def test_the_t_tail_matches_the_printed_table(t, df, p):
    assert sweep_views.t_two_sided_p(t, df) == pytest.approx(p, abs=5e-5)
    assert sweep_views.t_two_sided_p(-t, df) == sweep_views.t_two_sided_p(t, df)


@pytest.mark.parametrize("t", [0.1, 0.7, 1.0, 3.0, 25.0])
def test_the_t_tail_matches_the_closed_forms_of_one_and_two_degrees_and_of_many(t):
    cauchy = 1 - 2 / math.pi * math.atan(t)  # df = 1
    two = 1 - t / math.sqrt(2 + t * t)  # df = 2
    assert sweep_views.t_two_sided_p(t, 1) == pytest.approx(cauchy, rel=1e-12, abs=1e-15)
    assert sweep_views.t_two_sided_p(t, 2) == pytest.approx(two, rel=1e-12, abs=1e-15)
    # many degrees of freedom: the normal's two-sided tail, erfc(t / sqrt(2)), which the t
    # tail exceeds by about phi(t) (t^3 + t) / (2 df) (a relative 1.3e-3 at t = 3, df 20001)
    normal = math.erfc(t / math.sqrt(2))
    assert sweep_views.t_two_sided_p(t, 20001) == pytest.approx(normal, rel=2e-3, abs=1e-12)


@pytest.mark.parametrize("df", [0, -1, 2.0])
def test_a_t_tail_needs_a_positive_whole_number_of_degrees(df):
    with pytest.raises(ValueError, match="df must be a positive integer"):
        sweep_views.t_two_sided_p(1.0, df)


def test_the_paired_t_of_hand_values():
    # mean 2, sample std 1, n 3: t = 2 / (1 / sqrt 3); df 2: p = 1 - t / sqrt(2 + t^2)
    t, p = sweep_views.paired_t([1.0, 2.0, 3.0])
    assert t == pytest.approx(2 * math.sqrt(3))
    assert p == pytest.approx(1 - t / math.sqrt(2 + t * t))
    assert sweep_views.paired_t([0.0, 0.0, 0.0]) == (0.0, 1.0)
    assert sweep_views.paired_t([-0.5, -0.5]) == (-math.inf, 0.0)
    with pytest.raises(ValueError, match="at least 2 differences"):
        sweep_views.paired_t([0.3])


def test_two_networks_are_paired_seed_by_seed_each_at_its_chosen_rate():
    # none chooses 1e-3, layer_norm 1e-2; the differences are layer_norm's minus none's, by seed
    runs = [_run("none", lr=1e-3, seed=s, val=0.9, test=t) for s, t in ((1, 0.6), (0, 0.5))]
    runs += [_run("none", lr=1e-2, seed=s, val=0.2, test=0.2) for s in (0, 1)]
    runs += [_run(lr=1e-3, seed=s, val=0.2, test=0.2) for s in (0, 1)]
    runs += [_run(lr=1e-2, seed=s, val=0.9, test=t) for s, t in ((0, 0.75), (1, 0.7))]
    paired = Sweep(_record(runs, norms=["none", "layer_norm"])).paired(
        "digits", 2, 1.0, "none", "layer_norm"
    )
    np.testing.assert_allclose(paired.differences, [0.25, 0.1])
    assert paired.mean == pytest.approx(0.175)
    assert (paired.t, paired.p) == sweep_views.paired_t(paired.differences)


def test_a_rate_beyond_the_grid_is_complete_only_at_every_seed():
    configs = grid.configs(("digits",), ("none",), (2,), RATES, (0, 1), (1.0,))
    runs = [_run(c.norm, c.init_scale, c.lr, c.seed) for c in configs]
    settings = dict(norms=["none"])
    beyond = [_run("none", 1.0, 1e-1, s) for s in (0, 1)]
    assert sweep_views.complete(_record(runs + beyond, **settings)) == []
    problems = sweep_views.complete(_record(runs + beyond[:1], **settings))
    assert len(problems) == 1 and problems[0].startswith("missing:") and "seed=1" in problems[0]


def test_along_the_ratio_every_setting_is_ordered_by_rate_over_scale():
    # 1e-2 at scale 4 (ratio 2.5e-3) comes before 1e-2 at scale 1 (1e-2), 1e-3 at scale 1 first
    runs = [_run(scale=s, lr=lr, seed=0) for s in (1.0, 4.0) for lr in RATES]
    sweep = Sweep(_record(runs, seeds=[0]))
    row = sweep.along_ratio("digits", "layer_norm", 2)
    assert [(ratio, scale) for ratio, _, scale in row] == [
        (1e-3 / 4, 4.0),
        (1e-3, 1.0),
        (1e-2 / 4, 4.0),
        (1e-2, 1.0),
    ]
    assert {kind for _, kind, _ in row} == {"chance"}  # FLAT: every curve at a blind guess


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        (["slow", "trains", "trains", "chance"], (["slow"], (2.0, 3.0), ["chance"])),
        (["trains", "slow", "trains", "chance"], None),  # broken by a setting that did not
        (["slow", "stalled", "chance", "chance"], None),  # nothing trains
        (["trains"] * 4, ([], (1.0, 4.0), [])),
    ],
)
def test_a_band_is_the_one_unbroken_run_of_the_ratio_that_trains(kinds, expected):
    row = [(float(i + 1), kind, 1.0) for i, kind in enumerate(kinds)]
    assert sweep_views.band(row) == expected
