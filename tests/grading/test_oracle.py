"""The oracle is the judges' one seam to expectations, and it is only asked about inputs.

A student download (issue 19) is to run every visible check with no answer inside, from
expectations recorded when it is built. That works if (1) no judge reaches the reference or
the family of variants but through its oracle, and (2) the oracle is only ever asked about a
case's inputs (or a judge's constants), never about what the student returned, so what it
answers is fixed before any student runs. Both are checked here, (2) over the whole bank of
submissions of the verdict snapshot.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from test_verdicts import submissions

from normlab.grading import CHECKS, DEFAULT_SEED, ps1_by_hand, run_cases, variants_family
from normlab.grading.oracle import LIVE, wrong_implementations

GRADING = Path(ps1_by_hand.__file__).parent
# what computes expectations: the reference, every variant's output, ps7's wrong
# implementations, ps8's torch family
BACKING_MODULES = ("reference", "variant_outputs", "variants_family", "torch_family")
# the modules that may compute expectations themselves: the oracle, and what it is backed by
BACKING = {"oracle.py", *(f"{name}.py" for name in BACKING_MODULES)}
# the run side: hands the student's code trusted callables (ps3's correct LayerNorm)
RUN_SIDE = {"trusted.py"}
CONSTANTS = [ps1_by_hand.R]  # a judge's own input: ps1's record [1, 2, 3, 4]


def _reaches(tree: ast.AST) -> set[str]:
    """The backing modules a module imports (to compute expectations), and torch (ps8's
    nn.LayerNorm)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "torch" for a in node.names
        ):
            found.add("torch")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found.add("torch")
        if isinstance(node, ast.ImportFrom):
            module, names = (node.module or "").rsplit(".", 1)[-1], {a.name for a in node.names}
            for backing in BACKING_MODULES:
                if module == backing or (not node.module and backing in names):
                    found.add(backing)
    return found


def test_no_judge_reaches_the_reference_or_the_variants_but_through_its_oracle():
    for path in sorted(GRADING.rglob("*.py")):
        if path.name not in BACKING | RUN_SIDE:
            reached = _reaches(ast.parse(path.read_text(encoding="utf-8")))
            assert not reached, f"{path.relative_to(GRADING)} computes expectations: {reached}"
    oracle = ast.parse((GRADING / "oracle.py").read_text(encoding="utf-8"))
    assert _reaches(oracle) == set(BACKING_MODULES)


def test_the_oracle_answers_ps7s_wrong_implementations_by_name():
    x = np.random.default_rng(0).normal(size=(2, 6, 3))
    assert np.array_equal(LIVE.wrong("strided_groups", x, 3), variants_family.strided_groups(x, 3))
    assert set(wrong_implementations()) == {
        f.__name__ for f in variants_family.GROUP_NORM + variants_family.BATCH_NORM_BACKWARD
    }


class PinnedOracle:
    """LIVE, refusing any array argument that is not one of the battery's case inputs."""

    def __init__(self, cases) -> None:
        self.inputs = [
            np.asarray(value, dtype=np.float64)
            for case in cases
            for value in (*case.args, *case.kwargs.values())
            if isinstance(value, np.ndarray)
        ] + CONSTANTS
        self.asked = 0

    def _pinned(self, args) -> None:
        self.asked += 1
        for arg in args:
            if isinstance(arg, np.ndarray):
                arg = np.asarray(arg, dtype=np.float64)
                assert any(
                    arg.shape == known.shape and np.array_equal(arg, known, equal_nan=True)
                    for known in self.inputs
                ), "the oracle was asked about something that is not a case's input"

    def reference(self, name, *args, **kwargs):
        self._pinned(args)
        return LIVE.reference(name, *args, **kwargs)

    def family(self, x, eps):
        self._pinned((x,))
        return LIVE.family(x, eps)

    def statistics(self, x):
        self._pinned((x,))
        return LIVE.statistics(x)

    def wrong(self, name, *args, **kwargs):
        self._pinned(args)
        return LIVE.wrong(name, *args, **kwargs)

    def torch_layer_norm(self, x, normalized_shape, weight=None, bias=None, **options):
        self._pinned((x, weight, bias, options.get("dy")))
        return LIVE.torch_layer_norm(x, normalized_shape, weight, bias, **options)

    def torch_layer_norm_state(self, normalized_shape, elementwise_affine=True):
        self._pinned(())
        return LIVE.torch_layer_norm_state(normalized_shape, elementwise_affine)

    def training_losses(self, run, **member):
        assert all(isinstance(v, int | float) for v in run.values()), "not the case's run"
        self._pinned(())
        return LIVE.training_losses(run, **member)


def test_the_oracle_is_only_asked_about_a_cases_inputs():
    """Every visible battery of the bank, judged with a PinnedOracle: the verdicts are the
    live oracle's, and no question was about a student's output."""
    asked = 0
    with np.errstate(all="ignore"):
        for name, (assignment, namespace) in sorted(submissions().items()):
            for grade_id, spec in CHECKS[assignment].items():
                cases = spec.make_cases(DEFAULT_SEED, hidden=False)
                results, oracle = run_cases(namespace, cases), PinnedOracle(cases)
                pinned = spec.judge(cases, results, oracle)
                assert pinned == spec.judge(cases, results, LIVE), (name, grade_id)
                asked += oracle.asked
    assert asked > 500  # the family cells alone ask about every case
