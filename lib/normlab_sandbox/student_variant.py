"""What a notebook says of its student's own numbers (a per-student variant, `normlab.grading.
pools`), in the student's kernel and in the grading sandbox's alike.
"""

from __future__ import annotations

import numpy as np

# what every check and the summary say while the student is not known: the first code cell
# says ASK, once, where STUDENT is set
NOT_KNOWN = "your own numbers are not known yet: the first code cell says what to do."
ASK = (
    "This problem set gives every student their own numbers, and it does not know who you are "
    'yet: set STUDENT = "<your id>" in the first code cell (the id your instructor enrolled '
    "you with; on the course's JupyterHub it is read for you), then run the notebook again."
)


def my_variant(state: dict):
    """`my_variant()` for `state` ({"variant", "student", "claimed"}): prints the variant (and
    whose it is, when graded as another's) and returns (r, d_model), the record as a float64
    array and the width; or asks for the id and returns (None, None)."""
    variant = state.get("variant")
    if variant is None:
        print(ASK)
        return None, None
    student, claimed = state["student"], state.get("claimed", "")
    record = ", ".join(f"{v:g}" for v in variant["record"])
    print(
        f"Your record: r = [{record}] (d = {len(variant['record'])} features); your d_model = "
        f"{variant['d_model']}. (Variant {variant['slot']} of the pool, for {student}.)"
    )
    if claimed and claimed != student:
        print(
            f"This notebook says STUDENT = {claimed!r}, but it is {student}'s: it is graded "
            f"with {student}'s record."
        )
    return np.asarray(variant["record"], dtype=np.float64), int(variant["d_model"])
