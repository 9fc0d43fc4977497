"""normlab_sandbox: the code that runs next to a student's code, and nothing of normlab.

A check is split in three (see `normlab.grading`): build the cases, run the student's code on
each, judge the results. The middle step runs where the student's code lives: in the
student's own Jupyter kernel when a notebook calls `check`, and in the grading sandbox's
kernel when `python -m normlab.course grade` grades a class. This package is that middle step
and the sandbox kernel around it:

    cases      Case, Ref, Result: the plain data that crosses, and the wire's registry of them
    guarded    run_case: call the student's code for one Case, under guards
    tripwire   notice a call that reaches a library normalization
    kernel     the sandbox kernel process (`python -I -m normlab_sandbox.kernel FD`)
    shell      run notebook cells in IPython and collect their outputs
    channel    the kernel's line to the grader, for what only the grader may answer
    standins   what the kernel's code finds where normlab and torch would be
    wire       the data-only codec between the grader and the kernel
    module_probes
               ps8's probes of a torch module (values, gradients, checkpoints, training)
    spirals    ps8's network on the spirals, with the norm class as a parameter

It imports the standard library, NumPy and (the kernel's shell only) IPython, never `normlab`:
importing any `normlab.<package>` runs `normlab/__init__.py`, which loads the reference, and a
grading kernel must never hold the reference. So this is a top-level package of its own,
shipped in the same wheel; `normlab.grading` and `normlab.course` import from it. torch is
imported by ps8's two modules only, when a ps8 case or the grader's oracle runs them.
"""
