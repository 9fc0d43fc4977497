"""normlab.course: grading that cannot be fooled and keeps up with a class.

    python -m normlab.course grade <assignment> --jobs N     # parallel, sandboxed autograde
    python -m normlab.course rerun <assignment> STUDENT...   # one student's submission again
    python -m normlab.course report <assignment>            # misconception counts: CSV + chart

It drives nbgrader's own `autograde` (in-process, one worker per job, from any course root,
honouring its `nbgrader_config.py`), with one step replaced: instead of running a submission
in a kernel that also decides its grade, each notebook runs in a jailed sandbox kernel
forked from a pre-warmed zygote (`sandbox`, `kernel/`), and each check cell is judged in the
grader (`notebook`), which sees only the data the student's functions returned.

Layout: `runner` (workers, progress, record) -> `worker` (nbgrader's converter, retries)
-> `execute` (the nbgrader step) -> `notebook` (cells and checks) -> `sandbox` (zygote and
kernel, timeouts, deaths) -> `kernel/` (what runs on the other side: `jail`, `shell`,
`child`, `standins`, `channel`, `wire`; the grader answers the kernel's questions in
`answers`). `isolation` decides how tightly kernels are jailed, `records` where the grader
writes what happened, `report` reads the gradebook, `bench` measures throughput and `demo`
builds a throwaway course. The threat model is instructors/threat_model.md.
"""
