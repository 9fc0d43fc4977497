"""ps1's pool of per-student variants (issue 30): workable by hand, stable, and fair.

Every variant is checked against what the issue asks of it: a record of d features (d not 4,
the chapters' record), whole numbers whose mean is whole and whose population variance is a
perfect square, so every normalized value is a fraction a student can reach by hand; a
d_model no chapter works; and no typical mistake of ps1's table (`Mistake`) that gives the
right answer in any variant, since a student making it there would pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from normlab.answer_key.live import LIVE
from normlab.grading import CHECKS, DEFAULT_SEED, pools, ps1_by_hand
from normlab.grading.oracle import DeclaredOracle

PS1 = "ps1_by_hand"
VARIANTS = pools.variants(PS1)
CHAPTER_WIDTHS = {4, 16, 64, 256, 512, 768, 1024, 4096}


def test_the_pool_holds_every_slot_once_and_is_the_scripts_draw():
    assert pools.slots(PS1) == len(VARIANTS) >= 200
    assert [v["slot"] for v in VARIANTS] == list(range(len(VARIANTS)))
    records = [tuple(v["record"]) for v in VARIANTS]
    assert len(set(records)) == len(records)
    made = subprocess.run(
        [sys.executable, "scripts/ps1_pool.py"], capture_output=True, text=True, check=True
    )
    assert json.loads(made.stdout) == json.loads(
        (pools.HERE / pools.POOLS[PS1]).read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: str(v["slot"]))
def test_every_variant_is_workable_by_hand(variant):
    record, d_model = variant["record"], variant["d_model"]
    d = len(record)
    assert d != 4 and 5 <= d <= 8
    assert all(isinstance(v, int) and 0 <= v <= 20 for v in record)
    mean = Fraction(sum(record), d)
    variance = sum((Fraction(v) - mean) ** 2 for v in record) / d
    std = int(variance**0.5 + 0.5)
    assert mean.denominator == 1 and Fraction(std * std) == variance and 2 <= std <= 6
    assert tuple(sorted(record)) not in {(1, 2, 3, 4), (2, 4, 6, 8)}
    assert d_model not in CHAPTER_WIDTHS and d_model % 32 == 0


def _right(variant) -> dict:
    case = CHECKS[PS1].cell.mean.make_cases(DEFAULT_SEED, variant=variant)[0]
    oracle = DeclaredOracle(LIVE, ps1_by_hand.right_questions(case))
    return ps1_by_hand._right(SimpleNamespace(case=case, oracle=oracle))


def test_no_typical_mistake_is_right_in_any_variant():
    tables = {
        "mu": ps1_by_hand.MEAN_MISTAKES,
        "var": ps1_by_hand.VARIANCE_MISTAKES,
        "x_hat": ps1_by_hand.NORMALIZED_MISTAKES,
        "with_eps": ps1_by_hand.EPS_MISTAKES,
    }
    for variant in VARIANTS:
        right = _right(variant)
        for answer, mistakes in tables.items():
            for mistake in mistakes:
                wrong = np.asarray(mistake.value(right), dtype=np.float64)
                assert not np.allclose(wrong, right[answer], rtol=0, atol=1e-9), (
                    variant,
                    mistake.name,
                )
        for name in ps1_by_hand.PARAM_WORDS:
            wrong = {count for count, _ in ps1_by_hand._count_mistakes(name, right)}
            assert right[name] not in wrong, (variant, name)


def test_a_students_slot_is_stable_and_grows_by_appending_only():
    """The slot is the id's SHA-256 modulo the fixed number of slots: the same id always
    lands on the same variant, whatever the order or size of the class."""
    first = {s: pools.slot(PS1, s) for s in ("alice", "bob", "carol")}
    assert first == {"alice": 175, "bob": 218, "carol": 158}  # recorded: never moves
    assert pools.variant(PS1, "alice") == VARIANTS[175]
    assert len({pools.slot(PS1, f"student{i:03d}") for i in range(300)}) > 150


def test_who_the_student_is(monkeypatch, tmp_path):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    assert pools.student_id("") == (None, "nothing: STUDENT is empty and this is no JupyterHub")
    assert pools.student_id("alice")[0] == "alice"
    monkeypatch.setenv("JUPYTERHUB_USER", "bob")
    assert pools.student_id("")[0] == "bob"
    assert pools.student_id("alice")[0] == "alice"  # what the notebook says, in her kernel
    graded = tmp_path / "autograded" / "carol" / PS1
    graded.mkdir(parents=True)
    monkeypatch.chdir(graded)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert pools.student_id("alice")[0] == "carol"  # the submitter, while nbgrader grades
    with pytest.raises(ValueError, match="no student id"):
        pools.variant(PS1, "")


def test_the_instructors_command_prints_a_students_variant_and_answers():
    done = subprocess.run(
        [sys.executable, "-m", "normlab.course", "variant", PS1, "--student", "alice"],
        capture_output=True,
        text=True,
        check=True,
    )
    shown = json.loads(done.stdout)
    assert shown["record"] == pools.variant(PS1, "alice")["record"]
    record = np.array(shown["record"], dtype=np.float64)
    assert shown["answers"]["mean_r"] == record.mean()
    assert shown["answers"]["params_gain_bias"] == 2 * shown["d_model"]
    refused = subprocess.run(
        [sys.executable, "-m", "normlab.course", "variant", "ps2_layer_norm", "--student", "a"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "same numbers" in refused.stderr
