"""Every judge's message on a bank of submissions, compared with a recorded snapshot.

For every assignment, every CheckSpec of `normlab.grading.CHECKS` runs its visible and its
hidden battery against a bank of submissions: the instructor's solutions, the blank
releases (NotImplementedError stubs), the planted bugs of `course_bank.BANK`, the answers
of `demo_course.PS2_ANSWERS` (tests/demo_course.py), normlab's red team in place of the student's
LayerNorm, batch-norm and RMSNorm, and a few answers of its own (`EXTRA`). Each judge's
verdict, its category beside its message (None for a pass), is compared with
`verdicts.json`, recorded on the code before the grading package was refactored, so a
refactoring that changes a verdict, its category or a word of a message fails here.

A message changed on purpose is re-recorded with

    .venv/bin/python tests/grading/test_verdicts.py --update

and the diff of `verdicts.json` shows every message that changed.
"""

from __future__ import annotations

import json
import re
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

# run as a script (--update): its helpers here, and the shared ones in tests/
sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

import demo_course as demo  # noqa: E402
from course_bank import BANK  # noqa: E402
from course_helpers import (  # noqa: E402
    answer_cells,
    read,
    release_path,
    run_sources,
    source_path,
    variant_for,
    with_bug,
)

from normlab import red_team  # noqa: E402
from normlab.answer_key.live import LIVE  # noqa: E402
from normlab.grading import ASSIGNMENTS, CHECKS, run_case, run_check  # noqa: E402
from normlab.grading.catalog import cells_of, reuse_cell  # noqa: E402
from normlab.grading.verdict import NOT_JUDGED, OUTCOMES, PASSED  # noqa: E402

SNAPSHOT = Path(__file__).with_name("verdicts.json")
# one pytest-xdist worker records the bank's messages once (the module fixture `now`)
pytestmark = pytest.mark.xdist_group("verdicts")

# answers no other bank holds: assignment -> name -> source defining the student's functions
# (with the ones below, every cell's own misconception shows somewhere in the bank)
EXTRA = {
    "ps1_by_hand": {
        "every-value-wrong": """
r, d_model = np.array([1.0, 9.0, 7.0, 9.0, 10.0, 6.0]), 544  # TEST_STUDENT's variant
mean_r = 6.0
var_r = 54 / 5
normalized_r = (r - 7.0) / np.sqrt(54 / 5)
normalized_r_eps = (r - 7.0) / (np.sqrt(9.0) + 1e-5)
params_gain_bias, params_gain_only, params_rms = 544, 544, 544
""",
        "another-students-numbers": """
# bob's right answers, typed as numbers into the notebook of TEST_STUDENT (grace)
r, d_model = np.array([7.0, 4.0, 3.0, 7.0, 9.0, 0.0]), 704
mean_r = 5.0
var_r = 9.0
normalized_r = (r - 5.0) / 3.0
normalized_r_eps = (r - 5.0) / np.sqrt(9.0 + 1e-5)
params_gain_bias, params_gain_only, params_rms = 2 * 704, 704, 704
""",
    },
    "ps3_axes": {
        "gamma-ignored-and-witness-always-false": """
def batch_norm(x, gamma, beta, eps=1e-5):
    axes = tuple(range(x.ndim - 1))
    return (x - x.mean(axis=axes)) / np.sqrt(x.var(axis=axes) + eps) + beta

def witness(norm_fn):
    return False
""",
    },
    "ps5_backward": {
        "means-over-the-batch": """
def layer_norm_backward(dy, x, gamma, eps=1e-5):
    mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    sigma = np.sqrt(var + eps)
    x_hat, g = (x - mu) / sigma, dy * gamma
    lead = tuple(range(x.ndim - 1))
    dx = (g - g.mean() - x_hat * (g * x_hat).mean()) / sigma
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
""",
        "dx-over-the-variance": """
def layer_norm_backward(dy, x, gamma, eps=1e-5):
    mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    x_hat, g = (x - mu) / np.sqrt(var + eps), dy * gamma
    lead = tuple(range(x.ndim - 1))
    mean = lambda v: v.mean(axis=-1, keepdims=True)
    dx = (g - mean(g) - x_hat * mean(g * x_hat)) / (var + eps)
    return dx, (dy * x_hat).sum(axis=lead), dy.sum(axis=lead)
""",
    },
    "ps6_stability_speed": {
        "one-pass-float64-and-mean-time": """
def stable_variance(x):
    x = np.asarray(x)
    return ((x * x).mean(axis=-1) - x.mean(axis=-1) ** 2).astype(np.float64)

def time_median(fn, repeats=7, warmup=2, clock=None):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return float(np.mean(times))
""",
        "np-var": """
def stable_variance(x):
    return np.var(x, axis=-1)
""",
        "sample-variance-and-warm-up-timed": """
def stable_variance(x):
    centred = x - x.mean(axis=-1, keepdims=True)
    return (centred * centred).sum(axis=-1) / (x.shape[-1] - 1)

def time_median(fn, repeats=7, warmup=2, clock=None):
    times = []
    for _ in range(warmup + repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return float(np.median(times))
""",
    },
    "ps7_family": {
        "torch-group-norm-and-autograd": """
import torch

def group_norm(x, num_groups, gamma, beta, eps=1e-5):
    t = torch.nn.functional.group_norm(
        torch.as_tensor(x), num_groups, torch.as_tensor(gamma), torch.as_tensor(beta), eps
    )
    return t.numpy()

def batch_norm_backward(dy, x, gamma, eps=1e-5):
    xt = torch.tensor(x, requires_grad=True)
    gt = torch.tensor(gamma, requires_grad=True)
    bt = torch.zeros(x.shape[-1], dtype=xt.dtype, requires_grad=True)
    lead = tuple(range(x.ndim - 1))
    mu = xt.mean(lead, keepdim=True)
    var = ((xt - mu) ** 2).mean(lead, keepdim=True)
    (gt * (xt - mu) / torch.sqrt(var + eps) + bt).backward(torch.tensor(dy))
    return xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()
""",
        "uncentred-and-unscaled": """
def group_norm(x, num_groups, gamma, beta, eps=1e-5):
    n, c = x.shape[:2]
    if c % num_groups:
        raise ValueError(f"C = {c}, num_groups = {num_groups}")
    g = x.reshape(n, num_groups, -1)
    y = (g / np.sqrt((g * g).mean(-1, keepdims=True) + eps)).reshape(x.shape)
    shape = (c,) + (1,) * (x.ndim - 2)
    return (gamma.reshape(shape) * y + beta.reshape(shape)).astype(x.dtype)

def batch_norm_backward(dy, x, gamma, eps=1e-5):
    lead = tuple(range(x.ndim - 1))
    centred = x - x.mean(lead, keepdims=True)
    x_hat = centred / np.sqrt((centred * centred).mean(lead, keepdims=True) + eps)
    g = dy * gamma
    dx = g - g.mean(lead, keepdims=True) - x_hat * (g * x_hat).mean(lead, keepdims=True)
    return dx, (dy * x_hat).sum(lead), dy.mean(lead)
""",
        "loops-in-the-input-dtype": """
def group_norm(x, num_groups, gamma, beta, eps=1e-5):
    n, c = x.shape[:2]
    if c % num_groups:
        raise ValueError(f"{c} channels do not split into {num_groups} groups")
    out, k = np.empty_like(x), c // num_groups
    for i in range(n):
        for g in range(num_groups):
            block = x[i, g * k : (g + 1) * k]
            out[i, g * k : (g + 1) * k] = (block - block.mean()) / np.sqrt(block.var() + eps)
    shape = (c,) + (1,) * (x.ndim - 2)
    return out * gamma.reshape(shape).astype(x.dtype) + beta.reshape(shape).astype(x.dtype)

def batch_norm_backward(dy, x, gamma, eps=1e-5):
    d = x.shape[-1]
    flat, dflat = x.reshape(-1, d), dy.reshape(-1, d)
    n = flat.shape[0]
    inv = 1.0 / np.sqrt(flat.var(0) + eps)
    x_hat = (flat - flat.mean(0)) * inv
    g = dflat * gamma
    dx = inv / n * (n * g - g.sum(0) - x_hat * (g * x_hat).sum(0))
    out = (dx.reshape(x.shape), (dflat * x_hat).sum(0), dflat.sum(0))
    return tuple(a.astype(x.dtype) for a in out)
""",
    },
    "ps2_layer_norm": {
        "running-statistics": """
running = {}

def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    if var.shape in running:
        var = 0.5 * var + 0.5 * running[var.shape]
    running[var.shape] = var
    return gamma * (x - mu) / np.sqrt(var + eps) + beta
""",
    },
    "ps8_in_a_model": {
        "rms-like-eps-default-1e-6": """
import torch

class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True):
        super().__init__()
        shape = torch.Size(
            [normalized_shape] if isinstance(normalized_shape, int) else normalized_shape
        )
        self.shape, self.eps = shape, eps
        self.weight = torch.nn.Parameter(torch.ones(shape))
        self.bias = torch.nn.Parameter(torch.zeros(shape))

    def forward(self, x):
        dims = tuple(range(-len(self.shape), 0))
        rms = torch.sqrt((x * x).mean(dim=dims, keepdim=True) + self.eps)
        return x / rms * self.weight + self.bias
""",
        "buffers-swapped-and-numpy-forward": """
import torch

class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        self.d, self.eps = normalized_shape, eps
        self.register_buffer("weight", torch.ones(normalized_shape))
        self.register_buffer("bias", torch.zeros(normalized_shape))

    def forward(self, x):
        a = x.detach().numpy()
        c = a - a.mean(axis=-1, keepdims=True)
        out = c / np.sqrt((c * c).sum(axis=-1, keepdims=True) + self.eps)
        return torch.from_numpy(out) * self.bias + self.weight
""",
        "first-batch-statistics-kept": """
import torch

class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        shape = torch.Size(
            [normalized_shape] if isinstance(normalized_shape, int) else normalized_shape
        )
        self.shape, self.eps, self.kept = shape, eps, None
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(shape))
            self.bias = torch.nn.Parameter(torch.zeros(shape))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        dims = tuple(range(-len(self.shape), 0))
        mean = x.mean(dim=dims, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
        if self.kept is None or self.kept.shape != var.shape:
            self.kept = var.detach()
        y = (x - mean) / torch.sqrt(self.kept + self.eps)
        return y if self.weight is None else y * self.weight + self.bias
""",
        "no-eps-requires-grad-off-forward-returns-none": """
import torch

class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(normalized_shape), requires_grad=False)
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return None
""",
    },
    "ps4_rmsnorm": {
        "in-place-gamma-ignored-final-norm-forgotten": """
def rms_norm(x, gamma, eps=1e-6):
    x /= np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    return x

ln_total, rms_total = 24 * 2 * 768, 24 * 768
""",
        "a-wrapper-of-the-reference": """
import normlab


def rms_norm(x, gamma, eps=1e-6):
    return normlab.rms_norm(x, gamma, eps)
""",
        "zhang-sennrich-eps": """
def rms_norm(x, gamma, eps=1e-8):
    x = np.asarray(x, dtype=np.float64)
    return gamma * x / (np.sqrt((x * x).mean(axis=-1, keepdims=True)) + eps)
""",
    },
}


def red_team_as_written() -> dict:
    """normlab's red team as a student would have written it: the same source, compiled as
    the student's own code (not normlab's file: the tripwire would take a call of it for a
    library implementation, and the course's reuse policy would void every cell)."""
    namespace: dict = {}
    source = Path(red_team.__file__).read_text(encoding="utf-8")
    exec(compile(source, "<the red team, as a student's code>", "exec"), namespace)  # noqa: S102
    return namespace


def _as_rms_norm(fn):
    """A red-team LayerNorm called as the student's rms_norm(x, gamma, eps)."""

    def rms_norm(x, gamma, eps=1e-6):
        return fn(x, gamma, None, eps)

    return rms_norm


def submission_sources() -> dict[str, tuple[str, list[str]]]:
    """name -> (assignment, the code it runs, cell by cell) for every submission of the bank
    that is code: all but the red team's, which are normlab's own functions."""
    bank: dict[str, tuple[str, list[str]]] = {}
    for assignment in ASSIGNMENTS:
        bank[f"{assignment}/solution"] = (assignment, answer_cells(read(source_path(assignment))))
        bank[f"{assignment}/blank"] = (assignment, answer_cells(read(release_path(assignment))))
        bank[f"{assignment}/nothing defined"] = (assignment, [])
        for bug, (edits, _) in BANK.get(assignment, {}).items():
            nb = with_bug(read(source_path(assignment)), edits)
            bank[f"{assignment}/bank:{bug}"] = (assignment, answer_cells(nb))
    for assignment, answers in EXTRA.items():
        for name, source in answers.items():
            bank[f"{assignment}/extra:{name}"] = (assignment, ["import numpy as np", source])
    for name, answers in demo.PS2_ANSWERS.items():
        nb = demo.fill(read(release_path(demo.PS2)), answers)
        bank[f"{demo.PS2}/demo:{name}"] = (demo.PS2, answer_cells(nb))
    return bank


def submissions() -> dict[str, tuple[str, dict]]:
    """name -> (assignment, namespace) for every submission of the bank."""
    sources = submission_sources()
    bank = {name: (a, run_sources(code)) for name, (a, code) in sources.items()}
    ps2 = run_sources(sources["ps2_layer_norm/solution"][1])
    ps3 = run_sources(sources["ps3_axes/solution"][1])
    written = red_team_as_written()
    for name, planted in red_team.RED_TEAM.items():
        fn = written[planted.fn.__name__]
        as_student = {
            "ps2_layer_norm": {**ps2, "layer_norm": fn},
            "ps3_axes": {**ps3, "batch_norm": fn},
            "ps4_rmsnorm": {"rms_norm": _as_rms_norm(fn)},
        }
        for assignment, namespace in as_student.items():
            bank[f"{assignment}/red_team:{name}"] = (assignment, namespace)
    return bank


def verdicts(assignment: str, namespace: dict) -> dict[str, dict[str, dict]]:
    """grade_id -> {"visible": verdict, "hidden": verdict} for one submission, each verdict
    {"category": ..., "message": ...}."""
    found = {}
    for grade_id, spec in CHECKS[assignment].items():
        found[grade_id] = {}
        for battery, hidden in (("visible", False), ("hidden", True)):
            # through run_check: the judge gets the questions its check declares, no others
            run_one = partial(run_case, namespace, owners=namespace)
            variant = variant_for(assignment)  # ps1: the in-process student's own numbers
            verdict = run_check(spec, run_one, hidden=hidden, oracle=LIVE, variant=variant)
            found[grade_id][battery] = {"category": verdict.category, "message": verdict.message}
            if verdict.note:
                found[grade_id][battery]["note"] = verdict.note
    return found


def record() -> dict:
    with np.errstate(all="ignore"):
        return {name: verdicts(*entry) for name, entry in sorted(submissions().items())}


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def now() -> dict:
    return record()


def test_the_bank_is_the_recorded_one(recorded, now):
    assert sorted(now) == sorted(recorded)


def test_every_verdict_is_the_recorded_one(recorded, now):
    changed = [
        f"{name} {grade_id} {battery}:\n  was {was!r}\n  now {got!r}"
        for name, cells in now.items()
        for grade_id, batteries in cells.items()
        for battery, got in batteries.items()
        if (was := recorded.get(name, {}).get(grade_id, {}).get(battery, "<absent>")) != got
    ]
    assert changed == [], "\n".join(changed)


def test_the_bank_fails_and_passes_cells(recorded):
    """The snapshot is only worth something if the bank exercises both verdicts of each cell,
    and names each cell's own misconception."""
    for assignment in ASSIGNMENTS:
        for grade_id, spec in CHECKS[assignment].items():
            seen = [
                cells[grade_id]["hidden"]["category"]
                for name, cells in recorded.items()
                if name.startswith(assignment + "/")
            ]
            assert PASSED in seen, f"no submission passes {assignment}:{grade_id}"
            assert spec.category in seen, f"none has the misconception {assignment}:{grade_id}"


def test_a_verdict_is_an_outcome_or_a_misconception_identifier(recorded):
    """Categories are stable names: an outcome, or a misconception's identifier."""
    categories = {
        verdict["category"]
        for cells in recorded.values()
        for batteries in cells.values()
        for verdict in batteries.values()
    }
    misconceptions = categories - set(OUTCOMES)
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", c) for c in misconceptions), misconceptions
    assert {PASSED, "not written", "crashed"} <= categories


NAMED = re.compile(r"(?:see|fix|same cause as) ([a-z][a-z0-9_]*)")


def test_every_cell_a_message_points_to_fails_for_that_submission(recorded):
    """A tick is a true statement (issue 29): a pass "apart from ...: see <cell>", a "not
    judged: fix <cell> first" and a "same cause as <cell>" name cells that fail for the same
    submission and battery, and only cells the rubric lets this one name."""
    pointed = 0
    for name, cells in recorded.items():
        assignment = name.split("/")[0]
        for grade_id, batteries in cells.items():
            spec = CHECKS[assignment][grade_id]
            reuse = reuse_cell(spec)
            allowed = {*spec.apart_from, *spec.hidden_by, *([reuse.grade_id] if reuse else [])}
            allowed |= {other.grade_id for other in cells_of(spec)}  # same cause
            for battery, verdict in batteries.items():
                said = f"{verdict.get('message') or ''} {verdict.get('note') or ''}"
                for cell in NAMED.findall(said):
                    if cell not in CHECKS[assignment]:
                        continue  # a word, not a cell ("see the docstring")
                    pointed += 1
                    assert cell in allowed, (name, grade_id, battery, cell)
                    assert cells[cell][battery]["category"] != PASSED, (name, grade_id, cell)
    assert pointed > 50  # the bank has qualified passes, hidden cells and shared causes


def test_every_not_judged_cell_says_what_to_fix(recorded):
    for name, cells in recorded.items():
        for grade_id, batteries in cells.items():
            for verdict in batteries.values():
                if verdict["category"] == NOT_JUDGED:
                    assert verdict["message"].startswith("not judged: "), (name, grade_id)


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: {sys.argv[0]} --update   (re-record {SNAPSHOT.name})")
    SNAPSHOT.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
