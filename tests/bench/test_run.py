"""The bench end to end at a tiny size, and its parts that need no GPU."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import normlab.bench.impls as impls_module
from normlab.bench import BenchConfig, latest_result, run_bench, summarize
from normlab.bench.__main__ import config_from, parse_args
from normlab.bench.cuda import make_inputs, time_cuda, torch_device_impls
from normlab.bench.impls import time_cpu, to_float64
from normlab.bench.report import format_table, write_files
from normlab.bench.timing import minor_page_faults
from normlab.bench.verify import CheckFailed, check_layer_norm

REPO = Path(__file__).resolve().parents[2]
CONTRACT_KEYS = ["impl", "device", "rows", "d_model", "dtype", "seconds_median", "gb_per_s"]
CPU_IMPLS = {"numpy_naive", "numpy_fast", "numpy_copy", "torch_cpu"}


def tiny(**overrides) -> BenchConfig:
    # keep_freed_memory=False: do not change malloc in the test process (the CLI test does it)
    settings = dict(
        d_models=(8, 300), rows=40, repeats=2, warmup=1, devices=("cpu",), progress=False,
        keep_freed_memory=False,
    )  # fmt: skip
    return BenchConfig(**(settings | overrides))


def test_cli_prints_json_records_and_writes_labelled_files(tmp_path):
    """`python -m normlab.bench --json` at a tiny size: the contract, end to end."""
    done = subprocess.run(
        [sys.executable, "-m", "normlab.bench", "--json", "--rows", "40", "--d-model", "8", "300"]
        + ["--repeats", "2", "--warmup", "1", "--device", "cpu", "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    records = json.loads(done.stdout)
    assert isinstance(records, list)
    assert {r["impl"] for r in records} == CPU_IMPLS
    assert {r["d_model"] for r in records} == {8, 300}
    for r in records:
        assert list(r)[:7] == CONTRACT_KEYS
        assert r["seconds_median"] > 0
        assert r["gb_per_s"] == pytest.approx(
            2 * r["rows"] * r["d_model"] * 4 / r["seconds_median"] / 1e9
        )
    assert {r["threads"] for r in records if r["impl"] == "torch_cpu"} >= {1}
    assert "numpy_fast" in done.stderr and "x copy" in done.stderr  # the table, on stderr

    document = json.loads(next(tmp_path.glob("bench-cpu-*.json")).read_text())
    assert document["records"] == records
    assert document["machine"]["cpu_model"] and document["machine"]["numpy"] == np.__version__
    assert document["machine"]["torch"] == torch.__version__
    assert "numpy_fast_vs_numpy_naive" in document["summary"]["cpu_float32"]
    lines = next(tmp_path.glob("bench-cpu-*.csv")).read_text().splitlines()
    assert any(line.startswith("# machine.cpu_model:") for line in lines)
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert len(rows) == len(records) and rows[0]["impl"] == records[0]["impl"]


def test_every_record_is_checked_and_copies_bound_the_fraction():
    result = run_bench(tiny(d_models=(300,)))
    by_impl = {(r["impl"], r["threads"]): r for r in result.records}
    assert by_impl[("numpy_copy", None)]["fraction_of_copy"] == 1.0
    assert by_impl[("numpy_copy", None)]["max_abs_error"] == 0.0
    for r in result.records:
        assert r["repeats"] == 2 and r["seconds_min"] <= r["seconds_median"] <= r["seconds_max"]
        if r["impl"] != "numpy_copy":
            assert 0 < r["max_abs_error"] < 1e-5  # float32 rounding, checked before timing
    assert result.settings["torch_threads"][0] == 1


def test_a_wrong_implementation_is_refused_before_it_is_timed(monkeypatch):
    def off_by_a_little(x, gamma, beta, eps, out):
        out[...] = 1.01 * impls_module.layer_norm(x, gamma, beta, eps)

    monkeypatch.setattr(impls_module, "layer_norm_fast", off_by_a_little)
    with pytest.raises(CheckFailed, match=r"numpy_fast .* disagrees"):
        run_bench(tiny())


def test_impls_filter_and_sizes_from_mib():
    result = run_bench(
        tiny(rows=None, mib=0.05, d_models=(64,), impls=("numpy_fast", "numpy_copy"))
    )
    assert {r["impl"] for r in result.records} == {"numpy_fast", "numpy_copy"}
    assert result.records[0]["rows"] == int(0.05 * 2**20) // (64 * 4)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_the_gpu_code_path_runs_on_cpu_tensors(dtype):
    """torch_device_impls is what runs on a GPU; here it runs on the CPU with a CPU timer."""
    x, gamma, beta = make_inputs(50, 256, dtype, "cpu", seed=1)
    impls = torch_device_impls(x, gamma, beta, 1e-5, timer=time_cpu)
    assert [i.impl for i in impls] == ["torch_cuda", "torch_cuda", "torch_cuda_copy"]
    assert impls[0].kernel != impls[1].kernel  # torch's fused kernel, then the torch_twins one
    idx = np.array([0, 7, 49])
    for impl in impls:
        assert impl.timer(impl.run) > 0
        y = impl.output_rows(idx)
        if impl.is_copy:
            assert np.array_equal(y, to_float64(x)[idx])
        else:
            check_layer_norm(
                y, to_float64(x)[idx], to_float64(gamma), to_float64(beta), 1e-5, dtype, impl.label
            )


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_events_time_a_gpu_call():
    x = torch.ones(1024, 1024, device="cuda")
    assert time_cuda(lambda: x.mul_(1.0)) > 0


def test_summary_ratios_are_ratios_of_median_times():
    def rec(impl, seconds, threads=None, copy_fraction=0.5):
        return dict(impl=impl, device="cpu", dtype="float32", d_model=768, seconds_median=seconds,
                    gb_per_s=1 / seconds, threads=threads, fraction_of_copy=copy_fraction,
                    kernel="k")  # fmt: skip

    records = [rec("numpy_naive", 4.0), rec("numpy_fast", 2.0), rec("torch_cpu", 1.0, threads=1)]
    records.append(rec("torch_cpu", 0.5, threads=2))
    cpu = summarize(records)["cpu_float32"]
    assert cpu["numpy_fast_vs_numpy_naive"] == 2.0
    assert cpu["numpy_fast_vs_torch_cpu_1_thread"] == 0.5
    assert "x copy" in format_table(
        [r | {"rows": 1, "page_faults_per_call": None, "threads": r["threads"]} for r in records]
    )


def test_latest_result_is_the_newest_file_of_its_kind(tmp_path):
    for date in ("2026-01-02T00:00:00+00:00", "2026-03-04T00:00:00+00:00"):
        doc = {"machine": {"date_utc": date}, "settings": {}, "records": [], "summary": {}}
        write_files(doc, tmp_path)
    assert latest_result(tmp_path, "cpu")["machine"]["date_utc"].startswith("2026-03-04")
    assert latest_result(tmp_path, "cuda") is None


def test_memory_helpers_report_what_they_did():
    code = "from normlab.bench.timing import keep_freed_memory as k; print(k())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    applies = sys.platform.startswith("linux")  # glibc; elsewhere it must say False
    assert done.stdout.strip() == ("True" if applies else "False")
    faults = minor_page_faults()
    assert faults is None or faults >= 0


def test_gpu_suite_asks_for_both_devices_and_more_models():
    cfg = config_from(parse_args(["--gpu-suite", "--cuda-repeats", "7"]))
    assert cfg.devices == ("cpu", "cuda")
    assert cfg.d_models == (64, 768, 1024, 4096, 8192)
    assert cfg.cuda_dtypes == ("float32", "float16", "bfloat16")
    assert cfg.cuda_repeats == 7
    assert (
        cfg.keep_freed_memory and not config_from(parse_args(["--fresh-memory"])).keep_freed_memory
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without GPU")
def test_without_a_gpu_the_gpu_run_refuses_clearly():
    with pytest.raises(RuntimeError, match="CUDA was asked for"):
        run_bench(tiny(devices=("cuda",)))
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "gpu_bench.sh")],
        env=os.environ | {"PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "CUDA build of torch" in done.stderr
