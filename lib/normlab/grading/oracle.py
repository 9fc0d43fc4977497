"""The oracle: the one seam through which judges reach what a correct answer would be.

A judge compares what the student's code returned with expectations. Those that come from
the graders' private reference (`reference`) or from the misconceptions (`variant_outputs`,
`variants_family`) are asked of the oracle the judge is given, `judge(cases, results, oracle)`:

    oracle.reference(name, *args, **kwargs)   the reference's function `name`, e.g.
                                              reference("param_count", "rms_norm", 512)
    oracle.family(x, eps)                     {Variant: output}: every member of the family
                                              on x (float64, gamma = 1, beta = 0)
    oracle.statistics(x)                      {(axes, ddof): (mean, var)} of x, float64
    oracle.wrong(name, *args, **kwargs)       ps7's wrong implementation `name`
                                              (`variants_family`) on a case's inputs
    oracle.torch_layer_norm(x, shape, weight, bias, eps=, dy=, **member)
                                              nn.LayerNorm's output and gradients in
                                              float64, or a member's of the family
                                              (`torch_family`: ps8's module)
    oracle.torch_layer_norm_state(shape, elementwise_affine=True)
                                              a new nn.LayerNorm's state_dict, as arrays
    oracle.training_losses(run, frozen=, **member)
                                              ps8's spirals run with nn.LayerNorm (or a
                                              member) in it: the loss per step

Every argument is a case's input or a constant, never what the student returned, so the
answers for a battery are fixed before the student's code runs. The grader and a notebook's
`check` use `LIVE`, backed by the live reference and variants; a student download backs the
same methods with a replay of the answers recorded for the visible cases when it is built
(`recording.RecordedOracle`), and runs every visible check with no implementation of any
answer inside. What backs `LIVE` stays with the graders; this module computes nothing itself
and imports it when first asked, so the download carries it (a module that makes cases with
`LIVE` imports there, and never calls it).
"""

from __future__ import annotations

from functools import cache


@cache
def wrong_implementations() -> dict:
    """ps7's wrong group norms and batch-norm backwards (`variants_family`), by function name."""
    from .variants_family import BATCH_NORM_BACKWARD, GROUP_NORM

    return {f.__name__: f for f in GROUP_NORM + BATCH_NORM_BACKWARD}


class LiveOracle:
    """The oracle backed by the graders' private copy of the reference and by `variant_outputs`."""

    def reference(self, name: str, *args, **kwargs):
        from .reference import PUBLIC

        return PUBLIC[name](*args, **kwargs)

    def family(self, x, eps: float) -> dict:
        from .variant_outputs import family

        return family(x, eps)

    def statistics(self, x) -> dict:
        from .variant_outputs import statistics

        return statistics(x)

    def wrong(self, name: str, *args, **kwargs):
        return wrong_implementations()[name](*args, **kwargs)

    # ps8's expectations need torch: imported on the first question (no other assignment asks)
    def torch_layer_norm(self, x, normalized_shape, weight=None, bias=None, **options) -> dict:
        from .torch_family import layer_norm

        return layer_norm(x, normalized_shape, weight, bias, **options)

    def torch_layer_norm_state(self, normalized_shape, elementwise_affine=True) -> dict:
        from .torch_family import fresh_state

        return fresh_state(normalized_shape, elementwise_affine)

    def training_losses(self, run: dict, **member):
        from .torch_family import training_losses

        return training_losses(run, **member)


LIVE = LiveOracle()
