"""Planted-bug submissions: each carries known misconceptions and must lose exactly their cells.

A bug is a list of edits to the source notebook's answer cells: (answer cell's grade_id, old
text, new text), where old text "^" means "prepend new text to the cell". Edits assert that
the old text is there, so a changed solution cannot silently make a bug a no-op. The cells a
bug loses are named by their checks (`cells.PS2.axis`). Submissions for ps2, ps3 and ps7
combine one bug in each of two functions; the functions are graded by different cells, so the
expected losses are the union. ps7 and ps8 have one planted bug per misconception, each losing
exactly its own cell.
"""

from __future__ import annotations

from cells import PS2, PS3, PS5, PS7, PS8, PS9
from course_helpers import cells_lost

ROW, LN = "row_stats_answer", "layer_norm_answer"
DYT, DYT_BWD = "dyt_answer", "dyt_backward_answer"  # ps9's answer cells
TANH = "np.tanh(alpha * x.astype(np.float64))"  # in ps9's dyt
BN, WIT = "batch_norm_answer", "witness_answer"
BWD = "backward_answer"
GN = "group_norm_answer"

GN_GROUPS = "groups = x64.reshape(n, num_groups, -1)"
GN_BACK = "(centred / np.sqrt(var + eps)).reshape(x.shape)"
GN_CHECK = (
    "    if c % num_groups != 0:\n        raise ValueError(\n"
    '            f"num_groups = {num_groups} does not divide the C = {c} channels of x"\n'
    "        )\n"
)
BN_MEANS = "mean(axis=lead, keepdims=True)"
MOD = "layer_norm_class_answer"  # ps8's LayerNorm module

TRAILING = "dims = tuple(range(-len(self.normalized_shape), 0))"
VARIANCE = "var = (centred * centred).mean(dim=dims, keepdim=True)"
WEIGHT = "torch.nn.Parameter(torch.ones(self.normalized_shape))"
BIAS = "torch.nn.Parameter(torch.zeros(self.normalized_shape))"

TORCH_LN = """    import torch

    x = np.asarray(x)
    as_x = {"dtype": x.dtype}
    t = torch.nn.functional.layer_norm(
        torch.as_tensor(x),
        (x.shape[-1],),
        torch.as_tensor(np.asarray(gamma, **as_x)),
        torch.as_tensor(np.asarray(beta, **as_x)),
        eps,
    )
    return t.numpy()
    x = np.asarray(x)
    dtype"""

TORCH_AUTOGRAD = """    import torch

    dtype = np.asarray(x).dtype
    xt = torch.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    gt = torch.tensor(np.asarray(gamma, dtype=np.float64), requires_grad=True)
    bt = torch.zeros(xt.shape[-1], dtype=torch.float64, requires_grad=True)
    centred = xt - xt.mean(-1, keepdim=True)
    y = gt * centred / torch.sqrt((centred**2).mean(-1, keepdim=True) + eps) + bt
    y.backward(torch.tensor(np.asarray(dy, dtype=np.float64)))
    return tuple(t.grad.numpy().astype(dtype) for t in (xt, gt, bt))
    x = np.asarray(x)
    dtype"""

# ps8's planted bugs, one misconception each, by the cell it loses: the bank plants each alone,
# and they are mutants.py's ps8 mutants
PS8_BUGS: dict[str, list[tuple[str, str, str]]] = {
    "every-non-batch-axis": [(MOD, TRAILING, "dims = tuple(range(1, x.dim()))")],
    "last-axis-only": [(MOD, TRAILING, "dims = (-1,)")],
    "affine-flag-ignored": [(MOD, "if elementwise_affine:", "if True:")],
    "torch-var-default": [(MOD, VARIANCE, "var = x.var(dim=dims, keepdim=True)")],
    "eps-outside-the-root": [
        (MOD, "centred / torch.sqrt(var + self.eps)", "centred / (torch.sqrt(var) + self.eps)")
    ],
    "float64-parameters": [
        (MOD, WEIGHT, WEIGHT.replace("shape))", "shape, dtype=torch.float64))")),
        (MOD, BIAS, BIAS.replace("shape))", "shape, dtype=torch.float64))")),
    ],
    "functional-layer-norm": [
        (
            MOD,
            "        " + TRAILING,
            "        return torch.nn.functional.layer_norm(\n"
            "            x, self.normalized_shape, self.weight, self.bias, self.eps\n"
            "        )\n        " + TRAILING,
        )
    ],
    "statistics-detached": [
        (
            MOD,
            "mean = x.mean(dim=dims, keepdim=True)",
            "mean = x.mean(dim=dims, keepdim=True).detach()",
        ),
        (MOD, VARIANCE, VARIANCE.replace("keepdim=True)", "keepdim=True).detach()")),
    ],
    "parameters-through-data": [
        (
            MOD,
            "return x_hat * self.weight + self.bias",
            "return x_hat * self.weight.data + self.bias.data",
        )
    ],
    "plain-tensors": [
        (MOD, WEIGHT, "torch.ones(self.normalized_shape, requires_grad=True)"),
        (MOD, BIAS, "torch.zeros(self.normalized_shape, requires_grad=True)"),
    ],
    "eps-in-the-state-dict": [
        (MOD, "self.eps = eps", 'self.register_buffer("eps", torch.tensor(float(eps)))')
    ],
    "weight-starts-at-zero": [(MOD, WEIGHT, WEIGHT.replace("ones", "zeros"))],
}
PS8_CELLS = {  # the cell each loses
    PS8.values: "every-non-batch-axis",
    PS8.trailing_axes: "last-axis-only",
    PS8.no_affine: "affine-flag-ignored",
    PS8.population_variance: "torch-var-default",
    PS8.eps_placement: "eps-outside-the-root",
    PS8.float32: "float64-parameters",
    PS8.reference_reuse: "functional-layer-norm",
    PS8.stats_in_graph: "statistics-detached",
    PS8.parameter_gradients: "parameters-through-data",
    PS8.registered: "plain-tensors",
    PS8.state_dict: "eps-in-the-state-dict",
    PS8.training: "weight-starts-at-zero",
}

# ps3 Part C's planted bugs in batch_norm_forward, one misconception each, and the cell each
# loses: the bank plants each alone, mutants.py holds them as the cells' mutants
BNF = "batch_norm_forward_answer"
BNF_MEAN = "new_mean = (1 - momentum) * running_mean + momentum * mean"
BNF_CHECK = """    if training:
        if n < 2:
            raise ValueError(
                f"batch_norm_forward in training needs at least two records per feature; "
                f"x has shape {x.shape}"
            )
"""
PS3C_BUGS: dict[str, list[tuple[str, str, str]]] = {
    "momentum the wrong way round": [
        (BNF, BNF_MEAN, "new_mean = momentum * running_mean + (1 - momentum) * mean"),
        (
            BNF,
            "new_var = (1 - momentum) * running_var + momentum * unbiased",
            "new_var = momentum * running_var + (1 - momentum) * unbiased",
        ),
    ],
    "running variance biased": [(BNF, "momentum * unbiased", "momentum * var")],
    "normalized with the unbiased variance": [
        (
            BNF,
            "var = (centred * centred).mean(axis=0)  #",
            "var = (centred * centred).sum(axis=0) / (n - 1)  #",
        ),
        (BNF, "unbiased = var * (n / (n - 1))", "unbiased = var"),
    ],
    "eval with the batch's statistics": [
        (
            BNF,
            "mean, var = running_mean, running_var  #",
            "mean = flat.mean(axis=0)\n        var = ((flat - mean) ** 2).mean(axis=0)  #",
        )
    ],
    "eval updates the running mean": [
        (
            BNF,
            "new_mean, new_var = running_mean.copy(), running_var.copy()",
            "new_mean = (1 - momentum) * running_mean + momentum * flat.mean(axis=0)\n"
            "        new_var = running_var.copy()",
        )
    ],
    "running mean in place": [
        (
            BNF,
            BNF_MEAN,
            "running_mean *= 1 - momentum\n        running_mean += momentum * mean\n"
            "        new_mean = running_mean",
        )
    ],
    "batch_norm_forward float64 output": [
        (
            BNF,
            "return out.reshape(x.shape).astype(dtype), new_mean",
            "return out.reshape(x.shape), new_mean",
        )
    ],
    "batch of one trained on": [(BNF, "if n < 2:", "if n < 1:")],
    "batch of one refused in eval": [
        (
            BNF,
            BNF_CHECK,
            "    if n < 2:\n"
            '        raise ValueError("batch_norm_forward needs two records per feature")\n'
            "    if training:\n",
        )
    ],
    "normlab's batch_norm_forward": [
        (BNF, "^", "import normlab\n\n\n"),
        (
            BNF,
            "    x = np.asarray(x)\n    dtype",
            "    return normlab.batch_norm_forward(\n"
            "        x, gamma, beta, running_mean, running_var, momentum, training, eps\n"
            "    )\n    x = np.asarray(x)\n    dtype",
        ),
    ],
}
PS3C_CELLS = {  # the cell each loses
    PS3.bnf_momentum: "momentum the wrong way round",
    PS3.bnf_running_var_unbiased: "running variance biased",
    PS3.bnf_train_population_variance: "normalized with the unbiased variance",
    PS3.bnf_eval_running_stats: "eval with the batch's statistics",
    PS3.bnf_eval_frozen: "eval updates the running mean",
    PS3.bnf_input_untouched: "running mean in place",
    PS3.bnf_dtype_and_shape: "batch_norm_forward float64 output",
    PS3.bnf_batch_of_one_training: "batch of one trained on",
    PS3.bnf_batch_of_one_eval: "batch of one refused in eval",
    PS3.bnf_reference_reuse: "normlab's batch_norm_forward",
}

# ps7's planted bugs, one misconception each: mutants.py holds one per cell; the bank pairs
# one of group_norm's with one of batch_norm_backward's, or plants one alone
BWD_RETURN = "return dx.astype(dtype), dgamma.astype(dtype), dbeta.astype(dtype)"
DY_IN_PLACE = (  # g written into dy, when dy is float64 (ps5, ps7)
    "g = np.multiply(dy, gamma, out=dy) if np.asarray(dy).dtype == np.float64 else dy64 * gamma"
)
PS7_BUGS: dict[str, list[tuple[str, str, str]]] = {
    "strided groups": [
        (
            GN,
            GN_GROUPS,
            "groups = x64.reshape(n, c // num_groups, num_groups, -1)"
            ".swapaxes(1, 2).reshape(n, num_groups, -1)",
        ),
        (
            GN,
            GN_BACK,
            "(centred / np.sqrt(var + eps)).reshape(n, num_groups, c // num_groups, -1)"
            ".swapaxes(1, 2).reshape(x.shape)",
        ),
    ],
    "instance norm": [(GN, GN_GROUPS, "groups = x64.reshape(n, c, -1)")],
    "layer norm over every channel": [(GN, GN_GROUPS, "groups = x64.reshape(n, 1, -1)")],
    "group_norm sample variance": [
        (
            GN,
            "var = (centred * centred).mean(axis=-1, keepdims=True)",
            "var = (centred * centred).sum(axis=-1, keepdims=True) / (groups.shape[-1] - 1)",
        )
    ],
    "gain and bias before normalizing": [
        (
            GN,
            "x64 = x.astype(np.float64)",
            "x64 = x.astype(np.float64) * np.reshape(gamma, per_channel)"
            " + np.reshape(beta, per_channel)",
        ),
        (
            GN,
            "out = np.reshape(gamma, per_channel) * x_hat + np.reshape(beta, per_channel)",
            "out = x_hat",
        ),
    ],
    "group_norm eps outside": [(GN, "np.sqrt(var + eps)", "(np.sqrt(var) + eps)")],
    "channels from the last axis": [
        (GN, "n, c = x.shape[0], x.shape[1]", "n, c = x.shape[0], x.shape[-1]"),
        (GN, "per_channel = (c,) + (1,) * (x.ndim - 2)", "per_channel = (c,)"),
        (
            GN,
            GN_GROUPS,
            "groups = x64.reshape(n, -1, num_groups, c // num_groups)"
            ".swapaxes(1, 2).reshape(n, num_groups, -1)",
        ),
        (
            GN,
            GN_BACK,
            "(centred / np.sqrt(var + eps)).reshape(n, num_groups, -1, c // num_groups)"
            ".swapaxes(1, 2).reshape(x.shape)",
        ),
    ],
    "groups unchecked": [(GN, GN_CHECK, "")],
    "group_norm float64 output": [(GN, "return out.astype(dtype)", "return out")],
    "group_norm in place": [
        (
            GN,
            "x64 = x.astype(np.float64)",
            "x64 = x if x.dtype == np.float64 else x.astype(np.float64)",
        ),
        (GN, "centred = groups - mu", "groups -= mu\n    centred = groups"),
    ],
    "normlab's group_norm, captured": [
        (GN, "^", "import normlab\n\n_reference_gn = normlab.group_norm\n\n\n"),
        (
            GN,
            "    x = np.asarray(x)\n    dtype",
            "    return _reference_gn(x, num_groups, gamma, beta, eps)\n"
            "    x = np.asarray(x)\n    dtype",
        ),
    ],
    "LayerNorm's backward": [(BWD, BN_MEANS, "mean(axis=-1, keepdims=True)")],
    "no mean term": [(BWD, "g - g.mean(axis=lead, keepdims=True) - x_hat", "g - x_hat")],
    "variance as a constant": [(BWD, " - x_hat * (g * x_hat).mean(axis=lead, keepdims=True)", "")],
    "dgamma and dbeta swapped": [
        (BWD, BWD_RETURN, "return dx.astype(dtype), dbeta.astype(dtype), dgamma.astype(dtype)")
    ],
    "statistics over the first axis": [(BWD, BN_MEANS, "mean(axis=0, keepdims=True)")],
    "a backward for 2-D input": [  # CS231n's form: statistics and sums over axis 0
        (
            BWD,
            "lead = tuple(range(x.ndim - 1))  # every leading axis: the batch",
            "lead = 0  # axis 0: the batch",
        )
    ],
    "float64 gradients": [(BWD, BWD_RETURN, "return dx, dgamma, dbeta")],
    "dy in place": [(BWD, "g = dy64 * gamma", DY_IN_PLACE)],
    "normlab's batch_norm_backward": [
        (BWD, "^", "import normlab\n\n\n"),
        (
            BWD,
            "    x = np.asarray(x)\n    dtype",
            "    return normlab.batch_norm_backward(dy, x, gamma, eps)\n"
            "    x = np.asarray(x)\n    dtype",
        ),
    ],
}

# assignment -> submission name -> (edits, the checks whose cells must score 0)
BANK: dict[str, dict[str, tuple[list[tuple[str, str, str]], set]]] = {
    "ps2_layer_norm": {
        "keepdims-and-wrong-axis": (
            [
                (ROW, "return mean, var", "return mean[..., None], var[..., None]"),
                (LN, "x64.mean(axis=-1, keepdims=True)", "x64.mean(axis=0, keepdims=True)"),
                (
                    LN,
                    "(centred * centred).mean(axis=-1, keepdims=True)",
                    "(centred * centred).mean(axis=0, keepdims=True)",
                ),
            ],
            # an axis of one value (a batch of one) hides centring and eps there, but the
            # other inputs show both right, apart from the axes (issue 46: one bill)
            {PS2.stats_shape, PS2.axis, PS2.independence},
        ),
        "sample-variance-twice": (
            [
                (
                    ROW,
                    "(centred * centred).mean(axis=-1)",
                    "(centred * centred).sum(axis=-1) / (x.shape[-1] - 1)",
                ),
                (
                    LN,
                    "(centred * centred).mean(axis=-1, keepdims=True)",
                    "(centred * centred).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)",
                ),
            ],
            {PS2.stats_population_variance, PS2.population_variance},
        ),
        "stats-axis-0-and-eps-outside": (
            [
                (ROW, "x.mean(axis=-1)  #", "x.mean(axis=0)  #"),
                (ROW, "x - mean[..., None]", "x - mean"),
                (ROW, "(centred * centred).mean(axis=-1)", "(centred * centred).mean(axis=0)"),
                (LN, "centred / np.sqrt(var + eps)", "centred / (np.sqrt(var) + eps)"),
            ],
            {PS2.stats_axis, PS2.stats_shape, PS2.eps_placement},
        ),
        "stats-from-normlab-and-no-eps": (
            [
                (ROW, "^", "import normlab\n\n"),
                (
                    ROW,
                    "    x = np.asarray(x, dtype=np.float64)",
                    "    return normlab.row_stats(x)",
                ),
                (LN, "centred / np.sqrt(var + eps)", "centred / np.sqrt(var)"),
            ],
            {PS2.stats_reference_reuse, PS2.eps_placement},
        ),
        "eps-argument-ignored": (
            [(LN, "centred / np.sqrt(var + eps)", "centred / np.sqrt(var + 1e-5)")],
            {PS2.eps_placement},
        ),
        "no-centring": ([(LN, "centred = x64 - mu", "centred = x64")], {PS2.centering}),
        "bias-before-normalizing": (
            [
                (LN, "x64 = x.astype(np.float64)", "x64 = x.astype(np.float64) + beta"),
                (LN, "(gamma * x_hat + beta)", "(gamma * x_hat)"),
            ],
            {PS2.gain_and_bias},
        ),
        "in-place": (
            [
                (
                    LN,
                    "x64 = x.astype(np.float64)",
                    "x64 = x if x.dtype == np.float64 else x.astype(np.float64)",
                ),
                (LN, "centred = x64 - mu", "x64 -= mu\n    centred = x64"),
            ],
            {PS2.input_untouched},
        ),
        "one-pass-variance": (
            [
                (LN, "x64 = x.astype(np.float64)", "x64 = x.astype(dtype)"),
                (
                    LN,
                    "var = (centred * centred).mean(axis=-1, keepdims=True)",
                    "var = (x64 * x64).mean(axis=-1, keepdims=True) - mu * mu",
                ),
            ],
            {PS2.numerics},
        ),
        "float64-output": (
            [(LN, "return (gamma * x_hat + beta).astype(dtype)", "return gamma * x_hat + beta")],
            {PS2.dtype_and_shape},
        ),
        "captured-normlab": (
            [
                (LN, "^", "import normlab\n\n_reference_ln = normlab.layer_norm\n\n\n"),
                (
                    LN,
                    "    x = np.asarray(x)\n    dtype",
                    "    return _reference_ln(x, gamma, beta, eps)\n"
                    "    x = np.asarray(x)\n    dtype",
                ),
            ],
            {PS2.reference_reuse},
        ),
        "torch-layer-norm": (
            [(LN, "    x = np.asarray(x)\n    dtype", TORCH_LN)],
            {PS2.reference_reuse},
        ),
    },
    "ps3_axes": {
        "bn-on-features-and-witness-without-eps": (
            [
                (BN, "flat.mean(axis=0)", "flat.mean(axis=1, keepdims=True)"),
                (
                    BN,
                    "(centred * centred).mean(axis=0)",
                    "(centred * centred).mean(axis=1, keepdims=True)",
                ),
                (
                    WIT,
                    "        tiny = 5.0 + 1e-3",
                    "        return True\n        tiny = 5.0 + 1e-3",
                ),
            ],
            {PS3.bn_axis, PS3.witness_catches_eps},
        ),
        "bn-sample-variance-and-witness-without-shift": (
            [
                (
                    BN,
                    "(centred * centred).mean(axis=0)",
                    "(centred * centred).sum(axis=0) / (flat.shape[0] - 1)",
                ),
                (
                    WIT,
                    "        far = x + 1e6 * x.std(axis=-1, keepdims=True)\n"
                    "        if np.abs(np.asarray(norm_fn(far)) - y).max() > 1e-6:\n"
                    "            return False\n",
                    "",
                ),
            ],
            {PS3.bn_population_variance, PS3.witness_catches_cancellation},
        ),
        "bn-eps-outside-and-witness-from-audit": (
            [
                (BN, "np.sqrt(var + eps)", "(np.sqrt(var) + eps)"),
                (
                    WIT,
                    "    rng = np.random.default_rng(0)",
                    "    import normlab\n\n    return bool(normlab.audit.audit(norm_fn).ok)\n"
                    "    rng = np.random.default_rng(0)",
                ),
            ],
            {PS3.bn_eps_placement, PS3.witness_reference_reuse},
        ),
        "bn-batch-of-one-and-witness-always-true": (
            [
                (BN, "if flat.shape[0] < 2:", "if flat.shape[0] < 1:"),
                (
                    WIT,
                    "    rng = np.random.default_rng(0)",
                    "    return True\n    rng = np.random.default_rng(0)",
                ),
            ],
            {
                PS3.bn_batch_of_one,
                PS3.witness_catches_axis,
                PS3.witness_catches_sample_variance,
                PS3.witness_catches_eps,
                PS3.witness_catches_centering,
                PS3.witness_catches_cancellation,
            },
        ),
        "bn-in-place": (
            [
                (
                    BN,
                    "flat = x.astype(np.float64).reshape(-1, x.shape[-1])",
                    "flat = x.reshape(-1, x.shape[-1]) if x.dtype == np.float64 else "
                    "x.astype(np.float64).reshape(-1, x.shape[-1])",
                ),
                (BN, "centred = flat - mean", "flat -= mean\n    centred = flat"),
            ],
            {PS3.bn_input_untouched},
        ),
        "bn-from-normlab": (
            [
                (BN, "^", "import normlab\n\n\n"),
                (
                    BN,
                    "    x = np.asarray(x)\n    dtype",
                    "    return normlab.batch_norm(x, gamma, beta, eps)\n    x = np.asarray(x)\n"
                    "    dtype",
                ),
            ],
            {PS3.bn_reference_reuse},
        ),
        "bn-float64-output": (
            [(BN, "return out.reshape(x.shape).astype(dtype)", "return out.reshape(x.shape)")],
            {PS3.bn_dtype_and_shape},
        ),
    }
    | {"bnf:" + name: (PS3C_BUGS[name], {lost}) for lost, name in PS3C_CELLS.items()},
    "ps5_backward": {
        "dbeta-averaged": (
            [(BWD, "dbeta = dy64.sum(axis=lead)", "dbeta = dy64.mean(axis=lead)")],
            {PS5.dbeta},
        ),
        "dgamma-unnormalized": (
            [(BWD, "(dy64 * x_hat).sum(axis=lead)", "(dy64 * centred).sum(axis=lead)")],
            {PS5.dgamma},
        ),
        "no-mean-term": (
            [(BWD, "g - g.mean(axis=-1, keepdims=True) - x_hat", "g - x_hat")],
            {PS5.dx_mean_term},
        ),
        "no-variance-term": (
            [(BWD, " - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)", "")],
            {PS5.dx_variance_term},
        ),
        "gamma-forgotten-in-dx": ([(BWD, "g = dy64 * gamma", "g = dy64")], {PS5.dx_gamma}),
        "eps-outside-sigma": (
            [
                (
                    BWD,
                    "np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)",
                    "np.sqrt((centred * centred).mean(axis=-1, keepdims=True)) + eps",
                )
            ],
            {PS5.eps_placement},
        ),
        "dy-in-place": (
            [
                (
                    BWD,
                    "g = dy64 * gamma",
                    "g = np.multiply(dy, gamma, out=dy) if np.asarray(dy).dtype == np.float64 "
                    "else dy64 * gamma",
                )
            ],
            {PS5.input_untouched},
        ),
        "torch-autograd": (
            [(BWD, "    x = np.asarray(x)\n    dtype", TORCH_AUTOGRAD)],
            {PS5.reference_reuse},
        ),
        "float64-gradients": (
            [
                (
                    BWD,
                    "return dx.astype(dtype), dgamma.astype(dtype), dbeta.astype(dtype)",
                    "return dx, dgamma, dbeta",
                )
            ],
            {PS5.dtype_and_shape},
        ),
    },
    "ps7_family": {
        name: (PS7_BUGS[gn] + PS7_BUGS[bnb], lost)
        for name, (gn, bnb), lost in [
            (
                "strided-groups-and-layer-norms-backward",
                ("strided groups", "LayerNorm's backward"),
                {PS7.gn_contiguous_groups, PS7.bnb_axis},
            ),
            (
                "instance-norm-and-no-mean-term",
                ("instance norm", "no mean term"),
                {PS7.gn_instance_norm, PS7.bnb_mean_term},
            ),
            (
                "layer-norm-and-variance-as-a-constant",
                ("layer norm over every channel", "variance as a constant"),
                {PS7.gn_layer_norm, PS7.bnb_variance_term},
            ),
            (
                "sample-variance-and-dgamma-dbeta-swapped",
                ("group_norm sample variance", "dgamma and dbeta swapped"),
                {PS7.gn_population_variance, PS7.bnb_dgamma_dbeta},
            ),
            (
                "affine-before-normalizing-and-first-axis-statistics",
                ("gain and bias before normalizing", "statistics over the first axis"),
                {PS7.gn_gain_and_bias, PS7.bnb_every_leading_axis},
            ),
            (
                "eps-outside-and-float64-gradients",
                ("group_norm eps outside", "float64 gradients"),
                {PS7.gn_eps_placement, PS7.bnb_dtype_and_shape},
            ),
            (
                "channels-last-and-dy-in-place",
                ("channels from the last axis", "dy in place"),
                {PS7.gn_channel_axis, PS7.bnb_input_untouched},
            ),
            (
                "groups-unchecked-and-backward-from-normlab",
                ("groups unchecked", "normlab's batch_norm_backward"),
                {PS7.gn_indivisible_groups, PS7.bnb_reference_reuse},
            ),
        ]
    }
    | {
        name: (PS7_BUGS[bug], {lost})
        for name, bug, lost in [
            ("a-2d-backward", "a backward for 2-D input", PS7.bnb_every_leading_axis),
            ("gn-float64-output", "group_norm float64 output", PS7.gn_dtype_and_shape),
            ("gn-in-place", "group_norm in place", PS7.gn_input_untouched),
            ("gn-captured-normlab", "normlab's group_norm, captured", PS7.gn_reference_reuse),
        ]
    },
    "ps8_in_a_model": {name: (PS8_BUGS[name], {lost}) for lost, name in PS8_CELLS.items()},
    "ps9_dyt": {
        "alpha-after-no-beta-x-doubled": (
            [
                (DYT, TANH, "alpha * np.tanh(x.astype(np.float64))"),
                (DYT, "    return (gamma * y + beta)", "    x *= 2.0\n    return (gamma * y)"),
            ],
            {PS9.dyt_alpha, PS9.dyt_gain_and_bias, PS9.dyt_input_untouched},
        ),
        "layer-norm-first-in-float64": (
            [
                (
                    DYT,
                    f"    y = {TANH}",
                    "    x64 = x.astype(np.float64)\n"
                    "    x64 = x64 - x64.mean(-1, keepdims=True)\n"
                    "    y = np.tanh(alpha * x64 / np.sqrt(x64.var(-1, keepdims=True) + 1e-5))",
                ),
                (DYT, "return (gamma * y + beta).astype(dtype)", "return gamma * y + beta"),
            ],
            {PS9.dyt_elementwise, PS9.dyt_dtype_and_shape},
        ),
        "sigmoid-and-dalpha-without-x": (
            [
                (DYT, TANH, "1 / (1 + np.exp(-alpha * x))"),
                (DYT_BWD, "(du * x64).sum()", "du.sum()"),
            ],
            {PS9.dyt_values, PS9.dyt_dalpha_x},
        ),
        "chain-rule-slips-dy-halved": (
            [
                (DYT_BWD, "dx = du * alpha", "dx = du"),
                (DYT_BWD, "(dy64 * t).sum(axis=lead)", "(dy64 * x64).sum(axis=lead)"),
                (DYT_BWD, "dy64.sum(axis=lead)", "dy64.mean(axis=lead)"),
                (
                    DYT_BWD,
                    "    return dx.astype(dtype)",
                    "    dy64 *= 0.5\n    return dx.astype(dtype)",
                ),
            ],
            {PS9.dyt_dx_alpha, PS9.dyt_dgamma, PS9.dyt_dbeta, PS9.dyt_backward_input_untouched},
        ),
        "unsquared-derivative-dalpha-per-feature-float64": (
            [
                (DYT_BWD, "(1 - t * t)", "(1 - t)"),
                (DYT_BWD, "dalpha = (du * x64).sum()", "dalpha = (du * x64).sum(axis=lead)"),
                (DYT_BWD, "dtype.type(dalpha)", "dalpha.astype(dtype)"),
                (DYT_BWD, "return dx.astype(dtype),", "return dx,"),
            ],
            {PS9.dyt_dx_tanh, PS9.dyt_dalpha_scalar, PS9.dyt_backward_dtype_and_shape},
        ),
        "both-from-normlab": (
            [
                (DYT, "^", "import normlab\n\n\n"),
                (DYT, "    x = np.asarray(x)\n", "    return normlab.dyt(x, alpha, gamma, beta)\n"),
                (DYT_BWD, "^", "import normlab\n\n\n"),
                (
                    DYT_BWD,
                    "    x = np.asarray(x)\n",
                    "    return normlab.dyt_backward(dy, x, alpha, gamma)\n",
                ),
            ],
            {PS9.dyt_reference_reuse, PS9.dyt_backward_reference_reuse},
        ),
    },
}
# the grade_ids each loses under the course's reuse policy: a reuse cell costs its function's
# every cell
BANK = {
    assignment: {bug: (edits, cells_lost(lost)) for bug, (edits, lost) in bugs.items()}
    for assignment, bugs in BANK.items()
}
