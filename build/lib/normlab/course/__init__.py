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

Layout (one folder per part):

    grader/     `grade`: the run (workers, progress, shards, record), nbgrader's converter in
                each worker, `SandboxExecute` in place of nbgrader's Execute, the notebook's
                cells and check cells, the kernel process and its replacements, isolation
                (bubblewrap); the grader's package docstring maps it
    plugins     what nbgrader_config.py names: hidden tests restored quietly, the late-work
                policy, the feedback page
    reports/    the class report, the export to an LMS, the points written into the sources
    download/   the student download: its source tree, its recording, its zip
    __main__    the command line

What runs on the other side, in the kernel, is `normlab_sandbox`. The threat model is
instructors/threat_model.md; `scripts/grading_bench.py` measures throughput.
"""
