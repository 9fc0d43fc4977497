# The course's two commands are `make book` and `make test`; everything else is for instructors
# and maintainers. Every target bootstraps .venv first (idempotent, a no-op when up to date).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
A      ?= ps2_layer_norm
JOBS   ?=
# make grade's --isolation: auto (= strict, refused where bubblewrap cannot sandbox) or basic
ISOLATION ?= auto
PORT   ?= 8000

.PHONY: install lock student book check test lint release grade report export bench serve clean FORCE
.PHONY: hub-demo hub hub-clean hub-root hub-roster
.PHONY: slurm-up slurm-down

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# constraints.txt is a universal lock (environment markers for Python 3.10 to 3.13, every
# platform); uv keeps the pins it already has and changes only what pyproject.toml asks for.
lock: install
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --universal --python-version 3.10 \
		--no-annotate --custom-compile-command "make lock" -o constraints.txt

# The student download (issue 19): a wheel of the checks with their visible batteries recorded
# from the reference (no answer, no hidden battery; lib/normlab/course/download/source.py) and
# a zip of it with the released notebooks, in _build/student/downloads/, which the book
# publishes (html_extra_path). Made again only when something it is made of changes: a file
# under lib/, solutions/ or exercises/, the list of those files (one added or deleted:
# STUDENT_LIST is rewritten only then), or the install. Not a folder's time: importing lib/
# makes __pycache__ folders in it. STUDENT_LIST names private files (solutions/, the answer
# key), so it lives beside _build/student, never in it: the book publishes all of _build/student.
STUDENT_SITE := _build/student
STUDENT      := $(STUDENT_SITE)/downloads
STUDENT_SRC  := _build/student-src
STUDENT_IN   := $(shell find lib solutions exercises -type f -not -path '*/__pycache__/*' \
	-not -path '*/.ipynb_checkpoints/*' -not -name '*.pyc' -not -path '*.egg-info/*' 2>/dev/null | sort)
STUDENT_LIST := _build/student-inputs.txt

student: $(STUDENT)/normlab-course-student.zip

$(STUDENT_LIST): FORCE
	@mkdir -p $(@D)
	@echo "$(STUDENT_IN)" | cmp -s - $@ || echo "$(STUDENT_IN)" >$@

$(STUDENT)/normlab-course-student.zip: $(STAMP) $(STUDENT_LIST) $(STUDENT_IN)
	rm -rf $(STUDENT_SITE) $(STUDENT_SRC)
	$(PY) -m normlab.course student-source $(STUDENT_SRC)
	SOURCE_DATE_EPOCH=315532800 $(PY) -m build --wheel --no-isolation --outdir $(STUDENT) $(STUDENT_SRC)
	$(PY) -m normlab.course student-bundle $(STUDENT)

# `make book NORMLAB_TERM=1`: the term build, without the folded reference solutions
# (_ext/normlab_term.py; make passes command-line variables to the recipe's environment)
book: install student
	$(VENV)/bin/jupyter-book build . -n -W --keep-going
	@echo "The book is built: open file://$(CURDIR)/_build/html/index.html (or: make serve)"

lint: install
	$(PY) -m ruff check lib tests _ext scripts hub
	$(PY) -m ruff format --check lib tests _ext scripts hub

# pytest on every core with pytest-xdist (WORKERS=auto: one worker per core). A worker that
# needs a build or a graded course another worker is making waits for it (tests/run_once.py);
# the tests of one xdist_group run on one worker (--dist loadgroup). .pyc files are allowed
# even where the environment forbids them (PYTHONDONTWRITEBYTECODE): pytest then keeps its
# rewritten test modules, and the processes the tests start reuse lib/'s compiled modules.
# PYTEST_ARGS goes to pytest as is.
WORKERS ?= auto
PYTEST  := PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n $(WORKERS) --dist loadgroup

# the maintainer's loop: lint, and every test that is neither slow nor needs the network
check: lint
	$(PYTEST) -q -m "not slow and not network" $(PYTEST_ARGS)

# everything CI checks, the 25 slowest steps listed at the end (every test's seconds in
# test-artifacts/junit.xml). Tests marked `network` reach
# PyPI, as `make install` does; offline: make test PYTEST_ARGS='-m "not network"'
test: lint
	$(PYTEST) --durations=25 --junitxml=test-artifacts/junit.xml $(PYTEST_ARGS)

# a check's points come from its CheckSpec (`normlab.course points` writes them into solutions/);
# the assignment ids come from normlab.grading.ASSIGNMENTS (read once installed);
# .venv/bin on PATH: nbgrader runs the `alembic` executable when it creates gradebook.db
release: install
	$(PY) -m normlab.course points
	ids="$$($(PY) -c 'from normlab.grading import ASSIGNMENTS; print(*ASSIGNMENTS)')" && test -n "$$ids" && \
	for a in $$ids; do PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/nbgrader generate_assignment $$a --force || exit 1; done

# JOBS empty: the grader's own default, one worker per CPU
grade: install
	$(PY) -m normlab.course grade $(A) $(if $(JOBS),--jobs $(JOBS)) --isolation $(ISOLATION)

report: install
	$(PY) -m normlab.course report $(A)

# one row per student, a column per assignment (after late penalties); LMS=canvas or moodle:
# that LMS's import layout; MISSING=zero: 0 for a missing submission (default: blank). Not
# grades.csv, which `nbgrader export` writes
export: install
	$(PY) -m normlab.course export $(if $(LMS),--lms $(LMS)) --missing $(or $(MISSING),blank) \
		--out $(or $(OUT),grades-$(or $(LMS),per-student).csv)

bench: install
	$(PY) -m normlab.bench

serve:
	@test -f _build/html/index.html || $(MAKE) book
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

clean:
	rm -rf _build test-artifacts .pytest_cache

# The course on a JupyterHub, as root (instructors/hub.md; hub/): `make hub-demo` serves it on
# http://127.0.0.1:$HUB_PORT to the accounts instructor, alice and bob (password
# $HUB_DEMO_PASSWORD, generated and printed when unset) with ps1_by_hand and ps2_layer_norm
# released; `make hub ROSTER=roster.csv` serves it to a class (an account made for a student gets
# a generated password, listed in $HUB_ROOT/passwords.csv; HUB_INSTRUCTOR names the
# instructor's), nothing released; Ctrl-C stops either and keeps its state; `make hub-clean`
# removes what they made. Everything but the accounts lies under HUB_ROOT.
export HUB_ROOT ?= /srv/layernorm-hub
export HUB_PORT ?= 8000

hub-root:
	@test "$$(id -u)" -eq 0 || { echo "make $(MAKECMDGOALS) needs root: it makes local accounts" \
		"(PAM logins) and runs each user's server as that user (sudo make $(MAKECMDGOALS))" >&2; exit 1; }

hub-demo: hub-root install student
	hub/setup demo
	hub/serve

hub-roster:
	@test -n "$(ROSTER)" || { echo "make hub needs ROSTER=file.csv (columns id,first_name,last_name,email)" >&2; exit 1; }
	@python3 hub/roster.py "$(ROSTER)" "$${HUB_INSTRUCTOR:-instructor}" >/dev/null

hub: hub-root hub-roster install student
	hub/setup roster "$(ROSTER)"
	hub/serve

hub-clean: hub-root
	hub/clean

# A one-node Slurm cluster on this machine, as root, to grade a class with a job array
# (scripts/slurm/grade.sbatch; instructors/cluster.md): slurm-up installs Debian's slurm-wlm
# and munge if missing, starts munged, slurmctld and slurmd, and returns when the node takes
# jobs; slurm-down stops them and removes what slurm-up made (the packages stay).
slurm-up:
	scripts/slurm/up

slurm-down:
	scripts/slurm/down
