"""The wire between the trusted grader and the sandboxed student kernel: data only, no pickle.

Everything the student's process sends back is untrusted, so this codec can only build plain
data: None, bool, int, float, complex, str, bytes, lists, tuples, dicts, NumPy arrays (read with
`allow_pickle=False`, so never object arrays), NumPy scalars, and the dataclasses named in an
explicit registry (the grader and the kernel pass `cases.WIRE_TYPES`). Anything else is sent
as an `Opaque` (its type name and a short repr), which a checker sees as "not an array".
Decoding stops at a depth cap, so a hostile reply can fail its own cells but never run code in
the grader or exhaust its memory.

Frames: a 16-byte header (a magic, the payload's length, the CRC32 of the payload, the CRC32 of
those 12 bytes) and the payload, at most 64 MiB. A `FrameReader` keeps the bytes of a frame not
yet complete when a deadline passes, so a timeout never leaves the stream mid-frame; a frame cut
by its sender and followed by another one fails a CRC, so it is read as `LostSync`, never as a
garbled length. The protocol on top is `protocol`.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import struct
import time
import zlib

import numpy as np

MAX_FRAME_BYTES = 64 * 1024 * 1024  # one reply may carry at most 64 MiB
MAX_DEPTH = 64  # nesting of lists, tuples, dicts and dataclasses
MAX_REPR = 200  # characters of repr kept for an unserializable value
HARNESS_FAILED = 70  # the kernel's exit status when its own request loop fails
SETUP_FAILED = 71  # ... when it could not set itself up (it never ran student code)
LOST_SYNC = 72  # ... when its channel to the grader broke (a frame of its own was cut)
MAGIC = b"NLw1"
_HEAD = struct.Struct(">4sII")  # magic, payload length, payload CRC32; then the CRC32 of those
_CHECK = struct.Struct(">I")
HEADER_BYTES = _HEAD.size + _CHECK.size


class WireError(Exception):
    """A frame or value that breaks the protocol (too big, malformed, an unknown type)."""


class LostSync(WireError):
    """The stream is no longer at a frame boundary (a frame was cut, or bytes that are no
    frame arrived): nothing more read from it can be trusted."""


@dataclasses.dataclass(frozen=True)
class Opaque:
    """A value the kernel could not send as data: only its type name and a short repr."""

    type_name: str
    text: str

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.text}>"


def frame(payload: bytes) -> bytes:
    """`payload` as one frame (header and payload)."""
    if len(payload) > MAX_FRAME_BYTES:
        raise WireError(f"a frame of {len(payload)} bytes exceeds the {MAX_FRAME_BYTES} cap")
    head = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload))
    return head + _CHECK.pack(zlib.crc32(head)) + payload


class FrameReader:
    """The frames arriving on a socket, one at a time (an incomplete one waits in `buffer`)."""

    def __init__(self, sock) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def read(self, deadline: float | None = None) -> bytes:
        """The next frame's payload. TimeoutError once `deadline` (time.monotonic) has passed
        (nothing is lost: call again), EOFError when the peer is gone, LostSync when what
        arrived is no frame, WireError when a frame announces more than the cap."""
        while True:
            payload = self._take()
            if payload is not None:
                return payload
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("the other side closed the connection")
            self.buffer += chunk

    def _take(self) -> bytes | None:
        """A whole frame's payload out of the buffer, or None while it is incomplete."""
        head = bytes(self.buffer[:HEADER_BYTES])
        if not MAGIC.startswith(head[: len(MAGIC)]):
            raise LostSync(f"bytes that are not a frame ({head[:8]!r}...)")
        if len(head) < HEADER_BYTES:
            return None
        _, size, crc = _HEAD.unpack_from(head)
        if zlib.crc32(head[: _HEAD.size]) != _CHECK.unpack_from(head, _HEAD.size)[0]:
            raise LostSync("a frame header that fails its checksum (a frame was cut)")
        if size > MAX_FRAME_BYTES:
            raise WireError(f"a frame of {size} bytes announced (cap {MAX_FRAME_BYTES})")
        end = HEADER_BYTES + size
        if len(self.buffer) < end:
            return None
        payload = bytes(self.buffer[HEADER_BYTES:end])
        del self.buffer[:end]
        if zlib.crc32(payload) != crc:
            raise LostSync("a frame that fails its checksum (a frame was cut)")
        return payload


def dumps(value, registry=None) -> bytes:
    """Encode plain data to JSON bytes; unknown objects become `Opaque`."""
    return json.dumps(_encode(value, registry or {}, 0)).encode()


def loads(data: bytes, registry=None):
    """Decode JSON bytes made by `dumps`; only registered dataclasses are rebuilt."""
    try:
        tree = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"a reply that is not valid JSON: {exc}") from None
    try:
        return _decode(tree, registry or {}, 0)
    except (ValueError, TypeError) as exc:  # bytes not in base64, an unhashable dict key...
        raise WireError(f"a value that does not decode: {type(exc).__name__}: {exc}") from None


def _encode(value, registry: dict, depth: int):
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int or type(value) is float:
        return value if type(value) is not float else {"$": "float", "v": repr(value)}
    nxt = depth + 1
    if isinstance(value, np.ndarray | np.generic) and not np.asarray(value).dtype.hasobject:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(value), allow_pickle=False)
        tag = "nd" if isinstance(value, np.ndarray) else "scalar"
        return {"$": tag, "v": base64.b64encode(buffer.getvalue()).decode("ascii")}
    if isinstance(value, complex):
        return {"$": "complex", "v": [repr(value.real), repr(value.imag)]}
    if isinstance(value, bytes):
        return {"$": "bytes", "v": base64.b64encode(value).decode("ascii")}
    if type(value) in (list, tuple):
        tag = "list" if type(value) is list else "tuple"
        return {"$": tag, "v": [_encode(item, registry, nxt) for item in value]}
    if type(value) is dict:
        pairs = [[_encode(k, registry, nxt), _encode(v, registry, nxt)] for k, v in value.items()]
        return {"$": "dict", "v": pairs}
    if isinstance(value, Opaque):
        return {"$": "opaque", "v": [value.type_name, value.text]}
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and registry.get(name) is type(value):
        fields = dataclasses.fields(value)
        fields = {f.name: _encode(getattr(value, f.name), registry, nxt) for f in fields if f.init}
        return {"$": "obj", "type": name, "v": fields}
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 (a repr that raises is still reported)
        text = f"<repr failed: {type(exc).__name__}>"
    return {"$": "opaque", "v": [name, text[:MAX_REPR]]}


def _decode(tree, registry: dict, depth: int):
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels")
    if tree is None or isinstance(tree, (bool, str, int)):
        return tree
    if not isinstance(tree, dict) or "$" not in tree or "v" not in tree:
        raise WireError(f"an untagged value of type {type(tree).__name__}")
    tag, body, nxt = tree["$"], tree["v"], depth + 1
    if tag == "float":
        return _float(body)
    if tag in ("nd", "scalar"):
        text = _field(body, str, "string")
        try:
            raw = base64.b64decode(text.encode("ascii"), validate=True)
            arr = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)  # .npy only
        except Exception as exc:  # noqa: BLE001 (any malformed array is the sender's fault)
            raise WireError(f"an array that does not decode: {type(exc).__name__}: {exc}") from None
        if tag == "scalar" and arr.shape != ():
            raise WireError("a scalar that is not 0-dimensional")
        return arr if tag == "nd" else arr[()]
    if tag == "complex":
        if not (isinstance(body, list) and len(body) == 2):
            raise WireError("a malformed complex number")
        return complex(_float(body[0]), _float(body[1]))
    if tag == "bytes":
        return base64.b64decode(_field(body, str, "string").encode("ascii"))
    if tag in ("list", "tuple"):
        items = [_decode(item, registry, nxt) for item in _field(body, list, "list")]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        out = {}
        for pair in _field(body, list, "list"):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise WireError("a malformed dict entry")
            key = _decode(pair[0], registry, nxt)
            if not isinstance(key, (str, int, float, bool, tuple)) and key is not None:
                raise WireError(f"a dict key of type {type(key).__name__}")
            out[key] = _decode(pair[1], registry, nxt)
        return out
    if tag == "opaque":
        pair = _field(body, list, "list")
        if len(pair) != 2 or not all(isinstance(p, str) for p in pair):
            raise WireError("a malformed opaque value")
        return Opaque(pair[0][:MAX_REPR], pair[1][:MAX_REPR])
    if tag != "obj":
        raise WireError(f"an unknown tag {str(tag)[:40]!r}")
    cls = registry.get(tree.get("type"))
    if cls is None:
        raise WireError(f"an object of unregistered type {str(tree.get('type'))[:40]!r}")
    if not isinstance(body, dict):
        raise WireError(f"a malformed {cls.__name__}")
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    if set(body) - names:
        raise WireError(f"a {cls.__name__} with unknown fields {sorted(set(body) - names)}")
    kwargs = {name: _decode(item, registry, nxt) for name, item in body.items()}
    try:
        return cls(**kwargs)
    except Exception as exc:  # noqa: BLE001 (a constructor that rejects the fields)
        raise WireError(f"a {cls.__name__} that does not construct: {exc}") from None


def _float(body) -> float:
    try:
        return float(_field(body, str, "string"))
    except ValueError:
        raise WireError("a malformed float") from None


def _field(body, kind: type, noun: str):
    if not isinstance(body, kind):
        raise WireError(f"a {noun} field that is not a {noun}")
    return body
