"""Describe the machine a benchmark ran on: CPU, caches, GPU, versions, date, load."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cache_sizes() -> dict[str, str]:
    """Cache sizes of CPU 0 by level, e.g. {'L1d': '32K', 'L2': '1024K', 'L3': '32768K'}."""
    found = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        found[f"L{level}{suffix}"] = size
    return found


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages: other work on the machine skews timings."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def describe_machine(torch_module=None) -> dict:
    """Everything needed to label a result: hardware, software versions, date (UTC)."""
    import numpy as np

    info = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "caches": cache_sizes(),
        "memory_gib": memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "load_average_start": load_average(),
    }
    if torch_module is not None:
        info["torch"] = torch_module.__version__
        info["torch_threads_default"] = torch_module.get_num_threads()
        if torch_module.cuda.is_available():
            props = torch_module.cuda.get_device_properties(0)
            info["gpu"] = torch_module.cuda.get_device_name(0)
            info["gpu_memory_gib"] = round(props.total_memory / 2**30, 1)
            info["cuda"] = torch_module.version.cuda
        else:
            info["gpu"] = None
    return info
