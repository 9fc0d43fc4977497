"""normlab_sandbox: the code that runs next to a student's code, and nothing of normlab.

Of a check's three steps (build the cases, run the student's code, judge: `normlab.grading`),
this package is the middle one, where the student's code lives (their own kernel, or the
grading sandbox's kernel, `kernel`), and that kernel. It imports the standard library, NumPy
and (the kernel's shell only) IPython, never `normlab`: importing any `normlab.<package>` runs
`normlab/__init__.py`, which loads the reference, and a grading kernel must never hold it. torch
is imported by ps8's `module_probes` and `spirals` only, when a ps8 case runs them.
"""
