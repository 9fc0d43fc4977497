"""The initialisation knob, the update-to-data ratio and chapter 9's recorded sweep."""

from __future__ import annotations

import importlib.util
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from normlab import training  # noqa: E402
from normlab.training import grid  # noqa: E402
from normlab.training.mlp import MLP  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TINY = dict(depth=2, width=8, points_per_class=20, steps=5, batch_size=8)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("scale", [0.25, 1.0, 4.0])
def test_init_scale_draws_kaimings_tanh_std_times_the_scale_and_zero_biases(scale):
    torch.manual_seed(0)
    model = MLP("none", width=512, depth=3, init_scale=scale)
    # He et al. (2015): std = gain / sqrt(fan_in), tanh's gain 5/3 (torch's calculate_gain)
    gain = torch.nn.init.calculate_gain("tanh")
    for linear in model.linears:
        expected = scale * gain / math.sqrt(linear.in_features)
        n = linear.weight.numel()
        # the sample std of n normal draws is within 5 standard errors (std / sqrt(2n))
        assert abs(float(linear.weight.detach().std()) - expected) < 5 * expected / math.sqrt(2 * n)
        assert torch.count_nonzero(linear.bias) == 0


def test_no_init_scale_keeps_torchs_default_initialisation():
    torch.manual_seed(3)
    default = MLP("none", width=8, depth=2)
    torch.manual_seed(3)
    plain = [torch.nn.Linear(2, 8), torch.nn.Linear(8, 8)]
    for ours, theirs in zip(default.linears, plain, strict=True):
        torch.testing.assert_close(ours.weight, theirs.weight, rtol=0, atol=0)


def test_a_tiny_initialisation_starts_at_the_loss_of_a_blind_guess():
    run = training.train_classifier("none", init_scale=1e-4, seed=0, **TINY)
    assert run.initial_loss == run.losses[0]
    # hidden activations ~ 0, so the logits are the read-out's bias: close to uniform
    assert abs(run.initial_loss - math.log(3)) < 0.05


def test_update_ratios_are_log10_of_each_steps_size_over_the_weights():
    run = training.train_classifier(
        "layer_norm", init_scale=1.0, seed=2, track_updates=True, **{**TINY, "steps": 1}
    )
    torch.manual_seed(2)
    start = MLP("layer_norm", width=TINY["width"], depth=TINY["depth"], init_scale=1.0)
    before = [m.weight.detach().double() for m in (*start.linears, start.readout)]
    after = [m.weight.detach().double() for m in (*run.model.linears, run.model.readout)]
    expected = [
        np.log10(float((a - b).std() / b.std())) for a, b in zip(after, before, strict=True)
    ]
    assert run.update_ratios.shape == (1, TINY["depth"] + 1)
    np.testing.assert_allclose(run.update_ratios[0], expected, rtol=1e-5)
    # Adam's first step moves every weight by lr (its update is lr * sign(g) at step 1)
    assert np.all(run.update_ratios[0] < 0)


def test_relative_weight_change_compares_the_end_with_the_start():
    run = training.train_classifier("none", init_scale=1.0, seed=4, track_updates=True, **TINY)
    torch.manual_seed(4)
    start = MLP("none", width=TINY["width"], depth=TINY["depth"], init_scale=1.0)
    for change, begin, end in zip(
        run.relative_weight_change(),
        (*start.linears, start.readout),
        (*run.model.linears, run.model.readout),
        strict=True,
    ):
        w0, w1 = begin.weight.detach().double(), end.weight.detach().double()
        assert change == pytest.approx(float((w1 - w0).norm() / w0.norm()), rel=1e-5)
    with pytest.raises(ValueError, match="track_updates=True"):
        training.train_classifier("none", **TINY).relative_weight_change()


def test_tracking_updates_does_not_change_the_run():
    plain = training.train_classifier("batch_norm", init_scale=2.0, seed=1, **TINY)
    tracked = training.train_classifier(
        "batch_norm", init_scale=2.0, seed=1, track_updates=True, **TINY
    )
    np.testing.assert_array_equal(plain.losses, tracked.losses)
    assert plain.update_ratios is None and tracked.update_ratios.shape == (5, 3)


def test_the_grid_has_every_combination_once_deep_runs_last():
    configs = grid.configs()
    # spirals: 5 scales x 9 rates x 5 norms (DyT among them) x 5 seeds, digits: 3 scales, per
    # depth; and the centre-only control at Kaiming's scale on both tasks and depths
    norms, rates, seeds = 5, 9, 5
    expected = 2 * (5 + 3) * rates * norms * seeds + 2 * 2 * rates * seeds
    assert len(configs) == len(set(configs)) == expected
    assert len(grid.SCALES["spirals"]) >= 5 and 1.0 in grid.SCALES["digits"]
    # issue 32: at least 5 rates over at least two decades, at least 5 seeds
    assert (
        len(grid.LEARNING_RATES) >= 5 and max(grid.LEARNING_RATES) / min(grid.LEARNING_RATES) >= 100
    )
    assert len(grid.DEPTHS) >= 2 and len(grid.SEEDS) >= 5
    for task in grid.TASKS:
        depths = [c.depth for c in configs if c.task == task]
        assert depths == sorted(depths)
    assert {c.init_scale for c in configs if c.norm == "center_only"} == {grid.CONTROL_SCALE}
    assert {c.init_scale for c in configs if c.norm == "dyt"} == {
        c.init_scale for c in configs if c.norm == "none"
    }


def test_a_recorded_run_is_the_run_of_its_config():
    config = grid.Config("spirals", "rms_norm", 2, 0.5, 1e-3, 1)
    record = grid.run_config(config, steps=4, eval_every=2)
    run = training.train_classifier(
        "rms_norm", depth=2, init_scale=0.5, seed=1, steps=4, eval_every=2
    )
    assert record["test_accuracy"] == run.test_accuracy
    assert (
        record["val_accuracy"]
        == run.val_accuracy
        == pytest.approx(record["val_curve"][-1], abs=1e-4)
    )
    assert len(record["val_curve"]) == 3  # steps 0, 2 and 4
    assert grid.config_of(record) == config
    assert record["final_loss"] == run.final_loss
    assert record["initial_loss"] == run.losses[0]
    assert record["first_step_below_half"] == training.first_step_below(run.losses, 0.5, 4)
    assert {"task", "norm", "depth", "init_scale", "lr", "seed", "cpu_seconds"} <= record.keys()


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "training_sweep", REPO / "scripts" / "training_sweep.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sweep_script_writes_a_labelled_record_the_chapter_can_read(tmp_path):
    script = _load_script()
    argv = ["--tasks", "spirals", "--norms", "none", "layer_norm", "--depths", "2"]
    argv += ["--scales", "1", "4", "--lrs", "1e-3", "--seeds", "0", "--steps", "3"]
    argv += ["--jobs", "1", "--out-dir", str(tmp_path)]
    assert script.main(argv) == 0
    (path,) = tmp_path.glob("training-sweep-*.json")
    assert not (tmp_path / script.PARTIAL).exists()
    record = grid.newest_record(tmp_path)
    assert record == {**json.loads(path.read_text()), "path": str(path)}
    for key in ("date_utc", "cpu_model", "python", "numpy", "torch", "commit"):
        assert key in record["machine"]
    assert record["settings"]["seeds"] == [0] and record["settings"]["steps"] == 3
    assert len(record["runs"]) == 4 and record["cpu_seconds_total"] > 0
    config = grid.Config("spirals", "layer_norm", 2, 4.0, 1e-3, 0)
    run = grid.find_run(record, config)
    assert run["test_accuracy"] == grid.run_config(config, steps=3)["test_accuracy"]
    table = grid.seed_table(record, "test_accuracy", depth=2)
    assert set(table) == {
        ("spirals", n, 2, s, 1e-3) for n in ("none", "layer_norm") for s in (1.0, 4.0)
    }
    with pytest.raises(KeyError, match="no run"):
        grid.find_run(record, grid.Config("spirals", "batch_norm", 2, 4.0, 1e-3, 0))


def test_a_stopped_sweep_goes_on_where_it_was(tmp_path):
    script = _load_script()
    argv = ["--tasks", "digits", "--norms", "none", "--depths", "2", "--scales", "1"]
    argv += ["--lrs", "1e-3", "3e-3", "--seeds", "0", "--steps", "2", "--jobs", "1"]
    argv += ["--out-dir", str(tmp_path)]
    # a sweep that stopped after its first run: the header and that run are on disk
    done = grid.run_config(grid.Config("digits", "none", 2, 1.0, 1e-3, 0), steps=2)
    done["test_accuracy"] = -1.0  # a mark: a run done again would not carry it
    settings = {"tasks": ["digits"]}  # not the settings of argv: refused
    (tmp_path / script.PARTIAL).write_text(json.dumps({"settings": settings}) + "\n")
    with pytest.raises(SystemExit, match="other settings"):
        script.main(argv)
    header = {"settings": script.settings_for(script.parse_args(argv)), "machine": {}}
    lines = [json.dumps(header), json.dumps(done)]
    (tmp_path / script.PARTIAL).write_text("\n".join(lines) + "\n")
    assert script.main(argv) == 0
    runs = grid.newest_record(tmp_path)["runs"]
    assert [(r["lr"], r["test_accuracy"] == -1.0) for r in runs] == [(1e-3, True), (3e-3, False)]


def test_a_grown_sweep_reuses_an_earlier_records_runs_once_checked(tmp_path):
    script = _load_script()
    base = ["--tasks", "spirals", "--depths", "2", "--scales", "1", "--seeds", "0"]
    base += ["--steps", "3", "--jobs", "1"]
    (tmp_path / "first").mkdir()
    first = ["--norms", "none", "--lrs", "1e-3", "--out-dir", str(tmp_path / "first")]
    assert script.main(base + first) == 0
    (earlier,) = (tmp_path / "first").glob("training-sweep-*.json")
    time.sleep(1.1)  # records are named by the second: the grown one gets a name of its own
    grown = ["--norms", "none", "dyt", "--lrs", "1e-3", "1e-2", "--out-dir", str(tmp_path)]
    assert script.main(base + grown + ["--reuse", str(earlier), "--check", "1"]) == 0
    record = grid.newest_record(tmp_path)
    name = Path(record["path"]).name
    made_in = {(r["norm"], r["lr"]): r["made_in"] for r in record["runs"]}
    assert made_in == {
        ("none", 1e-3): earlier.name,
        ("none", 1e-2): name,
        ("dyt", 1e-3): name,
        ("dyt", 1e-2): name,
    }
    assert set(record["machines"]) == {earlier.name, name}
    assert record["machines"][name]["commit"] == record["machine"]["commit"]
    assert [check["made_in"] for check in record["reuse_checks"]] == [earlier.name]
    # growing it again re-makes runs of both earlier sessions, one of each
    time.sleep(1.1)
    (tmp_path / "third").mkdir()
    third = ["--norms", "none", "dyt", "--lrs", "1e-3", "1e-2", "--seeds", "0", "1"]
    third += ["--out-dir", str(tmp_path / "third"), "--reuse", record["path"], "--check", "2"]
    assert script.main(base[:-6] + ["--steps", "3", "--jobs", "1"] + third) == 0
    checked = grid.newest_record(tmp_path / "third")["reuse_checks"]
    assert sorted(check["made_in"] for check in checked) == sorted([earlier.name, name])
    reused = grid.find_run(record, grid.Config("spirals", "none", 2, 1.0, 1e-3, 0))
    assert reused == {**json.loads(earlier.read_text())["runs"][0], "made_in": earlier.name}
    made_here = [r["cpu_seconds"] for r in record["runs"] if r["made_in"] == name]
    assert record["cpu_seconds_made_here"] == pytest.approx(sum(made_here))

    # a reused run that the code no longer makes is refused, not carried
    tampered = json.loads(earlier.read_text())
    tampered["runs"][0]["val_curve"][-1] += 0.01
    earlier.write_text(json.dumps(tampered))
    (tmp_path / "again").mkdir()
    again = grown[:-1] + [str(tmp_path / "again"), "--reuse", str(earlier), "--check", "1"]
    with pytest.raises(SystemExit, match=r"differs .* in \['val_curve'\]: not reused"):
        script.main(base + again)
    # nor is a record of another protocol (here: fewer steps per run)
    other = [a if a != "3" else "2" for a in base]
    with pytest.raises(SystemExit, match=r"ran another protocol \(steps\)"):
        script.main(other + again)


def test_no_record_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="scripts/training_sweep.py"):
        grid.newest_record(tmp_path)


def test_bad_init_scale_is_refused():
    with pytest.raises(ValueError, match="init_scale must be None or > 0"):
        MLP("none", init_scale=0.0)


def test_runs_in_parallel_processes_give_the_same_bits_as_here():
    jobs = {
        (norm, seed): dict(norm=norm, seed=seed, init_scale=2.0, **TINY)
        for norm in ("none", "layer_norm", "batch_norm")
        for seed in (0, 1)
    }
    side_by_side = training.run_all(training.train_classifier, jobs, workers=2)
    here = training.run_all(training.train_classifier, jobs, workers=1)
    assert list(side_by_side) == list(jobs)
    for key in jobs:
        np.testing.assert_array_equal(side_by_side[key].losses, here[key].losses)
        assert side_by_side[key].test_accuracy == here[key].test_accuracy
