"""The course's nbgrader plugins: what `nbgrader_config.py` names, all in one place.

    c.Autograde.sanitize_preprocessors   RestoreHiddenTests in place of OverwriteCells
    c.AssignLatePenalties.plugin_class   "normlab.course.plugins.PercentPerDay"
    c.GenerateFeedback.preprocessors     CheckNotes, ConciseErrors, MathToMathML
    c.GenerateFeedback.exporter_class    FeedbackExporter (templates/normlab_feedback)
    c.NormlabGrading.reuse_voids         the course's reuse policy, which `ReusePolicy` hands
                                         to nbgrader's kernels

**Restoring hidden tests.** nbgrader stores a locked cell's checksum *before* it strips the
cell's hidden tests from the release, so at autograde OverwriteCells warns "Attribute
'checksum' for cell ... has changed!" for every test cell with hidden tests, which reads like
tampering (nbgrader issue #1961). `RestoreHiddenTests` restores such a cell quietly when the
submitted source is exactly the released one (nbgrader's own ClearHiddenTests applied to the
stored source); any other change to a locked cell is reported and overwritten, as nbgrader does.

**Late work.** nbgrader's own plugin knows no penalty or zero. `PercentPerDay`: past the due
date and `grace_minutes`, a notebook loses `percent_per_day` of its earned points per started
day, never more than it earned; `make grade`, plain `nbgrader autograde` and both exports apply it.

**Feedback.** nbgrader 0.9's page lists unnamed "Test cell (Score ...)" lines, scrolls messages
sideways, loads MathJax from a CDN and quotes the graders' tracebacks. After its `GetGrades` and
`ClearHiddenTests`: `ConciseErrors` makes each error one plain sentence; `CheckNotes` tells each
graded cell what it checks, its mark, and whether its evidence is a visible or hidden input, and
makes the summary cell the graded count; `MathToMathML` draws the maths without a script or the
network; `templates/normlab_feedback` lists every graded cell in a header and wraps messages. The
template is `FeedbackExporter`'s alone: a course-wide `c.HTMLExporter.template_name` would also
replace the formgrader's Manual Grading page (TemplateNotFound: bootstrap.min.css, issue 46).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from latex2mathml.converter import convert
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.api import MissingEntry
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells
from traitlets import Bool, Enum, Float
from traitlets.config import Config, Configurable

from normlab.grading import CHECKS
from normlab.grading.checkcell import is_check_cell
from normlab.grading.selfcheck import points
from normlab.grading.session import POLICIES as REUSE_VOIDS
from normlab.grading.session import POLICY_ENV
from normlab.grading.verdict import HIDDEN_LABEL

TEMPLATES = Path(__file__).with_name("templates")
TEMPLATE = "normlab_feedback"
# the grader's own error names (normlab.course.grader.notebook), in words a student reads
PLAIN = {
    "CellTimeoutError": "Did not finish in time",
    "KernelDied": "Your notebook's Python process stopped",
}
VISIBLE_LABEL = "On an input of the visible check: "


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


class ConciseErrors(Preprocessor):
    """Each error output's traceback becomes one plain sentence (see the module)."""

    enabled = Bool(True).tag(config=True)  # nbconvert preprocessors are off by default

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                name, message = output.get("ename", "Error"), output.get("evalue", "")
                if name == "AssertionError":
                    line = message
                elif name == "NotImplementedError" and not message:
                    line = "Not written yet: this cell still raises NotImplementedError"
                else:
                    line = f"{PLAIN.get(name, name)}: {message}"
                output["traceback"] = [line]
        return cell, resources


class CheckNotes(Preprocessor):
    """What each graded cell checks and its mark; the summary cell's graded count."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb, resources):
        assignment = resources.get("nbgrader", {}).get("assignment", "")
        specs = CHECKS.get(assignment, {})
        for cell in nb.cells:
            meta = _nbgrader(cell)
            if meta.get("grade") or meta.get("task"):
                spec = specs.get(meta.get("grade_id"))
                full = float(meta.get("score") or 0.0) >= float(meta.get("points") or 0.0)
                cell.metadata["feedback"] = {
                    "what": spec.summary if spec else "graded by hand",
                    "mark": "✓" if full else "✗",
                    "auto": spec is not None,
                }
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            for output in errors if is_check_cell(cell) else []:  # a failed check's input
                message = output.get("evalue", "")
                if output.get("ename") == "AssertionError" and not message.startswith(HIDDEN_LABEL):
                    output["evalue"] = VISIBLE_LABEL + message
        for cell in nb.cells:
            summary = cell.cell_type == "code" and not _nbgrader(cell).get("grade")
            if summary and cell.source.strip().startswith("summary("):
                cell.outputs = [new_output("stream", name="stdout", text=self._summary(nb))]
        return nb, resources

    @staticmethod
    def _summary(nb) -> str:
        graded = [c for c in nb.cells if _nbgrader(c).get("grade") or _nbgrader(c).get("task")]
        checks = [c for c in graded if is_check_cell(c)]  # a check cell is a grade cell
        by_hand = [c for c in graded if not is_check_cell(c)]
        passed = [c for c in checks if c.metadata["feedback"]["mark"] == "✓"]
        earned = sum(float(_nbgrader(c).get("score") or 0.0) for c in checks)
        total = sum(float(_nbgrader(c).get("points") or 0.0) for c in checks)
        lines = [
            f"Graded: {len(passed)} of {len(checks)} checks passed on every input, visible and "
            f"hidden, for {earned:g} of {points(total)}."
        ]
        for cell in by_hand:
            meta = _nbgrader(cell)
            score = meta.get("score")
            got = "not graded yet" if score is None else f"{float(score):g}"
            of = points(float(meta.get("points") or 0.0))
            lines.append(f"Graded by hand ({meta.get('grade_id')}): {got} of {of}.")
        return "\n".join(lines) + "\n"


MATH = re.compile(
    r"(?P<code>`+)(?:.*?)(?P=code)|(?<!\\)\$\$(?P<block>.+?)\$\$|(?<![\\$])\$(?P<inline>[^$\n]+?)\$",
    re.S,
)


def mathml(match: re.Match) -> str:
    """A match of `MATH` as MathML; a code span stays as it is."""
    if match.group("code"):
        return match.group(0)
    block = match.group("block")
    if block is not None:
        return convert(block.strip(), display="block")
    return convert(match.group("inline").strip())


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTMLExporter with the course's feedback page (`GenerateFeedback.exporter_class`).

    Its template is set in its own config section, which outranks HTMLExporter's, where nbgrader
    sets "feedback" (nbgrader/apps/api.py) and Manual Grading needs "formgrade": neither reaches
    this class, nor it them. A course's own `c.FeedbackExporter.template_name` still wins."""

    def __init__(self, config=None, parent=None, **kwargs):
        given = config if config is not None else getattr(parent, "config", None)
        ours = Config()
        ours.FeedbackExporter.template_name = TEMPLATE
        ours.FeedbackExporter.extra_template_basedirs = [str(TEMPLATES)]
        ours.merge(given or Config())
        super().__init__(config=ours, parent=parent, **kwargs)


class MathToMathML(Preprocessor):
    """Markdown cells' `$...$` and `$$...$$` become MathML: no script, no network."""

    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and "$" in cell.source:
            cell.source = MATH.sub(mathml, cell.source)
        return cell, resources


class NormlabGrading(Configurable):
    """The course's grading settings, read from nbgrader_config.py like nbgrader's own."""

    reuse_voids = Enum(
        REUSE_VOIDS,
        default_value=REUSE_VOIDS[0],
        help="A function that hands its work to a library (normlab's reference, torch's "
        "normalizations, autograd for a backward, np.var in ps6): 'function' voids every "
        "cell of it (the default), 'cell' its reuse cell alone. `make release` writes it "
        "into the notebooks' setup cells (python -m normlab.course points) for a student's "
        "own kernel; graders read it here.",
    ).tag(config=True)


class ReusePolicy(Preprocessor):
    """The course's reuse policy for nbgrader's kernels: they inherit `POLICY_ENV`, set here from
    `NormlabGrading.reuse_voids`, which `use_assignment` reads before its own argument (in
    c.Autograde.sanitize_preprocessors, before Execute). The course's grader reads the config
    itself (`grader.execute.SandboxExecute`)."""

    def preprocess(self, nb, resources):
        os.environ[POLICY_ENV] = NormlabGrading(parent=self).reuse_voids
        return nb, resources


class RestoreHiddenTests(OverwriteCells):
    """OverwriteCells that takes a released test cell for what it is (see the module)."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                stored = self.gradebook.find_source_cell(
                    grade_id, self.notebook_id, self.assignment_id
                )
            except MissingEntry:
                stored = None
            if stored is not None and stored.locked and stored.source != cell.source:
                # the stored source as generate_assignment released it: hidden tests removed
                released = NotebookNode(source=stored.source)  # ClearHiddenTests edits it
                ClearHiddenTests(parent=self)._remove_hidden_test_region(released)
                if cell.source == released.source:
                    cell.source = stored.source  # the hidden tests go back in, silently
        return super().preprocess_cell(cell, resources, cell_index)


DAY_S = 24 * 3600


class PercentPerDay(LateSubmissionPlugin):
    """`percent_per_day` of the earned points per started day late, after `grace_minutes`."""

    percent_per_day = Float(
        10.0, config=True, help="Percent of the earned points lost per day late"
    )
    grace_minutes = Float(15.0, config=True, help="Minutes after the due date that are not late")

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        late = total_seconds_late - 60.0 * self.grace_minutes
        if late <= 0 or not score:
            return 0.0
        days = math.ceil(late / DAY_S)
        return min(score, score * self.percent_per_day * days / 100.0)
