"""The lab's block, made by normlab: its shape, its spread of scales, its JSON element."""

from __future__ import annotations

import doctest
import json
import re

import numpy as np

import normlab
import normlab.lab_data
from normlab import audit
from normlab.lab_data import EPS, MAX_TOKENS, H, lab_data, lab_data_html, lab_matrix


def test_block_is_tokens_by_features():
    """Tokens are rows, H = 6 features are columns, and the block is the same on every build."""
    x = lab_matrix()
    assert x.shape == (MAX_TOKENS, H) == (8, 6)
    assert np.array_equal(x, lab_matrix())


def test_tokens_sit_on_wildly_different_scales():
    """The rows' standard deviations span more than two decades; their means differ in sign."""
    _, var = normlab.row_stats(lab_matrix())
    std = np.sqrt(var)
    assert std.max() / std.min() > 100
    mean, _ = normlab.row_stats(lab_matrix())
    assert (mean > 0).any() and (mean < 0).any()


def test_every_row_lands_at_sigma_gamma_to_display_precision():
    """Each row's variance dwarfs eps: sigma_out = |gamma| sqrt(var / (var + eps)) reads |gamma|."""
    _, var = normlab.row_stats(lab_matrix())
    assert np.all(1 - np.sqrt(var / (var + EPS)) < 5e-5)


def test_values_are_what_the_page_shows():
    """Every value has at most 4 significant digits: the panel displays them exactly."""
    x = lab_matrix()
    assert all(float(f"{v:.4g}") == v for v in x.ravel())


def test_json_element_round_trips():
    """The page's <script type="application/json" id="lab-data"> holds exactly lab_data()."""
    html = lab_data_html()
    match = re.fullmatch(r'<script type="application/json" id="lab-data">(.*)</script>', html)
    assert match, html[:120]
    data = json.loads(match.group(1))
    assert data == lab_data()
    assert np.array_equal(np.array(data["x"]), lab_matrix())
    assert data["eps"] == EPS == 1e-5


def test_docstring_example_holds():
    result = doctest.testmod(normlab.lab_data)
    assert result.attempted > 0 and result.failed == 0


def test_badge_uses_the_python_witness_tolerances():
    """The browser's witness holds LayerNorm to normlab.audit's own standard."""
    assert lab_data()["witness"] == {
        "mean_atol": audit.MEAN_ATOL,
        "var_atol": audit.STANDARD_ATOL,
        "batch_of_one_atol": audit.BATCH_OF_ONE_ATOL,
    }
