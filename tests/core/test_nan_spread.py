"""normlab.nan_spread: one NaN record reaches every weight in one training step (chapter 11)."""

from __future__ import annotations

from normlab.nan_spread import one_step_with_a_nan


def test_the_forward_keeps_the_nan_in_its_row_and_one_step_spreads_it_everywhere():
    counts = one_step_with_a_nan(rows=8, d_in=4, d_out=3)
    assert counts["nan_rows_forward"] == 1
    assert counts["loss_is_nan"] is True
    assert counts["weights"] == 12 and counts["nan_weight_grads"] == 12
    assert counts["nan_rows_next_batch"] == counts["rows"] == 8


def test_the_counts_follow_the_sizes():
    counts = one_step_with_a_nan(rows=5, d_in=2, d_out=6, seed=1)
    assert counts["nan_rows_forward"] == 1
    assert counts["nan_weight_grads"] == counts["weights"] == 12
    assert counts["nan_rows_next_batch"] == 5
