"""nbconvert preprocessors for nbgrader's feedback HTML: no hidden tests, no grader source.

nbgrader's `generate_feedback` renders the autograded notebook, whose test cells
were restored from the source: by default the HTML shows the hidden-test lines and
full tracebacks, which quote the graders' code. `nbgrader_config.py` adds these two
preprocessors to `GenerateFeedback.preprocessors`:

- `HideHiddenTests` removes every "### BEGIN HIDDEN TESTS" ... "### END HIDDEN TESTS"
  region from the cells (the student sees the visible check the cell runs);
- `ConciseErrors` reduces every error output to its last line, "AssertionError:
  <message>": the message names the misconception, and no frame of the graders'
  code (or of the reference it checks against) is quoted.
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode

BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"


def without_hidden_tests(source: str, begin: str = BEGIN_HIDDEN, end: str = END_HIDDEN) -> str:
    """The source with every hidden-test region (delimiter lines included) removed."""
    kept, hidden = [], False
    for line in source.split("\n"):
        if begin in line:
            hidden = True
        elif end in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept).rstrip("\n")


class HideHiddenTests(Preprocessor):
    """Remove hidden-test regions from every cell's source."""

    enabled = Bool(True).tag(config=True)  # nbconvert preprocessors are off by default
    begin_delimiter = Unicode(BEGIN_HIDDEN).tag(config=True)
    end_delimiter = Unicode(END_HIDDEN).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if self.begin_delimiter in cell.source:
            cell.source = without_hidden_tests(
                cell.source, self.begin_delimiter, self.end_delimiter
            )
        return cell, resources


class ConciseErrors(Preprocessor):
    """Replace each error's traceback by its last line: 'ExceptionName: message'."""

    enabled = Bool(True).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [
                    f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                ]
        return cell, resources
