"""The recorded results the speed chapter reads, and the helpers that show them."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure

from normlab.bench import latest_result, summarize
from normlab.bench.plots import gb_per_s_figure, series_label
from normlab.bench.report import machine_label, markdown_table

RESULTS = Path(__file__).resolve().parents[2] / "results"
CPU_IMPLS = {"numpy_naive", "numpy_fast", "numpy_copy", "torch_cpu"}


@pytest.fixture(scope="module")
def cpu_doc():
    doc = latest_result(RESULTS, "cpu")
    if doc is None:
        pytest.fail("results/ holds no bench-cpu-*.json: the speed chapter needs one")
    return doc


def test_the_recorded_cpu_run_is_labelled(cpu_doc):
    machine = cpu_doc["machine"]
    for key in ("cpu_model", "date_utc", "numpy", "torch", "caches", "load_average_start"):
        assert machine.get(key), key
    assert cpu_doc["settings"]["freed_memory_kept"] is True
    label = machine_label(cpu_doc)
    assert machine["cpu_model"] in label and machine["date_utc"][:10] in label


def test_the_recorded_cpu_run_is_past_cache_and_complete(cpu_doc):
    records = [r for r in cpu_doc["records"] if r["device"] == "cpu"]
    assert {r["impl"] for r in records if r["d_model"] == 768} == CPU_IMPLS
    for r in records:
        assert r["bytes_moved"] == 2 * r["rows"] * r["d_model"] * 4
        assert r["gb_per_s"] == pytest.approx(r["bytes_moved"] / r["seconds_median"] / 1e9)
        assert r["bytes_moved"] / 2 >= 64 * 2**20  # x alone is past a 32 MiB cache, twice over
        assert r["max_abs_error"] is not None and r["max_abs_error"] < 1e-5
    summary = summarize(records)["cpu_float32"]
    assert summary == cpu_doc["summary"]["cpu_float32"]


def test_a_gpu_result_when_recorded_names_its_gpu():
    doc = latest_result(RESULTS, "cuda")
    if doc is None:
        pytest.skip("no GPU result recorded yet (the chapter says so)")
    assert doc["machine"]["gpu"]
    assert {r["impl"] for r in doc["records"] if r["device"] == "cuda"} == {
        "torch_cuda",
        "torch_cuda_copy",
    }


def test_figure_and_table_show_every_record(cpu_doc):
    records = cpu_doc["records"]
    fig = gb_per_s_figure(records, "cpu", "float32")
    assert isinstance(fig, Figure)
    bars = [p for p in fig.axes[0].patches]
    assert len(bars) == len([r for r in records if r["device"] == "cpu"])
    table = markdown_table(records)
    assert len(table.splitlines()) == 2 + len(records)
    assert all(series_label(r) in table for r in records)
    with pytest.raises(ValueError, match="no cuda float16 records"):
        gb_per_s_figure(records, "cuda", "float16")


def test_series_labels_tell_threads_and_kernels_apart():
    base = {"impl": "torch_cpu", "kernel": "torch.nn.functional.layer_norm"}
    assert series_label(base | {"threads": 1}) == "torch_cpu, 1 thread"
    assert series_label(base | {"threads": 16}) == "torch_cpu, 16 threads"
    twins = {"impl": "torch_cuda", "kernel": "normlab.torch_twins.layer_norm", "threads": None}
    assert series_label(twins) == "torch_cuda, torch_twins"
