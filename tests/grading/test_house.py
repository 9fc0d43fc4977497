"""The grading house's rules, read from its code (issue 42): what ships never imports what does
not, a check is named by its declaration everywhere else, one name has one module.

- Nothing under `lib/normlab/grading` or `lib/normlab_sandbox` (the student download's code)
  imports `normlab.answer_key`: the checks reach it only through `normlab.grading.backing`,
  which the install's entry point names.
- A grade_id is written as a string once, where its check is declared (`check_spec(...)`, a
  `*_spec` builder's call or its `grade_id` default, ps3's `CATCHES`, a set's `MANUAL`); every
  other module, and every test, refers to the check object (`CHECKS[a].cell.axis`). A few ids
  are also ordinary words, which the modules of `COINCIDENT` use as words (each with why); no
  test does.
- No two modules of lib/ share a name, but a set's checks and its battery (`psN_<name>.py` in
  `normlab.grading` and `normlab.answer_key.batteries`) and packages' `__init__`/`__main__`.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from normlab.grading import CHECKS, MANUAL

REPO = Path(__file__).resolve().parents[2]
LIB = REPO / "lib"
SHIPS = (LIB / "normlab" / "grading", LIB / "normlab_sandbox")
# the grading house, and the tests of it: tests/core, bench, training and lab test the reference,
# the benchmark and the training runs, where "float32" or "independence" are only words; this
# module's own tables name ids on purpose
TESTS = REPO / "tests"
HOUSE = (
    LIB / "normlab" / "grading",
    LIB / "normlab" / "answer_key",
    LIB / "normlab" / "course",
    LIB / "normlab_sandbox",
    *(TESTS / name for name in ("grading", "course", "book", "e2e", "hub", "packaging")),
    *TESTS.glob("*.py"),
)
NOT_HOUSE = {Path(__file__).resolve()}
GRADE_IDS = {g for specs in CHECKS.values() for g in specs} | {
    g for cells in MANUAL.values() for g in cells
}
# ids that are also words, and the modules that use them as words, with why
COINCIDENT = {
    "lib/normlab/grading/gradients.py": {"dgamma", "dbeta"},  # the gradient's parts' names
    "lib/normlab/grading/ps7_backward.py": {"dgamma", "dbeta", "mean", "variance"},  # terms
    "lib/normlab/grading/ps2_layer_norm.py": {"mean"},  # row_stats' output, (mean, var)
    "lib/normlab/answer_key/torch_layer_norms.py": {"mean"},  # the same statistic
    "lib/normlab/answer_key/formula_outputs.py": {"mean"},  # the statistic torch may detach
    "lib/normlab/grading/normchecks/kind.py": {"variance"},  # the statistic's name
    "lib/normlab/grading/ps3_running.py": {"training"},  # batch_norm_forward's argument
    "lib/normlab_sandbox/module_probes.py": {"state_dict", "training"},  # torch's names
    "lib/normlab/answer_key/batteries/norm.py": {"float32"},  # a dtype's name
    "lib/normlab/answer_key/batteries/ps6_stability_speed.py": {"float32"},
    "lib/normlab/answer_key/batteries/ps8_in_a_model.py": {"float32", "state_dict", "training"},
    # torch's names, words, and a statistic cut from the graph
    "lib/normlab/grading/ps8_in_a_model.py": {"float32", "state_dict", "axis", "mean"},
    "lib/normlab/grading/ps9_dyt.py": {"dgamma", "dbeta"},  # the gradient's parts' names
}


def _python_files(*roots: Path) -> list[Path]:
    found = (p for root in roots for p in ([root] if root.is_file() else root.rglob("*.py")))
    return sorted(p for p in found if "__pycache__" not in p.parts and p not in NOT_HOUSE)


def _declarations(tree: ast.AST) -> set[int]:
    """ids of the string constants that declare a check: those of a `*_spec(...)` call (its id,
    and the salt or cells its declaration names), the default of a `grade_id` parameter, the
    keys of a module's CATCHES or MANUAL."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name.endswith("_spec"):
                parts = [*node.args, *(k.value for k in node.keywords)]
                found |= {id(n) for p in parts for n in ast.walk(p) if isinstance(n, ast.Constant)}
        elif isinstance(node, ast.FunctionDef):
            args = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults))
            defaults += node.args.defaults + node.args.kw_defaults
            for arg, default in zip(args, defaults, strict=True):
                if arg.arg == "grade_id" and isinstance(default, ast.Constant):
                    found.add(id(default))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            if any(getattr(t, "id", "") in ("CATCHES", "MANUAL") for t in node.targets):
                found |= {id(k) for k in node.value.keys if isinstance(k, ast.Constant)}
    return found


def grade_id_literals() -> list[str]:
    """Every grade_id written as a string outside its declaration, as 'path:line: id'."""
    found = []
    for path in _python_files(*HOUSE):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declared = _declarations(tree)
        words = COINCIDENT.get(path.relative_to(REPO).as_posix(), set())
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and node.value in GRADE_IDS):
                continue
            if id(node) in declared or node.value in words:
                continue
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value}")
    return found


def test_a_grade_id_is_written_once_where_its_check_is_declared():
    assert grade_id_literals() == []


def test_the_rule_tells_a_declaration_from_a_use():
    source = (
        'check_spec("axis", "f", salt="centering")\nCHECKS["axis"]\ndef b(grade_id="numerics"): ...'
    )
    tree = ast.parse(source)
    declared = _declarations(tree)
    strings = [n for n in ast.walk(tree) if isinstance(getattr(n, "value", None), str)]
    said = [(n.value, id(n) in declared) for n in strings]
    assert sorted(said) == [
        ("axis", False),
        ("axis", True),
        ("centering", True),
        ("f", True),
        ("numerics", True),
    ]


def _imports(path: Path) -> set[str]:
    """The modules a file imports, relative ones resolved against its package."""
    package = path.relative_to(LIB).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return found


def test_what_ships_never_imports_the_answer_key():
    reaching = {
        str(path.relative_to(LIB)): sorted(m for m in _imports(path) if "answer_key" in m)
        for path in _python_files(*SHIPS)
    }
    assert {path: found for path, found in reaching.items() if found} == {}


def test_the_rule_resolves_relative_imports(tmp_path, monkeypatch):
    folder = LIB / "normlab" / "grading"
    assert "normlab.answer_key.live" in _imports_of(folder, "from ..answer_key import live")
    assert "normlab.answer_key" in _imports_of(folder, "import normlab.answer_key")


def _imports_of(folder: Path, source: str) -> set[str]:
    path = folder / "_probe_of_the_house_test.py"
    path.write_text(source, encoding="utf-8")
    try:
        return _imports(path)
    finally:
        path.unlink()


def test_no_two_modules_share_a_name_but_a_sets_checks_and_battery():
    names = Counter(p.stem for p in _python_files(LIB) if p.stem not in ("__init__", "__main__"))
    shared = {name for name, count in names.items() if count > 1}
    sets = {name for name in shared if name.startswith("ps") and name.split("_")[0][2:].isdigit()}
    assert shared - sets == set()
