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
from dataclasses import dataclass

from .entries import EXPORT_STAMP, Found, Upload, zip_own_name
from .roster import same_canvas_name, shown_name
from .tree import MAX_GRADED_BYTES
from .worksheet import Worksheet, WorksheetError, number_text

# Where Canvas joins name, user id and attachment id: ``_[LATE_]<digits>_<digits>_``. A name
# can hold such a piece too (Canvas squashes ``_<digits>_`` only before removing other
# characters, so «x_ 666 _1» becomes «x_666_1»), so every place it occurs is a reading.
SPLIT = re.compile(r"(?=_(?P<late>LATE_)?(?P<user>\d+)_(?P<file>\d+)_(?P<name>.+)$)")
ANONYMOUS = re.compile(r"^(?P<late>LATE_)?anon_(?P<anon>[A-Za-z0-9]+)_(?P<file>\d+)_(?P<name>.+)$")
TEXT = re.compile(r"^(?P<who>.*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<kind>text|link)\.html$")
ASSIGNMENT_COLUMN = re.compile(r"^.*\(\d+\)\s*$")
POINTS_POSSIBLE = "points possible"


@dataclass(frozen=True)
class Reading:
    who: str
    late: bool
    user: str
    file: int
    name: str


def readings(name):
    """Every way Canvas could have written ``name``. The digits of ``grader.export()``'s
    timestamp (``…_2026_11_20T10_00_00_123456.zip``) are never ids: a reading must keep the
    whole timestamp in the student's file name, so a folder of export zips is not Canvas's."""
    stamp = EXPORT_STAMP.search(name)
    found = []
    for match in SPLIT.finditer(name):
        start = match.end("file") + 1
        if stamp is not None and start > stamp.start():
            continue
        if name[:match.start()].endswith("_LATE"):
            continue  # the same reading as the one that starts at its «_LATE_»
        found.append(Reading(shown_name(name[:match.start()]), bool(match["late"]),
                             match["user"], int(match["file"]), match["name"]))
    return found


def fits(name, names=()):
    """Whether one top-level entry is named Canvas's way."""
    return bool(ANONYMOUS.match(name) or TEXT.match(name) or readings(name))


def partial_matters(fitting, names):
    # Only gradable files named Canvas's way say anything: «a_1_2_b.txt» is not a download.
    return any(n.lower().endswith((".ipynb", ".zip")) for n in fitting)


def uploads(tree, roster=None):
    """Every student's ``Upload``, or None when ``tree`` is not a Canvas download. A file name
    that reads as more than one student is given to the one the gradebook (``roster``) or the
    rest of the download confirms, and to nobody when neither does: graded, with a notice."""
    top = [item for item in tree.items if len(item.parts) == 1]
    if not top or len(top) != len(tree.items):
        return None
    students, notices, pending = {}, [], []
    for item in top:
        anonymous = ANONYMOUS.match(item.name)
        text = TEXT.match(item.name)
        if anonymous:
            student = _student(students, None, None, bool(anonymous["late"]),
                               key=f"anon_{anonymous['anon']}")
            _add(student, item, int(anonymous["file"]), anonymous["name"])
        elif text and not readings(item.name):
            student = _student(students, shown_name(text["who"]), text["user"],
                               bool(text["late"]))
            note = ("tu entrega incluye texto en línea o un enlace, que no se evalúan en esta "
                    "tarea: solo se evalúan el cuaderno o su exportación")
            if note not in student.notes:
                student.notes.append(note)
            student.unread.append((item, f"Canvas's {text['kind']} entry: not graded in this "
                                         "assignment"))
        else:
            pending.append((item, readings(item.name)))
    known = _known_names(pending, students)
    for item, options in pending:
        kept = _confirmed(options, roster, known, tree, item)
        if len(kept) == 1:
            reading = kept[0]
            student = _student(students, reading.who, reading.user, reading.late)
            _add(student, item, reading.file, reading.name)
            continue
        ids = ", ".join(sorted({r.user for r in options}))
        student = _student(students, None, None, any(r.late for r in options),
                           key=f"? {item.name}")
        _add(student, item, 0, options[-1].name)
        student.doubt = (f"its name reads as more than one Canvas user ({ids}) and neither the "
                         "gradebook (ROSTER=) nor the rest of the download says which: graded, "
                         "given to nobody")
    if not students:
        return None
    _teams(students.values(), roster, notices)
    return Found(list(students.values()), notices=notices)


def _known_names(pending, students):
    """``{user id: name}`` from what reads one way only: text entries and unambiguous files."""
    known = {s.student_id: s.student_name for s in students.values() if s.student_id}
    for _, options in pending:
        if len(options) == 1:
            known.setdefault(options[0].user, options[0].who)
    return known


def _confirmed(options, roster, known, tree, item):
    if len(options) <= 1:
        return options
    if roster is not None and roster.kind == "canvas":
        listed = [r for r in options if r.user in roster.people and (
            not roster.people[r.user].name or same_canvas_name(roster.people[r.user].name, r.who))]
        return listed
    kept = [r for r in options if known.get(r.user, r.who) == r.who]
    confirmed = [r for r in kept if known.get(r.user) == r.who]
    if len(confirmed) == 1:
        return confirmed
    own = _own_name(tree, item)
    if own is not None:
        named = [r for r in kept if r.name == own]
        if len(named) == 1:
            return named
    return kept


def _own_name(tree, item):
    """The name an export zip was written under, which Canvas keeps as the file's own name."""
    if item.suffix != ".zip":
        return None
    try:
        data = tree.read(item, MAX_GRADED_BYTES[".zip"])
    except (OSError, ValueError, RuntimeError, EOFError, NotImplementedError):
        return None
    return zip_own_name(data)


def _teams(uploads, roster, notices):
    """Canvas names a group's submission after one member: the groups CSV names the rest."""
    if roster is None or not roster.has_groups:
        return
    for upload in uploads:
        group = roster.group_of(upload.student_id) if upload.student_id else None
        if group:
            upload.group = group
            upload.members = [(p.name, p.student_id) for p in roster.members_of(group)]


def _add(student, item, number, label):
    student.files.append(item)
    student.newness[item.path] = number
    student.order_source = "Canvas numbers attachments in the order they were uploaded"
    student.labels[item.path] = label


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
