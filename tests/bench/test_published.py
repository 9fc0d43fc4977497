"""The speed chapter's cited GPU figures, its roofline and its GPU section: published numbers
carry their source and are labelled as such; our own runs are shown whenever they exist."""

from __future__ import annotations

import copy
import re
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from normlab.bench import latest_result, published
from normlab.bench.plots import layer_norm_intensity, matmul_intensity, roofline_figure
from normlab.bench.report import gpu_status
from normlab.bench.summation import row_sum_errors

RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.fixture(scope="module")
def cited():
    return published.load()


@pytest.fixture(scope="module")
def cpu_doc():
    return latest_result(RESULTS, "cpu")


def _fake_gpu_doc(cpu_doc):
    """A GPU result shaped like scripts/gpu_bench.sh's, built from the CPU records."""
    doc = copy.deepcopy(cpu_doc)
    doc["machine"]["gpu"] = "Test GPU 80GB"
    doc["path"] = "results/bench-cuda-20990101T000000Z.json"
    cuda = []
    for r in cpu_doc["records"]:
        if r["impl"] == "numpy_copy":
            cuda.append(r | {"impl": "torch_cuda_copy", "device": "cuda", "gb_per_s": 1800.0})
        if r["impl"] == "torch_cpu" and r["threads"] == 1:
            fused = {"impl": "torch_cuda", "device": "cuda", "threads": None, "gb_per_s": 1500.0}
            cuda.append(r | fused | {"kernel": "torch.nn.functional.layer_norm"})
    doc["records"] = doc["records"] + cuda
    return doc


def test_every_published_measurement_carries_its_source_hardware_and_date(cited):
    assert cited["measurements"], "no published measurement to show"
    for m in cited["measurements"]:
        assert re.fullmatch(r"https://\S+", m["source"]), m
        assert date.fromisoformat(m["date"]) <= date.today()
        for key in ("citation", "hardware", "what", "shape", "dtype"):
            assert m[key].strip(), (key, m)
        assert "torch" in m["what"].lower(), "only PyTorch's own LayerNorm is cited here"
        low, high = published.fraction_of_bandwidth(cited, m)
        assert 0 < low <= high < 1, "a LayerNorm cannot move more than its GPU's datasheet peak"


def test_every_datasheet_is_cited_and_unknown_gpus_fail_clearly(cited):
    for sheet in cited["datasheets"]:
        assert sheet["source"].startswith("https://") and sheet["citation"]
        assert sheet["memory_gb_per_s"] > 0 and sheet["fp32_tflop_per_s"] > 0
    with pytest.raises(KeyError, match="no datasheet for 'H100'"):
        published.datasheet(cited, "H100")


def test_the_table_links_and_labels_every_row_as_published(cited):
    table = published.markdown_table(cited)
    rows = table.splitlines()[2:]
    assert len(rows) == len(cited["measurements"])
    for row, m in zip(rows, cited["measurements"], strict=True):
        assert f"]({m['source']}) (published)" in row
        assert f"{m['gb_per_s']:.0f}" in row
    assert "ours" not in table and "measured" not in table.lower()


def test_layer_norm_and_matmul_intensities():
    assert layer_norm_intensity("float32") == 1.0  # 8 FLOP over 4 bytes read and 4 written
    assert layer_norm_intensity("bfloat16") == 2.0
    assert matmul_intensity(4096, "float16") == pytest.approx(2 * 4096**3 / (3 * 4096**2 * 2))


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_the_roofline_labels_the_datasheet_as_published_and_our_runs_as_measured(cited, cpu_doc):
    a100 = published.datasheet(cited, "NVIDIA A100 40GB")
    alone = _legend(roofline_figure(a100))
    assert len(alone) == 2 and all("datasheet" in t for t in alone)
    labels = _legend(roofline_figure(a100, cpu_doc))
    ours = [t for t in labels if "measured, ours" in t]
    assert {"numpy_naive", "numpy_fast", "torch_cpu"} <= {t.split(",")[0] for t in ours}
    assert any("copy at" in t for t in ours)
    assert not any("cuda" in t for t in labels)


def test_a_recorded_gpu_run_appears_beside_the_published_roof(cited, cpu_doc):
    gpu_doc = _fake_gpu_doc(cpu_doc)
    a100 = published.datasheet(cited, "NVIDIA A100 40GB")
    labels = _legend(roofline_figure(a100, cpu_doc, gpu_doc))
    gpu = [t for t in labels if "torch_cuda" in t or "Test GPU" in t]
    assert any("Test GPU 80GB: copy at 1800 GB/s (measured, ours" in t for t in gpu), labels
    assert any(t.startswith("torch_cuda, F.layer_norm, float32") for t in gpu), labels
    assert any("datasheet" in t for t in labels)  # the published roof stays beside ours


def test_the_gpu_section_says_which_numbers_are_ours(cpu_doc):
    none_yet = gpu_status(None)
    assert "No GPU run of this course has been recorded yet" in none_yet
    assert "scripts/gpu_bench.sh" in none_yet and "published" in none_yet
    recorded = gpu_status(_fake_gpu_doc(cpu_doc))
    assert recorded.startswith("**Our GPU run**") and "Test GPU 80GB" in recorded
    assert "bench-cuda-20990101T000000Z.json" in recorded


def test_summation_orders_are_measured_against_exact_sums():
    x = np.random.default_rng(1).standard_cauchy((200, 1024)).astype(np.float32)
    errors = row_sum_errors(x)
    assert set(errors) == {"pairwise (np.sum)", "BLAS (x @ ones)"}
    assert all(0 <= e < 1e-5 for e in errors.values())
    exact = np.ones((3, 8), np.float32)  # small integers sum exactly in any order
    assert row_sum_errors(exact) == {"pairwise (np.sum)": 0.0, "BLAS (x @ ones)": 0.0}
    with pytest.raises(ValueError, match="2-d float32"):
        row_sum_errors(x.astype(np.float64))
