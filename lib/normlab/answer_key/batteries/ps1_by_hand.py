"""ps1_by_hand's batteries: each cell reads the values the student typed."""

from __future__ import annotations

from .values import gets

BATTERIES = {
    "mean": gets("mean_r"),
    "population_variance": gets("var_r"),
    "normalized": gets("normalized_r"),
    "eps_effect": gets("normalized_r_eps"),
    "param_counts": gets("params_gain_bias", "params_gain_only", "params_rms"),
}
