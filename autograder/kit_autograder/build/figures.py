"""Embed the figures a Markdown cell shows as ``![…](attachment:NAME)`` into that cell.

A notebook travels alone (downloaded, uploaded, renamed), so its figures travel inside it as
cell attachments rather than as files beside it. Sources live in the lesson's ``figures/``.
"""

import base64
import mimetypes
import re
from pathlib import Path

ATTACHMENT = re.compile(r"\(attachment:([^)\s]+)\)")


def attach_figures(nb, folder: Path):
    """Fill every Markdown cell's ``attachment:NAME`` from ``folder/NAME``; a missing file fails."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for name in ATTACHMENT.findall(cell.source):
            path = Path(folder) / name
            if not path.is_file():
                raise FileNotFoundError(f"{name} is shown in the master but missing from {folder}")
            mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
            # Jupyter, JupyterLab and VS Code all read attachments as base64 data URIs.
            cell.setdefault("attachments", {})[name] = {mime: base64.b64encode(path.read_bytes()).decode("ascii")}
    return nb
