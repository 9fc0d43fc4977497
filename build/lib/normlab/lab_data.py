"""The data behind the Lab page: a block of raw activations, made by normlab when the book builds.

The lab (lab/index.md) is a live LayerNorm panel in the browser. Its JavaScript recomputes
every statistic from this block; the page carries the block as a JSON script element that
this module writes while the book executes the page, so the numbers the reader plays with and
the numbers the tests check with normlab are the same numbers.

The block has `MAX_TOKENS` tokens (rows) of `H` features (columns). The tokens sit on wildly
different scales, from 1 to about 3000, with offsets of up to three times their scale: the
situation LayerNorm (Ba, Kiros and Hinton, 2016, arXiv:1607.06450) exists for. Values are
rounded to 4 significant digits, so what the page shows is exactly what it computes with.

    >>> from normlab.lab_data import lab_matrix
    >>> lab_matrix().shape
    (8, 6)
"""

from __future__ import annotations

import json

import numpy as np

from .audit import BATCH_OF_ONE_ATOL, MEAN_ATOL, STANDARD_ATOL

H = 6  # features per token: the columns of the block
MAX_TOKENS = 8  # the largest batch the panel offers; the reader picks 1..MAX_TOKENS
EPS = 1e-5  # layer_norm's default epsilon, added to the variance inside the square root
SEED = 1607  # the paper's arXiv number, 1607.06450
DATA_ELEMENT_ID = "lab-data"


def _four_significant_digits(x: np.ndarray) -> np.ndarray:
    """Round every value to 4 significant digits (JSON then prints them short and exact)."""
    return np.vectorize(lambda v: float(f"{v:.4g}"))(x)


def lab_matrix(tokens: int = MAX_TOKENS, d: int = H, seed: int = SEED) -> np.ndarray:
    """The raw block, shape (tokens, d): one token per row, each on its own scale.

    The token scales are spread evenly over 3.5 decades (10**0 to 10**3.5) and shuffled, so
    the spread is there by construction, not by luck of the seed.
    """
    rng = np.random.default_rng(seed)
    scale = rng.permutation(10.0 ** np.linspace(0.0, 3.5, tokens))[:, None]  # (T, 1)
    offset = scale * rng.uniform(-3.0, 3.0, size=(tokens, 1))  # (T, 1)
    return _four_significant_digits(offset + scale * rng.standard_normal((tokens, d)))  # (T, d)


def lab_data() -> dict:
    """Everything the panel's script reads: the block, eps and the witness's tolerances.

    The tolerances are the Python witness's own (`normlab.audit`), so the badge on the page
    and the audit in the chapters hold LayerNorm to the same standard.
    """
    return {
        "source": "normlab.lab_data.lab_matrix",
        "x": lab_matrix().tolist(),
        "eps": EPS,
        "witness": {
            "mean_atol": MEAN_ATOL,
            "var_atol": STANDARD_ATOL,
            "batch_of_one_atol": BATCH_OF_ONE_ATOL,
        },
    }


def lab_data_html() -> str:
    """The JSON script element the page carries (inert data, read by the panel's module)."""
    text = json.dumps(lab_data(), separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{DATA_ELEMENT_ID}">{text}</script>'
