"""Each adversarial submission gets exactly the outcome fixed for it in attacks.py, under
strict isolation wherever bubblewrap works (as root and as a normal user alike)."""

from __future__ import annotations

import json

import pytest
from security_attacks import ATTACKS, LN_CELLS, STATS_CELLS
from security_course import attack_student

from normlab.course.grader import bwrap, run_record
from normlab.course.grader.isolation import Limits, python_paths

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
GRADE_CELLS = STATS_CELLS + LN_CELLS
NO_STRICT = bwrap.unavailable(tuple(python_paths()), Limits().tmp_bytes)


@pytest.mark.skipif(bool(NO_STRICT), reason=f"no strict isolation here: {NO_STRICT}")
def test_the_attacks_were_graded_with_strict_isolation(attack_course):
    assert (
        json.loads(run_record(attack_course.root, "ps2_layer_norm").read_text())["isolation"]
        == "strict"
    )
    assert "strict isolation" in attack_course.output


def _text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(output.get("evalue", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_attack_scores_what_was_fixed(attack_course, attack):
    student = attack_student(attack.name)
    scores = attack_course.scores()[student]
    zeroed = tuple(gid for gid in GRADE_CELLS if scores[gid] == 0)
    assert zeroed == tuple(gid for gid in GRADE_CELLS if gid in attack.failed)
    assert sum(scores.values()) == attack.score


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.reason], ids=lambda a: a.name)
def test_attack_record_gives_the_reason(attack_course, attack):
    record = attack_course.record(attack_student(attack.name))
    messages = [record.get("reason") or ""] + [c["message"] or "" for c in record["cells"]]
    assert any(attack.reason in m for m in messages), record


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.output], ids=lambda a: a.name)
def test_attack_shows_its_own_failure(attack_course, attack):
    assert attack.output in _text(attack_course.notebook(attack_student(attack.name)))
