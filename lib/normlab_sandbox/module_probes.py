"""Probes: what ps8's checks ask of a student's `LayerNorm` class, answered as plain data.

A ps8 case names a probe (`Case(how="probe")`); `run_case` calls `PROBES[probe](cls, *args,
**kwargs)` with the student's class, and the probe builds fresh modules, runs them, and returns
NumPy arrays, strings and tuples, never a tensor (only data crosses to the grader). Weights go
into a module through `.data`, which keeps the tensor's identity (a parameter stays registered,
a plain tensor plain) and takes the value's dtype, so a float64 case is float64 throughout.
This module imports torch: only a ps8 case loads it.
"""

from __future__ import annotations

import importlib

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import spirals
from .tripwire import node_label, op_label


def _array(t) -> np.ndarray | None:
    return None if t is None else t.detach().cpu().numpy().copy()


def _error(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n\t", " ").replace("\n", " ").rstrip(".")
    return f"{type(exc).__name__}: {text}"[:500]


def sizes(normalized_shape) -> tuple[int, ...]:
    """normalized_shape as a tuple: 8 -> (8,), (3, 4) -> (3, 4)."""
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def _build(cls, normalized_shape, eps=None, elementwise_affine=None):
    """`cls(normalized_shape)`, passing eps and elementwise_affine only when given."""
    given = {"eps": eps, "elementwise_affine": elementwise_affine}
    return cls(normalized_shape, **{k: v for k, v in given.items() if v is not None})


def held(module, name: str) -> str:
    """What `module.<name>` is: "parameter", "buffer", "tensor" (a plain tensor, registered
    nowhere), "None", "missing", or the type's name."""
    if name in dict(module.named_parameters(recurse=False)):
        return "parameter"
    if name in dict(module.named_buffers(recurse=False)):
        return "buffer"
    if not hasattr(module, name):
        return "missing"
    value = getattr(module, name)
    if value is None:
        return "None"
    return "tensor" if isinstance(value, torch.Tensor) else type(value).__name__


def _set_all(module, weight, bias) -> dict | None:
    """Put weight and bias (each unless None) into the module through `.data`; the finding
    {"unset": why} if one cannot be (not an exception: it is not the student's code that
    failed)."""
    for name, value in (("weight", weight), ("bias", bias)):
        if value is None:
            continue
        tensor = getattr(module, name, None)
        if not isinstance(tensor, torch.Tensor):
            why = f"is {held(module, name)}, not a tensor of normalized_shape"
            return {"unset": f"LayerNorm's {name} {why}"}
        new = torch.as_tensor(np.asarray(value))
        if tensor.numel() != new.numel():
            why = f"has shape {tuple(tensor.shape)}, not normalized_shape {tuple(new.shape)}"
            return {"unset": f"LayerNorm's {name} {why}"}
        tensor.data = new.reshape(tensor.shape)
    return None


class _NormKernels(TorchDispatchMode):
    """Notes torch's normalization kernels among the aten ops run inside the `with` block."""

    def __init__(self) -> None:
        super().__init__()
        self.labels: list[str] = []

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch (2.5 on) wraps a mode's __torch_dispatch__ to keep torch.compile out of it;
        # the wrapper imports torch._dynamo (and sympy) on the first op, 2 s of every
        # grading kernel. Nothing here is compiled, so the plain method is kept.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        label = op_label(func.overloadpacket.__name__)
        if label and label not in self.labels:
            self.labels.append(label)
        return func(*args, **(kwargs or {}))


def _graph_labels(y: torch.Tensor) -> tuple[str, ...]:
    """The normalization kernels whose backward nodes are in y's autograd graph."""
    found, todo, seen = [], [y.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        label = node_label(type(node).__name__)
        if label and label not in found:
            found.append(label)
        todo.extend(next_node for next_node, _ in node.next_functions)
    return tuple(found)


def _stub(cls, normalized_shape, elementwise_affine=None) -> dict | None:
    """The answer for a class whose forward is still a stub (None on two records of zeros):
    every cell says "not written"; else None (a forward that raises is the cells' to judge)."""
    try:
        module = _build(cls, normalized_shape, None, elementwise_affine)
        returned = module(torch.zeros((2, *sizes(normalized_shape))))
    except Exception:  # noqa: BLE001
        return None
    return {"y": None, "returned": "NoneType"} if returned is None else None


def _grad(module, name: str):
    tensor = getattr(module, name, None)
    return _array(tensor.grad) if isinstance(tensor, torch.Tensor) else None


def import_torchs_lazy_parts() -> None:
    """Import now what torch imports on first use: torch._dynamo (with sympy) on a module's
    first optimizer, sympy on a backward pass given a gradient. Seconds under load: the grader
    and its kernels import them before any cell runs, so no cell's time limit pays for them."""
    importlib.import_module("torch._dynamo")


def forward_pass(
    cls, normalized_shape, x, weight=None, bias=None, dy=None, eps=None, elementwise_affine=None
) -> dict:
    """One module's output on x, the normalization kernels it reached (`tripwire`), and with
    `dy` the gradients of x, weight and bias; weight and bias None: the module's own."""
    # before weight and bias are put in: a stub's __init__ made none
    if stub := _stub(cls, normalized_shape, elementwise_affine):
        return stub
    module = _build(cls, normalized_shape, eps, elementwise_affine)
    if unset := _set_all(module, weight, bias):
        return unset
    xt = torch.tensor(np.asarray(x), requires_grad=dy is not None)
    with _NormKernels() as kernels:
        y = module(xt)
    if not isinstance(y, torch.Tensor):
        return {"y": None, "returned": type(y).__name__}
    found = {"y": _array(y), "kernels": tuple(kernels.labels) + _graph_labels(y)}
    if dy is not None:
        try:
            y.backward(torch.as_tensor(np.asarray(dy)).to(y.dtype))
        except RuntimeError as exc:  # no graph back to anything, or a shape the dy misses
            found["backward_error"] = _error(exc)
        found.update(dx=_array(xt.grad), dweight=_grad(module, "weight"))
        found["dbias"] = _grad(module, "bias")
    return found


def parameters(cls, normalized_shape, elementwise_affine=None) -> dict:
    """A fresh module's parameters ((name, shape, requires_grad), ...), buffers ((name, shape),
    ...), state_dict {key: array}, and what its weight and bias are (`held`)."""
    if stub := _stub(cls, normalized_shape, elementwise_affine):
        return stub
    module = _build(cls, normalized_shape, None, elementwise_affine)
    return {
        "parameters": tuple(
            (name, tuple(p.shape), bool(p.requires_grad)) for name, p in module.named_parameters()
        ),
        "buffers": tuple((name, tuple(b.shape)) for name, b in module.named_buffers()),
        "state_dict": _state(module),
        "weight": held(module, "weight"),
        "bias": held(module, "bias"),
    }


def _state(module) -> dict:
    return {
        str(key): _array(value) if isinstance(value, torch.Tensor) else type(value).__name__
        for key, value in module.state_dict().items()
    }


def state_dict(cls, normalized_shape, x, weight, bias) -> dict:
    """Checkpoints both ways, strictly: nn.LayerNorm's state_dict loaded into the student's
    module, its output (`loaded`, or `into_error`) beside one given weight and bias directly
    (`direct`); the student's loaded into nn.LayerNorm (`out_error`), and its entries."""
    xt = torch.tensor(np.asarray(x))
    theirs = torch.nn.LayerNorm(normalized_shape, dtype=xt.dtype)
    _set_all(theirs, weight, bias)
    if stub := _stub(cls, normalized_shape):
        return stub
    mine = _build(cls, normalized_shape)
    if unset := _set_all(mine, weight, bias):
        return unset
    found = {"weight": held(mine, "weight"), "bias": held(mine, "bias"), "out_error": None}
    with torch.no_grad():
        found["direct"] = _array(mine(xt))
        found["state"] = _state(mine)
        try:
            torch.nn.LayerNorm(normalized_shape).load_state_dict(mine.state_dict())
        except (RuntimeError, KeyError, TypeError, ValueError) as exc:
            found["out_error"] = _error(exc)
        loaded = _build(cls, normalized_shape).to(xt.dtype)  # as `mine`'s, after `_set_all`
        try:
            loaded.load_state_dict(theirs.state_dict())
        except (RuntimeError, KeyError, TypeError, ValueError) as exc:
            found.update(into_error=_error(exc), loaded=None)
        else:
            found.update(into_error=None, loaded=_array(loaded(xt)))
    return found


def training(cls, **run) -> dict:
    """`spirals.train_losses(cls, **run)`, and a fresh module's weight and bias (arrays, or
    None where the module has none) and what they are (`held`)."""
    width = run.get("width", spirals.RUN["width"])
    if stub := _stub(cls, width):
        return stub
    fresh = _build(cls, width)  # as the network builds it
    losses = spirals.train_losses(cls, **run)
    own = {name: getattr(fresh, name, None) for name in ("weight", "bias")}
    start = {n: _array(t) if isinstance(t, torch.Tensor) else None for n, t in own.items()}
    kinds = {name: held(fresh, name) for name in own}
    return {"losses": losses, "fresh": start, "held": kinds}


PROBES = {
    "forward": forward_pass,
    "parameters": parameters,
    "state_dict": state_dict,
    "training": training,
}
