"""The learning-rate warm-up: start tiny, ramp up linearly, then hold.

Vaswani et al. (2017, arXiv:1706.03762, eq. 3) raise the rate linearly for the first 4000
steps; Xiong et al. (2020, arXiv:2002.04745) show why post-LN needs that ramp and pre-LN may
not. Here the rate after the ramp stays constant, so that a run with warm-up and one without
differ only in their first steps.
"""

from __future__ import annotations


def warmup_lr(step: int, base_lr: float, warmup_steps: int) -> float:
    """Learning rate of step 0, 1, ...: base_lr * (step + 1) / warmup_steps, capped at base_lr.

    warmup_steps = 0 means no warm-up: base_lr from the first step.
    """
    if step < 0 or warmup_steps < 0:
        raise ValueError(f"need step >= 0 and warmup_steps >= 0; got {step}, {warmup_steps}")
    if not base_lr > 0:
        raise ValueError(f"base_lr must be > 0; got {base_lr!r}")
    if step >= warmup_steps:
        return base_lr
    # lr_t = base_lr * (t + 1) / W for t < W: the first step already moves, by base_lr / W
    return base_lr * (step + 1) / warmup_steps
