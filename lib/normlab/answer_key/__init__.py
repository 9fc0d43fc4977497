"""The answer key: what the graders hold and a student never gets.

    batteries/         every check's cases, visible and hidden (`BATTERIES`, `bound`)
    reference          a private copy of normlab's reference, for the expectations
    oracle             `LIVE`, the oracle those expectations come from
    formula_outputs    what each member of the family of normalizations computes
    wrong_implementations
                       ps7's wrong group norms and batch-norm backwards
    torch_layer_norms  ps8's nn.LayerNorm and its family in torch, with autograd
    trusted            the callables a check hands the student's code (`Ref`): correct
                       LayerNorms, planted wrong ones, some that exist only here
    random_inputs      the random records the batteries draw

`normlab.grading` holds what a check *is* (its judge, the questions it may ask, its words and
points) and ships in the student download; this package is what it *runs on* and what
*answers*, and the download is built without it (`normlab.course.download`): there the
visible cases and the answers to their declared questions are replayed from a recording.
Nothing in `normlab.grading` imports this package but through `normlab.grading.recording`,
which decides, once, which of the two backs the checks.
"""
