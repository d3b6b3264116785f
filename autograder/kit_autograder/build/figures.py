"""Embed the figures a Markdown cell shows as ``![…](attachment:NAME)`` into that cell.

A notebook travels alone (downloaded, uploaded, renamed), so its figures travel inside it as
cell attachments rather than as files beside it. Sources live in the lesson's ``figures/``:
either the image itself, or a script ``<stem>.py`` whose ``draw()`` returns a matplotlib
figure, rendered here to ``<stem>.png``. Figures are PNG because JupyterLab does not render
an SVG attachment of an untrusted notebook (every notebook a student downloads is one).
"""

import base64
import importlib.util
import io
import mimetypes
import re
from pathlib import Path

from .master_error import MasterError

ATTACHMENT = re.compile(r"\(attachment:([^)\s]+)\)")
# Every front end (JupyterLab 4, Notebook 7, VS Code, nbconvert) renders these as attachments.
RENDERED_EVERYWHERE = ("image/png", "image/jpeg", "image/gif")


def render_png(script: Path) -> bytes:
    """``draw()`` of ``script`` as PNG bytes, the same bytes on every build (no timestamp)."""
    import matplotlib.pyplot as plt

    spec = importlib.util.spec_from_file_location(f"figure_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figure = module.draw()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


def figure_bytes(folder: Path, name: str):
    """``(mime type, bytes)`` of the figure ``name`` from ``folder``; a missing one fails."""
    path, script = Path(folder) / name, (Path(folder) / name).with_suffix(".py")
    mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if mime not in RENDERED_EVERYWHERE:
        raise MasterError(f"shows the figure {name}, a {mime}; a notebook figure must be PNG, "
                          "JPEG or GIF (JupyterLab does not show SVG attachments of untrusted "
                          "notebooks)", f"attachment:{name}")
    if path.is_file():
        return mime, path.read_bytes()
    if mime == "image/png" and script.is_file():
        return mime, render_png(script)
    raise MasterError(f"shows the figure {name}, but neither it nor {script.name} is in "
                      f"the lesson's {Path(folder).name}/; add one of them", f"attachment:{name}")


def attach_figures(nb, folder: Path):
    """Fill every Markdown cell's ``attachment:NAME`` from ``folder``."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for name in ATTACHMENT.findall(cell.source):
            mime, data = figure_bytes(folder, name)
            # Jupyter, JupyterLab and VS Code all read attachments as base64 data URIs.
            cell.setdefault("attachments", {})[name] = {mime: base64.b64encode(data).decode("ascii")}
    return nb
