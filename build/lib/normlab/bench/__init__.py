"""normlab.bench: LayerNorm forward, timed against the memory-bandwidth limit.

LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) reads each record once and
writes it once; everything else it does is a few operations per element. On any
modern machine that is far less work than moving the bytes, so the floor on its
time is bytes moved / bandwidth, and the best bandwidth a program can get is what a
plain copy of the same bytes gets. The bench reports every implementation's GB/s
and its fraction of that copy, on the CPU (NumPy, torch) and on a GPU (torch).

    python -m normlab.bench              # the table, plus results/bench-*.json and .csv
    python -m normlab.bench --json       # the records as JSON on stdout
    python -m normlab.bench --gpu-suite  # the recorded run on a CUDA machine

Modules: impls (what is timed), verify (against the float64 reference), timing
(interleaved rounds), memory (page faults kept out), cuda (events), machine,
report (table, files), run (the loop), plots (the speed chapter's figures).
"""

from .report import latest_result, load_result, summarize
from .run import BenchConfig, BenchResult, run_bench

__all__ = ["BenchConfig", "BenchResult", "latest_result", "load_result", "run_bench", "summarize"]
