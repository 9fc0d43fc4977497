"""`RestoreHiddenTests`: nbgrader's OverwriteCells without a false alarm per hidden-test cell.

nbgrader stores a locked cell's checksum in the gradebook *before* it strips the cell's
hidden tests from the release (generate_assignment runs SaveCells, then ClearHiddenTests), so
at autograde every test cell with hidden tests differs from its stored checksum, and
OverwriteCells prints "Attribute 'checksum' for cell ... has changed!" for each one while it
puts the hidden tests back: fourteen warnings per honest ps2 notebook, which read like
tampering (nbgrader issue #1961, https://github.com/jupyter/nbgrader/issues/1961).

This subclass restores such a cell quietly when the submitted source is exactly the released
one (the stored source with its hidden-test regions removed, by nbgrader's own
ClearHiddenTests under the course's delimiters); any other change to a locked cell is still
reported, and overwritten, as nbgrader does. nbgrader_config.py lists it in place of
OverwriteCells in `Autograde.sanitize_preprocessors`.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


class RestoreHiddenTests(OverwriteCells):
    """OverwriteCells that takes a released test cell for what it is (see the module)."""

    def released_source(self, source: str) -> str:
        """`source` as generate_assignment releases it: hidden-test regions removed."""
        cell = NotebookNode(source=source)  # what ClearHiddenTests edits in place
        ClearHiddenTests(parent=self)._remove_hidden_test_region(cell)
        return cell.source

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
                if cell.source == self.released_source(stored.source):
                    cell.source = stored.source  # the hidden tests go back in, silently
        return super().preprocess_cell(cell, resources, cell_index)
