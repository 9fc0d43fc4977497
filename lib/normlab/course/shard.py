"""`--shard K/N`: a stable K-th of N parts of a class, so N hosts or processes share it.

A student belongs to part `sha256(student id) mod N`, whatever the other students are and in
whatever order they come, so N graders started with K = 0 .. N-1 (a Slurm job array's
`SLURM_ARRAY_TASK_ID`, a Kubernetes indexed Job's `JOB_COMPLETION_INDEX`) grade every
submission exactly once between them. K counts from 0, as both schedulers do.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shard:
    """Part `index` of `count` (0 <= index < count)."""

    index: int
    count: int

    def holds(self, student: str) -> bool:
        digest = hashlib.sha256(student.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """'K/N' -> Shard(K, N); a clear error for anything else."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not found:
        raise ValueError(f"--shard takes K/N, two whole numbers such as 0/4; got {text!r}")
    index, count = int(found[1]), int(found[2])
    if count < 1:
        raise ValueError(f"--shard {text}: N must be at least 1")
    if index >= count:
        raise ValueError(
            f"--shard {text}: K counts from 0, so it must be 0 to {count - 1} (as "
            f"SLURM_ARRAY_TASK_ID from --array=0-{count - 1}, or JOB_COMPLETION_INDEX)"
        )
    return Shard(index, count)
