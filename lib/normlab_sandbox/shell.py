"""Run notebook cells in an IPython shell and collect their outputs as nbformat dicts.

A Jupyter kernel would do the same over ZeroMQ; here the shell lives in the sandbox kernel
itself (a fresh interpreter per submission, see `normlab.course.grader.kernel_process`), and no
second process or socket stands between them. Outputs keep their order: stream
text (consecutive writes to one stream are merged), `execute_result`, `display_data` and
`error`, each capped in size so a chatty cell cannot flood the grader.
"""

from __future__ import annotations

import base64
import contextlib
import io
import subprocess
import sys

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets import Type
from traitlets.config import Config

MAX_TEXT = 1024 * 1024  # characters of output kept per cell
TRUNCATED = "\n[... output truncated by the grader ...]\n"


class Collector:
    """The outputs of the cell being run, in order, within a size budget."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.items: list[dict] = []
        self.budget = MAX_TEXT

    def stream(self, name: str, text: str) -> None:
        if self.budget <= 0 or not text:
            return
        kept = text[: self.budget]
        self.budget -= len(text)
        text = kept if self.budget > 0 else kept + TRUNCATED
        last = self.items[-1] if self.items else None
        if last and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.items.append({"output_type": "stream", "name": name, "text": text})

    def add(self, output: dict) -> None:
        """Keep a rich output if it fits the budget; an error is always kept (it fails the
        cell), with its traceback cut to the last lines."""
        if output["output_type"] == "error":
            output["traceback"] = [line[:2000] for line in output["traceback"][-40:]]
            output["evalue"] = output["evalue"][:MAX_TEXT]
            self.items.append(output)
            return
        size = sum(len(str(v)) for v in output.get("data", {}).values())
        if size > self.budget:
            self.stream("stdout", TRUNCATED)
            self.budget = 0
            return
        self.budget -= size
        self.items.append(output)


class CapturedStream(io.TextIOBase):
    """A text stream whose writes become `stream` outputs."""

    def __init__(self, collector: Collector, name: str) -> None:
        self.collector, self.name = collector, name

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.collector.stream(self.name, text)
        return len(text)

    @property
    def encoding(self) -> str:
        return "utf-8"

    def isatty(self) -> bool:  # io's own raises once a student closes sys.stdout
        return False


def _mime_bundle(data) -> dict:
    """Mime bundle values as JSON text (bytes, e.g. PNG, base64-encoded like ipykernel)."""
    out = {}
    for mime, value in dict(data or {}).items():
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        out[str(mime)] = value if isinstance(value, (str, dict, list)) else str(value)
    return out


class _CollectingDisplayHook(DisplayHook):
    """The value of a cell's last expression becomes an `execute_result` output."""

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        self.shell.collector.add(
            {
                "output_type": "execute_result",
                "execution_count": self.shell.execution_count,
                "data": _mime_bundle(format_dict),
                "metadata": _mime_bundle(md_dict),
            }
        )

    def finish_displayhook(self) -> None:
        self._is_active = False


class _CollectingDisplayPublisher(DisplayPublisher):
    """`display(...)` becomes a `display_data` output."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kw):
        self.shell.collector.add(
            {"output_type": "display_data", "data": _mime_bundle(data), "metadata": {}}
        )

    def clear_output(self, wait=False) -> None:
        self.shell.collector.reset()


class SandboxShell(InteractiveShell):
    """An InteractiveShell whose prompts, displays and tracebacks become notebook outputs."""

    displayhook_class = Type(_CollectingDisplayHook)
    display_pub_class = Type(_CollectingDisplayPublisher)

    def __init__(self, **kwargs) -> None:
        self.collector = Collector()
        super().__init__(**kwargs)

    def enable_gui(self, gui=None) -> None:
        """`%matplotlib inline` needs no event loop; a GUI one has no screen here."""
        if gui not in (None, "inline"):
            raise RuntimeError(f"no {gui} event loop while grading: use %matplotlib inline")

    def system(self, cmd: str) -> None:
        """`!cmd`: run it through pipes (there is no terminal) and show what it printed."""
        done = subprocess.run(
            self.var_expand(cmd, depth=1), shell=True, capture_output=True, text=True
        )
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        self.user_ns["_exit_code"] = done.returncode

    def _showtraceback(self, etype, evalue, stb) -> None:
        try:
            text = str(evalue)
        except Exception as exc:  # noqa: BLE001 (an exception whose str() raises)
            text = f"<unprintable {type(evalue).__name__}: {type(exc).__name__}>"
        self.collector.add(
            {
                "output_type": "error",
                "ename": getattr(etype, "__name__", str(etype)),
                "evalue": text,
                "traceback": [str(line) for line in stb],
            }
        )


def make_shell() -> SandboxShell:
    """A shell with in-memory history (nothing written to disk) and no terminal features."""
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.autocall = 0
    return SandboxShell.instance(config=config)


@contextlib.contextmanager
def captured(shell: SandboxShell):
    """While the block runs, what is written to sys.stdout and sys.stderr becomes `stream`
    outputs in `shell.collector`, emptied first; the real streams come back after."""
    shell.collector.reset()
    out, err = CapturedStream(shell.collector, "stdout"), CapturedStream(shell.collector, "stderr")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield


def run_cell(shell: SandboxShell, source: str) -> tuple[list[dict], bool]:
    """Run one cell; return its outputs and whether it failed."""
    with captured(shell):
        result = shell.run_cell(source, store_history=True)
    return list(shell.collector.items), not result.success
