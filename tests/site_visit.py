"""One Chromium visit per page per build, recording what every browser test asserts (issue 28).

Opening a page costs more than anything a test then asks of it, and the book's browser tests
used to open each chapter about four times, once per test module. Here each page of a build is
opened once, in a fresh context, and a list of probes runs on it in a fixed order: first what
reads the page as the reader finds it (MathJax, images, the visible text, the code in view,
axe-core), then what clicks (the folded answers and references), last what changes the page
(a narrower window, an injected formula). Each probe's result, or the error it raised, is
recorded under its name, with the page's console errors, failed and foreign requests; the test
modules assert on those records, one test per assertion and page, so a failure still names
both. The records are plain data: `run_once.once` shares them with every pytest-xdist worker.

`probes_for(toc_file)` says which probes a page of the default build gets, `TERM_PROBES` those
of the term build's pages.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from book_pages import REPO, html_path, part_files

AXE = REPO / "_vendor" / "axe-core" / "axe.min.js"
ARTIFACTS = REPO / "test-artifacts"
FAILING_IMPACTS = ("serious", "critical")
LAB_PAGE = "lab/index"
WIDTH_CHECKED = "exercises/ps1_by_hand/ps1_by_hand"  # where the width check shows its teeth

WAIT_FOR_MATHJAX = """async () => {
    if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) return null;
    await MathJax.startup.promise;
    return {
        containers: document.querySelectorAll("mjx-container").length,
        errors: Array.from(document.querySelectorAll("mjx-merror, [data-mjx-error]"))
            .map(e => e.getAttribute("data-mjx-error") || e.textContent),
    };
}"""

MATH_SOURCES = "document.querySelectorAll('.math').length"

BROKEN_IMAGES = """Array.from(document.images)
    .filter(img => !(img.complete && img.naturalWidth > 0))
    .map(img => img.getAttribute("src"))"""

IMAGES_SETTLED = "() => Array.from(document.images).every(img => img.complete)"

IMAGES_WITHOUT_ALT = """Array.from(document.querySelectorAll("article img, main img"))
    .filter(img => !(img.getAttribute("alt") || "").trim())
    .map(img => img.getAttribute("src"))"""

VISIBLE_PRE_TEXTS = """Array.from(document.querySelectorAll("article pre"))
    .filter(pre => pre.getClientRects().length > 0 && getComputedStyle(pre).visibility !== "hidden")
    .map(pre => pre.innerText)"""

# what a reader sees before opening anything: the article's rendered text (innerText leaves out
# closed and hidden parts), and the TeX of every formula in view (MathJax draws its glyphs with
# CSS, so innerText holds no digits of a formula)
UNFOLDED_TEXT = """() => {
    const article = document.querySelector("article") || document.body;
    const shown = el => el.getClientRects().length > 0
        && getComputedStyle(el).visibility !== "hidden";
    const math = (window.MathJax && MathJax.startup && MathJax.startup.document)
        ? Array.from(MathJax.startup.document.math)
            .filter(item => item.typesetRoot && shown(item.typesetRoot))
            .map(item => item.math)
        : [];
    return article.innerText + "\\n" + math.join("\\n");
}"""

# display formulas that scroll sideways, or stick out of their box
WIDE_FORMULAS = """Array.from(document.querySelectorAll("mjx-container[display='true']"))
    .filter(m => {
        const box = (m.closest("div.math") || m.parentElement).getBoundingClientRect();
        const inner = (m.firstElementChild || m).getBoundingClientRect();
        return m.scrollWidth > m.clientWidth + 1 || inner.right > box.right + 1;
    })
    .map(m => m.textContent.slice(0, 80))"""

OLD_PS1_LINE = r"""async () => {
    const div = document.createElement("div");
    div.className = "math notranslate nohighlight";
    div.textContent = String.raw`\[\mu = \frac{1}{d}\sum_{k=1}^{d} r_k, \qquad
        \sigma^2 = \frac{1}{d}\sum_{k=1}^{d} (r_k - \mu)^2, \qquad
        \mathrm{LayerNorm}(r)_k = \gamma_k \frac{r_k - \mu}{\sqrt{\sigma^2 + \epsilon}}
        + \beta_k .\]`;
    document.querySelector("div.math").after(div);
    await MathJax.typesetPromise([div]);
}"""

RUN_AXE = """async () => {
    const results = await axe.run(document, {resultTypes: ["violations"]});
    return results.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => n.target.join(" ")).slice(0, 5),
    }));
}"""

READ_LAB = """() => {
    const rows = id => Array.from(document.querySelectorAll(`#${id} tbody tr`))
        .map(tr => Object.assign({}, tr.dataset));
    const block = id => Array.from(document.querySelectorAll(`#${id} tbody tr`))
        .map(tr => Array.from(tr.querySelectorAll("td")).map(td => Number(td.dataset.value)));
    return {
        data: JSON.parse(document.getElementById("lab-data").text),
        tokens: document.getElementById("lab-tokens").value,
        raw_stats: rows("lab-raw-stats"), out_stats: rows("lab-out-stats"),
        raw_block: block("lab-raw-block"), out_block: block("lab-out-block"),
        witness: document.getElementById("lab-witness").dataset.state,
    };
}"""


@dataclass
class Visit:
    """What one page showed: each probe's value or error, and the page's recorded trouble."""

    toc_file: str
    values: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    seconds: dict = field(default_factory=dict)  # what each step took: where a visit's time goes


# -- the probes: each takes the Playwright page and returns plain data -------------------------


def mathjax(page) -> dict:
    sources = page.evaluate(MATH_SOURCES)
    rendered = {"containers": 0, "errors": []}
    if sources:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        rendered = page.evaluate(WAIT_FOR_MATHJAX)
    return {"sources": sources, **rendered}


def images(page) -> dict:
    """Broken and alt-less images, once every image has loaded or failed. Waits on the images
    themselves, not on a quiet network (already awaited by `goto`): a second wait for a quiet
    network, after MathJax had run, timed out at 30 s on chapter 10 in one CI run."""
    page.wait_for_function(IMAGES_SETTLED)
    broken, without_alt = page.evaluate(BROKEN_IMAGES), page.evaluate(IMAGES_WITHOUT_ALT)
    return {"broken": broken, "without_alt": without_alt}


def unfolded_text(page) -> str:
    return page.evaluate(UNFOLDED_TEXT)


def visible_pre(page) -> list[str]:
    return page.evaluate(VISIBLE_PRE_TEXTS)


def axe(page) -> list[dict]:
    """axe-core's violations on the page as the reader finds it (every rule axe runs by default)."""
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    return page.evaluate(RUN_AXE)


def wide_formulas(page) -> dict:
    return {"viewport_width": page.viewport_size["width"], "wide": page.evaluate(WIDE_FORMULAS)}


def self_checks(page) -> dict:
    """Every answer of 'Check yourself' hidden; the first opens alone, and closes again."""
    solutions = page.locator("#check-yourself div.solution")
    count = solutions.count()
    found = {"count": count}
    found["visible_before"] = [
        solutions.nth(i).locator("section#solution-content").is_visible() for i in range(count)
    ]
    if count < 2:
        return found
    first = solutions.first
    first.locator(".admonition-title").click()
    first.locator("section#solution-content").wait_for(state="visible")
    found["expanded"] = first.locator("button.toggle-button").get_attribute("aria-expanded")
    found["second_visible"] = solutions.nth(1).locator("section#solution-content").is_visible()
    first.locator(".admonition-title").click()
    first.locator("section#solution-content").wait_for(state="hidden")
    found["closed_again"] = True
    return found


def reference_folds(page) -> list[dict]:
    """Each folded reference, closed as found, then opened by a click on its summary."""
    folds = page.locator("details.reference-solution")
    found = []
    for i in range(folds.count()):
        fold = folds.nth(i)
        seen = {
            "open_attribute": fold.get_attribute("open"),
            "summary": fold.locator("summary").inner_text(),
            "code_visible_before": fold.locator("pre").first.is_visible(),
        }
        fold.locator("summary").click()
        seen["code_visible_after"] = fold.locator("pre").first.is_visible()
        seen["code"] = fold.locator("pre").first.inner_text()
        found.append(seen)
    return found


def lab_panel(page) -> dict:
    """The panel in its default state: normlab's block and what the page shows of it."""
    page.wait_for_selector('#ln-lab[data-ready="true"]')
    return page.evaluate(READ_LAB)


def narrow_screen(page) -> int:
    """The page's width on a phone-sized screen (390 px); a screenshot of it is saved."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(100)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lab-narrow.png"), full_page=True)
    return page.evaluate("document.documentElement.scrollWidth")


def width_check_teeth(page) -> dict:
    """The width check flags ps1's old display line (three formulas side by side)."""
    before = page.evaluate(WIDE_FORMULAS)
    page.evaluate(OLD_PS1_LINE)
    return {"before": before, "after": page.evaluate(WIDE_FORMULAS)}


def term_folds(page) -> dict:
    return {
        "reference_folds": page.locator("details.reference-solution").count(),
        "titles": page.locator("article h1").count(),
    }


Probe = tuple[str, Callable]
READING = [("mathjax", mathjax), ("images", images), ("unfolded_text", unfolded_text),
           ("visible_pre", visible_pre)]  # fmt: skip
TERM_PROBES = [("term_folds", term_folds), ("axe", axe)]


def probes_for(toc_file: str) -> list[Probe]:
    """The probes of a page of the default build, in the order they run."""
    probes = list(READING)
    if toc_file in part_files("Exercises"):
        probes.append(("wide_formulas", wide_formulas))
    if toc_file == LAB_PAGE:
        probes.append(("lab_panel", lab_panel))
    probes.append(("axe", axe))
    if toc_file in part_files("Chapters"):
        probes.append(("self_checks", self_checks))
    probes.append(("reference_folds", reference_folds))  # none on most pages: cheap
    if toc_file == LAB_PAGE:
        probes.append(("narrow_screen", narrow_screen))
    if toc_file == WIDTH_CHECKED:
        probes.append(("width_check_teeth", width_check_teeth))
    return probes


def visit(context_page, url: str, toc_file: str, probes: list[Probe], screenshot: bool) -> Visit:
    """Open `url` once and run `probes` on it; `context_page` is a conftest BrowserPage. With
    `screenshot`, a PNG of the page's first screen, as loaded, is saved under test-artifacts/
    (its toc name). Not the full page, which no test reads: 34 full pages cost 76 of the
    visit's 198 CPU-seconds (measured on 2 cores), 34 first screens about 1."""
    found = Visit(toc_file)
    started = time.perf_counter()
    try:
        context_page.goto(url)
    except Exception:  # noqa: BLE001 (recorded: every test of this page reports it)
        found.errors["goto"] = traceback.format_exc(limit=3)
        return found
    found.seconds["goto"] = time.perf_counter() - started
    for name, probe in probes:
        started = time.perf_counter()
        try:
            found.values[name] = probe(context_page.page)
        except Exception:  # noqa: BLE001 (recorded, reported by the tests that read it)
            found.errors[name] = traceback.format_exc(limit=3)
        if name == "images" and screenshot:
            context_page.screenshot(toc_file, full_page=False)
        found.seconds[name] = time.perf_counter() - started
    found.problems = context_page.problems()
    return found


def visit_pages(new_page, base_url: str, toc_files: list[str], probes_of, screenshots: bool):
    """{toc file: Visit} for every page, each in a fresh context (`new_page()` opens one)."""
    visits = {}
    for toc_file in toc_files:
        with new_page() as context_page:
            url = base_url + html_path(toc_file)
            visits[toc_file] = visit(context_page, url, toc_file, probes_of(toc_file), screenshots)
    return visits


def value(visits: dict, toc_file: str, probe: str):
    """The value a probe recorded on a page; fails the calling test with the probe's error."""
    import pytest

    found = visits[toc_file]
    if "goto" in found.errors:
        pytest.fail(f"{toc_file}: the page did not load\n{found.errors['goto']}", pytrace=False)
    if probe in found.errors:
        pytest.fail(f"{toc_file}: {probe} failed\n{found.errors[probe]}", pytrace=False)
    if probe not in found.values:
        pytest.fail(f"{toc_file}: the visit ran no {probe} probe", pytrace=False)
    return found.values[probe]


def serious(violations: list[dict]) -> list[str]:
    """axe violations of a failing impact, one readable line each."""
    return [
        f"{v['impact']}: {v['id']} ({v['help']}) at {json.dumps(v['nodes'])}"
        for v in violations
        if v["impact"] in FAILING_IMPACTS
    ]
