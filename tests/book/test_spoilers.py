"""No spoilers by default (issue 11): where a page shows the reference code of a function that a
problem set asks students to write, the code is folded in a dropdown labelled as the reference
to open after that problem set, inside `{only} not term`; the instructor's term build
(NORMLAB_TERM=1, _ext/normlab_term.py) leaves it out of the HTML altogether.

The fast tests read the book's sources: every function a problem set asks for is known here,
with the lib objects that answer it, and every `literalinclude` of such an object must be
wrapped. The slow tests check both builds as Chromium shows them (each page visited once,
tests/site_visit.py).

Numbers too (issue 32): no autograded numeric answer of a problem set (every variant's, once a
set has variants: tests/book/graded_numbers.py) may stand in a page's unfolded text at 4
significant digits; integers below 100 are not looked for.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest
from book_pages import REPO, html_path, part_files, toc_files
from cells import PS1, PS4
from graded_numbers import Answer, numeric_answers, shown_answers_in, value_answer_checks
from site_visit import serious, value

from normlab.grading import ASSIGNMENTS

LIB = REPO / "lib" / "normlab"

# What each problem-set function's answer looks like in lib/normlab: (file, pyobject) pairs.
# A new problem-set function fails test_every_problem_set_function_is_known until it is added.
ANSWERS = {
    "row_stats": [("stats.py", "row_stats"), ("stats.py", "centered_and_var")],
    "layer_norm": [
        ("layer_norm.py", "layer_norm"),
        ("fast.py", "layer_norm_fast"),
        ("torch_twins.py", "layer_norm"),
    ],
    "batch_norm": [
        ("batch_norm.py", "batch_norm"),
        ("batch_norm.py", "BatchNorm"),
        ("batch_norm.py", "BatchNorm.__call__"),
    ],
    "witness": [("audit.py", "audit"), ("audit.py", "_check_independence")],
    "rms_norm": [
        ("rms_norm.py", "rms_norm"),
        ("rms_norm.py", "rms_norm_eps_outside"),  # one bracket from the answer
        ("torch_twins.py", "rms_norm"),
    ],
    "layer_norm_backward": [
        ("backward.py", "layer_norm_backward"),
        ("backward_stages.py", "staged_layer_norm_backward"),
        # the six stages: chained, their backward methods are the answer
        *(
            ("backward_stages.py", stage)
            for stage in ("Mean", "Centre", "Variance", "InverseStd", "XHat", "ScaleShift")
        ),
    ],
    "batch_norm_backward": [("backward.py", "batch_norm_backward")],
    "batch_norm_forward": [("batch_norm.py", "batch_norm_forward")],
    "group_norm": [("group_norm.py", "group_norm")],
    "stable_variance": [
        ("stats.py", "centered_and_var"),
        ("variance_precision.py", "two_pass_variance"),
        # Welford: one pass, stable, a whole answer to ps6 Part A
        ("variance_precision.py", "welford_variance"),
    ],
    "time_median": [("bench/timing.py", "time_interleaved")],
    # ps8's module: the torch twin's class, and the function its forward calls; chapter 9's
    # centring-only control is the same module less the division (issue 44, item 14)
    "LayerNorm": [
        ("torch_twins.py", "LayerNorm"),
        ("torch_twins.py", "layer_norm"),
        ("training/mlp.py", "CenterOnly"),
    ],
    # ps9's two functions; the torch twin's forward is dyt's formula
    "dyt": [("dyt.py", "dyt"), ("torch_twins.py", "DyT")],
    "dyt_backward": [("dyt.py", "dyt_backward")],
}

# Functions that DESIGN.md's contracts give to a problem set whose notebook is not written yet:
# their reference is folded already. Drop an entry once solutions/<ps>/ defines the function.
ANNOUNCED: dict[str, set[str]] = {}

FENCE = re.compile(r"^\s{0,3}(?P<fence>`{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
# backtick directives whose content is parsed as Markdown; any other backtick fence is raw text
CONTAINERS = {"only", "dropdown", "admonition", "note", "tip", "important", "caution", "warning"}
DROPDOWN_TITLE = re.compile(r"^Reference `(?P<name>[\w.]+)`: open it after (?P<sets>.+)$")


def asked_functions() -> dict[str, set[str]]:
    """{function name: assignments} for every `def` (and `class`: ps8's module) in a solution
    cell of solutions/*/*.ipynb, and the ANNOUNCED ones."""
    asked = {name: set(assignments) for name, assignments in ANNOUNCED.items()}
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and "### BEGIN SOLUTION" in source:
                for name in re.findall(r"^(?:def|class) (\w+)\(", source, flags=re.M):
                    asked.setdefault(name, set()).add(path.parent.name)
    return asked


def answer_objects() -> dict[tuple[str, str], set[str]]:
    """{(lib file, pyobject): the assignments whose answer it contains}."""
    asked = asked_functions()
    found: dict[tuple[str, str], set[str]] = {}
    for function, objects in ANSWERS.items():
        for obj in objects:
            found.setdefault(obj, set()).update(asked.get(function, ()))
    return found


def includes(text: str) -> list[dict]:
    """Every literalinclude of a MyST page: its path, pyobject and enclosing directives.

    A small fence walker: colon fences always nest; a backtick fence nests only for the
    CONTAINERS directives, anything else (code cells, code blocks, literalinclude) is raw text
    until its closing fence.
    """
    found, stack = [], []  # stack entries: [char, length, name, argument, options]
    for line in text.splitlines():
        top = stack[-1] if stack else None
        match = FENCE.match(line)
        raw = top is not None and top[0] == "`" and top[2] not in CONTAINERS
        if match is None or (raw and match["info"].strip()):
            if top is not None and top[2] == "literalinclude":
                option = re.match(r"^:(\w+):\s*(.*)$", line.strip())
                if option:
                    top[4][option[1]] = option[2]
            continue
        fence, info = match["fence"], match["info"].strip()
        if not info and top is not None and fence[0] == top[0] and len(fence) >= top[1]:
            closed = stack.pop()
            if closed[2] == "literalinclude":
                found.append(
                    {
                        "path": closed[3],
                        "pyobject": closed[4].get("pyobject"),
                        "around": [(entry[2], entry[3]) for entry in stack],
                    }
                )
            continue
        directive = DIRECTIVE.match(info)
        name, arg = (directive["name"], directive["arg"].strip()) if directive else (info, "")
        stack.append([fence[0], len(fence), name, arg, {}])
    return found


def lib_object(path: str) -> str:
    """'../lib/normlab/bench/timing.py' -> 'bench/timing.py'."""
    return path.split("lib/normlab/", 1)[-1]


def fold_problems(include: dict, assignments: set[str]) -> list[str]:
    """Why a literalinclude of reference code is not folded properly (empty when it is)."""
    names = [name for name, _ in include["around"]]
    args = dict(include["around"])
    problems = []
    if "only" not in names or not re.search(r"\bnot\s+term\b", args.get("only", "")):
        problems.append("not inside {only} not term")
    if "dropdown" not in names:
        problems.append("not inside a {dropdown}")
    else:
        title = DROPDOWN_TITLE.match(args["dropdown"])
        if title is None:
            problems.append(f"dropdown title {args['dropdown']!r} is not 'Reference `name`: ...'")
        else:
            missing = {a for a in assignments if a not in title["sets"]}
            if missing:
                problems.append(f"the dropdown does not name {sorted(missing)}")
        if "only" in names and names.index("only") > names.index("dropdown"):
            problems.append("the {only} is inside the dropdown: the term build keeps the fold")
    return problems


def book_sources() -> list[Path]:
    return [REPO / f"{f}.md" for f in toc_files() if (REPO / f"{f}.md").is_file()]


def reference_includes() -> list[tuple[Path, dict, set[str]]]:
    """Every literalinclude of answer code in the book: (page, include, assignments)."""
    answers = answer_objects()
    asked = asked_functions()
    found = []
    for page in book_sources():
        for include in includes(page.read_text()):
            key = (lib_object(include["path"]), include["pyobject"])
            short = (include["pyobject"] or "").split(".")[-1]
            assignments = answers.get(key) or asked.get(short)
            if assignments:
                found.append((page, include, assignments))
    return found


# -- the sources ------------------------------------------------------------------------------


def test_every_problem_set_function_is_known():
    asked = asked_functions()
    assert set(asked) == set(ANSWERS), (
        "a problem set asks for a function this guard does not know (or no longer asks for one):"
        f" asked {sorted(asked)}, known {sorted(ANSWERS)}"
    )
    assert set().union(*asked.values()) <= set(ASSIGNMENTS).union(*ANNOUNCED.values())


@pytest.mark.parametrize("obj", sorted({o for objs in ANSWERS.values() for o in objs}))
def test_every_answer_object_exists_in_the_library(obj):
    path, dotted = obj
    tree = ast.parse((LIB / path).read_text())
    scope = tree.body
    for part in dotted.split("."):
        node = next(
            (n for n in scope if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part),
            None,
        )
        assert node is not None, f"{path} has no {dotted}"
        scope = node.body


def test_every_literalinclude_of_reference_code_is_folded_inside_only_not_term():
    found = reference_includes()
    assert found, "no page shows reference code: the guard would pass vacuously"
    problems = [
        f"{page.relative_to(REPO)}: {include['pyobject']}: {problem}"
        for page, include, assignments in found
        for problem in fold_problems(include, assignments)
    ]
    assert not problems, problems


def test_the_folded_functions_are_the_ones_the_report_lists():
    """Chapters 2, 6, 7, 9, 10, 11, 12 and 13 fold reference code (issues 11, 19, 32, 43, 44)."""
    folded = {(page.stem, include["pyobject"]) for page, include, _ in reference_includes()}
    assert folded == {
        ("02_layer_norm_derived", "layer_norm"),
        ("06_family", "group_norm"),
        ("07_rms_norm", "rms_norm"),
        ("07_rms_norm", "rms_norm_eps_outside"),
        ("09_what_a_norm_buys", "CenterOnly"),
        ("10_backward", "Mean"),
        ("10_backward", "Centre"),
        ("10_backward", "Variance"),
        ("10_backward", "InverseStd"),
        ("10_backward", "XHat"),
        ("10_backward", "ScaleShift"),
        ("10_backward", "staged_layer_norm_backward"),
        ("10_backward", "layer_norm_backward"),
        ("10_backward", "batch_norm_backward"),
        ("11_numerics", "centered_and_var"),
        ("11_numerics", "welford_variance"),
        ("12_speed", "layer_norm_fast"),
        ("13_dynamic_tanh", "dyt"),
        ("13_dynamic_tanh", "dyt_backward"),
    }


UNFOLDED = """
Some text.

```{literalinclude} ../lib/normlab/rms_norm.py
:language: python
:pyobject: rms_norm
```
"""

FOLDED = """
::::{only} not term
:::{dropdown} Reference `rms_norm`: open it after ps4_rmsnorm

```{literalinclude} ../lib/normlab/rms_norm.py
:pyobject: rms_norm
```
:::
::::

```{code-cell} ipython3
print(":::")  # raw text inside a code cell is not a fence
```
"""


def test_the_guard_fails_on_an_unfolded_include_and_passes_a_folded_one():
    (bare,) = includes(UNFOLDED)
    assert bare == {"path": "../lib/normlab/rms_norm.py", "pyobject": "rms_norm", "around": []}
    assert fold_problems(bare, {"ps4_rmsnorm"}) == [
        "not inside {only} not term",
        "not inside a {dropdown}",
    ]
    (folded,) = includes(FOLDED)
    assert [name for name, _ in folded["around"]] == ["only", "dropdown"]
    assert fold_problems(folded, {"ps4_rmsnorm"}) == []
    assert fold_problems(folded, {"ps2_layer_norm"}) == [
        "the dropdown does not name ['ps2_layer_norm']"
    ]
    inverted = FOLDED.replace(
        "::::{only} not term", "::::{dropdown} Reference `x`: open it after ps4_rmsnorm", 1
    )
    inverted = inverted.replace(
        ":::{dropdown} Reference `rms_norm`: open it after ps4_rmsnorm", ":::{only} not term", 1
    )
    assert (
        "the {only} is inside the dropdown"
        in fold_problems(includes(inverted)[0], {"ps4_rmsnorm"})[0]
    )


def _term_extension():
    spec = importlib.util.spec_from_file_location("normlab_term", REPO / "_ext" / "normlab_term.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("environ", "configured", "term"),
    [
        ({}, False, False),
        ({"NORMLAB_TERM": ""}, False, False),
        ({"NORMLAB_TERM": "0"}, False, False),
        ({"NORMLAB_TERM": "no"}, False, False),
        ({"NORMLAB_TERM": "1"}, False, True),
        ({"NORMLAB_TERM": "yes"}, False, True),
        ({}, True, True),
    ],
)
def test_the_term_switch_reads_the_environment_and_the_config(environ, configured, term):
    assert _term_extension().term_requested(environ, configured) is term


# -- both builds, in the browser ----------------------------------------------------------------

REFERENCE_NAMES = sorted(
    {o.split(".")[0] for objs in ANSWERS.values() for _, o in objs} | set(ANSWERS)
)
DEFINES_REFERENCE = re.compile(rf"\b(def|class) ({'|'.join(REFERENCE_NAMES)})\b")


def _folded_pages() -> dict[str, set[str]]:
    """{toc file: the titles of its folds}; one fold may hold several includes (ch. 10's stages)."""
    pages: dict[str, set[str]] = {}
    for page, include, _ in reference_includes():
        toc = page.relative_to(REPO).with_suffix("").as_posix()
        pages.setdefault(toc, set()).add(dict(include["around"]).get("dropdown"))
    return pages


@pytest.mark.parametrize("toc_file", toc_files())
def test_default_build_folds_the_reference_until_the_reader_opens_it(site_visits, toc_file):
    """A page with reference code shows each fold closed, labelled, its code out of view until
    its summary is clicked; a page without shows no fold."""
    folds = value(site_visits, toc_file, "reference_folds")
    assert len(folds) == len(_folded_pages().get(toc_file, ()))
    if not folds:
        return  # an exercises page shows its stubs: the next test judges those
    visible = value(site_visits, toc_file, "visible_pre")
    assert not [t for t in visible if DEFINES_REFERENCE.search(t)], "reference code in view"
    for fold in folds:
        assert fold["open_attribute"] is None
        assert "open it after ps" in fold["summary"]
        assert not fold["code_visible_before"]
        assert fold["code_visible_after"]
        assert DEFINES_REFERENCE.search(fold["code"])


def _stub_line(node: ast.stmt) -> bool:
    """`raise NotImplementedError...`, `...` (an interface's signature: ps8's page shows its
    torch module's), or `super().__init__()` (a torch module's stub)."""
    if isinstance(node, ast.Raise):
        return "NotImplementedError" in ast.unparse(node)
    return ast.unparse(node) in ("...", "super().__init__()")


def _is_stub(definition: ast.FunctionDef | ast.ClassDef) -> bool:
    """A function whose body, after its docstring, is nothing (make release's comment stub,
    `# YOUR CODE HERE`) or only stub lines; a class of such methods."""
    body = definition.body[1:] if ast.get_docstring(definition) is not None else definition.body
    if isinstance(definition, ast.ClassDef):
        return bool(body) and all(
            isinstance(node, ast.FunctionDef) and _is_stub(node) for node in body
        )
    return all(_stub_line(node) for node in body)


def shown_answers(pre_texts: list[str]) -> list[str]:
    """The code blocks that define a reference function or class with a body (not a stub).
    A block that is not Python on its own (a fragment, a console) counts when it names one."""
    shown = []
    for text in pre_texts:
        if not DEFINES_REFERENCE.search(text):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            shown.append(text)
            continue
        definitions = (
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in REFERENCE_NAMES
        )
        if any(not _is_stub(node) for node in definitions):
            shown.append(text)
    return shown


def test_a_stub_is_not_an_answer_but_a_definition_is():
    stub = "def layer_norm(x, gamma, beta, eps=1e-5):\n    raise NotImplementedError()"
    comment_stub = 'def layer_norm(x, gamma, beta):\n    """Doc."""\n    # YOUR CODE HERE\n'
    answer = "def layer_norm(x, gamma, beta, eps=1e-5):\n    return (x - x.mean(-1)) / 2"
    fragment = "mean = x.mean(axis=tuple(range(x.ndim - 1)), keepdims=True)"
    assert shown_answers([stub, comment_stub, fragment]) == []
    assert shown_answers([answer]) == [answer]
    assert shown_answers([f"{stub}\n\n\n{answer}"])  # a stub beside an answer hides nothing
    assert shown_answers(["class Variance:\n    def backward(self): ..."]) == []  # signatures
    assert shown_answers(["class Variance:\n    def backward(self):\n        return 2 * self.x"])
    module = "class LayerNorm(Module):\n    def __init__(self, d):\n        super().__init__()\n"
    assert shown_answers([module]) == []  # ps8's stub: a torch module's required first line
    assert shown_answers([module + "        self.d = d\n"])
    assert shown_answers(["def layer_norm(x):\n    # YOUR CODE HERE\n"])  # no body: not Python


@pytest.mark.parametrize("toc_file", part_files("Chapters") + part_files("Exercises"))
def test_no_chapter_or_exercise_page_shows_an_answer_unasked(site_visits, toc_file):
    """Every code block in view, before the reader opens anything, is free of answers."""
    assert not shown_answers(value(site_visits, toc_file, "visible_pre")), "an answer in view"


@pytest.mark.parametrize("toc_file", [f for f in toc_files() if f.startswith("chapters/")])
def test_term_build_leaves_every_reference_out(term_site, toc_file):
    html = (term_site / html_path(toc_file)).read_text(encoding="utf-8")
    assert "reference-solution" not in html
    assert "open it after ps" not in html
    assert not DEFINES_REFERENCE.search(re.sub(r"<[^>]+>", "", html))


@pytest.mark.parametrize("toc_file", toc_files())
def test_term_build_pages_show_no_fold_behave_and_pass_axe(
    built_site, term_site, term_visits, toc_file
):
    """The term build's pages, as its students see them: no reference fold, one title, no
    console or page error, no failed or foreign request, no serious or critical axe-core
    violation. A page the term build leaves as the default build writes it (the same bytes,
    which test_browser.py's visit of the default build has seen behave and pass axe) holds
    no reference fold and one title."""
    if toc_file not in term_visits:
        page = (term_site / html_path(toc_file)).read_text(encoding="utf-8")
        assert page == (built_site / html_path(toc_file)).read_text(encoding="utf-8")
        assert not re.search(r"<details[^>]*class=\"[^\"]*\breference-solution\b", page)
        article = page[page.index("<article") : page.index("</article>")]
        assert len(re.findall(r"<h1\b", article)) == 1
        return
    seen = value(term_visits, toc_file, "term_folds")
    assert seen["reference_folds"] == 0
    assert seen["titles"] == 1
    assert not term_visits[toc_file].problems, term_visits[toc_file].problems
    assert serious(value(term_visits, toc_file, "axe")) == []


# -- numbers: no graded answer in view on any page (issue 32) ----------------------------------

GRADED_NUMBERS = [a for a in ASSIGNMENTS if value_answer_checks(a)]


def test_the_graded_numbers_are_read_from_the_solution_notebooks():
    """Each value answer an autograded cell checks, with its numbers; the guard has work. ps1's
    are every variant's of its pool (issue 30): one vector per variant for normalized_r."""
    checked = {a: value_answer_checks(a) for a in ASSIGNMENTS}
    assert (PS4.param_counts.grade_id, "ln_total") in checked[PS4.param_counts.assignment]
    assert (PS1.normalized.grade_id, "normalized_r") in checked[PS1.normalized.assignment]
    assert not checked["ps2_layer_norm"]  # functions are answers of another kind (above)
    answers = numeric_answers("ps1_by_hand")
    vectors = {a.values for a in answers if a.name == "normalized_r"}
    assert len(vectors) > 200 and all(len(v) >= 5 for v in vectors)  # a variant's d features
    assert {a.assignment for a in numeric_answers("ps4_rmsnorm")} == {"ps4_rmsnorm"}


def test_a_graded_number_is_found_at_four_significant_digits():
    third = Answer("ps0", "share", "x", (1 / 3,))
    assert shown_answers_in("the output 0.333333 here", [third])
    assert shown_answers_in("the output \u22120.3333", [third])  # MathJax's minus
    assert not shown_answers_in("the output 0.33", [third])  # two digits: no
    big = Answer("ps0", "count", "n", (1024.0,))
    assert shown_answers_in("1,024 parameters", [big])  # 1,024 reads as 1024
    small = Answer("ps0", "count", "n", (42.0,))
    assert not shown_answers_in("42 of them", [small])  # integers below 100 are not looked for


def test_a_vector_answer_is_shown_only_whole():
    vector = Answer("ps0", "z_cell", "z", (-1.5, -1 / 3, 1 / 3, 1.5))
    assert not shown_answers_in("a third, 0.3333, is everywhere", [vector])
    assert shown_answers_in("z = [-1.5, -0.3333, 0.3333, 1.5]", [vector])
    scattered = "0.3333 here, 1.5 there, -1.5 below and -0.3333 at the end"
    assert not shown_answers_in(scattered, [vector])  # its numbers, not the vector
    whole = Answer("ps0", "z_cell", "z", (-1.0, 0.0, 1.0))  # nothing looked for
    assert not shown_answers_in("-1, 0 and 1", [whole])


@pytest.mark.parametrize("assignment", GRADED_NUMBERS)
def test_no_page_shows_a_graded_number_unfolded(site_visits, assignment):
    """No number in a page's unfolded text (what a reader sees before opening anything: the
    words, the code and outputs in view, the formulas) equals an autograded numeric answer."""
    answers = numeric_answers(assignment)
    assert answers
    found = {
        page: shown
        for page in toc_files()
        if (shown := shown_answers_in(value(site_visits, page, "unfolded_text"), answers))
    }
    assert not found, f"{assignment}'s answers in view: {found}"
