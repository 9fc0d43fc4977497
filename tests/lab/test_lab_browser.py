"""The lab panel in Debian's Chromium, served on 127.0.0.1: every number it shows is normlab's.

Parity: each test reads the block the page carries, computes the statistics with normlab
(`row_stats`, `layer_norm`, and the red team's `wrong_axis`) and compares them with the
values the page displays, at full precision. Each test also ends with no console error, no
failed request and no request off 127.0.0.1 (the `browser_page` fixture records them).

The panel as it loads, and on a phone-sized screen, is read from the page's one visit of the
default build (tests/site_visit.py: `lab_panel`, `narrow_screen`); the tests that drive its
controls open a page each.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from lab_page import LAB_PAGE, Lab
from site_visit import LAB_PAGE as LAB_TOC
from site_visit import value

import normlab
from normlab.red_team import wrong_axis

pytestmark = [pytest.mark.slow, pytest.mark.browser]

RTOL = 1e-12  # JavaScript and NumPy both compute in float64; only the summation order differs


def close(shown, expected, scale=1.0) -> bool:
    """Same shape and equal up to RTOL, relative to the values or to `scale` near zero."""
    shown, expected = np.asarray(shown), np.asarray(expected)
    same_shape = shown.shape == expected.shape
    return same_shape and np.allclose(shown, expected, rtol=RTOL, atol=RTOL * scale)


def assert_shown_matches_normlab(shown: dict, x, gamma, beta, *, red_team: bool = False):
    """Both statistics tables and the standardized block equal normlab's on the block x.

    `shown` holds what the page displays: "raw_mu", "raw_var", "out_mu", "out_var",
    "out_sigma" (one per token) and the blocks "raw_block" and "out_block".
    """
    raw_mu, raw_var = normlab.row_stats(x)
    assert close(shown["raw_mu"], raw_mu, np.abs(x).max())
    assert close(shown["raw_var"], raw_var, raw_var.max())
    normalize = wrong_axis if red_team else normlab.layer_norm
    y = normalize(x, np.asarray(gamma, float), np.asarray(beta, float))
    out_mu, out_var = normlab.row_stats(y)
    assert close(shown["raw_block"], x)
    assert close(shown["out_block"], y, 10.0)
    assert close(shown["out_mu"], out_mu, 10.0)
    assert close(shown["out_var"], out_var, 10.0)
    assert close(shown["out_sigma"], np.sqrt(out_var), 10.0)


def assert_page_matches_normlab(lab: Lab, tokens: int, gamma, beta, *, red_team: bool = False):
    """The live page's tables and blocks equal normlab's on its first `tokens` tokens."""
    shown = {
        "raw_mu": lab.stats("lab-raw-stats", "mu"),
        "raw_var": lab.stats("lab-raw-stats", "var"),
        "out_mu": lab.stats("lab-out-stats", "mu"),
        "out_var": lab.stats("lab-out-stats", "var"),
        "out_sigma": lab.stats("lab-out-stats", "sigma"),
        "raw_block": lab.matrix("lab-raw-block"),
        "out_block": lab.matrix("lab-out-block"),
    }
    assert_shown_matches_normlab(shown, lab.block()[:tokens], gamma, beta, red_team=red_team)


def recorded(panel: dict) -> dict:
    """The visit's record of the panel (`site_visit.lab_panel`) in the form above."""

    def column(rows, name):
        return np.array([float(row[name]) for row in rows])

    return {
        "raw_mu": column(panel["raw_stats"], "mu"),
        "raw_var": column(panel["raw_stats"], "var"),
        "out_mu": column(panel["out_stats"], "mu"),
        "out_var": column(panel["out_stats"], "var"),
        "out_sigma": column(panel["out_stats"], "sigma"),
        "raw_block": np.array(panel["raw_block"]),
        "out_block": np.array(panel["out_block"]),
    }


def test_default_panel_is_layer_norm(site_visits):
    """All tokens, gamma 1, beta 0: normlab's numbers, every row at 0 and 1, the witness green."""
    panel = value(site_visits, LAB_TOC, "lab_panel")
    x = np.array(panel["data"]["x"])
    tokens = len(x)
    assert tokens >= 2 and panel["tokens"] == str(tokens)
    shown = recorded(panel)
    assert_shown_matches_normlab(shown, x, np.ones(6), np.zeros(6))
    assert np.allclose(shown["out_mu"], 0, atol=1e-12)
    assert np.allclose(shown["out_sigma"], 1, atol=1e-4)
    assert panel["witness"] == "ok"


def test_narrow_screen_keeps_the_page_in_its_width(site_visits):
    """On a phone-sized screen the panel scrolls inside itself, the page never sideways."""
    assert value(site_visits, LAB_TOC, "narrow_screen") <= 390


def test_gamma_two_beta_half_puts_every_row_at_half_and_two(browser_page, site_url):
    """gamma = 2 and beta = 0.5 give every row mean 0.5 and standard deviation 2."""
    lab = Lab.open(browser_page, site_url)
    lab.set("lab-gamma", 2)
    lab.set("lab-beta", 0.5)
    mu = lab.stats("lab-out-stats", "mu")
    assert len(mu) == len(lab.block())
    assert np.allclose(mu, 0.5, atol=1e-9)
    assert np.allclose(lab.stats("lab-out-stats", "sigma"), 2, atol=1e-4)
    assert_page_matches_normlab(lab, len(mu), np.full(6, 2.0), np.full(6, 0.5))
    assert lab.witness() == "ok"  # the witness checks gamma 1, beta 0 itself
    assert not browser_page.problems()


def test_one_token_lands_at_beta_and_keeps_its_output(browser_page, site_url):
    """A batch of one: mean beta, std |gamma|, and token 1's outputs equal to those in the batch."""
    lab = Lab.open(browser_page, site_url)
    lab.set("lab-gamma", -1.5)
    lab.set("lab-beta", 0.7)
    in_batch = lab.matrix("lab-out-block")[0]
    lab.set("lab-tokens", 1)
    assert len(lab.rows("lab-raw-stats")) == len(lab.rows("lab-out-stats")) == 1
    assert np.allclose(lab.stats("lab-out-stats", "mu"), [0.7], atol=1e-12)
    assert np.allclose(lab.stats("lab-out-stats", "sigma"), [1.5], atol=1e-4)
    assert np.array_equal(lab.matrix("lab-out-block")[0], in_batch)
    assert_page_matches_normlab(lab, 1, np.full(6, -1.5), np.full(6, 0.7))
    assert lab.witness() == "ok"
    assert not browser_page.problems()


def test_per_feature_gamma_and_beta(browser_page, site_url):
    """A gain and a bias per feature: the page still equals normlab.layer_norm(x, gamma, beta)."""
    lab = Lab.open(browser_page, site_url)
    lab.page.check("#lab-per-feature")
    gamma = [0.5, 2.0, -1.0, 3.0, 1.0, 0.25]
    beta = [0.0, -1.0, 0.5, 2.0, -0.3, 1.5]
    for k, (g, b) in enumerate(zip(gamma, beta, strict=True), start=1):
        lab.set(f"lab-gamma-{k}", g)
        lab.set(f"lab-beta-{k}", b)
    lab.set("lab-tokens", 5)
    assert_page_matches_normlab(lab, 5, gamma, beta)
    assert not np.allclose(lab.stats("lab-out-stats", "mu"), np.mean(beta))
    lab.page.uncheck("#lab-per-feature")  # back to one gamma and beta for every feature
    assert_page_matches_normlab(lab, 5, np.ones(6), np.zeros(6))
    assert not browser_page.problems()


def test_red_team_flip_raises_the_alarm_and_restores(browser_page, site_url):
    """The flip normalizes down the columns; the witness turns to alarm, and back to ok."""
    lab = Lab.open(browser_page, site_url)
    assert lab.witness() == "ok"
    lab.page.click("#lab-red-team")
    assert lab.witness() == "alarm" and lab.red_team_pressed() == "true"
    tokens = len(lab.block())
    assert_page_matches_normlab(lab, tokens, np.ones(6), np.zeros(6), red_team=True)
    assert np.abs(lab.stats("lab-out-stats", "mu")).max() > 0.01  # row means leave 0
    browser_page.screenshot("lab-red-team")

    lab.set("lab-beta", 0.5)
    lab.set("lab-tokens", 1)  # a single token collapses: variance 0, every output beta
    assert lab.stats("lab-out-stats", "var").tolist() == [0.0]
    assert np.array_equal(lab.matrix("lab-out-block"), np.full((1, 6), 0.5))
    assert lab.witness() == "alarm"
    assert "alone" in lab.page.inner_text("#lab-witness")

    lab.page.click("#lab-red-team")
    assert lab.witness() == "ok" and lab.red_team_pressed() == "false"
    assert_page_matches_normlab(lab, 1, np.ones(6), np.full(6, 0.5))
    assert not browser_page.problems()


def test_batch_norm_view_reads_down_the_columns(browser_page, site_url):
    """The reading toggle shows each column's mean and variance: BN's statistics, not LN's."""
    lab = Lab.open(browser_page, site_url)
    assert lab.page.is_hidden("#lab-raw-block tfoot")
    lab.page.check("#lab-axis-cols")
    assert lab.page.is_visible("#lab-raw-block tfoot")
    assert lab.page.get_attribute("#ln-lab", "data-axis") == "cols"
    x = lab.block()
    column_mu, column_var = normlab.row_stats(x.T)
    assert close(lab.matrix("lab-raw-block", "tfoot"), [column_mu, column_var], column_var.max())
    lab.set("lab-tokens", 1)  # one token: each column is one number, with no spread
    assert close(lab.matrix("lab-raw-block", "tfoot"), [x[0], np.zeros(6)])
    lab.page.check("#lab-axis-rows")
    assert lab.page.is_hidden("#lab-raw-block tfoot")
    assert lab.witness() == "ok"  # a view, not an attack: the normalization is unchanged
    assert not browser_page.problems()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_contrast(browser_page, site_url, theme):
    """The badge in both states, the red team's button and the card verdicts reach WCAG AA."""
    lab = Lab.open(browser_page, site_url)
    lab.page.emulate_media(reduced_motion="reduce")  # no colour transitions to catch mid-way
    lab.page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
    selectors = [
        "#lab-witness .lab-witness-verdict",
        "#lab-red-team",
        "#lab-out-note",
        "#lab-raw-stats tbody td",
        ".lab-cards .lab-cut",
        ".lab-cards .lab-kept",
    ]
    ratios = {s: lab.contrast(s) for s in selectors}
    lab.page.click("#lab-red-team")
    ratios["alarm badge"] = lab.contrast("#lab-witness .lab-witness-verdict")
    ratios["pressed button"] = lab.contrast("#lab-red-team")
    assert lab.witness() == "alarm"
    assert min(ratios.values()) >= 4.5, ratios
    assert not browser_page.problems()


def test_controls_work_from_the_keyboard(browser_page, site_url):
    """Arrow keys step the number fields and Space presses the red team's button."""
    lab = Lab.open(browser_page, site_url)
    tokens = len(lab.block())
    lab.page.focus("#lab-tokens")
    for _ in range(tokens - 1):
        lab.page.keyboard.press("ArrowDown")
    assert lab.page.input_value("#lab-tokens") == "1"
    assert len(lab.rows("lab-out-stats")) == 1
    lab.page.focus("#lab-gamma")
    lab.page.keyboard.press("ArrowUp")
    assert np.allclose(lab.stats("lab-out-stats", "sigma"), [1.1], atol=1e-4)
    lab.page.focus("#lab-red-team")
    lab.page.keyboard.press("Space")
    assert lab.witness() == "alarm"
    lab.page.keyboard.press("Enter")
    assert lab.witness() == "ok"
    assert not browser_page.problems()


def test_misconception_cards_set_up_the_panel(browser_page, site_url):
    """Card 1's button shows a batch of one under LN; card 2's the same batch under the flip."""
    lab = Lab.open(browser_page, site_url)
    lab.page.click('[data-lab-try="one-token"]')
    assert lab.page.input_value("#lab-tokens") == "1"
    assert len(lab.rows("lab-out-stats")) == 1 and lab.witness() == "ok"
    lab.page.click('[data-lab-try="flip-one-token"]')
    assert lab.red_team_pressed() == "true" and lab.witness() == "alarm"
    assert lab.stats("lab-out-stats", "var").tolist() == [0.0]
    lab.page.click('[data-lab-try="one-token"]')
    assert lab.red_team_pressed() == "false" and lab.witness() == "ok"
    assert not browser_page.problems()


def test_runs_from_file_without_a_server(new_context, built_site):
    """Opened as file://, the inline module still runs and nothing is fetched from a network."""
    context = new_context()
    page = context.new_page()
    errors, remote = [], []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("request", lambda r: r.url.startswith(("http:", "https:")) and remote.append(r.url))
    try:
        page.goto((built_site / LAB_PAGE).as_uri(), wait_until="load")
        page.wait_for_selector('#ln-lab[data-ready="true"]')
        assert page.get_attribute("#lab-witness", "data-state") == "ok"
        page.click("#lab-red-team")
        assert page.get_attribute("#lab-witness", "data-state") == "alarm"
    finally:
        context.close()
    # Chromium refuses web fonts over file:// (their origin is "null"); the theme of Python
    # 3.10's lock (pydata-sphinx-theme 0.15) loads Font Awesome's icons that way. Each refused
    # font also logs one "Failed to load resource"; anything else still fails the test.
    fonts = [e for e in errors if re.match(r"Access to font at 'file://.*/webfonts/", e)]
    errors = [e for e in errors if e not in fonts]
    for _ in fonts:
        if "Failed to load resource: net::ERR_FAILED" in errors:
            errors.remove("Failed to load resource: net::ERR_FAILED")
    assert not errors and not remote
