"""Step 1: load a submission file and bound it, before anything runs or is fully parsed.

A submission is a notebook (``.ipynb``) or the zip that ``grader.export()`` writes. Sizes and
cell counts are checked on the raw bytes first, so a hostile file cannot cost the grader more
than a small multiple of its own size; the JSON is then read with the standard library only
(nbformat's validation is far slower and not needed: only the code cells are used). Whatever
would stop grading becomes ``Rejected``, whose Spanish reason reaches the student and the
CSV. Nothing here executes the submission.
"""

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Optional

from . import hidden_inputs
from .sandbox.inside.wire import valid_text

SUFFIXES = (".ipynb", ".zip")
# A notebook of this kind is ~50 KB, a few MB with figures. The JSON parser needs roughly ten
# times a file's size, so this bound keeps one file well under the per-submission memory cap.
MAX_NOTEBOOK_BYTES = 20 * 2**20
MAX_CELLS = 2000
MAX_CODE_BYTES = 2 * 2**20
MAX_ZIP_MEMBERS = 200
MAX_EXTRA_BYTES = 20 * 2**20
EXPECTED_KERNEL = "python3"
MAX_SHOWN_KERNEL = 80


class Rejected(Exception):
    """The file cannot be graded. ``reason`` is a Spanish sentence for the student;
    ``otter_error`` is Otter's own wording when Otter rejects the same file with a result."""

    def __init__(self, reason, otter_error=None):
        super().__init__(reason)
        self.reason, self.otter_error = reason, otter_error


@dataclass
class Submission:
    file: str  # the uploaded file's name
    notebook_name: str  # as the upload named it: for messages, never for the job
    notebook_bytes: bytes
    cells: list  # the code cells' sources, in order
    extra_files: dict = field(default_factory=dict)  # other top-level files of an export zip
    notes: list = field(default_factory=list)  # Spanish remarks that do not stop grading
    # The Markdown and Raw cells that may hold code, [(kind, source)]: never run, only read
    # for a function's cell whose type was changed (notebook_causes.py).
    text_cells: list = field(default_factory=list)

    def world(self, kit_files=()):
        """What the job running this submission sees of it (hidden_inputs.world), which its
        hidden inputs hash: never the name it was uploaded under."""
        return hidden_inputs.world(self.notebook_bytes, self.extra_files, kit_files)


def shown_name(name: str) -> str:
    """A file's name as every output can hold it: a name that is not UTF-8 (``alumno_\\xff``)
    keeps its other characters and shows U+FFFD for the bytes it cannot."""
    return valid_text(name)


def find_submissions(folder):
    """Every gradable file directly in ``folder``, sorted; hidden files skipped, as Otter does."""
    return sorted(path for path in Path(folder).iterdir()
                  if path.is_file() and path.suffix.lower() in SUFFIXES
                  and not path.name.startswith("."))


def load(path, assignment_name: Optional[str]) -> Submission:
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        raise Rejected("no se puede leer el archivo") from None
    if size == 0:
        raise Rejected("el archivo está vacío (0 bytes): guarda el cuaderno en Jupyter y vuelve "
                       "a entregarlo")
    if path.suffix.lower() == ".zip":
        notebook_name, data, extra = _read_export_zip(path)
    else:
        if size > MAX_NOTEBOOK_BYTES:
            raise Rejected(_too_big(path.name, size))
        notebook_name, data, extra = path.name, path.read_bytes(), {}
    raw = parse(data, notebook_name)
    check_assignment(raw, assignment_name)
    submission = Submission(shown_name(path.name), shown_name(notebook_name), data,
                            code_cells(raw, notebook_name), extra,
                            text_cells=text_cells(raw))
    kernel = _mapping(_mapping(raw.get("metadata")).get("kernelspec")).get("name")
    if kernel != EXPECTED_KERNEL:
        asked = (f"pedía el kernel «{kernel[:MAX_SHOWN_KERNEL]}»" if isinstance(kernel, str)
                 else "no dice qué kernel usa")
        submission.notes.append(f"tu cuaderno {asked}; se ha evaluado con {EXPECTED_KERNEL}, "
                                "como hace Gradescope")
    return submission


def _mapping(value) -> dict:
    """``value`` if it is a JSON object, else an empty one: a notebook's metadata is the
    student's JSON, and any field of it may be a string, a list or null."""
    return value if isinstance(value, dict) else {}


def parse(data: bytes, name: str) -> dict:
    """The notebook's JSON, bounded and checked for the shape of a version-4 notebook."""
    if not data.strip():
        raise Rejected(f"«{name}» está vacío: guarda el cuaderno en Jupyter y vuelve a entregarlo")
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise Rejected(_too_big(name, len(data)))
    if data.count(b'"cell_type"') > MAX_CELLS:
        raise Rejected(f"«{name}» tiene más de {MAX_CELLS} celdas, demasiadas para esta tarea: "
                       "borra las que sobran y vuelve a entregarlo")
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Rejected(f"«{name}» no es un cuaderno válido: su contenido no es JSON, "
                       "probablemente porque se cortó al guardarlo o al subirlo. Ábrelo en "
                       "Jupyter, guárdalo y vuelve a entregarlo") from None
    if not isinstance(raw, dict) or "nbformat" not in raw:
        raise Rejected(f"«{name}» es un archivo JSON, pero no un cuaderno de Jupyter")
    version = raw.get("nbformat")
    if type(version) is not int:
        raise Rejected(f"«{name}» tiene la estructura de un cuaderno dañada (su campo nbformat no "
                       "es un número entero): ábrelo en Jupyter, guárdalo y vuelve a entregarlo")
    if version < 4:
        shown = version if version > -1000 else "desconocido"
        raise Rejected(f"«{name}» usa el formato antiguo nbformat {shown}, que ya no se puede "
                       "evaluar: ábrelo con un Jupyter actual, guárdalo y vuelve a entregarlo")
    if version > 4:
        shown = version if version < 1000 else "desconocido"
        raise Rejected(f"«{name}» usa el formato nbformat {shown}, que esta versión de Jupyter "
                       "no conoce: guárdalo con el Jupyter del curso")
    if not isinstance(raw.get("cells"), list):
        raise Rejected(f"«{name}» tiene la estructura de un cuaderno dañada: ábrelo en Jupyter, "
                       "guárdalo y vuelve a entregarlo")
    return raw


def code_cells(raw: dict, name: str) -> list:
    cells, total = [], 0
    for cell in raw["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise Rejected(f"«{name}» tiene una celda de código dañada: ábrelo en Jupyter, "
                           "guárdalo y vuelve a entregarlo")
        total += len(source)
        if total > MAX_CODE_BYTES:
            raise Rejected(f"«{name}» tiene más de {MAX_CODE_BYTES // 2**20} MB de código, "
                           "demasiado para esta tarea")
        cells.append(source)
    return cells


def text_cells(raw: dict) -> list:
    """The Markdown and Raw cells that may hold a function (``def`` in their text), as
    ``[(kind, source)]``, within MAX_CODE_BYTES in all: read, never run."""
    found, total = [], 0
    for cell in raw["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("markdown", "raw"):
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str) or "def " not in source:
            continue
        total += len(source)
        if total > MAX_CODE_BYTES:
            break
        found.append((cell["cell_type"], source))
    return found


def assignment_of(raw: dict):
    name = _mapping(_mapping(raw.get("metadata")).get("otter")).get("assignment_name")
    return name if isinstance(name, str) else None


def check_assignment(raw, expected):
    if not expected:
        return
    got = assignment_of(raw)
    if got == expected:
        return
    otter_error = f"Received submission for assignment '{got}' (this is assignment '{expected}')"
    if got is None:
        reason = ("el cuaderno no lleva el nombre de ninguna tarea en sus metadatos: entrega el "
                  "cuaderno que te dimos para esta tarea, no uno nuevo con el código copiado")
    else:
        reason = (f"el cuaderno es de otra tarea («{got[:80]}»), no de esta («{expected}»): "
                  "¿has subido el archivo equivocado?")
    raise Rejected(reason, otter_error=otter_error)


def _too_big(name, size):
    return (f"«{name}» ocupa {size / 2**20:.0f} MB, demasiado para un cuaderno de esta tarea: "
            "borra las salidas (Kernel → Restart & Clear Output), guarda y vuelve a entregarlo")


def _read_export_zip(path: Path):
    """The one notebook at the top of an export zip, and the other top-level files."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_MEMBERS * 5:
                raise Rejected(f"el .zip tiene {len(infos)} archivos, demasiados para una entrega")
            members = [info for info in infos if not info.is_dir()]
            notebooks = [info for info in members if _is_top_level(info.filename)
                         and info.filename.lower().endswith(".ipynb")]
            if not notebooks:
                raise Rejected("el .zip no contiene ningún cuaderno .ipynb (en su carpeta "
                               "principal): expórtalo con la última celda del cuaderno, "
                               "grader.export()")
            if len(notebooks) > 1:
                names = ", ".join(sorted(info.filename for info in notebooks)[:5])
                raise Rejected(f"el .zip contiene {len(notebooks)} cuadernos ({names}) y no sé "
                               "cuál evaluar: deja solo el de la tarea")
            notebook = notebooks[0]
            if notebook.file_size > MAX_NOTEBOOK_BYTES:
                raise Rejected(_too_big(notebook.filename, notebook.file_size))
            data = _read_bounded(zf, notebook, MAX_NOTEBOOK_BYTES)
            extra, total = {}, 0
            for info in members[:MAX_ZIP_MEMBERS]:
                if info is notebook or not _is_top_level(info.filename):
                    continue
                total += info.file_size
                if total > MAX_EXTRA_BYTES:
                    break
                extra[info.filename] = _read_bounded(zf, info, MAX_EXTRA_BYTES)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError,
            NotImplementedError, ValueError):
        raise Rejected("el .zip está dañado y no se puede abrir: vuelve a exportarlo con "
                       "grader.export() y súbelo de nuevo") from None
    return notebook.filename, data, extra


def _read_bounded(zf, info, limit):
    """A member's bytes, never more than ``limit`` whatever its header claims (zip bombs)."""
    with zf.open(info) as member:
        data = member.read(limit + 1)
    if len(data) > limit:
        raise Rejected(_too_big(info.filename, len(data)))
    return data


def _is_top_level(name):
    parts = PurePosixPath(name).parts
    return len(parts) == 1 and not parts[0].startswith(".") and parts[0] != "__MACOSX"


def empty_written_answers(notebook_bytes) -> list:
    """The numbers (from 1) of the written answers a notebook leaves empty, for its feedback;
    [] when there are none or the notebook cannot be read (grading says why elsewhere). Read
    here, where the file is, so that grading needs nothing of the written answers' room
    (written/answers.py reads and keeps the answers themselves)."""
    from notebook_code import answer_regions, answer_text

    try:
        raw = json.loads(notebook_bytes.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return []
    cells = raw.get("cells") if isinstance(raw, dict) else None
    regions = answer_regions(cells if isinstance(cells, list) else [])
    return [number for number, region in enumerate(regions, start=1)
            if not answer_text(region).strip()]
