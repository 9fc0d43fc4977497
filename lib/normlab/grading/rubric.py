"""Each assignment's rubric, read off its checks: what a cell certifies, what costs it, and how
misconceptions interact (the rules `session.Session` applies). Nothing is written by hand:
`markdown(assignment)` is the table of the instructors' page (instructors/rubric.md runs it at
build).
"""

from __future__ import annotations

from .catalog import CHECKS, MANUAL, reuse_cell
from .selfcheck import points

RULES = (
    "One cause, said once: when cells of one function fail for one cause that is the "
    "function's (it raised, returns another shape, lacks an attribute), the first of them in "
    "the notebook says it in full and the others say `same cause as <cell>`.",
    "A ✓ that holds apart from another cell's misconception says so: `apart from the "
    "variance: see population_variance`. A cell whose property another mistake hides on "
    "every input is `not judged: fix <cell> first` and keeps no points.",
    "The same rules on the visible inputs and the hidden ones: an input that only hides a "
    "cell's property (beside inputs that show it) changes nothing, so a mistake costs at "
    "grading what the notebook's summary says it costs, unless a hidden input shows a "
    "mistake of its own.",
)


def overview() -> str:
    """Every assignment as a Markdown table row: autograded cells and points, points by hand."""
    lines = ["| assignment | autograded cells | autograded | by hand |", "|---|---|---|---|"]
    for assignment, specs in CHECKS.items():
        manual = sum(MANUAL.get(assignment, {}).values())
        auto = sum(spec.points for spec in specs.values())
        by_hand = f"{points(manual)}" if manual else ""
        lines.append(f"| `{assignment}` | {len(specs)} | {points(auto)} | {by_hand} |")
    return "\n".join(lines) + "\n"


def _cells(names) -> str:
    return ", ".join(f"`{name}`" for name in names) or "none"


def markdown(assignment: str) -> str:
    """The rubric of `assignment` as a Markdown table, under the course's default reuse policy,
    "function" (a reuse cell's misconception also costs its function's other cells), and the
    cells graded by hand."""
    specs = CHECKS[assignment]
    voided_by = {g: reuse_cell(s).grade_id for g, s in specs.items() if reuse_cell(s) is not None}
    lines = [
        "| cell | points | a ✓ certifies | a ✗ names | it also costs | "
        "may pass apart from | not judged when these fail |",
        "|---|---|---|---|---|---|---|",
    ]
    for grade_id, spec in specs.items():
        costs = tuple(g for g, reuse in voided_by.items() if reuse == grade_id)
        hidden = (*spec.hidden_by, *([voided_by[grade_id]] if grade_id in voided_by else []))
        lines.append(
            f"| `{grade_id}` | {spec.points:g} | {spec.summary} | {spec.misconception} | "
            f"{_cells(costs)} | {_cells(spec.apart_from)} | {_cells(hidden)} |"
        )
    manual = MANUAL.get(assignment, {})
    if manual:
        graded = ", ".join(f"`{g}` ({points(p)})" for g, p in manual.items())
        lines.append(f"\nGraded by hand: {graded}; the rubric is in the source notebook.")
    return "\n".join(lines) + "\n"
