"""normlab.course: grading that cannot be fooled and keeps up with a class.

It drives nbgrader's own `autograde` with one step replaced: each notebook runs in a sandbox
kernel of its own, and each check cell is judged in the grader (`grader/`), which sees only the
data the student's functions returned. Also `plugins` (what nbgrader_config.py names),
`reports/`, `download/` (the student download) and `__main__` (the command line). The map:
ARCHITECTURE.md, "From a student's notebook to a grade"; the threat model:
instructors/threat_model.md.
"""
