"""The wire between grader and kernel carries data only, within limits."""

from __future__ import annotations

import base64
import io
import json
import pickle
import socket
import zlib

import numpy as np
import pytest

from normlab_sandbox import wire
from normlab_sandbox.cases import WIRE_TYPES, Case, Ref, Result


def roundtrip(value):
    return wire.loads(wire.dumps(value, WIRE_TYPES), WIRE_TYPES)


def test_plain_data_and_arrays_survive_exactly():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    value = {"a": (x, [1, 2.5, None, True]), "s": "text", "z": 1 + 2j, 3: np.float64(0.1)}
    back = roundtrip(value)
    assert back["a"][0].dtype == np.float32 and np.array_equal(back["a"][0], x)
    assert back["a"][1] == [1, 2.5, None, True] and back["s"] == "text" and back["z"] == 1 + 2j
    assert type(back[3]) is np.float64 and back[3] == 0.1
    assert roundtrip(float("nan")) != roundtrip(float("nan"))  # still a NaN


def test_registered_dataclasses_are_rebuilt():
    case = Case("layer_norm", "call", (np.ones(3), Ref("layer_norm")), {"eps": 1e-3}, tag="t")
    back = roundtrip(case)
    assert back.target == "layer_norm" and back.args[1] == Ref("layer_norm")
    result = roundtrip(Result(output=(np.ones(2), np.zeros(2)), error=None))
    assert isinstance(result, Result) and isinstance(result.output, tuple)


def test_unknown_objects_travel_as_opaque_names():
    class Sneaky:
        def __reduce__(self):
            raise AssertionError("never pickled")

    back = roundtrip([Sneaky(), np.array([object()], dtype=object)])
    assert [type(v) for v in back] == [wire.Opaque, wire.Opaque]
    assert back[0].type_name == "Sneaky"


def test_pickles_object_arrays_and_unknown_types_are_refused():
    buffer = io.BytesIO()
    np.save(buffer, np.array([print], dtype=object), allow_pickle=True)  # an npy with a pickle
    npy_with_pickle = base64.b64encode(buffer.getvalue()).decode()
    with pytest.raises(wire.WireError, match="does not decode"):
        wire.loads(json.dumps({"$": "nd", "v": npy_with_pickle}).encode())
    with pytest.raises(wire.WireError):
        wire.loads(
            json.dumps({"$": "nd", "v": base64.b64encode(pickle.dumps(1)).decode()}).encode()
        )
    with pytest.raises(wire.WireError):
        wire.loads(json.dumps({"$": "obj", "type": "Popen", "v": {}}).encode(), WIRE_TYPES)
    with pytest.raises(wire.WireError):
        wire.loads(
            json.dumps({"$": "obj", "type": "Result", "v": {"boom": 1}}).encode(), WIRE_TYPES
        )
    with pytest.raises(wire.WireError):
        wire.loads(b"[1.5]")


def test_a_malformed_value_is_a_wire_error_never_another_exception():
    """The grader catches WireError from a kernel's reply: any other exception would escape."""
    for tree in (
        {"$": "bytes", "v": "\u00e9"},  # not ASCII
        {"$": "bytes", "v": "abc"},  # not base64
        {"$": "dict", "v": [[{"$": "tuple", "v": [{"$": "list", "v": []}]}, 1]]},  # unhashable
    ):
        with pytest.raises(wire.WireError):
            wire.loads(json.dumps(tree).encode())


def test_an_array_that_is_no_npy_is_a_wire_error():
    """np.load would read an .npz archive (a lazy NpzFile, not data) where an array belongs."""
    buffer = io.BytesIO()
    np.savez(buffer, a=np.ones(2))
    npz = base64.b64encode(buffer.getvalue()).decode()
    for tag in ("nd", "scalar"):
        with pytest.raises(wire.WireError, match="does not decode"):
            wire.loads(json.dumps({"$": tag, "v": npz}).encode())


def test_depth_and_size_are_capped():
    deep: list = []
    for _ in range(wire.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(wire.WireError):
        wire.dumps(deep)
    head = wire._HEAD.pack(wire.MAGIC, wire.MAX_FRAME_BYTES + 1, 0)
    left, right = socket.socketpair()
    with left, right:
        left.sendall(head + wire._CHECK.pack(zlib.crc32(head)))
        with pytest.raises(wire.WireError, match="announced"):
            wire.FrameReader(right).read()
