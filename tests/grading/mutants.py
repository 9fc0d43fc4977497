"""One mutant per misconception: the instructor's answers with one typical mistake planted.

Every check of every assignment has at least one mutant whose misconception it names (its
`cell`, the check object); a mutant may cost more cells than that one (`also`; `lost`: the
grade_ids of every cell it must lose, `cell`'s included), as a student's mistake can. ps1's
mutants are its table of typical wrong answers, several per question, each with words its
message must contain (`says`); ps3 Part C's, ps7's and ps8's are course_bank's planted bugs
(`PS3C_BUGS`, `PS7_BUGS`, `PS8_BUGS`), one per cell.

Each mutant's notebook is judged once in process (`graded_once`: the graded notebook, hidden
tests back, run cell by cell in a student's kernel), and that one run proves every property
(test_mutants.py): it loses exactly its cells by nbgrader's rule, its visible verdicts lose
`lost` and so do its hidden ones (the same bill), no message gives an answer away, and Run All
reaches the summary. The kernel witnesses (`KERNEL_WITNESSES`) run again in real kernels
(test_nbgrader.py's `nbgrader autograde`, test_sandbox_class.py's grader, and the first of
each assignment in test_run_all.py's Restart and Run All), which show that a kernel adds
nothing the in-process run misses. `answers(mutant)` is the answer cells' sources by grade_id,
the instructor's where the mutant changes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from cells import PS1, PS2, PS3, PS4, PS5, PS6, PS7, PS8, PS9
from course_bank import (
    BANK,
    BWD_RETURN,
    DY_IN_PLACE,
    DYT,
    DYT_BWD,
    PS3C_BUGS,
    PS3C_CELLS,
    PS7_BUGS,
    PS8_BUGS,
    PS8_CELLS,
    TANH,
)
from course_helpers import (
    TEST_STUDENT,
    cells_lost,
    nbgrader_meta,
    read,
    release_path,
    source_path,
    with_bug,
)
from in_process import NotebookRun, graded, run_cells

from normlab.grading import CheckSpec
from normlab.grading.catalog import cells_of


@dataclass(frozen=True)
class Mutant:
    name: str  # the mistake, in a few words
    cell: CheckSpec  # the check whose misconception it holds
    edits: tuple = ()  # (answer cell's grade_id, old text, new text), as course_bank's bugs
    values: dict = field(default_factory=dict)  # ps1: name -> the expression typed instead
    also: frozenset = frozenset()  # the other checks whose cells it loses
    says: str = ""  # words the message of `cell` contains

    @property
    def assignment(self) -> str:
        return self.cell.assignment

    @property
    def lost(self) -> frozenset[str]:
        """The grade_ids of the cells it loses (a reuse cell's costs its function's every
        cell)."""
        return cells_lost(self.also | {self.cell})

    @property
    def lost_at_grading(self) -> frozenset[str]:
        """The grade_ids of the cells it loses when graded: the same as the visible battery's,
        the bill the notebook's summary gives (issue 46: the same rules on both batteries)."""
        return self.lost

    @property
    def id(self) -> str:
        return f"{self.assignment}:{self.name}"


# ps1: each value typed independently of the others, so one wrong value costs one cell
PS1_CELLS = {
    "stats_answer": ("mean_r", "var_r"),
    "normalized_answer": ("normalized_r", "normalized_r_eps"),
    "params_answer": ("params_gain_bias", "params_gain_only", "params_rms"),
}
PS1_RIGHT = {  # written as code: right for every student's variant
    "mean_r": "r.sum() / r.size",
    "var_r": "((r - r.mean()) ** 2).mean()",
    "normalized_r": "(r - r.mean()) / r.std()",
    "normalized_r_eps": "(r - r.mean()) / np.sqrt(r.var() + 1e-5)",
    "params_gain_bias": "2 * d_model",
    "params_gain_only": "d_model",
    "params_rms": "d_model",
}


def _ps1(name: str, cell: CheckSpec, values: dict, says: str) -> Mutant:
    return Mutant(name, cell, values=values, says=says)


# each written for any variant (whole means and variances: none is a rounding of another);
# the in-process runs are TEST_STUDENT's, whose normalized values are thirds
PS1_MUTANTS = [
    _ps1("sum divided by d - 1", PS1.mean, {"mean_r": "r.sum() / (r.size - 1)"}, "d - 1"),
    _ps1("the sum", PS1.mean, {"mean_r": "r.sum()"}, "sum of the features"),
    _ps1("mean of the squares", PS1.mean, {"mean_r": "(r ** 2).mean()"}, "squares"),
    _ps1("std for variance", PS1.variance, {"var_r": "r.std()"}, "standard deviation"),
    _ps1("sample variance", PS1.variance, {"var_r": "r.var(ddof=1)"}, "d - 1"),
    _ps1("sample std", PS1.variance, {"var_r": "r.std(ddof=1)"}, "sample standard"),
    _ps1(
        "uncentred mean of squares",
        PS1.variance,
        {"var_r": "(r ** 2).mean()"},
        "squares of r itself",
    ),
    _ps1(
        "sum of squared deviations",
        PS1.variance,
        {"var_r": "((r - r.mean()) ** 2).sum()"},
        "sum of the squared",
    ),
    _ps1(
        "mean absolute deviation", PS1.variance, {"var_r": "abs(r - r.mean()).mean()"}, "absolute"
    ),
    _ps1("eps in the variance", PS1.variance, {"var_r": "r.var() + 1e-5"}, "eps"),
    _ps1(
        "divided by the sample std",
        PS1.normalized,
        {"normalized_r": "(r - r.mean()) / r.std(ddof=1)"},
        "sample standard deviation",
    ),
    _ps1(
        "divided by the variance",
        PS1.normalized,
        {"normalized_r": "(r - r.mean()) / r.var()"},
        "square root",
    ),
    _ps1("not centred", PS1.normalized, {"normalized_r": "r / r.std()"}, "subtract the mean"),
    _ps1("centred, not scaled", PS1.normalized, {"normalized_r": "r - r.mean()"}, "not scaled"),
    _ps1(
        "normalized rounded",
        PS1.normalized,
        {"normalized_r": "np.round((r - r.mean()) / r.std(), 3)"},
        "rounded",
    ),
    _ps1(
        "eps ignored",
        PS1.eps_effect,
        {"normalized_r_eps": "(r - r.mean()) / r.std()"},
        "without eps",
    ),
    _ps1(
        "eps outside the root",
        PS1.eps_effect,
        {"normalized_r_eps": "(r - r.mean()) / (r.std() + 1e-5)"},
        "outside the square root",
    ),
    _ps1(
        "eps added to the output",
        PS1.eps_effect,
        {"normalized_r_eps": "(r - r.mean()) / r.std() + 1e-5"},
        "added to the output",
    ),
    _ps1(
        "wrong eps",
        PS1.eps_effect,
        {"normalized_r_eps": "(r - r.mean()) / np.sqrt(r.var() + 1e-6)"},
        "eps = 1e-6",
    ),
    _ps1(
        "eps effect rounded away",
        PS1.eps_effect,
        {"normalized_r_eps": "np.round((r - r.mean()) / np.sqrt(r.var() + 1e-5), 4)"},
        "rounded",
    ),
    _ps1(
        "sample variance under eps",
        PS1.eps_effect,
        {"normalized_r_eps": "(r - r.mean()) / np.sqrt(r.var(ddof=1) + 1e-5)"},
        "sample variance",
    ),
    _ps1("gain only for gain and bias", PS1.param_counts, {"params_gain_bias": "d_model"}, "both"),
    _ps1("one gain and one bias", PS1.param_counts, {"params_gain_bias": "2"}, "per feature"),
    _ps1("bias counted anyway", PS1.param_counts, {"params_gain_only": "2 * d_model"}, "bias"),
    _ps1("a bias for RMSNorm", PS1.param_counts, {"params_rms": "2 * d_model"}, "no"),
    _ps1("counted for the record", PS1.param_counts, {"params_rms": "r.size"}, "Part A"),
    _ps1("a matrix", PS1.param_counts, {"params_rms": "d_model ** 2"}, "matrix"),
]

ROW, LN = "row_stats_answer", "layer_norm_answer"
BN, WIT = "batch_norm_answer", "witness_answer"
RMS, COUNTS = "rms_norm_answer", "param_counts_answer"
BWD = "backward_answer"
VAR, TIMER = "stable_variance_answer", "time_median_answer"
WITNESS_CATCHES = frozenset(
    {
        PS3.witness_catches_axis,
        PS3.witness_catches_sample_variance,
        PS3.witness_catches_eps,
        PS3.witness_catches_centering,
        PS3.witness_catches_cancellation,
    }
)


MEAN_TEST = (
    "        if not np.allclose(y.mean(axis=-1), 0.0, atol=1e-6):\n            return False\n"
)
VAR_TEST = "        if not np.allclose(y.var(axis=-1), 1.0, atol=1e-4):\n            return False\n"
EPS_VAR_TEST = (
    "        if abs(yp[0, 0].var() - expected) > 1e-3 * expected:\n            return False\n"
)
SOLUTION_START = "    x = np.asarray(x)\n    dtype"  # the first lines of ps2-ps5's, ps7's answers


def _before(cell: str, anchor: str, new: str) -> tuple[str, str, str]:
    """An edit that puts `new` right before `anchor` in the answer cell."""
    return (cell, anchor, new + anchor)


def _m(name, cell, *edits, also=(), says="") -> Mutant:
    return Mutant(name, cell, edits=edits, also=frozenset(also), says=says)


LN_CELLS = cells_of(PS2.axis)  # layer_norm's

FUNCTIONS = [
    _m(
        "row_stats over axis 0",
        PS2.stats_axis,
        (ROW, "x.mean(axis=-1)  #", "x.mean(axis=0)  #"),
        (ROW, "x - mean[..., None]", "x - mean"),
        (ROW, "(centred * centred).mean(axis=-1)", "(centred * centred).mean(axis=0)"),
        also={PS2.stats_shape},
        says="Wrong axis",
    ),
    _m(
        "row_stats sample variance",
        PS2.stats_population_variance,
        (
            ROW,
            "(centred * centred).mean(axis=-1)",
            "(centred * centred).sum(axis=-1) / (x.shape[-1] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        "row_stats with keepdims",
        PS2.stats_shape,
        (ROW, "return mean, var", "return mean[..., None], var[..., None]"),
        says="keepdims",
    ),
    _m(
        "row_stats returns lists",
        PS2.stats_axis,
        (ROW, "return mean, var", "return list(mean), list(var)"),
        also={PS2.stats_population_variance, PS2.stats_shape, PS2.stats_reference_reuse},
        says="raised TypeError",
    ),
    _m(
        "row_stats from normlab",
        PS2.stats_reference_reuse,
        (ROW, "^", "import normlab\n\n"),
        (ROW, "    x = np.asarray(x, dtype=np.float64)", "    return normlab.row_stats(x)"),
        says="Reference reuse",
    ),
    _m(
        "layer_norm over axis 0",
        PS2.axis,
        (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(axis=0, keepdims=True)"),
        (
            LN,
            "(centred * centred).mean(axis=-1, keepdims=True)",
            "(centred * centred).mean(axis=0, keepdims=True)",
        ),
        # the seed's record alone hides centring, the other inputs show it: apart from the axes
        also={PS2.independence},
        says="Wrong axis",
    ),
    _m("no centring", PS2.centering, (LN, "centred = x64 - mu", "centred = x64")),
    _m(
        "sample variance",
        PS2.population_variance,
        (
            LN,
            "(centred * centred).mean(axis=-1, keepdims=True)",
            "(centred * centred).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        "eps outside the root",
        PS2.eps_placement,
        (LN, "centred / np.sqrt(var + eps)", "centred / (np.sqrt(var) + eps)"),
        says="eps outside the square root",
    ),
    _m(
        "bias before normalizing",
        PS2.gain_and_bias,
        (LN, "x64 = x.astype(np.float64)", "x64 = x.astype(np.float64) + beta"),
        (LN, "(gamma * x_hat + beta)", "(gamma * x_hat)"),
    ),
    _m(
        "one mean and variance for the whole batch",
        PS2.independence,
        (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(keepdims=True)"),
        (
            LN,
            "(centred * centred).mean(axis=-1, keepdims=True)",
            "(centred * centred).mean(keepdims=True)",
        ),
        also={PS2.axis},
    ),
    _m(
        "float64 output",
        PS2.dtype_and_shape,
        (LN, "return (gamma * x_hat + beta).astype(dtype)", "return gamma * x_hat + beta"),
        says="dtype",
    ),
    _m(
        "in place",
        PS2.input_untouched,
        (
            LN,
            "x64 = x.astype(np.float64)",
            "x64 = x if x.dtype == np.float64 else x.astype(np.float64)",
        ),
        (LN, "centred = x64 - mu", "x64 -= mu\n    centred = x64"),
        says="Input modified",
    ),
    _m(
        "one-pass variance in float32",
        PS2.numerics,
        (LN, "x64 = x.astype(np.float64)", "x64 = x.astype(dtype)"),
        (
            LN,
            "var = (centred * centred).mean(axis=-1, keepdims=True)",
            "var = (x64 * x64).mean(axis=-1, keepdims=True) - mu * mu",
        ),
    ),
    _m(
        "normlab's layer_norm",
        PS2.reference_reuse,
        (LN, "^", "import normlab\n\n\n"),
        _before(LN, SOLUTION_START, "    return normlab.layer_norm(x, gamma, beta, eps)\n"),
        says="Reference reuse",
    ),
    _m(
        "no keepdims (raises)",
        PS2.axis,
        (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(axis=-1)"),
        also=set(LN_CELLS),
        says="Missing keepdims",
    ),
    _m(
        "batch_norm over the features",
        PS3.bn_axis,
        (BN, "flat.mean(axis=0)", "flat.mean(axis=1, keepdims=True)"),
        (BN, "(centred * centred).mean(axis=0)", "(centred * centred).mean(axis=1, keepdims=True)"),
        says="Wrong axis",
    ),
    _m(
        "batch_norm sample variance",
        PS3.bn_population_variance,
        (
            BN,
            "(centred * centred).mean(axis=0)",
            "(centred * centred).sum(axis=0) / (flat.shape[0] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        "batch_norm eps outside",
        PS3.bn_eps_placement,
        (BN, "np.sqrt(var + eps)", "(np.sqrt(var) + eps)"),
    ),
    _m(
        "batch_norm without gamma",
        PS3.bn_gain_and_bias,
        (BN, "out = gamma * centred", "out = centred"),
    ),
    _m(
        "batch of one normalized",
        PS3.bn_batch_of_one,
        (BN, "if flat.shape[0] < 2:", "if flat.shape[0] < 1:"),
        says="Batch of one",
    ),
    _m(
        "batch_norm float64 output",
        PS3.bn_dtype_and_shape,
        (BN, "return out.reshape(x.shape).astype(dtype)", "return out.reshape(x.shape)"),
    ),
    _m(
        "batch_norm in place",
        PS3.bn_input_untouched,
        (
            BN,
            "flat = x.astype(np.float64).reshape(-1, x.shape[-1])",
            "flat = x.reshape(-1, x.shape[-1]) if x.dtype == np.float64 else "
            "x.astype(np.float64).reshape(-1, x.shape[-1])",
        ),
        (BN, "centred = flat - mean", "flat -= mean\n    centred = flat"),
    ),
    _m(
        "normlab's batch_norm",
        PS3.bn_reference_reuse,
        (BN, "^", "import normlab\n\n\n"),
        _before(BN, SOLUTION_START, "    return normlab.batch_norm(x, gamma, beta, eps)\n"),
    ),
    _m(
        "witness too strict",
        PS3.witness_accepts_layer_norm,
        (
            WIT,
            "np.allclose(y.mean(axis=-1), 0.0, atol=1e-6)",
            "np.allclose(y.mean(axis=-1), 0.0, atol=1e-30)",
        ),
        also=WITNESS_CATCHES,
        says="False alarm",
    ),
    _m(
        "witness that tests only the shape",
        PS3.witness_catches_axis,
        (WIT, "        # 1. standardized", "        return True\n        # 1. standardized"),
        also=WITNESS_CATCHES,
        says="Missed",
    ),
    _m(
        "witness without any variance test",
        PS3.witness_catches_sample_variance,
        (WIT, VAR_TEST, ""),
        (WIT, EPS_VAR_TEST, ""),
        also={PS3.witness_catches_eps},
        says="Missed",
    ),
    _m(
        "witness without eps probe",
        PS3.witness_catches_eps,
        (WIT, "        tiny = 5.0 + 1e-3", "        return True\n        tiny = 5.0 + 1e-3"),
        says="Missed",
    ),
    _m(
        "witness testing independence only",
        PS3.witness_catches_centering,
        (WIT, MEAN_TEST, ""),
        (WIT, VAR_TEST, ""),
        (WIT, "        # 4. far from zero", "        return True\n        # 4. far from zero"),
        also={
            PS3.witness_catches_sample_variance,
            PS3.witness_catches_eps,
            PS3.witness_catches_cancellation,
        },
        says="Missed",
    ),
    _m(
        "witness without the shift",
        PS3.witness_catches_cancellation,
        (
            WIT,
            "        far = x + 1e6 * x.std(axis=-1, keepdims=True)\n"
            "        if np.abs(np.asarray(norm_fn(far)) - y).max() > 1e-6:\n"
            "            return False\n",
            "",
        ),
        says="Missed",
    ),
    _m(
        "witness from the audit",
        PS3.witness_reference_reuse,
        _before(
            WIT,
            "    rng = np.random.default_rng(0)",
            "    import normlab\n\n    return bool(normlab.audit.audit(norm_fn).ok)\n",
        ),
        says="Reference reuse",
    ),
    _m(
        "rms over axis 0",
        PS4.rms_axis,
        (
            RMS,
            "(x64 * x64).mean(axis=-1, keepdims=True)",
            "(x64 * x64).mean(axis=0, keepdims=True)",
        ),
        # the seed's record alone hides centring, the other inputs show it: apart from the axes
        says="Wrong axis",
    ),
    _m(
        "rms centred",
        PS4.rms_no_centering,
        (
            RMS,
            "x64 = x.astype(np.float64)",
            "x64 = x.astype(np.float64)\n    x64 = x64 - x64.mean(axis=-1, keepdims=True)",
        ),
        says="Centring",
    ),
    _m(
        "rms divided by d - 1",
        PS4.rms_mean_square,
        (
            RMS,
            "(x64 * x64).mean(axis=-1, keepdims=True)",
            "(x64 * x64).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)",
        ),
    ),
    _m(
        "rms eps outside",
        PS4.rms_eps,
        (RMS, "np.sqrt(mean_square + eps)", "(np.sqrt(mean_square) + eps)"),
    ),
    _m("rms without gamma", PS4.rms_gain, (RMS, "(gamma * x64 /", "(x64 /"), says="Gain"),
    _m(
        "rms float64 output",
        PS4.rms_dtype_and_shape,
        (
            RMS,
            "return (gamma * x64 / np.sqrt(mean_square + eps)).astype(dtype)",
            "return gamma * x64 / np.sqrt(mean_square + eps)",
        ),
    ),
    _m(
        "rms in place",
        PS4.rms_input_untouched,
        (
            RMS,
            "x64 = x.astype(np.float64)",
            "x64 = x if x.dtype == np.float64 else x.astype(np.float64)",
        ),
        (
            RMS,
            "return (gamma * x64 / np.sqrt(mean_square + eps)).astype(dtype)",
            "x64 /= np.sqrt(mean_square + eps)\n    return (gamma * x64).astype(dtype)",
        ),
        says="Input modified",
    ),
    _m(
        "normlab's rms_norm",
        PS4.rms_reference_reuse,
        (RMS, "^", "import normlab\n\n\n"),
        _before(RMS, SOLUTION_START, "    return normlab.rms_norm(x, gamma, eps)\n"),
    ),
    _m(
        "final norm forgotten",
        PS4.param_counts,
        (COUNTS, "n_norms = 2 * 12 + 1", "n_norms = 2 * 12"),
        says="final norm",
    ),
    _m(
        "dbeta averaged",
        PS5.dbeta,
        (BWD, "dbeta = dy64.sum(axis=lead)", "dbeta = dy64.mean(axis=lead)"),
    ),
    _m(
        "dgamma unnormalized",
        PS5.dgamma,
        (BWD, "(dy64 * x_hat).sum(axis=lead)", "(dy64 * centred).sum(axis=lead)"),
    ),
    _m(
        "no mean term",
        PS5.dx_mean_term,
        (BWD, "g - g.mean(axis=-1, keepdims=True) - x_hat", "g - x_hat"),
    ),
    _m(
        "no variance term",
        PS5.dx_variance_term,
        (BWD, " - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)", ""),
    ),
    _m("gamma forgotten in dx", PS5.dx_gamma, (BWD, "g = dy64 * gamma", "g = dy64")),
    _m(
        "dx over the variance",
        PS5.dx_scale,
        (BWD, "    ) / sigma\n", "    ) / sigma**2\n"),
        also={PS5.eps_placement},
    ),
    _m(
        "eps outside sigma",
        PS5.eps_placement,
        (
            BWD,
            "np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)",
            "np.sqrt((centred * centred).mean(axis=-1, keepdims=True)) + eps",
        ),
    ),
    _m(
        "means over the batch",
        PS5.independence,
        (BWD, "g.mean(axis=-1, keepdims=True)", "g.mean()"),
        (BWD, "(g * x_hat).mean(axis=-1, keepdims=True)", "(g * x_hat).mean()"),
        also={PS5.dx_mean_term, PS5.dx_variance_term},
    ),
    _m(
        "float64 gradients",
        PS5.dtype_and_shape,
        (
            BWD,
            BWD_RETURN,
            "return dx, dgamma, dbeta",
        ),
    ),
    _m(
        "dy in place",
        PS5.input_untouched,
        (
            BWD,
            "g = dy64 * gamma",
            DY_IN_PLACE,
        ),
    ),
    _m(
        "normlab's gradient",
        PS5.reference_reuse,
        (BWD, "^", "import normlab\n\n\n"),
        _before(BWD, SOLUTION_START, "    return normlab.layer_norm_backward(dy, x, gamma, eps)\n"),
    ),
    _m(
        "one-pass variance",
        PS6.far_from_zero,
        _before(
            VAR,
            "    mean = x.mean(axis=-1, keepdims=True)",
            "    return (x * x).mean(axis=-1) - x.mean(axis=-1) ** 2\n",
        ),
        says="Cancellation",
    ),
    _m(
        "sample variance",
        PS6.variance_population,
        (
            VAR,
            "(centred * centred).mean(axis=-1)",
            "(centred * centred).sum(axis=-1) / (x.shape[-1] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        "float64 variance",
        PS6.variance_dtype_and_shape,
        (
            VAR,
            "return (centred * centred).mean(axis=-1)",
            "return (centred * centred).mean(axis=-1).astype(np.float64)",
        ),
        says="dtype",
    ),
    _m(
        "np.var",
        PS6.variance_by_hand,
        (VAR, "    x = np.asarray(x)\n", "    x = np.asarray(x)\n    return np.var(x, axis=-1)\n"),
    ),
    _m(
        "warm-up timed",
        PS6.timing_warmup,
        (
            TIMER,
            "    for _ in range(warmup):\n        fn()\n"
            "    durations = []\n    for _ in range(repeats):",
            "    durations = []\n    for _ in range(warmup + repeats):",
        ),
        also={PS6.timing_median},
        says="Warm-up",
    ),
    _m(
        "mean, not median",
        PS6.timing_median,
        (TIMER, "float(np.median(durations))", "float(np.mean(durations))"),
        also={PS6.timing_warmup},
        says="that is the mean",
    ),
]

# ps3 Part C: course_bank's planted bug of each cell (PS3C_CELLS), and words of its message
PS3C_SAYS = {
    PS3.bnf_momentum: "Momentum the wrong way round",
    PS3.bnf_running_var_unbiased: "Running variance biased",
    PS3.bnf_train_population_variance: "Unbiased variance in the output",
    PS3.bnf_eval_running_stats: "Eval with the batch's statistics",
    PS3.bnf_eval_frozen: "Eval updates the running statistics",
    PS3.bnf_input_untouched: "wrote into its argument running_mean",
    PS3.bnf_dtype_and_shape: "dtype",
    PS3.bnf_batch_of_one_training: "Batch of one in training",
    PS3.bnf_batch_of_one_eval: "Batch of one in eval",
    PS3.bnf_reference_reuse: "Reference reuse",
}
PS3C_MUTANTS = [
    Mutant(name, cell, edits=tuple(PS3C_BUGS[name]), says=PS3C_SAYS[cell])
    for cell, name in PS3C_CELLS.items()
]

# ps7: course_bank's planted bug that holds each cell's misconception, and words of its message
PS7_CELLS = {
    PS7.gn_contiguous_groups: ("strided groups", "Strided groups"),
    PS7.gn_instance_norm: ("instance norm", "Instance norm"),
    PS7.gn_layer_norm: ("layer norm over every channel", "Layer norm"),
    PS7.gn_population_variance: ("group_norm sample variance", "Sample variance"),
    PS7.gn_gain_and_bias: ("gain and bias before normalizing", "before normalizing"),
    PS7.gn_eps_placement: ("group_norm eps outside", "eps outside the square root"),
    PS7.gn_channel_axis: ("channels from the last axis", "Channels from the last axis"),
    PS7.gn_indivisible_groups: ("groups unchecked", "returned an output"),
    PS7.gn_dtype_and_shape: ("group_norm float64 output", "dtype"),
    PS7.gn_input_untouched: ("group_norm in place", "Input modified"),
    PS7.gn_reference_reuse: ("normlab's group_norm, captured", "Reference reuse"),
    PS7.bnb_axis: ("LayerNorm's backward", "LayerNorm's backward"),
    PS7.bnb_mean_term: ("no mean term", "Mean term"),
    PS7.bnb_variance_term: ("variance as a constant", "Variance term"),
    PS7.bnb_dgamma_dbeta: ("dgamma and dbeta swapped", "swapped"),
    PS7.bnb_every_leading_axis: ("a backward for 2-D input", "first axis only"),
    PS7.bnb_dtype_and_shape: ("float64 gradients", "dtype"),
    PS7.bnb_input_untouched: ("dy in place", "wrote into its argument dy"),
    PS7.bnb_reference_reuse: ("normlab's batch_norm_backward", "Reference reuse"),
}
PS7_MUTANTS = [
    Mutant(name, cell, edits=tuple(PS7_BUGS[name]), says=says)
    for cell, (name, says) in PS7_CELLS.items()
]

# ps8: course_bank's planted bug of each cell (PS8_CELLS), and words of its message
PS8_SAYS = {
    PS8.values: "Wrong axes",
    PS8.trailing_axes: "Trailing axes",
    PS8.no_affine: "learns nothing",
    PS8.population_variance: "Sample variance",
    PS8.eps_placement: "eps outside the square root",
    PS8.float32: "float32 in, float64 out",
    PS8.reference_reuse: "Reference reuse",
    PS8.stats_in_graph: "Statistics out of the graph",
    PS8.parameter_gradients: "weight.grad is None",
    PS8.registered: "plain tensor",
    PS8.state_dict: "Checkpoints",
    PS8.training: "trains differently",
}
PS8_MUTANTS = [
    Mutant(name, cell, edits=tuple(PS8_BUGS[name]), says=PS8_SAYS[cell])
    for cell, name in PS8_CELLS.items()
]

# ps9 (Zhu et al., 2025): Dynamic Tanh and its backward, one mistake per cell
PS9_MUTANTS = [
    _m(
        "sigmoid for tanh", PS9.dyt_values, (DYT, TANH, "1 / (1 + np.exp(-alpha * x))"), says="tanh"
    ),
    _m(
        "alpha after the tanh",
        PS9.dyt_alpha,
        (DYT, TANH, "alpha * np.tanh(x.astype(np.float64))"),
        says="alpha * tanh(x)",
    ),
    _m(
        "LayerNorm then tanh",
        PS9.dyt_elementwise,
        (
            DYT,
            f"    y = {TANH}",
            "    x64 = x.astype(np.float64)\n"
            "    x64 = x64 - x64.mean(-1, keepdims=True)\n"
            "    x64 = x64 / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)\n"
            "    y = np.tanh(alpha * x64)",
        ),
        says="no statistics",
    ),
    _m("no beta", PS9.dyt_gain_and_bias, (DYT, "(gamma * y + beta)", "(gamma * y)"), says="beta"),
    _m(
        "dyt in float64",
        PS9.dyt_dtype_and_shape,
        (DYT, "return (gamma * y + beta).astype(dtype)", "return gamma * y + beta"),
        says="dtype",
    ),
    _m(
        "alpha x written into x",
        PS9.dyt_input_untouched,
        (
            DYT,
            f"    y = {TANH}",
            "    np.multiply(x, alpha, out=x)\n    y = np.tanh(x.astype(np.float64))",
        ),
        says="Input modified",
    ),
    _m(
        "normlab's dyt",
        PS9.dyt_reference_reuse,
        (DYT, "^", "import normlab\n\n\n"),
        _before(DYT, SOLUTION_START, "    return normlab.dyt(x, alpha, gamma, beta)\n"),
        says="Reference reuse",
    ),
    _m("dx without alpha", PS9.dyt_dx_alpha, (DYT_BWD, "dx = du * alpha", "dx = du"), says="alpha"),
    _m(
        "1 - t for the derivative",
        PS9.dyt_dx_tanh,
        (DYT_BWD, "(1 - t * t)", "(1 - t)"),
        says="not squared",
    ),
    _m(
        "dalpha per feature",
        PS9.dyt_dalpha_scalar,
        (DYT_BWD, "dalpha = (du * x64).sum()", "dalpha = (du * x64).sum(axis=lead)"),
        (DYT_BWD, "dtype.type(dalpha)", "dalpha.astype(dtype)"),
        says="one number",
    ),
    _m("dalpha without x", PS9.dyt_dalpha_x, (DYT_BWD, "(du * x64).sum()", "du.sum()"), says="x"),
    _m(
        "dgamma from x",
        PS9.dyt_dgamma,
        (DYT_BWD, "(dy64 * t).sum(axis=lead)", "(dy64 * x64).sum(axis=lead)"),
        says="dy * x",
    ),
    _m(
        "dbeta a mean",
        PS9.dyt_dbeta,
        (DYT_BWD, "dy64.sum(axis=lead)", "dy64.mean(axis=lead)"),
        says="averaged",
    ),
    _m(
        "float64 dx",
        PS9.dyt_backward_dtype_and_shape,
        (DYT_BWD, "return dx.astype(dtype),", "return dx,"),
        says="dtype",
    ),
    _m(
        "dy halved in place",
        PS9.dyt_backward_input_untouched,
        (DYT_BWD, "    return dx.astype(dtype)", "    dy64 *= 0.5\n    return dx.astype(dtype)"),
        says="wrote into its argument dy",
    ),
    _m(
        "normlab's dyt_backward",
        PS9.dyt_backward_reference_reuse,
        (DYT_BWD, "^", "import normlab\n\n\n"),
        _before(DYT_BWD, SOLUTION_START, "    return normlab.dyt_backward(dy, x, alpha, gamma)\n"),
        says="Reference reuse",
    ),
]

# ps3 Part C's and ps9's last, so that the earlier mutants keep their student ids
# (`mutant_student`)
MUTANTS: list[Mutant] = (
    PS1_MUTANTS + FUNCTIONS + PS7_MUTANTS + PS8_MUTANTS + PS3C_MUTANTS + PS9_MUTANTS
)


def run_as_students() -> list[Mutant]:
    """The mutants run as whole notebooks (Run All, nbgrader autograde): ps1's first for each
    question, every other one (raising answers included)."""
    firsts = first_per_cell()
    return [m for m in MUTANTS if m.assignment != "ps1_by_hand" or m in firsts]


# The mutants real kernels run (plain nbgrader, the sandboxed grader's class; Run All the
# first of each assignment): each
# mutant whose verdicts carry a rule across cells (a function voided by its reuse cell, "not
# judged", "same cause as"), on which plain nbgrader and the course's grader must agree, and
# ps1's first, so that every assignment has one. test_mutants.py checks the first part
# against the live verdicts: a new mutant that exercises such a rule must be listed here.
KERNEL_WITNESSES = (
    "ps1_by_hand:sum divided by d - 1",
    "ps2_layer_norm:row_stats returns lists",
    "ps2_layer_norm:row_stats from normlab",
    "ps2_layer_norm:layer_norm over axis 0",
    "ps2_layer_norm:normlab's layer_norm",
    "ps2_layer_norm:no keepdims (raises)",
    "ps3_axes:normlab's batch_norm",
    "ps3_axes:witness from the audit",
    "ps3_axes:normlab's batch_norm_forward",
    "ps4_rmsnorm:rms over axis 0",
    "ps4_rmsnorm:normlab's rms_norm",
    "ps5_backward:normlab's gradient",
    "ps6_stability_speed:np.var",
    "ps7_family:normlab's group_norm, captured",
    "ps7_family:normlab's batch_norm_backward",
    "ps8_in_a_model:affine-flag-ignored",
    "ps8_in_a_model:functional-layer-norm",
    "ps9_dyt:normlab's dyt",
    "ps9_dyt:normlab's dyt_backward",
)


def kernel_witnesses() -> list[Mutant]:
    """The mutants of KERNEL_WITNESSES, in MUTANTS' order."""
    missing = set(KERNEL_WITNESSES) - {m.id for m in MUTANTS}
    assert not missing, f"KERNEL_WITNESSES names no mutant {sorted(missing)}"
    return [m for m in MUTANTS if m.id in KERNEL_WITNESSES]


def mutant_student(mutant: Mutant) -> str:
    """The nbgrader student id of a mutant's submission."""
    return f"mutant{run_as_students().index(mutant):02d}"


def witness_students(assignment: str) -> list[str]:
    """The student ids of the assignment's kernel witnesses."""
    return [mutant_student(m) for m in kernel_witnesses() if m.assignment == assignment]


def first_per_cell() -> list[Mutant]:
    """One mutant per misconception: the first listed for each grade cell."""
    seen, chosen = set(), []
    for mutant in MUTANTS:
        key = (mutant.assignment, mutant.cell)
        if key not in seen:
            seen.add(key)
            chosen.append(mutant)
    return chosen


def answers(mutant: Mutant) -> dict[str, str]:
    """grade_id -> source of every answer cell of the mutant's notebook."""
    source = read(source_path(mutant.assignment))
    if mutant.values:
        values = {**PS1_RIGHT, **mutant.values}
        return {
            cell: "\n".join(f"{name} = {values[name]}" for name in names)
            for cell, names in PS1_CELLS.items()
        }
    edited = with_bug(source, mutant.edits)
    return {
        nbgrader_meta(c)["grade_id"]: c.source
        for c in edited.cells
        if nbgrader_meta(c).get("solution") and c.cell_type == "code"
    }


def released_with(assignment: str, sources: dict[str, str]):
    """The released notebook with its answer cells' sources replaced (by grade_id)."""
    nb = read(release_path(assignment))
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") in sources:
            cell.source = sources[nbgrader_meta(cell)["grade_id"]]
    return nb


def graded_once(mutant: Mutant) -> NotebookRun:
    """The mutant's notebook as nbgrader grades it (the release, its answer cells the mutant's,
    its test cells the source's: the hidden batteries back), run once in this process as a
    student's kernel runs it (`in_process.run_cells`, grading=False), as TEST_STUDENT."""
    nb = graded(released_with(mutant.assignment, answers(mutant)), mutant.assignment)
    return run_cells(nb, grading=False, student=TEST_STUDENT)


def is_a_mutant(assignment: str, edits, lost) -> bool:
    """Is a planted bug a mutant's (ps3 Part C's, ps7's and ps8's are made from the bank),
    with the same cells lost? Its mutant's run then proves it."""
    return any(
        m.assignment == assignment and m.edits == tuple(edits) and m.lost_at_grading == lost
        for m in MUTANTS
    )


def from_the_bank(mutant: Mutant) -> bool:
    """Is `mutant` one of the bank's planted bugs (course_bank.BANK), the same cells lost?"""
    bank = BANK.get(mutant.assignment, {}).values()
    return any(
        tuple(edits) == mutant.edits and lost == mutant.lost_at_grading for edits, lost in bank
    )
