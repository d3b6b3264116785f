"""Every built notebook opens where students open it: a Jupyter server started from the
student's own requirements, seen in Chromium (issue 25).

nbclient, nbconvert and ``otter`` ignore a notebook's ``metadata.jupytext`` and render no
attachment, so executing a notebook proves nothing here: a server does. Each check has its
positive control, the defect it guards against, which fails on that same server.
"""

import base64
import contextlib
import copy
import json
import time
from pathlib import Path

import pytest

from explorer_helpers import CHROMIUM, chromium
from jupyter_lab_server import jupyter_lab

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "jupyterlab"
DIAGRAM_ALT = "Diagrama de flujo de un bloque Transformer"
# The notebook on show: JupyterLab keeps the tabs a test opened before, hidden, in its workspace.
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
HEADING = f"{SHOWN} .jp-MarkdownOutput h1"


def built_notebooks(dist):
    return sorted(path.relative_to(dist) for path in Path(dist).rglob("*.ipynb"))


@pytest.fixture(scope="module")
def lab_server(fresh_python, built_dist, tmp_path_factory):
    """``jupyter lab`` from the student's venv, serving a copy of the whole ``dist/``."""
    import shutil

    root = tmp_path_factory.mktemp("jupyter_root")
    shutil.copytree(built_dist, root / "dist")
    with jupyter_lab(fresh_python, root / "dist", tmp_path_factory.mktemp("jupyter_home")) as server:
        server.root = root / "dist"
        yield server


def test_no_built_notebook_is_half_of_a_jupytext_pair_or_shows_an_svg(built_dist):
    notebooks = built_notebooks(built_dist)
    assert len(notebooks) >= 4, notebooks  # student, tour, solution and the Otter master
    for relative in notebooks:
        nb = json.loads((built_dist / relative).read_text("utf-8"))
        assert "jupytext" not in nb["metadata"], relative
        for cell in nb["cells"]:
            for name, bundle in (cell.get("attachments") or {}).items():
                assert set(bundle) <= {"image/png", "image/jpeg", "image/gif"}, (relative, name)


def test_every_built_notebook_opens_through_the_contents_api(lab_server):
    for relative in built_notebooks(lab_server.root):
        status, model = lab_server.contents(relative)
        assert status == 200, f"{relative}: HTTP {status}"
        assert model["type"] == "notebook" and model["content"]["cells"], relative


def test_control_a_notebook_paired_by_jupytext_metadata_fails_on_that_server(lab_server):
    # The defect these notebooks once had: the same server refuses it, so the test above
    # would have caught it.
    student = lab_server.root / "student" / "notebook_student.ipynb"
    nb = json.loads(student.read_text("utf-8"))
    nb["metadata"]["jupytext"] = {"formats": "py:percent"}
    paired = lab_server.root / "student" / "emparejado.ipynb"
    paired.write_text(json.dumps(nb), "utf-8")
    try:
        assert lab_server.contents(paired.relative_to(lab_server.root))[0] == 500
    finally:
        paired.unlink()


def _open_in_lab(page, server, relative):
    """Open ``relative`` in JupyterLab and wait for its first Markdown heading to render."""
    page.goto(server.lab_url(relative), wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector(HEADING, timeout=120_000)


def _diagram_width(page, alt=DIAGRAM_ALT):
    """naturalWidth of the image whose text alternative starts with ``alt`` (the step-8 diagram
    by default), scrolling the notebook until JupyterLab's windowing renders its cell; None if
    no such image is ever rendered."""
    selector = f'{SHOWN} img[alt^="{alt}"]'
    deadline = time.monotonic() + 120  # a loaded machine renders slowly; a missing image never
    while time.monotonic() < deadline:
        image = page.query_selector(selector)
        if image is not None:
            image.evaluate("img => img.scrollIntoView({block: 'center'})")  # a broken image has no size to scroll to
            page.wait_for_function(
                "img => img.complete", arg=image, timeout=30_000)
            time.sleep(0.5)
            return image.evaluate("img => img.naturalWidth")
        # One screen further down, and back to the top from the bottom: on a loaded machine
        # JupyterLab may render a cell only after the scroll has already passed it.
        page.evaluate("""() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
            if (!panel) return;
            const before = panel.scrollTop;
            panel.scrollBy(0, 500);
            if (panel.scrollTop === before) panel.scrollTo(0, 0);
        }""")
        time.sleep(0.3)
    return None


needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=(
    "Debian's Chromium (/usr/bin/chromium) is not installed; .ci/run installs it"))


@contextlib.contextmanager
def _lesson_in_lab(server, relative):
    """A Chromium page showing ``relative`` in JupyterLab, its first heading the lesson's and no
    error dialog, before and after the block."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _open_in_lab(page, server, relative)
        heading = page.inner_text(HEADING)
        assert heading.startswith("055"), heading
        assert page.query_selector(".jp-Dialog") is None, page.inner_text(".jp-Dialog")
        yield page
        assert page.query_selector(".jp-Dialog") is None


@needs_chromium
def test_jupyterlab_opens_the_student_notebook_with_its_heading_and_diagram(lab_server):
    with _lesson_in_lab(lab_server, "student/notebook_student.ipynb") as page:
        page.screenshot(path=str(ARTIFACTS / "notebook_student.png"))
        width = _diagram_width(page)
        page.screenshot(path=str(ARTIFACTS / "notebook_student_step8.png"))
        assert width and width > 0, f"the step-8 diagram renders {width} pixels wide"


# The tour's figures in the tour's order, by the start of their text alternatives: seed 000's
# two (step 5's attention heatmaps, step 7's positional encoding), the step-8 diagram, step
# 9's heads and «Post-LN y pre-LN» side by side. The notebook only scrolls down to find them.
TOUR_FIGURES = {"paso_5": "Figura con 2 gráficos: «Autoatención",
                "paso_7": "Figura: «Codificación posicional sinusoidal",
                "paso_8": DIAGRAM_ALT,
                "paso_9": "Figura con 4 gráficos: «Cabeza 1, parámetros aleatorios",
                "post_ln_pre_ln": "Dos bloques Transformer, uno al lado del otro"}


@needs_chromium
def test_jupyterlab_shows_every_figure_of_the_guided_tour(lab_server):
    with _lesson_in_lab(lab_server, "student/notebook.ipynb") as page:
        widths = {}
        for step, alt in TOUR_FIGURES.items():
            widths[step] = _diagram_width(page, alt)
            page.screenshot(path=str(ARTIFACTS / f"notebook_tour_{step}.png"))
        assert all(width and width > 0 for width in widths.values()), widths


@needs_chromium
def test_control_an_svg_attachment_is_a_broken_image_in_that_jupyterlab(lab_server):
    # The diagram as it once shipped: an SVG attachment. JupyterLab shows it as a broken image,
    # so the check above, run on it, would fail.
    student = lab_server.root / "student" / "notebook_student.ipynb"
    nb = json.loads(student.read_text("utf-8"))
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40">'
           b'<rect width="40" height="40" fill="red"/></svg>')
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        for name, bundle in (cell.get("attachments") or {}).items():
            bundle.clear()
            bundle["image/svg+xml"] = base64.b64encode(svg).decode()
    control = lab_server.root / "student" / "con_svg.ipynb"
    control.write_text(json.dumps(nb), "utf-8")
    try:
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _open_in_lab(page, lab_server, "student/con_svg.ipynb")
            assert _diagram_width(page) == 0
    finally:
        control.unlink()
