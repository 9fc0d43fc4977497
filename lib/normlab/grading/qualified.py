"""A tick is a true statement: the judge of a cell that reads one choice of a formula.

A normalization is four choices (`formulas`), one cell each. A cell whose choice is right on an
output wrong on another choice passes, saying so: "✓ values, apart from the variance: see
population_variance". Where another wrong choice hides this cell's (statistics over an axis of
length one give 0 whatever the cell reads) the input cannot show it; where no input of the
battery can, the cell is not judged, keeps no points, and says which cell to fix first. An input
that only hides the choice, beside inputs that show it, changes nothing, so a tick "apart from"
a mistake on the visible inputs is not taken back by a hidden one (issue 46).

`cells` names the grade cell of each choice (None: no cell reads it), or is a function of the
case that does (ps8: a tuple normalized_shape's axes are another cell's than an int's).
"""

from __future__ import annotations

from dataclasses import dataclass

from .judges import each_case
from .verdict import NOT_JUDGED, PASSED, Verdict

WORDS = {"axes": "the axes", "center": "the centring", "divisor": "the variance", "eps": "eps"}
READS = {
    "axes": "which axes it normalizes over",
    "center": "whether it subtracts the mean",
    "divisor": "what it divides the sum of squares by",
    "eps": "where it adds eps",
}


@dataclass(frozen=True)
class Apart:
    """This case passes, apart from the other choices it gets wrong."""

    choices: tuple[str, ...]


@dataclass(frozen=True)
class Hidden:
    """This case cannot show the cell's choice: `choice`, wrong, hides it; `why` says how."""

    choice: str
    why: str


def note(pairs, words: dict) -> str:
    """'apart from the axes and the variance: see axis, population_variance', of (choice, its
    cell) pairs."""
    named = list(dict.fromkeys(words.get(c, c) for c, _ in pairs))
    said = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    seen = list(dict.fromkeys(cell for _, cell in pairs if cell))
    return f"apart from {said}" + (f": see {', '.join(seen)}" if seen else "")


def qualified_judge(read, rule, cells: dict, words: dict = WORDS):
    """judge: each case read, then rule(seen) -> None (passes) | Apart(choices) (passes, apart
    from those) | Hidden(choice, why) (cannot judge) | a message or Verdict (fails). The first
    failure wins; then, if no case showed the choice, the first hidden one; else the pass."""

    def judge(cases, results, oracle):
        apart: list[tuple[str, str | None]] = []
        hidden: list[tuple[Hidden, str | None]] = []
        shown: list = []  # the cases that showed the choice, right

        def collect(seen):
            found = rule(seen)
            named = cells(seen.case) if callable(cells) else cells
            if isinstance(found, Hidden):
                hidden.append((found, named.get(found.choice)))
                return None
            if isinstance(found, Apart):
                pairs = [(c, named.get(c)) for c in found.choices]
                apart.extend(pair for pair in pairs if pair not in apart)
                found = None
            shown.extend([] if found else [seen.case])
            return found

        problem = each_case(read, collect)(cases, results, oracle)
        if problem:
            return problem
        if hidden and not shown:
            first, cell = hidden[0]
            fix = cell or words.get(first.choice, first.choice)
            return Verdict(NOT_JUDGED, f"not judged: fix {fix} first: {first.why}")
        return Verdict(PASSED, note=note(apart, words)) if apart else None

    return judge
