"""Canvas: its «Download Submissions» zip, and the gradebook CSV it imports.

What Canvas's own code writes (lib/content_zipper.rb, the gradebook exporter), as read here:

* The download is flat. An uploaded file is ``<name>[_LATE]_<user id>_<file id>_<original
  name>``: ``<name>`` is the sortable name («García López, María») lower-cased with every
  character that is not a letter, digit or ``_`` removed («garcíalópezmaría»); anonymous
  grading puts ``anon_<id>`` in place of name and user id. File ids grow with each upload, so
  the largest is the newest. Text entries and URLs come as ``<name>[_LATE]_<user id>_text.html``
  and ``…_link.html``.
* The gradebook export has the columns «Student», «ID» (the same user id), «SIS User ID», «SIS
  Login ID», «Section», then one column per assignment titled ``<title> (<assignment id>)`` and
  read-only totals; a «Points Possible» row (its first cell «    Points Possible») gives each
  assignment's points, and a row above it may say «Manual Posting». Importing it back sets the
  scores of the columns whose cells changed, matching students by «ID».
"""

import re

from .entries import Upload
from .worksheet import Worksheet, WorksheetError, number_text

UPLOAD = re.compile(r"^(?P<who>.*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<file>\d+)_(?P<name>.+)$")
ANONYMOUS = re.compile(r"^(?P<late>LATE_)?anon_(?P<anon>[A-Za-z0-9]+)_(?P<file>\d+)_(?P<name>.+)$")
TEXT = re.compile(r"^(?P<who>.*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<kind>text|link)\.html$")
ASSIGNMENT_COLUMN = re.compile(r"^.*\(\d+\)\s*$")
POINTS_POSSIBLE = "points possible"


def named_like(names):
    """Whether top-level ``names`` are Canvas's: every notebook and zip named its way."""
    gradable = [n for n in names if n.lower().endswith((".ipynb", ".zip"))]
    return bool(gradable) and all(UPLOAD.match(n) or ANONYMOUS.match(n) for n in gradable)


def uploads(tree):
    """Every student's ``Upload``, or None when ``tree`` is not a Canvas download."""
    top = [item for item in tree.items if len(item.parts) == 1]
    if not top or len(top) != len(tree.items):
        return None
    if not all(UPLOAD.match(i.name) or ANONYMOUS.match(i.name) for i in top if i.gradable):
        return None
    students, ignored = {}, []
    for item in top:
        upload = ANONYMOUS.match(item.name) or UPLOAD.match(item.name)
        text = TEXT.match(item.name)
        if text and not UPLOAD.match(item.name):
            student = _student(students, text["who"], text["user"], bool(text["late"]))
            student.notes.append("tu entrega incluye texto en línea o un enlace, que no se "
                                 "evalúan en esta tarea: solo se evalúan el cuaderno o su "
                                 "exportación")
            continue
        if not upload:
            ignored.append(item.path)
            continue
        if "anon" in upload.groupdict():
            student = _student(students, None, None, bool(upload["late"]),
                               key=f"anon_{upload['anon']}")
        else:
            student = _student(students, upload["who"], upload["user"], bool(upload["late"]))
        student.files.append(item)
        student.newness[item.path] = int(upload["file"])
        student.labels[item.path] = upload["name"]
    if not students:
        return None
    return list(students.values()), [f"ignored, not part of Canvas's layout: {path}"
                                     for path in ignored]


def _student(students, who, user, late, key=None):
    key = key or user
    student = students.get(key)
    if student is None:
        student = students[key] = Upload(who or None, user, origin=key, files=[])
    student.late = student.late or late
    return student


# --- back to Canvas ---------------------------------------------------------------------------


def assignment_column(worksheet: Worksheet, wanted=None):
    """The index of the assignment's column: ``wanted`` (its title, or its id), or the only
    assignment column of the export."""
    candidates = [i for i, title in enumerate(worksheet.header)
                  if ASSIGNMENT_COLUMN.match(title)]
    if wanted:
        wanted = str(wanted).strip()
        for index in candidates + list(range(len(worksheet.header))):
            title = worksheet.header[index].strip()
            if title == wanted or title.endswith(f"({wanted})"):
                return index
        raise WorksheetError(f"no column «{wanted}» in {worksheet.path.name}; its assignment "
                             "columns are: " + _listed(worksheet, candidates))
    if len(candidates) == 1:
        return candidates[0]
    raise WorksheetError(f"{worksheet.path.name} has {len(candidates)} assignment columns; "
                         "say which with COLUMN=\"<title (id)>\" or COLUMN=<id>: "
                         + _listed(worksheet, candidates))


def _listed(worksheet, indexes):
    return ", ".join(f"«{worksheet.header[i]}»" for i in indexes) or "none"


def fill_gradebook(worksheet: Worksheet, grades, wanted_column=None):
    """Fill the assignment's column for every student in ``grades`` (``{user id: (points,
    points possible)}``, rescaled to the column's «Points Possible»). Returns ``(column title,
    filled ids, ids of the gradebook's students without a grade, notes)``."""
    student = worksheet.column(("Student", "LastName"), required=True)
    user = worksheet.column(("ID",), required=True)
    column = assignment_column(worksheet, wanted_column)
    points_row = next((row for row in worksheet.rows
                       if worksheet.cell(row, student).strip().casefold() == POINTS_POSSIBLE),
                      None)
    top = worksheet.number(worksheet.cell(points_row, column)) if points_row else None
    notes = []
    if top is None:
        notes.append("the gradebook gives no «Points Possible» for the column, so scores are "
                     "written in the kit's points")
    separator = worksheet.decimal_separator(column) if points_row is None else (
        "," if "," in worksheet.cell(points_row, column) else ".")
    filled, without = [], []
    for row in worksheet.rows:
        if row is points_row:
            continue
        number = worksheet.cell(row, user).strip()
        if not number.isdigit():  # the «Manual Posting» row, blank lines
            continue
        if grades.get(number) is None:
            without.append(number)
            continue
        points, possible = grades[number]
        value = points if top is None else points / possible * top
        worksheet.set(row, column, number_text(value, separator))
        filled.append(number)
    return worksheet.header[column], filled, without, notes
