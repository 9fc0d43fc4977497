"""nbconvert preprocessor for nbgrader's feedback HTML: no grader source in tracebacks.

nbgrader's `generate_feedback` renders the autograded notebook, whose test cells
were restored from the source: by default (nbgrader 0.9: `GetGrades` and
`CSSHTMLHeaderPreprocessor` only) the HTML shows the hidden-test lines and full
tracebacks, which quote the graders' code. `nbgrader_config.py` adds two steps to
`GenerateFeedback.preprocessors`:

- nbgrader's own `ClearHiddenTests` removes every "### BEGIN HIDDEN TESTS" ...
  "### END HIDDEN TESTS" region from the test cells (the student sees the visible
  check the cell runs);
- `ConciseErrors` (here) reduces every error output to its last line, "AssertionError:
  <message>": the message names the misconception, and no frame of the graders'
  code (or of the reference it checks against) is quoted.
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool


class ConciseErrors(Preprocessor):
    """Replace each error's traceback by its last line: 'ExceptionName: message'."""

    enabled = Bool(True).tag(config=True)  # nbconvert preprocessors are off by default

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [
                    f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                ]
        return cell, resources
