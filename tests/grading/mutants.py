"""One mutant per misconception: the instructor's answers with one typical mistake planted.

Every check of every assignment has at least one mutant whose misconception it names (its
`cell`); a mutant may cost more cells than that one (`lost`: every grade cell it must lose,
`cell` included), as a student's mistake can. ps1's mutants are its table of typical wrong
answers, several per question, each with words its message must contain (`says`); ps3 Part
C's, ps7's and ps8's are course_bank's planted bugs (`PS3C_BUGS`, `PS7_BUGS`, `PS8_BUGS`), one
per cell.

Each property is proven once for every mutant, in process (test_mutants.py: each loses
exactly `lost`, in the visible battery as in the hidden one, no message gives an answer away,
and its whole notebook, run cell by cell as nbgrader grades it and as a student's Run All
runs it (in_process.py), loses exactly its cells and reaches the summary), and again in real
kernels for the kernel witnesses (`KERNEL_WITNESSES`: test_nbgrader.py's `nbgrader
autograde`, test_sandbox_class.py's grader, and the first of each assignment in
test_run_all.py's Restart and Run All), which show that a kernel adds nothing the in-process
run misses. `answers(mutant)` is the answer cells' sources by grade_id, the
instructor's where the mutant changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from course_bank import (
    BWD_RETURN,
    DY_IN_PLACE,
    PS3C_BUGS,
    PS3C_CELLS,
    PS7_BUGS,
    PS8_BUGS,
    PS8_CELLS,
)
from course_helpers import (
    cells_lost,
    nbgrader_meta,
    read,
    release_path,
    source_path,
    with_bug,
)

from normlab.grading import CHECKS


@dataclass(frozen=True)
class Mutant:
    assignment: str
    name: str  # the mistake, in a few words
    cell: str  # the grade cell whose misconception it holds
    edits: tuple = ()  # (answer grade_id, old text, new text), as course_bank's bugs
    values: dict = field(default_factory=dict)  # ps1: name -> the expression typed instead
    also: frozenset = frozenset()  # the other grade cells it loses
    says: str = ""  # words the message of `cell` contains
    hidden_also: frozenset = frozenset()  # cells only the hidden battery loses (not judged)

    @property
    def lost(self) -> frozenset:
        """The cells it loses (a reuse cell's costs its function's every cell)."""
        return cells_lost(self.assignment, self.also | {self.cell})

    @property
    def lost_at_grading(self) -> frozenset:
        """The cells it loses when graded: the visible battery's and the hidden battery's."""
        return self.lost | self.hidden_also

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


def _ps1(name: str, cell: str, values: dict, says: str) -> Mutant:
    return Mutant("ps1_by_hand", name, cell, values=values, says=says)


# each written for any variant (whole means and variances: none is a rounding of another);
# the in-process runs are TEST_STUDENT's, whose normalized values are thirds
PS1 = [
    _ps1("sum divided by d - 1", "mean", {"mean_r": "r.sum() / (r.size - 1)"}, "d - 1"),
    _ps1("the sum", "mean", {"mean_r": "r.sum()"}, "sum of the features"),
    _ps1("mean of the squares", "mean", {"mean_r": "(r ** 2).mean()"}, "squares"),
    _ps1("std for variance", "variance", {"var_r": "r.std()"}, "standard deviation"),
    _ps1("sample variance", "variance", {"var_r": "r.var(ddof=1)"}, "d - 1"),
    _ps1("sample std", "variance", {"var_r": "r.std(ddof=1)"}, "sample standard"),
    _ps1(
        "uncentred mean of squares",
        "variance",
        {"var_r": "(r ** 2).mean()"},
        "squares of r itself",
    ),
    _ps1(
        "sum of squared deviations",
        "variance",
        {"var_r": "((r - r.mean()) ** 2).sum()"},
        "sum of the squared",
    ),
    _ps1("mean absolute deviation", "variance", {"var_r": "abs(r - r.mean()).mean()"}, "absolute"),
    _ps1("eps in the variance", "variance", {"var_r": "r.var() + 1e-5"}, "eps"),
    _ps1(
        "divided by the sample std",
        "normalized",
        {"normalized_r": "(r - r.mean()) / r.std(ddof=1)"},
        "sample standard deviation",
    ),
    _ps1(
        "divided by the variance",
        "normalized",
        {"normalized_r": "(r - r.mean()) / r.var()"},
        "square root",
    ),
    _ps1("not centred", "normalized", {"normalized_r": "r / r.std()"}, "subtract the mean"),
    _ps1("centred, not scaled", "normalized", {"normalized_r": "r - r.mean()"}, "not scaled"),
    _ps1(
        "normalized rounded",
        "normalized",
        {"normalized_r": "np.round((r - r.mean()) / r.std(), 3)"},
        "rounded",
    ),
    _ps1(
        "eps ignored",
        "eps_effect",
        {"normalized_r_eps": "(r - r.mean()) / r.std()"},
        "without eps",
    ),
    _ps1(
        "eps outside the root",
        "eps_effect",
        {"normalized_r_eps": "(r - r.mean()) / (r.std() + 1e-5)"},
        "outside the square root",
    ),
    _ps1(
        "eps added to the output",
        "eps_effect",
        {"normalized_r_eps": "(r - r.mean()) / r.std() + 1e-5"},
        "added to the output",
    ),
    _ps1(
        "wrong eps",
        "eps_effect",
        {"normalized_r_eps": "(r - r.mean()) / np.sqrt(r.var() + 1e-6)"},
        "eps = 1e-6",
    ),
    _ps1(
        "eps effect rounded away",
        "eps_effect",
        {"normalized_r_eps": "np.round((r - r.mean()) / np.sqrt(r.var() + 1e-5), 4)"},
        "rounded",
    ),
    _ps1(
        "sample variance under eps",
        "eps_effect",
        {"normalized_r_eps": "(r - r.mean()) / np.sqrt(r.var(ddof=1) + 1e-5)"},
        "sample variance",
    ),
    _ps1("gain only for gain and bias", "param_counts", {"params_gain_bias": "d_model"}, "both"),
    _ps1("one gain and one bias", "param_counts", {"params_gain_bias": "2"}, "per feature"),
    _ps1("bias counted anyway", "param_counts", {"params_gain_only": "2 * d_model"}, "bias"),
    _ps1("a bias for RMSNorm", "param_counts", {"params_rms": "2 * d_model"}, "no"),
    _ps1("counted for the record", "param_counts", {"params_rms": "r.size"}, "Part A"),
    _ps1("a matrix", "param_counts", {"params_rms": "d_model ** 2"}, "matrix"),
]

ROW, LN = "row_stats_answer", "layer_norm_answer"
BN, WIT = "batch_norm_answer", "witness_answer"
RMS, COUNTS = "rms_norm_answer", "param_counts_answer"
BWD = "backward_answer"
VAR, TIMER = "stable_variance_answer", "time_median_answer"
WITNESS_CATCHES = frozenset(
    {
        "witness_catches_axis",
        "witness_catches_sample_variance",
        "witness_catches_eps",
        "witness_catches_centering",
        "witness_catches_cancellation",
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


def _m(assignment, name, cell, *edits, also=(), says="", hidden_also=()) -> Mutant:
    return Mutant(
        assignment,
        name,
        cell,
        edits=edits,
        also=frozenset(also),
        says=says,
        hidden_also=frozenset(hidden_also),
    )


PS2 = "ps2_layer_norm"
PS3 = "ps3_axes"
PS4 = "ps4_rmsnorm"
PS5 = "ps5_backward"
PS6 = "ps6_stability_speed"
LN_CELLS = tuple(g for g in CHECKS[PS2] if not g.startswith("stats_"))  # layer_norm's

FUNCTIONS = [
    _m(
        PS2,
        "row_stats over axis 0",
        "stats_axis",
        (ROW, "x.mean(axis=-1)  #", "x.mean(axis=0)  #"),
        (ROW, "x - mean[..., None]", "x - mean"),
        (ROW, "(centred * centred).mean(axis=-1)", "(centred * centred).mean(axis=0)"),
        also={"stats_shape"},
        says="Wrong axis",
    ),
    _m(
        PS2,
        "row_stats sample variance",
        "stats_population_variance",
        (
            ROW,
            "(centred * centred).mean(axis=-1)",
            "(centred * centred).sum(axis=-1) / (x.shape[-1] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        PS2,
        "row_stats with keepdims",
        "stats_shape",
        (ROW, "return mean, var", "return mean[..., None], var[..., None]"),
        says="keepdims",
    ),
    _m(
        PS2,
        "row_stats returns lists",
        "stats_axis",
        (ROW, "return mean, var", "return list(mean), list(var)"),
        also={"stats_population_variance", "stats_shape", "stats_reference_reuse"},
        says="raised TypeError",
    ),
    _m(
        PS2,
        "row_stats from normlab",
        "stats_reference_reuse",
        (ROW, "^", "import normlab\n\n"),
        (ROW, "    x = np.asarray(x, dtype=np.float64)", "    return normlab.row_stats(x)"),
        says="Reference reuse",
    ),
    _m(
        PS2,
        "layer_norm over axis 0",
        "axis",
        (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(axis=0, keepdims=True)"),
        (
            LN,
            "(centred * centred).mean(axis=-1, keepdims=True)",
            "(centred * centred).mean(axis=0, keepdims=True)",
        ),
        also={"independence", "centering"},  # the seed's record alone: axis 0 hides centring
        hidden_also={"eps_placement"},  # a batch of one: axis 0 hides eps too
        says="Wrong axis",
    ),
    _m(PS2, "no centring", "centering", (LN, "centred = x64 - mu", "centred = x64")),
    _m(
        PS2,
        "sample variance",
        "population_variance",
        (
            LN,
            "(centred * centred).mean(axis=-1, keepdims=True)",
            "(centred * centred).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        PS2,
        "eps outside the root",
        "eps_placement",
        (LN, "centred / np.sqrt(var + eps)", "centred / (np.sqrt(var) + eps)"),
        says="eps outside the square root",
    ),
    _m(
        PS2,
        "bias before normalizing",
        "gain_and_bias",
        (LN, "x64 = x.astype(np.float64)", "x64 = x.astype(np.float64) + beta"),
        (LN, "(gamma * x_hat + beta)", "(gamma * x_hat)"),
    ),
    _m(
        PS2,
        "one mean and variance for the whole batch",
        "independence",
        (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(keepdims=True)"),
        (
            LN,
            "(centred * centred).mean(axis=-1, keepdims=True)",
            "(centred * centred).mean(keepdims=True)",
        ),
        also={"axis"},
    ),
    _m(
        PS2,
        "float64 output",
        "dtype_and_shape",
        (LN, "return (gamma * x_hat + beta).astype(dtype)", "return gamma * x_hat + beta"),
        says="dtype",
    ),
    _m(
        PS2,
        "in place",
        "input_untouched",
        (
            LN,
            "x64 = x.astype(np.float64)",
            "x64 = x if x.dtype == np.float64 else x.astype(np.float64)",
        ),
        (LN, "centred = x64 - mu", "x64 -= mu\n    centred = x64"),
        says="Input modified",
    ),
    _m(
        PS2,
        "one-pass variance in float32",
        "numerics",
        (LN, "x64 = x.astype(np.float64)", "x64 = x.astype(dtype)"),
        (
            LN,
            "var = (centred * centred).mean(axis=-1, keepdims=True)",
            "var = (x64 * x64).mean(axis=-1, keepdims=True) - mu * mu",
        ),
    ),
    _m(
        PS2,
        "normlab's layer_norm",
        "reference_reuse",
        (LN, "^", "import normlab\n\n\n"),
        _before(LN, SOLUTION_START, "    return normlab.layer_norm(x, gamma, beta, eps)\n"),
        says="Reference reuse",
    ),
    _m(
        PS2,
        "no keepdims (raises)",
        "axis",
        (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(axis=-1)"),
        also=set(LN_CELLS),
        says="Missing keepdims",
    ),
    _m(
        PS3,
        "batch_norm over the features",
        "bn_axis",
        (BN, "flat.mean(axis=0)", "flat.mean(axis=1, keepdims=True)"),
        (BN, "(centred * centred).mean(axis=0)", "(centred * centred).mean(axis=1, keepdims=True)"),
        says="Wrong axis",
    ),
    _m(
        PS3,
        "batch_norm sample variance",
        "bn_population_variance",
        (
            BN,
            "(centred * centred).mean(axis=0)",
            "(centred * centred).sum(axis=0) / (flat.shape[0] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        PS3,
        "batch_norm eps outside",
        "bn_eps_placement",
        (BN, "np.sqrt(var + eps)", "(np.sqrt(var) + eps)"),
    ),
    _m(
        PS3,
        "batch_norm without gamma",
        "bn_gain_and_bias",
        (BN, "out = gamma * centred", "out = centred"),
    ),
    _m(
        PS3,
        "batch of one normalized",
        "bn_batch_of_one",
        (BN, "if flat.shape[0] < 2:", "if flat.shape[0] < 1:"),
        says="Batch of one",
    ),
    _m(
        PS3,
        "batch_norm float64 output",
        "bn_dtype_and_shape",
        (BN, "return out.reshape(x.shape).astype(dtype)", "return out.reshape(x.shape)"),
    ),
    _m(
        PS3,
        "batch_norm in place",
        "bn_input_untouched",
        (
            BN,
            "flat = x.astype(np.float64).reshape(-1, x.shape[-1])",
            "flat = x.reshape(-1, x.shape[-1]) if x.dtype == np.float64 else "
            "x.astype(np.float64).reshape(-1, x.shape[-1])",
        ),
        (BN, "centred = flat - mean", "flat -= mean\n    centred = flat"),
    ),
    _m(
        PS3,
        "normlab's batch_norm",
        "bn_reference_reuse",
        (BN, "^", "import normlab\n\n\n"),
        _before(BN, SOLUTION_START, "    return normlab.batch_norm(x, gamma, beta, eps)\n"),
    ),
    _m(
        PS3,
        "witness too strict",
        "witness_accepts_layer_norm",
        (
            WIT,
            "np.allclose(y.mean(axis=-1), 0.0, atol=1e-6)",
            "np.allclose(y.mean(axis=-1), 0.0, atol=1e-30)",
        ),
        also=WITNESS_CATCHES,
        says="False alarm",
    ),
    _m(
        PS3,
        "witness that tests only the shape",
        "witness_catches_axis",
        (WIT, "        # 1. standardized", "        return True\n        # 1. standardized"),
        also=WITNESS_CATCHES,
        says="Missed",
    ),
    _m(
        PS3,
        "witness without any variance test",
        "witness_catches_sample_variance",
        (WIT, VAR_TEST, ""),
        (WIT, EPS_VAR_TEST, ""),
        also={"witness_catches_eps"},
        says="Missed",
    ),
    _m(
        PS3,
        "witness without eps probe",
        "witness_catches_eps",
        (WIT, "        tiny = 5.0 + 1e-3", "        return True\n        tiny = 5.0 + 1e-3"),
        says="Missed",
    ),
    _m(
        PS3,
        "witness testing independence only",
        "witness_catches_centering",
        (WIT, MEAN_TEST, ""),
        (WIT, VAR_TEST, ""),
        (WIT, "        # 4. far from zero", "        return True\n        # 4. far from zero"),
        also={
            "witness_catches_sample_variance",
            "witness_catches_eps",
            "witness_catches_cancellation",
        },
        says="Missed",
    ),
    _m(
        PS3,
        "witness without the shift",
        "witness_catches_cancellation",
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
        PS3,
        "witness from the audit",
        "witness_reference_reuse",
        _before(
            WIT,
            "    rng = np.random.default_rng(0)",
            "    import normlab\n\n    return bool(normlab.audit.audit(norm_fn).ok)\n",
        ),
        says="Reference reuse",
    ),
    _m(
        PS4,
        "rms over axis 0",
        "rms_axis",
        (
            RMS,
            "(x64 * x64).mean(axis=-1, keepdims=True)",
            "(x64 * x64).mean(axis=0, keepdims=True)",
        ),
        also={"rms_no_centering"},  # the seed's record alone: axis 0 hides centring
        hidden_also={"rms_eps"},  # a batch of one: axis 0 hides eps too
        says="Wrong axis",
    ),
    _m(
        PS4,
        "rms centred",
        "rms_no_centering",
        (
            RMS,
            "x64 = x.astype(np.float64)",
            "x64 = x.astype(np.float64)\n    x64 = x64 - x64.mean(axis=-1, keepdims=True)",
        ),
        says="Centring",
    ),
    _m(
        PS4,
        "rms divided by d - 1",
        "rms_mean_square",
        (
            RMS,
            "(x64 * x64).mean(axis=-1, keepdims=True)",
            "(x64 * x64).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)",
        ),
    ),
    _m(
        PS4,
        "rms eps outside",
        "rms_eps",
        (RMS, "np.sqrt(mean_square + eps)", "(np.sqrt(mean_square) + eps)"),
    ),
    _m(PS4, "rms without gamma", "rms_gain", (RMS, "(gamma * x64 /", "(x64 /"), says="Gain"),
    _m(
        PS4,
        "rms float64 output",
        "rms_dtype_and_shape",
        (
            RMS,
            "return (gamma * x64 / np.sqrt(mean_square + eps)).astype(dtype)",
            "return gamma * x64 / np.sqrt(mean_square + eps)",
        ),
    ),
    _m(
        PS4,
        "rms in place",
        "rms_input_untouched",
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
        PS4,
        "normlab's rms_norm",
        "rms_reference_reuse",
        (RMS, "^", "import normlab\n\n\n"),
        _before(RMS, SOLUTION_START, "    return normlab.rms_norm(x, gamma, eps)\n"),
    ),
    _m(
        PS4,
        "final norm forgotten",
        "param_counts",
        (COUNTS, "n_norms = 2 * 12 + 1", "n_norms = 2 * 12"),
        says="final norm",
    ),
    _m(
        PS5,
        "dbeta averaged",
        "dbeta",
        (BWD, "dbeta = dy64.sum(axis=lead)", "dbeta = dy64.mean(axis=lead)"),
    ),
    _m(
        PS5,
        "dgamma unnormalized",
        "dgamma",
        (BWD, "(dy64 * x_hat).sum(axis=lead)", "(dy64 * centred).sum(axis=lead)"),
    ),
    _m(
        PS5,
        "no mean term",
        "dx_mean_term",
        (BWD, "g - g.mean(axis=-1, keepdims=True) - x_hat", "g - x_hat"),
    ),
    _m(
        PS5,
        "no variance term",
        "dx_variance_term",
        (BWD, " - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)", ""),
    ),
    _m(PS5, "gamma forgotten in dx", "dx_gamma", (BWD, "g = dy64 * gamma", "g = dy64")),
    _m(
        PS5,
        "dx over the variance",
        "dx_scale",
        (BWD, "    ) / sigma\n", "    ) / sigma**2\n"),
        also={"eps_placement"},
    ),
    _m(
        PS5,
        "eps outside sigma",
        "eps_placement",
        (
            BWD,
            "np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)",
            "np.sqrt((centred * centred).mean(axis=-1, keepdims=True)) + eps",
        ),
    ),
    _m(
        PS5,
        "means over the batch",
        "independence",
        (BWD, "g.mean(axis=-1, keepdims=True)", "g.mean()"),
        (BWD, "(g * x_hat).mean(axis=-1, keepdims=True)", "(g * x_hat).mean()"),
        also={"dx_mean_term", "dx_variance_term"},
    ),
    _m(
        PS5,
        "float64 gradients",
        "dtype_and_shape",
        (
            BWD,
            BWD_RETURN,
            "return dx, dgamma, dbeta",
        ),
    ),
    _m(
        PS5,
        "dy in place",
        "input_untouched",
        (
            BWD,
            "g = dy64 * gamma",
            DY_IN_PLACE,
        ),
    ),
    _m(
        PS5,
        "normlab's gradient",
        "reference_reuse",
        (BWD, "^", "import normlab\n\n\n"),
        _before(BWD, SOLUTION_START, "    return normlab.layer_norm_backward(dy, x, gamma, eps)\n"),
    ),
    _m(
        PS6,
        "one-pass variance",
        "far_from_zero",
        _before(
            VAR,
            "    mean = x.mean(axis=-1, keepdims=True)",
            "    return (x * x).mean(axis=-1) - x.mean(axis=-1) ** 2\n",
        ),
        says="Cancellation",
    ),
    _m(
        PS6,
        "sample variance",
        "variance_population",
        (
            VAR,
            "(centred * centred).mean(axis=-1)",
            "(centred * centred).sum(axis=-1) / (x.shape[-1] - 1)",
        ),
        says="Sample variance",
    ),
    _m(
        PS6,
        "float64 variance",
        "variance_dtype_and_shape",
        (
            VAR,
            "return (centred * centred).mean(axis=-1)",
            "return (centred * centred).mean(axis=-1).astype(np.float64)",
        ),
        says="dtype",
    ),
    _m(
        PS6,
        "np.var",
        "variance_by_hand",
        (VAR, "    x = np.asarray(x)\n", "    x = np.asarray(x)\n    return np.var(x, axis=-1)\n"),
    ),
    _m(
        PS6,
        "warm-up timed",
        "timing_warmup",
        (
            TIMER,
            "    for _ in range(warmup):\n        fn()\n"
            "    durations = []\n    for _ in range(repeats):",
            "    durations = []\n    for _ in range(warmup + repeats):",
        ),
        also={"timing_median"},
        says="Warm-up",
    ),
    _m(
        PS6,
        "mean, not median",
        "timing_median",
        (TIMER, "float(np.median(durations))", "float(np.mean(durations))"),
        also={"timing_warmup"},
        says="that is the mean",
    ),
]

# ps3 Part C: course_bank's planted bug of each cell (PS3C_CELLS), and words of its message
PS3C_SAYS = {
    "bnf_momentum": "Momentum the wrong way round",
    "bnf_running_var_unbiased": "Running variance biased",
    "bnf_train_population_variance": "Unbiased variance in the output",
    "bnf_eval_running_stats": "Eval with the batch's statistics",
    "bnf_eval_frozen": "Eval updates the running statistics",
    "bnf_input_untouched": "wrote into its argument running_mean",
    "bnf_dtype_and_shape": "dtype",
    "bnf_batch_of_one_training": "Batch of one in training",
    "bnf_batch_of_one_eval": "Batch of one in eval",
    "bnf_reference_reuse": "Reference reuse",
}
PS3C_MUTANTS = [
    Mutant("ps3_axes", name, cell, edits=tuple(PS3C_BUGS[name]), says=PS3C_SAYS[cell])
    for cell, name in PS3C_CELLS.items()
]

# ps7: course_bank's planted bug that holds each cell's misconception, and words of its message
PS7_CELLS = {
    "gn_contiguous_groups": ("strided groups", "Strided groups"),
    "gn_instance_norm": ("instance norm", "Instance norm"),
    "gn_layer_norm": ("layer norm over every channel", "Layer norm"),
    "gn_population_variance": ("group_norm sample variance", "Sample variance"),
    "gn_gain_and_bias": ("gain and bias before normalizing", "before normalizing"),
    "gn_eps_placement": ("group_norm eps outside", "eps outside the square root"),
    "gn_channel_axis": ("channels from the last axis", "Channels from the last axis"),
    "gn_indivisible_groups": ("groups unchecked", "returned an output"),
    "gn_dtype_and_shape": ("group_norm float64 output", "dtype"),
    "gn_input_untouched": ("group_norm in place", "Input modified"),
    "gn_reference_reuse": ("normlab's group_norm, captured", "Reference reuse"),
    "bnb_axis": ("LayerNorm's backward", "LayerNorm's backward"),
    "bnb_mean_term": ("no mean term", "Mean term"),
    "bnb_variance_term": ("variance as a constant", "Variance term"),
    "bnb_dgamma_dbeta": ("dgamma and dbeta swapped", "swapped"),
    "bnb_every_leading_axis": ("a backward for 2-D input", "first axis only"),
    "bnb_dtype_and_shape": ("float64 gradients", "dtype"),
    "bnb_input_untouched": ("dy in place", "wrote into its argument dy"),
    "bnb_reference_reuse": ("normlab's batch_norm_backward", "Reference reuse"),
}
PS7_MUTANTS = [
    Mutant("ps7_family", name, cell, edits=tuple(PS7_BUGS[name]), says=says)
    for cell, (name, says) in PS7_CELLS.items()
]

# ps8: course_bank's planted bug of each cell (PS8_CELLS), and words of its message
PS8_SAYS = {
    "values": "Wrong axes",
    "trailing_axes": "Trailing axes",
    "no_affine": "learns nothing",
    "population_variance": "Sample variance",
    "eps_placement": "eps outside the square root",
    "float32": "float32 in, float64 out",
    "reference_reuse": "Reference reuse",
    "stats_in_graph": "Statistics out of the graph",
    "parameter_gradients": "weight.grad is None",
    "registered": "plain tensor",
    "state_dict": "Checkpoints",
    "training": "trains differently",
}
PS8_MUTANTS = [
    Mutant("ps8_in_a_model", name, cell, edits=tuple(PS8_BUGS[name]), says=PS8_SAYS[cell])
    for cell, name in PS8_CELLS.items()
]

# ps3 Part C's last, so that the earlier mutants keep their student ids (`mutant_student`)
MUTANTS: list[Mutant] = PS1 + FUNCTIONS + PS7_MUTANTS + PS8_MUTANTS + PS3C_MUTANTS


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
