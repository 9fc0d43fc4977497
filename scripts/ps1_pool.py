"""Make ps1's pool of per-student variants: records that are pleasant by hand, and widths.

    .venv/bin/python scripts/ps1_pool.py            # prints the pool as JSON (review it)
    .venv/bin/python scripts/ps1_pool.py --write    # writes lib/normlab/grading/ps1_pool.json

Each variant is a record of d integer features from 0 to 20 (d is 5, 6 or 8; the chapters work d
= 4) whose mean is a whole number and whose population variance is a perfect square (the
standard deviation a whole number from 2 to 6: at 1 the variance is the standard deviation, and
a student who confuses the two would pass), so every normalized value is a fraction of small
denominator; and a d_model for Part C, a width no chapter works (Ba, Kiros and Hinton, 2016,
arXiv:1607.06450, count 2 d_model parameters for LayerNorm's gain and bias). The draw is seeded:
the same script makes the same pool. The pool is part of the course's source: reviewed once, it
only ever grows by appending (`normlab.grading.pools`: a student's variant is the slot their id
hashes to, and slots never move), and tests/grading/test_pools.py checks that every variant is
workable by hand."""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from pathlib import Path

SIZES = {5: 56, 6: 100, 8: 100}  # d: how many variants of it (d = 5 has few patterns)
VALUES = range(0, 21)  # whole features from 0 to 20
STDS = (2, 3, 4, 5, 6)  # not 1: there var_r = std, and (r - mean) / std = r - mean
# widths no chapter works in full (the chapters use 4, 16, 64, 256, 512, 768, 1024, 4096)
D_MODELS = (96, 160, 192, 224, 288, 320, 352, 416, 448, 480, 544, 576, 608, 640, 704, 800, 896)
# records the chapters work, in any order: never a variant
WORKED = {
    (1, 2, 3, 4),
    (2, 4, 6, 8),
    (0, 0, 0, 4),
    (3, 3, 3, 3, 8),
    (1, 2, 3, 10),
    (3, 3, 3, 3),
}
COUNT = 256
OUT = Path(__file__).resolve().parents[1] / "lib" / "normlab" / "grading" / "ps1_pool.json"


def patterns(d: int) -> list[tuple[int, ...]]:
    """Every multiset of d whole deviations from a mean (|e| <= 10) that sum to zero and whose
    squares average to a perfect square s^2 (s in STDS), with at least d - 2 distinct values."""
    squares = {d * s * s for s in STDS}
    return [
        deviations
        for deviations in itertools.combinations_with_replacement(range(-10, 11), d)
        if sum(deviations) == 0
        and sum(e * e for e in deviations) in squares
        and len(set(deviations)) >= d - 2
    ]


def records(rng: random.Random, d: int, wanted: int) -> list[list[int]]:
    """`wanted` distinct records of d features: a pattern of deviations around a whole mean,
    every feature from 0 to 20, the features in a shuffled order."""
    options = [
        tuple(mean + e for e in deviations)
        for deviations in patterns(d)
        for mean in range(min(VALUES), max(VALUES) + 1)
        if min(VALUES) <= mean + min(deviations) and mean + max(deviations) <= max(VALUES)
    ]
    options = [o for o in options if o not in WORKED]
    found = []
    for record in rng.sample(options, wanted):
        shuffled = list(record)
        rng.shuffle(shuffled)
        found.append(shuffled)
    return found


def pool(seed: int = 20261201) -> list[dict]:
    """COUNT variants: records of each size in SIZES' proportions, interleaved, each with a
    d_model of D_MODELS."""
    rng = random.Random(seed)
    per_size = [records(rng, d, wanted) for d, wanted in SIZES.items()]
    mixed = [r for group in itertools.zip_longest(*per_size) for r in group if r][:COUNT]
    return [{"record": record, "d_model": rng.choice(D_MODELS)} for record in mixed]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUT.name}")
    args = parser.parse_args(argv)
    lines = ",\n".join(json.dumps(variant) for variant in pool())
    text = f'{{"slots": {COUNT}, "variants": [\n{lines}\n]}}\n'
    if args.write:
        OUT.write_text(text)
        print(f"wrote {OUT}", file=sys.stderr)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
