"""The live oracle: what backs every judge's expectations where the answer key is installed.

`normlab.grading.oracle` describes the oracle a judge is given and holds it to the questions
its check declared; `LIVE` answers them here, from the graders' private copy of the reference
(`reference`), the family of variants (`variant_outputs`), ps7's wrong implementations
(`wrong_implementations`) and ps8's nn.LayerNorm family in torch (`torch_layer_norms`,
imported on the first torch question: no other assignment asks one). The student download
has none of this: it replays the answers recorded for its visible cases
(`normlab.grading.recording`).
"""

from __future__ import annotations

from functools import cache

from ..grading.oracle import Answering


@cache
def wrong_implementations() -> dict:
    """ps7's wrong group norms and batch-norm backwards, by function name."""
    from .wrong_implementations import BATCH_NORM_BACKWARD, GROUP_NORM

    return {f.__name__: f for f in GROUP_NORM + BATCH_NORM_BACKWARD}


class LiveOracle(Answering):
    """The oracle backed by the answer key (see `normlab.grading.oracle` for the methods)."""

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

    def torch_layer_norm(self, x, normalized_shape, weight=None, bias=None, **options) -> dict:
        from .torch_layer_norms import layer_norm

        return layer_norm(x, normalized_shape, weight, bias, **options)

    def torch_layer_norm_state(self, normalized_shape, elementwise_affine=True) -> dict:
        from .torch_layer_norms import fresh_state

        return fresh_state(normalized_shape, elementwise_affine)

    def training_losses(self, run: dict, **member):
        from .torch_layer_norms import training_losses

        return training_losses(run, **member)


LIVE = LiveOracle()
