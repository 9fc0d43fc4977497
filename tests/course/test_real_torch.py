"""ps8's kernels: the real torch when the grader says so, in the same sandbox as every kernel.

torch enters a grading kernel only through the setup message (`Isolation.real_torch`, set
for the assignments of `normlab.grading.REAL_TORCH`): the kernel never decides it, normlab
stays a stand-in, and the sandbox forbids what it forbids every kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
from demo_course import REPO, UID_BASE

from normlab.course.grader import bwrap
from normlab.course.grader import isolation as iso
from normlab.course.grader.answers import Answers
from normlab.course.grader.kernel_process import start_kernel
from normlab.grading import REAL_TORCH
from normlab_sandbox import protocol
from normlab_sandbox.cases import Case

pytestmark = [pytest.mark.slow, pytest.mark.kernels]
EXPOSE = tuple(iso.python_paths())
NO_STRICT = bwrap.unavailable(EXPOSE, iso.Limits().tmp_bytes)
MODE = "basic" if NO_STRICT else "strict"
needs_strict = pytest.mark.skipif(bool(NO_STRICT), reason=f"no strict isolation: {NO_STRICT}")

MODULE = """
import torch

class LayerNorm(torch.nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        self.shape, self.eps = (normalized_shape,), eps
        self.weight = torch.nn.Parameter(torch.ones(normalized_shape))
        self.bias = torch.nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, self.shape, self.weight, self.bias, self.eps)
"""


def _kernel(real_torch: bool):
    isolation = iso.Isolation(
        MODE, hide=(str(REPO),), expose=EXPOSE, real_torch=real_torch, uid_base=UID_BASE
    )
    return start_kernel(isolation, 0, None)


@pytest.fixture(scope="module")
def torch_kernel():
    made = _kernel(True)
    yield made
    made.close()


def run(kernel, source: str, answers=None) -> str:
    reply = kernel.request(protocol.RunCell(0, source), 60, answers or Answers())
    return "".join(
        o.get("text", "") + o.get("ename", "") + o.get("evalue", "") for o in reply.outputs
    )


def test_only_ps8_gets_the_real_torch():
    assert REAL_TORCH == {"ps8_in_a_model"}


def test_torch_is_a_stand_in_unless_the_grader_gives_the_real_one(torch_kernel):
    plain = _kernel(False)
    try:
        assert "not available while grading" in run(plain, "import torch\ntorch.ones(2)")
    finally:
        plain.close()
    assert run(torch_kernel, "import torch\nprint(torch.ones(2).sum().item())") == "2.0\n"
    assert run(torch_kernel, "print(torch.get_num_threads())") == "1\n"


def test_torchs_lazy_imports_are_done_before_the_first_cell(torch_kernel):
    """A cell's time limit never pays for torch._dynamo and sympy (seconds under load),
    which torch imports on a module's first optimizer or backward pass given a gradient."""
    loaded = run(
        torch_kernel, "import sys\nprint(all(m in sys.modules for m in ('torch._dynamo', 'sympy')))"
    )
    assert loaded == "True\n"


def test_normlab_stays_a_stand_in_beside_the_real_torch(torch_kernel):
    text = run(torch_kernel, "import normlab\nimport numpy as np\nnormlab.layer_norm(np.ones(3))")
    assert "not available to notebook cells" in text


def test_a_probe_returns_arrays_and_the_torch_kernels_it_reached(torch_kernel):
    run(torch_kernel, MODULE)
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    args = (4, x, np.ones(4), np.zeros(4), np.ones_like(x))  # float64 weight and bias
    case = Case("LayerNorm", "probe", args, probe="forward")
    answers = Answers()
    answers.begin_case(case)
    request = protocol.RunCase(0, case, {"LayerNorm": "LayerNorm"})
    result = torch_kernel.request(request, 60, answers).result
    answers.end_case()
    assert result.error is None and result.output_type == "dict"
    found = result.output
    assert isinstance(found["y"], np.ndarray) and found["y"].shape == x.shape
    assert isinstance(found["dx"], np.ndarray) and np.allclose(found["y"].mean(-1), 0)
    assert "torch.nn.functional.layer_norm" in result.reference_calls
    assert "torch.ops.aten.native_layer_norm" in found["kernels"]


@needs_strict
def test_with_the_real_torch_the_sandbox_forbids_what_it_forbids_every_kernel(torch_kernel):
    run(torch_kernel, "import os, socket")
    assert "Read-only" in run(torch_kernel, "torch.save(torch.ones(1), '/usr/x.pt')")
    assert "No such file" in run(torch_kernel, "open('/etc/passwd')")
    assert run(torch_kernel, f"print(os.path.exists({str(REPO / 'solutions')!r}))") == "False\n"
    unreachable = run(torch_kernel, "socket.create_connection(('1.1.1.1', 80), timeout=2)")
    assert "unreachable" in unreachable or "OSError" in unreachable
    too_big = run(torch_kernel, "torch.empty(8 << 30, dtype=torch.uint8)")
    assert "RuntimeError" in too_big or "MemoryError" in too_big
    assert run(torch_kernel, "print('alive')") == "alive\n"
