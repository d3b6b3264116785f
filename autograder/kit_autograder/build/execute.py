"""Run a built notebook's cells at build time, so that it ships with what they show.

Two ways, one per notebook:

* ``CellRunner`` runs cells in this process, one namespace for all of them, and keeps what each
  printed and drew as notebook outputs, as a kernel with matplotlib's inline backend shows
  them (PNG figures, ``bbox_inches="tight"``). The guided tour uses it: its demos run with the
  hidden reference standing in for the graded functions, and the reference never leaves this
  process; only what the demos print and draw reaches the tour.
* ``execute_in_folder`` runs a whole notebook in a real kernel (nbclient) from a temporary copy
  of the folder it ships in, so that it runs there as it will for whoever opens it, and
  nothing it writes (``resultado.json``, a submission zip) is left behind.
"""

import ast
import base64
import contextlib
import gc
import io
import shutil
import tempfile
import warnings
from pathlib import Path

import nbformat

from .master_error import MasterError

# nbclient leaves a cell with this tag unexecuted (its default ``skip_cells_with_tag``).
SKIP_TAG = "skip-execution"


class DemoError(MasterError):
    """A cell failed, warned or wrote to stderr while the build ran it (``text``: its code)."""


class CellRunner:
    """Cells run one after another in one namespace, in ``folder``, with matplotlib off-screen.

    Use it as a context manager: NumPy's print options, matplotlib's settings and the working
    directory are the build's again afterwards.
    """

    def __init__(self, folder, namespace=None):
        self.folder = Path(folder)
        self.namespace = {"__name__": "__main__"} if namespace is None else namespace
        self._stack = contextlib.ExitStack()

    def __enter__(self):
        import matplotlib
        import matplotlib.pyplot as plt
        import numpy as np

        matplotlib.use("agg")
        self._plt = plt
        # Figures the build's process already had open (a caller's, a test's) are not the
        # notebook's: shown, they would land in its first cell's outputs.
        self._theirs = set(plt.get_fignums())
        self._stack.enter_context(np.printoptions())  # a cell's set_printoptions stays inside
        self._stack.enter_context(matplotlib.rc_context())
        self._stack.enter_context(contextlib.chdir(self.folder))
        # Garbage of earlier work (a kernel client's sockets) warns now, not in a cell; then
        # what is left is frozen, so that the collection before each cell scans only what the
        # cells made (a full one over the build's, or a test session's, heap took 0.09 s a cell).
        gc.collect()
        gc.freeze()
        self._stack.callback(gc.unfreeze)
        shown = plt.show
        plt.show = self._show
        self._stack.callback(setattr, plt, "show", shown)
        self._stack.callback(lambda: [plt.close(n) for n in plt.get_fignums()
                                      if n not in self._theirs])
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)

    def run(self, source: str) -> list:
        """Run one cell; its outputs, in the order a kernel shows them. ``self.alts`` then
        holds a text alternative for each of its figures, in order."""
        self._outputs, self._printed, self.alts = [], io.StringIO(), []
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        errors = io.StringIO()
        gc.collect()  # garbage of the earlier cells warns now, not in this one
        try:
            with contextlib.redirect_stdout(self._printed), contextlib.redirect_stderr(errors), \
                    warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                exec(compile(tree, "<celda>", "exec"), self.namespace)
                value = None if last is None else eval(
                    compile(ast.Expression(last.value), "<celda>", "eval"), self.namespace)
        except Exception as exc:
            raise DemoError(f"the demo «{_first_line(source)}» raised {type(exc).__name__}: "
                            f"{_one_line(exc)}; a demo must run with the reference standing in "
                            "for the graded functions", source) from exc
        if errors.getvalue():
            raise DemoError(f"the demo «{_first_line(source)}» wrote to stderr "
                            f"(«{_one_line(errors.getvalue())}»); print to stdout instead",
                            source)
        # A ResourceWarning is the garbage collector's timing, about objects it frees, unless the
        # cell itself left the resource open.
        caught = [w for w in caught
                  if not issubclass(w.category, ResourceWarning) or w.filename == "<celda>"]
        if caught:
            raise DemoError(f"the demo «{_first_line(source)}» raised the warning "
                            f"{caught[0].category.__name__}: {_one_line(caught[0].message)}; "
                            "avoid it, or catch it inside the cell (warnings.catch_warnings)",
                            source)
        self._flush_printed()
        if value is not None:
            self._outputs.append(nbformat.v4.new_output(
                "execute_result", data={"text/plain": repr(value)}, execution_count=None))
        self._show()  # the inline backend shows what is still open when the cell ends
        return self._outputs

    def _flush_printed(self):
        text = self._printed.getvalue()
        if text:
            self._outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text))
        self._printed.seek(0)
        self._printed.truncate()

    def _show(self, *args, **kwargs):
        """``plt.show()``: every open figure becomes a PNG output, after what was printed."""
        self._flush_printed()
        for number in self._plt.get_fignums():
            if number in self._theirs:
                continue
            figure = self._plt.figure(number)
            self.alts.append(alt_text(figure))
            self._outputs.append(nbformat.v4.new_output(
                "display_data", data={"image/png": base64.b64encode(png(figure)).decode("ascii"),
                                      "text/plain": repr(figure)}))
            self._plt.close(figure)


def png(figure) -> bytes:
    """A figure as the inline backend draws it, the same bytes on every build."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def alt_text(figure) -> str:
    """What a figure shows, in its own words: its titles and the labels of its axes."""
    axes = [ax for ax in figure.axes if ax.get_title() or ax.get_xlabel() or ax.get_ylabel()]
    titles = [ax.get_title() for ax in axes if ax.get_title()]
    kind = "Figura" if len(axes) <= 1 else f"Figura con {len(axes)} gráficos"
    text = kind + (": " + "; ".join(f"«{title}»" for title in titles) if titles else "")
    if axes and axes[0].get_xlabel() and axes[0].get_ylabel():
        text += (f". Eje horizontal: {axes[0].get_xlabel()}; "
                 f"eje vertical: {axes[0].get_ylabel()}")
    return text + "."


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def _one_line(said, limit=200) -> str:
    """What a cell said, on one line and bounded: an error is one line of the terminal."""
    text = " ".join(str(said).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def execute_in_folder(nb, folder, name: str, skip=lambda cell: False, timeout: int = 600):
    """``nb`` executed by a kernel as if it were ``folder/name``, from a temporary copy of
    ``folder``; cells for which ``skip(cell)`` is true stay unexecuted. A cell that fails
    fails the build."""
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="kit-run-") as work:
        copy = Path(shutil.copytree(folder, Path(work) / Path(folder).name))
        skipped = [cell for cell in nb.cells if skip(cell)]
        for cell in skipped:
            cell.metadata.setdefault("tags", []).append(SKIP_TAG)
        nbformat.write(nb, copy / name)
        # IPC, not TCP: a kernel on TCP prints an English warning about unencrypted traffic
        # into every build, and nothing but this process talks to it.
        kernel = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(work) / "kernel"))
        try:
            # No timing metadata: building twice gives the same notebook.
            NotebookClient(nb, km=kernel, timeout=timeout, record_timing=False,
                           resources={"metadata": {"path": str(copy)}}).execute()
        finally:
            if kernel.has_kernel:
                kernel.shutdown_kernel(now=True)
            for cell in skipped:
                cell.metadata["tags"].remove(SKIP_TAG)
                if not cell.metadata["tags"]:
                    del cell.metadata["tags"]
    # What the build machine wrote to stderr (Matplotlib building its font cache on a fresh
    # machine, a deprecation warning) is its own business: it would make two builds differ,
    # and it is English no student needs.
    # A kernel sends a print's text and its newline as one message or two, as its I/O thread
    # happens to flush: consecutive pieces of one stream are one output, as Jupyter shows them.
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for out in cell.outputs:
            if out.output_type == "stream" and out.name == "stderr":
                continue
            if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                    and merged[-1].name == out.name):
                merged[-1].text += out.text
            else:
                merged.append(out)
        cell.outputs = merged
    return nb
