"""nbgrader configuration of the LayerNorm course.

The course directory is the folder nbgrader runs in: the repo root. Sources (with
solutions and hidden tests) live in solutions/<assignment>/, released student
notebooks in exercises/<assignment>/ (committed; `make release` regenerates them).
nbgrader's own commands work unchanged from here, e.g.

    nbgrader generate_assignment ps2_layer_norm
    nbgrader autograde ps2_layer_norm
    nbgrader generate_feedback ps2_layer_norm
    nbgrader export

The gradebook (gradebook.db) and the student folders (submitted/, autograded/,
feedback/) are git-ignored. The exchange for release/collect is
$NBGRADER_EXCHANGE, or nbgrader's default /srv/nbgrader/exchange.
See instructors/workflow.md for the whole workflow.
"""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    OverwriteKernelspec,
)

from normlab.course import plugins

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.CourseDirectory.course_id = "layernorm"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"

# the stub a released answer cell gets in place of its solution: a comment, which raises
# nothing, so that "Restart Kernel and Run All Cells" runs a blank notebook to the end (a
# function's body is then its docstring: it returns None, which the checks call "not written
# yet"; a value answer keeps its `name = ...` line). nbgrader's default ends in
# `raise NotImplementedError()`, which stops Run All at the first answer cell of ps1 and ps4.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}

# autograde: restore deleted test cells; a cell that runs past the timeout is
# interrupted and scores 0 (the hidden batteries take well under a second)
c.OverwriteCells.add_missing_cells = True
# nbgrader's sanitizing steps, with RestoreHiddenTests in place of OverwriteCells: it puts the
# hidden tests back without a "checksum has changed" warning per test cell (nbgrader #1961);
# a locked cell a student really changed is still reported and overwritten
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    plugins.RestoreHiddenTests,
    CheckCellMetadata,
    plugins.ReusePolicy,  # the policy below, for the kernels autograde starts
]
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True

# late work (a due date is set per assignment: nbgrader db assignment add ... --duedate=...):
# 10 % of the points a notebook earned per started day late, after 15 minutes of grace
c.AssignLatePenalties.plugin_class = "normlab.course.plugins.PercentPerDay"
c.PercentPerDay.percent_per_day = 10
c.PercentPerDay.grace_minutes = 15

# feedback (normlab.course.plugins): no hidden-test source (nbgrader's own ClearHiddenTests,
# which its feedback leaves out by default), each graded cell named with its mark and points,
# every error one plain sentence, the maths as MathML (the page renders alone, offline), and
# the course's page template (messages wrap at any width), for the feedback alone: the
# formgrader's Manual Grading renders with HTMLExporter and its own template (`formgrade`)
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    plugins.CheckNotes,
    plugins.ConciseErrors,
    plugins.MathToMathML,
    CSSHTMLHeaderPreprocessor,
]
c.GenerateFeedback.exporter_class = plugins.FeedbackExporter

# reuse: a function that hands its work to a library (normlab's reference, torch's
# normalizations, autograd for a backward, np.var in ps6) earns nothing, every cell of it
# scoring 0 ("function"); or only its reuse cell scores 0 ("cell"). Both graders read it here
# (plain nbgrader's kernels through plugins.ReusePolicy); `make release` writes it into the
# notebooks' setup cells for a student's own kernel: run it (and `make student`) after a change.
c.NormlabGrading.reuse_voids = "function"

c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
