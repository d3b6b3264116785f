"""Step 1: load and validate a submission file.

A submission is a notebook (``.ipynb``) or the zip that ``grader.export()`` writes. Everything
that would stop Otter from grading it is caught here, before any code runs, and turned into a
``Rejected`` whose Spanish reason becomes the CSV's ``grading_status`` and the student's
feedback. Nothing in this module executes the submission.
"""

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Optional

import nbformat
from otter.nbmeta_config import NBMetadataConfig

SUBMISSION_SUFFIXES = (".ipynb", ".zip")

# Far above any real notebook of this lesson (about 50 KB, a few MB with plots), low enough
# that a hostile upload cannot exhaust the grader's memory before any limit applies.
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
# Other files in an export zip are copied beside the notebook, as Otter does; bounded likewise.
MAX_EXTRA_FILES = 200
MAX_EXTRA_BYTES = 64 * 1024 * 1024

EXPECTED_KERNEL = "python3"


class Rejected(Exception):
    """The file cannot be graded. ``reason`` is a plain Spanish sentence for the student.

    ``otter_error`` holds Otter's own message when Otter rejects the same file with a result
    (a wrong assignment name), so the Gradescope results can match Otter's word for word.
    """

    def __init__(self, reason, otter_error=None):
        super().__init__(reason)
        self.reason = reason
        self.otter_error = otter_error


@dataclass
class Submission:
    path: Path  # the uploaded file
    notebook_name: str  # the notebook's file name as the grader writes it (inside the zip, or the file's)
    notebook_bytes: bytes
    notebook: nbformat.NotebookNode  # version 4
    extra_files: dict = field(default_factory=dict)  # other members of an export zip: name -> bytes
    notes: list = field(default_factory=list)  # Spanish remarks that do not stop grading

    @property
    def name(self):
        return self.path.name


def find_submissions(folder: Path):
    """Every gradable file directly in ``folder``, sorted; hidden files are skipped as Otter does."""
    return sorted(path for path in Path(folder).iterdir()
                  if path.is_file() and path.suffix.lower() in SUBMISSION_SUFFIXES
                  and not path.name.startswith("."))


def load_submission(path: Path, assignment_name: Optional[str]) -> Submission:
    """The validated submission at ``path``, or ``Rejected`` with the reason it cannot be graded."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        raise Rejected("el archivo está vacío (0 bytes): guarda el cuaderno en Jupyter y vuelve "
                       "a entregarlo")
    if path.suffix.lower() == ".zip":
        notebook_name, data, extra = _read_export_zip(path)
    else:
        if size > MAX_NOTEBOOK_BYTES:
            raise Rejected(_too_big(path.name, size))
        notebook_name, data, extra = path.name, path.read_bytes(), {}
    notebook = parse_notebook(data, notebook_name)
    _check_assignment(notebook, assignment_name)
    submission = Submission(path, notebook_name, data, notebook, extra)
    kernel = notebook.metadata.get("kernelspec", {}).get("name")
    if kernel != EXPECTED_KERNEL:
        submission.notes.append(
            f"tu cuaderno pedía el kernel «{kernel}», que no es el de la tarea: se ha evaluado con "
            f"{EXPECTED_KERNEL}, como hace Gradescope")
    return submission


def parse_notebook(data: bytes, name: str) -> nbformat.NotebookNode:
    if not data.strip():
        raise Rejected(f"«{name}» está vacío: guarda el cuaderno en Jupyter y vuelve a entregarlo")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise Rejected(f"«{name}» no es un cuaderno válido: su contenido no es JSON, "
                       "probablemente porque se cortó al guardarlo o al subirlo. Ábrelo en "
                       "Jupyter, guárdalo y vuelve a entregarlo") from None
    if not isinstance(raw, dict) or "nbformat" not in raw:
        raise Rejected(f"«{name}» es un archivo JSON, pero no un cuaderno de Jupyter")
    version = raw.get("nbformat")
    if not isinstance(version, int) or version < 4:
        raise Rejected(f"«{name}» usa el formato antiguo nbformat {version}, que ya no se puede "
                       "evaluar: ábrelo con un Jupyter actual, guárdalo y vuelve a entregarlo")
    if version > 4:
        raise Rejected(f"«{name}» usa el formato nbformat {version}, que esta versión de Jupyter "
                       "no conoce: guárdalo con el Jupyter del curso")
    try:
        return nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception:  # nbformat raises many types for a malformed structure
        raise Rejected(f"«{name}» tiene la estructura de un cuaderno dañada: ábrelo en Jupyter, "
                       "guárdalo y vuelve a entregarlo") from None


def _check_assignment(notebook, expected):
    if not expected:
        return
    got = NBMetadataConfig.from_notebook(notebook).assignment_name
    if got == expected:
        return
    # Otter's own words, for the Gradescope results (see otter.run...abstract_runner).
    otter_error = f"Received submission for assignment '{got}' (this is assignment '{expected}')"
    if got is None:
        reason = ("el cuaderno no lleva el nombre de ninguna tarea en sus metadatos: entrega el "
                  "cuaderno que te dimos para esta tarea, no uno nuevo con el código copiado")
    else:
        reason = (f"el cuaderno es de otra tarea («{got}»), no de esta («{expected}»): "
                  "¿has subido el archivo equivocado?")
    raise Rejected(reason, otter_error=otter_error)


def _too_big(name, size):
    return (f"«{name}» ocupa {size / 2**20:.0f} MB, demasiado para un cuaderno de esta tarea: "
            "borra las salidas (Kernel → Restart & Clear Output), guarda y vuelve a entregarlo")


def _read_export_zip(path: Path):
    """The one notebook at the top of an export zip, and the other files beside it."""
    try:
        with zipfile.ZipFile(path) as zf:
            members = [info for info in zf.infolist() if not info.is_dir()]
            # Otter looks for the notebook at the top of the zip only, as `grader.export()` puts it.
            notebooks = [info for info in members if _is_top_level(info.filename)
                         and info.filename.lower().endswith(".ipynb")]
            if not notebooks:
                raise Rejected("el .zip no contiene ningún cuaderno .ipynb (en su carpeta "
                               "principal): expórtalo con la última celda del cuaderno, "
                               "grader.export()")
            if len(notebooks) > 1:
                names = ", ".join(sorted(info.filename for info in notebooks))
                raise Rejected(f"el .zip contiene {len(notebooks)} cuadernos ({names}) y no sé "
                               "cuál evaluar: deja solo el de la tarea")
            notebook = notebooks[0]
            if notebook.file_size > MAX_NOTEBOOK_BYTES:
                raise Rejected(_too_big(notebook.filename, notebook.file_size))
            data = zf.read(notebook)
            extra = _read_extra_members(zf, [info for info in members if info is not notebook])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError,
            NotImplementedError):
        raise Rejected("el .zip está dañado y no se puede abrir: vuelve a exportarlo con "
                       "grader.export() y súbelo de nuevo") from None
    return notebook.filename, data, extra


def _is_top_level(name):
    parts = PurePosixPath(name).parts
    return len(parts) == 1 and not parts[0].startswith(".")


def _read_extra_members(zf, members):
    extra, total = {}, 0
    for info in members[:MAX_EXTRA_FILES]:
        parts = PurePosixPath(info.filename).parts
        # Never write outside the submission folder; macOS resource forks are not the student's.
        if not parts or info.filename.startswith("/") or ".." in parts or parts[0] == "__MACOSX":
            continue
        total += info.file_size
        if total > MAX_EXTRA_BYTES:
            break
        extra[info.filename] = zf.read(info)
    return extra
