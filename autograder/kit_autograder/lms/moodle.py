"""Moodle's assignment («Tarea»): its «Descargar todas las entregas», and the way back.

What Moodle's own code writes (mod/assign, 4.x and 3.x), as this module reads and writes it:

* The download names each student by a prefix: the full name with ``_`` turned into spaces
  (or «Participante»/«Participant» when the assignment hides identities; ``Grupo-Nombre`` for
  group mode), ``_``, the participant id (the number of the grading worksheet's
  «Participante N»).
* **In folders** (the default since Moodle 3.1): ``<prefix>_assignsubmission_file/`` (4.1+)
  or ``<prefix>_assignsubmission_file_/`` (3.1 to 4.0) holds the student's files, subfolders
  kept; ``<prefix>_assignsubmission_onlinetext[_]/onlinetext.html`` the online text.
* **Flat** (older Moodle, or «Descargar entregas en carpetas» unticked): one file per upload,
  ``<prefix>_assignsubmission_file_<original name>``.
* The **grading worksheet** (``assignfeedback_offline``) is a CSV whose «Identificador»/
  «Identifier» column holds «Participante N», with «Calificación»/«Grade», «Calificación
  máxima»/«Maximum Grade» and «Comentarios de retroalimentación»/«Feedback comments»; Moodle
  imports it with the encoding and separator the teacher picks, reading the grade with the
  site's decimal separator, and skips a grade above the maximum.
* The **feedback zip** («Subir varios archivos de retroalimentación en un zip»): Moodle finds
  the participant in the first path part that splits on ``_`` into name, participant id and an
  existing plugin (``assignsubmission_file``), so the download's own folder names work.
"""

import re
import zipfile
from pathlib import Path, PurePosixPath

from .entries import Upload
from .worksheet import Worksheet, number_text

# <who>_<participant id>_assignsubmission_<plugin>, then "_" or "/" or the end.
PREFIX = re.compile(r"^(?P<who>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?P<rest>_.*)?$")
ANONYMOUS = {"participante", "participant"}

FEEDBACK_FILE = "informe_de_evaluacion.html"

IDENTIFIER = ("identificador", "identifier")
GRADE = ("calificación", "calificacion", "grade")
MAXIMUM = ("calificación máxima", "calificacion maxima", "maximum grade")
COMMENTS = ("comentarios de retroalimentación", "comentarios de retroalimentacion",
            "feedback comments")
FULL_NAME = ("nombre completo", "full name")


def named_like(names):
    """Whether top-level ``names`` are Moodle's (a cheap look before reading a tree)."""
    return any(PREFIX.match(name) for name in names)


def uploads(tree):
    """Every participant's ``Upload``, or None when ``tree`` is not a Moodle download."""
    students, ignored = {}, []
    for item in tree.items:
        match = PREFIX.match(item.parts[0])
        if not match:
            ignored.append(item.path)
            continue
        folder = len(item.parts) > 1
        key = (match["who"], match["id"])
        upload = students.get(key)
        if upload is None:
            upload = students[key] = Upload(_name(match["who"]), match["id"], origin="",
                                            files=[])
        if match["plugin"] == "file":
            if folder:
                upload.origin = item.parts[0]
                upload.files.append(item)
            elif match["rest"] and len(match["rest"]) > 1:
                flat = f"{match['who']}_{match['id']}_assignsubmission_file_"
                upload.origin = upload.origin or flat
                upload.files.append(item)
            continue
        if match["plugin"] == "onlinetext":
            note = ("tu entrega incluye texto en línea, que no se evalúa en esta tarea: solo se "
                    "evalúan el cuaderno o su exportación")
            upload.origin = upload.origin or item.parts[0]
        else:
            note = f"lo que entregaste en «{match['plugin']}» no se evalúa en esta tarea"
        if note not in upload.notes:
            upload.notes.append(note)
    if not students:
        return None
    return list(students.values()), [f"ignored, not part of Moodle's layout: {path}"
                                     for path in ignored]


def _name(who):
    return None if who.strip().casefold() in ANONYMOUS else who


def participant_number(identifier):
    """«Participante 123» -> "123"; None when the cell holds no number."""
    match = re.search(r"(\d+)\s*$", identifier or "")
    return match.group(1) if match else None


# --- back to Moodle ---------------------------------------------------------------------------


def fill_worksheet(worksheet: Worksheet, grades, comments):
    """Fill the grade and the comment of every participant in ``grades`` (``{participant id:
    (points, points possible)}``, the kit's scale, rescaled to the worksheet's «Calificación
    máxima»), keeping every other cell. Returns ``(filled ids, ids of the worksheet's rows
    without a grade, notes for the instructor)``."""
    identifier = worksheet.column(IDENTIFIER, required=True)
    grade = worksheet.column(GRADE, required=True)
    maximum = worksheet.column(MAXIMUM)
    comment = worksheet.column(COMMENTS)
    notes = []
    if comment is None:
        notes.append("the worksheet has no feedback-comments column (tick «Comentarios de "
                     "retroalimentación» among the assignment's feedback types): grades only")
    separator = worksheet.decimal_separator(maximum if maximum is not None else grade)
    filled, without = [], []
    for row in worksheet.rows:
        number = participant_number(worksheet.cell(row, identifier))
        if number is None:
            continue
        if grades.get(number) is None:
            without.append(number)
            continue
        points, possible = grades[number]
        top = worksheet.number(worksheet.cell(row, maximum)) if maximum is not None else None
        value = points if top is None else points / possible * top
        if top is None:
            notes.append(f"Participante {number}: the worksheet gives no maximum grade, so "
                         f"the grade is written in the kit's points (out of {possible:g})")
        worksheet.set(row, grade, number_text(value, separator))
        if comment is not None and number in comments:
            worksheet.set(row, comment, comments[number])
        filled.append(number)
    return filled, without, notes


def feedback_folder(origin, student_name, participant):
    """The folder Moodle maps to ``participant``: the download's own, else one built alike
    (the flat layout's prefix ends in ``_``, which Moodle reads the same way)."""
    if origin and "_assignsubmission_file" in origin:
        return origin
    who = (student_name or "Participante").replace("_", " ").replace("/", " ")
    return f"{who}_{participant}_assignsubmission_file"


def write_feedback_zip(path: Path, pages):
    """``pages``: ``{folder: html}``; each folder gets one file, FEEDBACK_FILE, as Moodle's
    «Subir varios archivos de retroalimentación en un zip» expects."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder, page in pages.items():
            info = zipfile.ZipInfo(str(PurePosixPath(folder) / FEEDBACK_FILE),
                                   date_time=(2000, 1, 1, 0, 0, 0))
            info.flag_bits |= 0x800  # UTF-8 names, as Moodle writes them
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, page.encode("utf-8"))
