"""Cell outputs: check what the kernel sent (it is untrusted) and make the grader's own.

nbgrader scores an autograded test cell from its outputs alone: an `error` output, or any
`stderr` stream, gives 0; otherwise full points (a number as `execute_result` would be partial
credit). The kernel's outputs for ordinary cells are kept only in the shapes nbformat allows;
the outputs of check cells are written here, by the grader.
"""

from __future__ import annotations

import nbformat

from normlab_sandbox.cases import Result

_STREAMS = ("stdout", "stderr")
MAX_OUTPUTS = 200


def _bundle(value) -> dict | None:
    """A mime bundle: {"type/subtype": text, or anything for a JSON type}; None if not one."""
    ok = isinstance(value, dict) and all(
        isinstance(mime, str) and "/" in mime and (mime.endswith("json") or isinstance(data, str))
        for mime, data in value.items()
    )
    return dict(value) if ok else None


def sanitize(raw) -> list:
    """The kernel's outputs as nbformat outputs; malformed ones become a stdout note."""
    if not isinstance(raw, list):
        return [note("the kernel sent outputs the grader could not read")]
    outputs = []
    for item in raw[:MAX_OUTPUTS]:
        made = _one(item) if isinstance(item, dict) else None
        outputs.append(made or note("an output the grader could not read was dropped"))
    return outputs


def _one(item: dict):
    kind = item.get("output_type")
    if kind == "stream" and item.get("name") in _STREAMS and isinstance(item.get("text"), str):
        return nbformat.v4.new_output("stream", name=item["name"], text=item["text"])
    if kind in ("display_data", "execute_result"):
        data, metadata = _bundle(item.get("data")), item.get("metadata", {})
        if data is None or not isinstance(metadata, dict):
            return None
        if kind == "display_data":
            return nbformat.v4.new_output(kind, data=data, metadata=_bundle(metadata) or {})
        count = item.get("execution_count")
        count = count if isinstance(count, int) and not isinstance(count, bool) else None
        return nbformat.v4.new_output(kind, data=data, execution_count=count)
    if kind == "error":
        ename, evalue, tb = item.get("ename"), item.get("evalue"), item.get("traceback")
        texts = isinstance(tb, list) and all(isinstance(line, str) for line in tb)
        if isinstance(ename, str) and isinstance(evalue, str) and texts:
            return error(ename, evalue, tb)
    return None


def note(text: str):
    """A line of grader's text on stdout (does not change a score)."""
    return nbformat.v4.new_output("stream", name="stdout", text=f"[grader] {text}\n")


def error(ename: str, evalue: str, traceback=None):
    """An error output: a test cell that shows one scores 0."""
    lines = traceback if traceback is not None else [f"{ename}: {evalue}"]
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=lines)


def scores_zero(outputs) -> bool:
    """What nbgrader will conclude from these outputs (utils.determine_grade's rule)."""
    return any(
        o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")
        for o in outputs
    )


def _is_pair_of_text(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)


def trusted_result(value) -> Result:
    """The kernel's `Result`, with every field's type checked (its values are its answer)."""
    ok = (
        isinstance(value, Result)
        and isinstance(value.output_type, str)
        and (value.error is None or _is_pair_of_text(value.error))
        and isinstance(value.warnings, tuple)
        and all(map(_is_pair_of_text, value.warnings))
        and isinstance(value.modified_inputs, tuple)
        and all(isinstance(m, int | str) for m in value.modified_inputs)
        and isinstance(value.reference_calls, tuple)
        and all(isinstance(c, str) for c in value.reference_calls)
    )
    return value if ok else Result(error=("GraderRefused", "the kernel sent a malformed result"))
