"""What a person does on the course's hub, in Chromium (Playwright's sync API), step by step.

JupyterHub's login form; JupyterLab with nbgrader's Assignments tab (Fetch, Submit, Fetch
Feedback), a notebook's cells and its Validate button; the formgrader in a tab of its own
(since JupyterHub 4.1 it shows blank inside JupyterLab's frame, nbgrader #1870), whose buttons
answer in a modal that says Success or Error; a terminal. Each helper waits for what a person
would wait for, and fails with what the page said.
"""

from __future__ import annotations

import re
import time

from playwright.sync_api import TimeoutError

LAB_READY_MS = 120_000  # the first start of a user's server, on a busy machine
ACTION_MS = 120_000  # an nbgrader action (autograde runs a sandbox kernel)
PS2 = "ps2_layer_norm"


def log_in(context, url: str, user: str, password: str):
    """JupyterHub's own login form; return the page once the user's JupyterLab is up."""
    page = context.new_page()
    page.goto(f"{url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab**", timeout=LAB_READY_MS)
    page.locator(".lm-MenuBar-itemLabel:text-is('Nbgrader')").wait_for(timeout=LAB_READY_MS)
    return page


# --- a student's JupyterLab -------------------------------------------------------------------


def open_assignments(page):
    """Nbgrader > Assignment List: the Assignments tab, refreshed."""
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text-is('Assignment List')")
    panel = page.locator("#nbgrader-assignment-list")
    panel.wait_for()
    refresh_assignments(page)
    return panel


def refresh_assignments(page) -> None:
    page.click("#refresh_assignments_list")
    for section in ("released", "fetched", "submitted"):
        page.locator(f"#{section}_assignments_list_loading").wait_for(state="hidden")


def assignment_row(page, section: str, assignment: str):
    """The row of `assignment` in a section of the Assignments tab: released, fetched, submitted."""
    name = page.locator(".item_name", has_text=re.compile(rf"^\s*{assignment}\s*$"))
    return page.locator(f"#{section}_assignments_list > .list_item", has=name)


def click_in_row(page, section: str, assignment: str, button: str, then: str) -> None:
    """Click `button` in the row of `assignment`, then wait until it is in section `then`."""
    assignment_row(page, section, assignment).locator(f"button:text-is('{button}')").click()
    assignment_row(page, then, assignment).wait_for(timeout=ACTION_MS)


def open_notebook(page, assignment: str):
    """Open the fetched notebook from the Assignments tab; return its panel once shown."""
    row = assignment_row(page, "fetched", assignment)
    link = row.locator(".nested_list_item a", has_text=assignment)
    for _ in range(3):  # the list may redraw under the first click (it refreshes after a fetch)
        row.locator(".assignment-notebooks-link").click()
        try:
            link.wait_for(timeout=5_000)
            break
        except TimeoutError:
            continue
    link.click()
    panel = page.locator(".jp-NotebookPanel:visible")
    panel.locator(".jp-Cell").first.wait_for()
    return panel


def replace_cell(page, panel, index: int, source: str) -> None:
    """Put `source` in cell `index` as typed text (no auto-indent, no closing brackets)."""
    editor = panel.locator(".jp-Cell").nth(index).locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")


def save(page, panel, attempts: int = 3) -> None:
    """Ctrl+S until the notebook's tab no longer shows unsaved changes.

    One save may not be the last: the notebook turns unsaved by itself when its kernel
    connects (JupyterLab 4.6, the released ps2 opened and left alone: unsaved about 2 s after
    it opened, as the kernel's status went from connecting to idle; the released notebook's
    `language_info` holds only the language's name, and JupyterLab writes the kernel's).
    When the kernel is slow to start, that comes after the save, as CI saw on a busy machine
    (saved, checkpointed, still unsaved). The kernel's status cannot tell that moment: it
    reads idle before connecting too. The saved file is read back and compared after this,
    so a retry hides nothing."""
    unsaved = page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")
    for attempt in range(1, attempts + 1):
        panel.locator(".jp-Cell").first.click()
        page.keyboard.press("Control+s")
        try:
            unsaved.wait_for(state="detached", timeout=15_000)
            return
        except TimeoutError:
            if attempt == attempts:
                raise


def validate(page, panel) -> str:
    """The notebook's Validate button; return the text of nbgrader's result dialog."""
    panel.locator(".jp-Toolbar-item jp-button", has_text="Validate").click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=ACTION_MS)
    return dialog.inner_text()


def close_dialog(page) -> None:
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def show_tab(page, label: str) -> None:
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=label).click()


# --- the instructor's formgrader ----------------------------------------------------------------


def formgrader_row(page, name: str):
    """A row of the formgrader's table whose first cell is `name` (an assignment or student)."""
    cell = page.locator("td", has_text=re.compile(rf"^\s*{name}\s*$")).first
    return page.locator("tbody tr", has=cell)


def formgrader_action(page, row, column: str) -> str:
    """Click the link in `column` of `row`; wait for the formgrader's answer and close it.
    Return the log it showed; fail with it when it says Error."""
    row.locator(f"td.{column} a").click()
    modal = page.locator("#success-modal, #error-modal")
    modal.wait_for(timeout=ACTION_MS)
    text = modal.inner_text()
    assert modal.get_attribute("id") == "success-modal", f"the formgrader said:\n{text}"
    modal.locator("button:has-text('Close'), .close").first.click()
    modal.wait_for(state="detached")
    return text


# --- a terminal -----------------------------------------------------------------------------------


def open_menu_item(page, *path: str, tries: int = 3, wait_ms: float = 5000) -> None:
    """Click JupyterLab's menu bar item path[0], then each submenu item of `path` in turn. A menu
    that closes before its submenu opens (a notification or a dialog taking the focus, seen once
    in CI after the lab's tab waited in the background) is opened again, at most `tries` times."""
    for attempt in range(tries):
        page.keyboard.press("Escape")  # a menu or a dialog left open
        page.click(f".lm-MenuBar-itemLabel:text-is('{path[0]}')")
        try:
            for label in path[1:]:
                page.locator(f".lm-Menu-itemLabel:text-is('{label}')").click(timeout=wait_ms)
            return
        except TimeoutError:  # playwright's
            if attempt == tries - 1:
                raise


def run_in_terminal(page, command: str, done, tries: int = 3, wait_s: float = 30.0) -> None:
    """File > New > Terminal; type `command` and Enter until `done()` says it ran (keys typed
    before the terminal's connection is up can be lost: it is typed again, at most `tries`)."""
    opened = page.locator(".jp-Terminal").count()  # a restored workspace may hold some
    page.bring_to_front()  # the lab's tab may have waited behind the formgrader's for minutes
    open_menu_item(page, "File", "New", "Terminal")
    keys = page.locator(".jp-Terminal").nth(opened).locator(".xterm-helper-textarea")
    keys.wait_for(state="attached")
    for _ in range(tries):
        keys.focus()  # xterm's own input: the screen may not be laid out yet
        page.keyboard.type(command)
        page.keyboard.press("Enter")
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.5)
    raise AssertionError(f"{command!r} typed into a terminal {tries} times, and it did not run")
