"""ps1_by_hand's batteries: each cell reads the values the student typed, about the student's
own variant (`normlab.grading.pools`), which every case carries in its meta."""

from __future__ import annotations

from normlab_sandbox.cases import Case


def reads(*targets: str):
    """make(rng, hidden, variant): one case reading each target, its meta the variant's record
    and d_model; the same visible and hidden."""

    def make(rng, hidden: bool, variant: dict) -> list[Case]:
        meta = {"record": tuple(variant["record"]), "d_model": int(variant["d_model"])}
        return [Case(name, "get", tag="value", label=name, meta=meta) for name in targets]

    return make


BATTERIES = {
    "mean": reads("mean_r"),
    "variance": reads("var_r"),
    "normalized": reads("normalized_r"),
    "eps_effect": reads("normalized_r_eps"),
    "param_counts": reads("params_gain_bias", "params_gain_only", "params_rms"),
}
