"""normlab.course: grading that cannot be fooled and keeps up with a class.

    python -m normlab.course grade <assignment> --jobs N     # parallel, sandboxed autograde
    python -m normlab.course grade <assignment> --shard K/N  # part K of N of the class
    python -m normlab.course rerun <assignment> STUDENT...   # one student's submission again
    python -m normlab.course report <assignment>            # misconception counts: CSV + chart

It drives nbgrader's own `autograde` (in-process, one worker per job, from any course root,
honouring its `nbgrader_config.py`), with one step replaced: instead of running a submission
in a kernel that also decides its grade, each notebook runs in a sandbox kernel of its own
(bubblewrap under strict isolation), and each check cell is judged in the grader
(`notebook`), which sees only the data the student's functions returned.

Layout: `grading_run` (workers, progress, shards, record) -> `worker` (nbgrader's converter,
retries) -> `execute` (the nbgrader step) -> `notebook` (cells, checks, budget) ->
`kernel_process` (the kernel's process, timeouts, deaths) -> `normlab_sandbox` (what runs on
the other side; the grader answers the kernel's questions in `answers`). `isolation` decides
how tightly kernels are locked in and `bwrap` builds the sandbox, `shard` splits a class,
`records` says where the grader writes what happened, `class_report` reads the gradebook and
`bench` measures throughput. The threat model is instructors/threat_model.md.
"""
