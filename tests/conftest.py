"""Shared fixtures: the two builds of the book, a local server for each, and a Chromium page
that records trouble.

- `student_downloads`: `make student` once per test run; returns `_build/student/downloads`
  (the wheel and the bundle the book publishes).
- `built_site`: builds the book once per test run as `make book` does, `make student` (the
  `student_downloads` fixture) then `jupyter-book build . -n -W --keep-going`, into
  `_build/html`; fails the test with the end of the build log
  (test-artifacts/book-build.log) when the build fails; returns the html folder as a Path.
- `term_site`: the term build (`make book NORMLAB_TERM=1`'s command) into a folder of its own,
  once per run, after the default build, whose executed and read pages it reuses
  (`seed_from_default_build`); its log is test-artifacts/book-term-build.log.
- The student download and both builds are shared by every pytest-xdist worker of the run
  (run_once.py): one worker builds, the others wait for it.
- `site_url`, `term_site_url`: serve a build on 127.0.0.1 (a free port, a background thread);
  yield the base URL, ending in "/". `serve(directory)` (also the `serve_folder` fixture) does
  the same for any folder, as a context manager.
- `site_visits`, `term_visits`: every page of a build opened once per run, in one Chromium
  visit that records what every browser test of the book asserts about it (site_visit.py);
  of the term build, the pages it changes (`term_changed_pages`): the others are the default
  build's bytes, seen by its visit.
- `browser_page`: a `BrowserPage` (Playwright sync API, Debian's Chromium, a fresh context per
  test; `open_page(browser)` is the same as a context manager). It records console errors,
  page errors, failed requests (network failures and HTTP status >= 400) and every request
  whose host is not 127.0.0.1 (those are also aborted, so a page can never reach the network).
  `browser_page.problems()` lists them all; a test asserts it is empty.
  `browser_page.screenshot(name)` saves a PNG under `test-artifacts/`.

Tests that use a build are marked `slow`; tests that use `browser_page` or a build's visits
are marked `slow` and `browser`, automatically, so `-m "not slow"` always leaves them out.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from run_once import once

REPO = Path(__file__).resolve().parents[1]
HTML = REPO / "_build" / "html"
STUDENT_DOWNLOADS = REPO / "_build" / "student" / "downloads"
ARTIFACTS = REPO / "test-artifacts"
BOOK_LOG = ARTIFACTS / "book-build.log"
TERM_LOG = ARTIFACTS / "book-term-build.log"
LOCAL_HOST = "127.0.0.1"
CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 90_000
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def make_student(_folder: Path | None = None) -> Path:
    """`make student`, which `make book` runs first: the student download, when out of date."""
    command = ["make", "-s", "student"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"make student failed:\n{done.stdout}\n{done.stderr}", pytrace=False)
    return STUDENT_DOWNLOADS


@pytest.fixture(scope="session")
def student_downloads(tmp_path_factory) -> Path:
    """`make student` once per run; the folder holding the wheel and the bundle."""
    return once(tmp_path_factory, "student", make_student)


def book_command(path_output: Path | None = None) -> list[str]:
    """`make book`'s build command, run with this interpreter's jupyter-book."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    into = ["--path-output", str(path_output)] if path_output else []
    return [str(jupyter_book), "build", ".", "-n", "-W", "--keep-going", *into]


# the courses graded once per run (tests/course/conftest.py, tests/grading/conftest.py)
GRADED_ONCE = ("graded_course", "attack_course", "honest_course", "serial_honest_course")
# the builds' pages, each visited once per run (site_visit.py): the readers of one build's
# visits share a worker, and the two builds' visits run side by side
VISITS = ("site_visits", "term_visits")


def xdist_group(item) -> str | None:
    """The pytest-xdist group `make test` (--dist loadgroup) runs a slow test in: its tests run
    on one worker, one after the other, while the other workers go on with the rest.

    - `kernels` as a normal user: every sandbox kernel then has the user's uid, and
      test_integrity's check that none outlives grading must not see another test's;
    - a module-scoped fixture (a server, a graded class): the module, so one worker makes it,
      unless the fixture reads a course graded once per run: that course's group (below);
    - a course graded once per run: one worker grades it (another would only wait for it,
      idle: the feedback pages' module waited 95 s for graded_course), then reads it;
    - the tests that read a build's page visits (`site_visits`, or `term_visits`): one worker
      opens that build's pages, once each, while another opens the other build's.
    A test that names its group itself keeps it."""
    if not item.get_closest_marker("slow") or item.get_closest_marker("xdist_group"):
        return None
    if item.get_closest_marker("kernels") and os.geteuid() != 0:
        return "kernels"
    visits = [name for name in VISITS if name in item.fixturenames]
    if visits:
        return visits[0].replace("_", "-")  # "site-visits" or "term-visits"
    course = next((name for name in GRADED_ONCE if name in item.fixturenames), None)
    module_fixtures = [
        defs[-1]
        for defs in item._fixtureinfo.name2fixturedefs.values()
        if defs[-1].scope == "module"
    ]
    if module_fixtures:
        reads = {name for fixture in module_fixtures for name in fixture.argnames}
        return next((name for name in GRADED_ONCE if name in reads), item.nodeid.split("::")[0])
    return course


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    # groups only where pytest-xdist is installed (it registers the marker): the term page's
    # venv (.ci/term-as-users) has pytest alone
    grouping = config.pluginmanager.hasplugin("xdist")
    for item in items:
        names = getattr(item, "fixturenames", ())
        if {"browser_page", *VISITS} & set(names):
            item.add_marker(pytest.mark.browser)
        if {"built_site", "term_site", "browser_page", "student_downloads", *VISITS} & set(names):
            item.add_marker(pytest.mark.slow)
        group = grouping and xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_finish(session):
    """The lock's resolutions (tests/packaging/test_lock.py) wait on the package index: under
    pytest-xdist the first worker starts them as soon as it has collected them, so they wait
    while the run computes (without xdist, their module's fixture starts them). xdist gives
    each worker the base temporary folder `<the run's shared folder>/popen-gwN`."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if session.config.option.collectonly or worker != "gw0" or not session.config.option.basetemp:
        return
    lock_tests = [item for item in session.items if item.name.startswith("test_lock_resolves")]
    if lock_tests:
        module = lock_tests[0].module
        shared = Path(session.config.option.basetemp).resolve().parent
        module.start_resolutions(shared / module.FOLDER)


def pytest_runtest_setup(item):
    """Under `--dist loadgroup` (make test), a test of an xdist group fails when pytest-xdist
    did not group it: xdist groups by a suffix it writes into the node id, which pytest 9.2
    ignores (pytest-xdist#1386), and a group's tests (e.g. the grader's,
    tests/course/conftest.py) must never run on two workers at once."""
    grouped = item.get_closest_marker("xdist_group")
    if grouped and getattr(item.config.option, "loadgroup", False):
        if "@" not in item.nodeid.rsplit("]", 1)[-1]:
            pytest.fail(
                "pytest-xdist did not group this xdist_group test: this pytest and "
                "pytest-xdist do not work together (pytest-xdist#1386; see pyproject.toml)",
                pytrace=False,
            )


def build_book(log: Path, path_output: Path | None = None, environ: dict | None = None) -> Path:
    """Run `make book`'s command (into `path_output`/_build when given), its log to `log`;
    fail with the log's end when the build fails; return the html folder."""
    ARTIFACTS.mkdir(exist_ok=True)
    command = book_command(path_output)
    done = subprocess.run(
        command, cwd=REPO, env=environ, capture_output=True, text=True, timeout=900, check=False
    )
    log.write_text(f"$ {' '.join(command)}\n{done.stdout}\n--- stderr ---\n{done.stderr}")
    if done.returncode != 0:
        pytest.fail(
            f"the book build failed (exit {done.returncode}); full log in {log}\n"
            f"{log.read_text()[-6000:]}",
            pytrace=False,
        )
    html = (path_output or REPO) / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.fail(f"the build succeeded but wrote no {html / 'index.html'}", pytrace=False)
    return html


@pytest.fixture(scope="session")
def built_site(student_downloads, tmp_path_factory) -> Path:
    """Build the book once per run (`make book`'s commands); return `_build/html`."""
    return once(tmp_path_factory, "book", lambda _folder: build_book(BOOK_LOG))


def seed_from_default_build(out: Path) -> None:
    """Hand a second build into `out`/_build what the default build made that a tag cannot
    change, as `make book NORMLAB_TERM=1` after `make book` finds it in _build: the executed
    pages (jupyter-cache) and the read pages (Sphinx's doctrees, with the library stamp that
    keeps them valid, _ext/normlab_outputs.py). `{only}` blocks are kept in a doctree and
    resolved when a page is written, and a new tag makes Sphinx write every page again, so
    no page is read or executed twice and every page is written with the tag; the pages show
    the default build's outputs (the speed chapter's timings too). The student download needs
    no copy: both builds publish `_build/student` of the sources (html_extra_path)."""
    built = REPO / "_build"
    for folder in (".jupyter_cache", ".doctrees"):
        shutil.copytree(built / folder, out / "_build" / folder)


def build_term_book(out: Path) -> Path:
    """`make book NORMLAB_TERM=1`'s build, into `out`/_build, after the default build."""
    seed_from_default_build(out)
    return build_book(TERM_LOG, out, os.environ | {"NORMLAB_TERM": "1"})


@pytest.fixture(scope="session")
def term_site(built_site, tmp_path_factory) -> Path:
    """The book built as during a term (NORMLAB_TERM=1), once per run, in a folder of its own."""
    return once(tmp_path_factory, "term-book", build_term_book)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the stdlib's name)
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """Serve `directory` on 127.0.0.1 on a free port (a background thread); yield its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer((LOCAL_HOST, 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def serve_folder():
    """`serve` as a fixture, for a test module that serves a folder of its own."""
    return serve


@pytest.fixture(scope="session")
def site_url(built_site: Path):
    """Serve the built site on 127.0.0.1 on a free port; yield its base URL."""
    with serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def term_site_url(term_site: Path):
    """Serve the term build on 127.0.0.1 on a free port; yield its base URL."""
    with serve(term_site) as url:
        yield url


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "chrome-error"):
        return True
    return parts.hostname == LOCAL_HOST


def screenshot_path(name: str) -> Path:
    """A file under test-artifacts/ for a screenshot named `name` (made filename-safe)."""
    ARTIFACTS.mkdir(exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "page"
    return ARTIFACTS / f"{safe}.png"


@dataclass
class BrowserPage:
    """A Playwright page and everything that went wrong while it was used."""

    page: object
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)

    def goto(self, url: str):
        """Open `url` and wait until the network is quiet (MathJax and images loaded)."""
        return self.page.goto(url, wait_until="networkidle")

    def problems(self) -> list[str]:
        """Every recorded problem, labelled; empty when the page behaved."""
        return (
            [f"console error: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed_requests]
            + [f"request off 127.0.0.1: {m}" for m in self.foreign_requests]
        )

    def clear(self) -> None:
        """Forget what was recorded so far (e.g. between two pages of one test)."""
        for found in (
            self.console_errors,
            self.page_errors,
            self.failed_requests,
            self.foreign_requests,
        ):
            found.clear()

    def screenshot(self, name: str, *, full_page: bool = True) -> Path:
        """Save a PNG of the page under test-artifacts/ and return its path."""
        path = screenshot_path(name)
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture(scope="session")
def chromium_browser():
    """One headless Debian Chromium for the session (never `playwright install`)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (.ci/run does)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def waiting_context(browser, **options):
    """`browser.new_context(**options)` whose waits (a load, a selector, a quiet network) allow
    WAIT_MS: in CI the browser shares two cores with two pytest workers and the other accounts'
    passes, and Playwright's 30 s default once ran out on a page that was merely slow."""
    context = browser.new_context(**options)
    context.set_default_timeout(WAIT_MS)
    return context


@pytest.fixture(scope="session")
def new_context(chromium_browser):
    """`waiting_context` on the session's browser: `new_context(viewport=...)`."""
    return functools.partial(waiting_context, chromium_browser)


@contextlib.contextmanager
def open_page(browser):
    """A fresh context and page on `browser`; problems are recorded on the `BrowserPage`."""
    context = waiting_context(browser, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    found = BrowserPage(page)

    def route(route_, request):
        if _is_local(request.url):
            route_.continue_()
        else:
            found.foreign_requests.append(request.url)
            route_.abort()

    def on_console(message):
        if message.type == "error":
            found.console_errors.append(f"{message.text} ({message.location.get('url', '')})")

    def on_request_failed(request):
        if _is_local(request.url):
            found.failed_requests.append(f"{request.url}: {request.failure}")

    def on_response(response):
        if response.status >= 400:
            found.failed_requests.append(f"{response.url}: HTTP {response.status}")

    context.route("**/*", route)
    page.on("console", on_console)
    page.on("pageerror", lambda error: found.page_errors.append(str(error)))
    page.on("requestfailed", on_request_failed)
    page.on("response", on_response)
    try:
        yield found
    finally:
        context.close()


@pytest.fixture
def browser_page(chromium_browser):
    """A fresh context and page; problems are recorded on the returned `BrowserPage`."""
    with open_page(chromium_browser) as found:
        yield found


@pytest.fixture(scope="session")
def site_visits(built_site, site_url, chromium_browser, tmp_path_factory) -> dict:
    """{toc file: site_visit.Visit}: every page of the default build opened once per run, its
    probes run (`site_visit.probes_for`), a screenshot of each one's first screen saved under
    test-artifacts/."""

    import site_visit  # here: the term page's venv (.ci/term-as-users) has no yaml
    from book_pages import toc_files

    def visit_all(_folder):
        pages = toc_files()
        new_page = functools.partial(open_page, chromium_browser)
        return site_visit.visit_pages(new_page, site_url, pages, site_visit.probes_for, True)

    return once(tmp_path_factory, "site-visits", visit_all)


def term_changed_pages(term_html: Path) -> list[str]:
    """The TOC files whose page the term build writes otherwise than the default build: the
    others are the same bytes, which the default build's visit has seen."""
    from book_pages import html_path, toc_files

    changed = []
    for toc_file in toc_files():
        default, term = HTML / html_path(toc_file), term_html / html_path(toc_file)
        if default.read_bytes() != term.read_bytes():
            changed.append(toc_file)
    return changed


@pytest.fixture(scope="session")
def term_visits(term_site, term_site_url, chromium_browser, tmp_path_factory) -> dict:
    """{toc file: site_visit.Visit}: every page the term build changes (`term_changed_pages`)
    opened once per run."""
    import site_visit

    def visit_all(_folder):
        new_page = functools.partial(open_page, chromium_browser)
        probes = lambda _toc_file: site_visit.TERM_PROBES  # noqa: E731 (the same for every page)
        pages = term_changed_pages(term_site)
        return site_visit.visit_pages(new_page, term_site_url, pages, probes, False)

    return once(tmp_path_factory, "term-visits", visit_all)
