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

from .entries import Found, Notice, Upload
from .roster import MOODLE_IDENTIFIER, download_name, shown_name
from .worksheet import Worksheet, WorksheetError, number_text

# <who>[_<participant or group id>]_assignsubmission_<plugin>, then "_" or "/" or the end. Team
# downloads (4.1+) name each group's folder by its name and group id, and members without a
# group by the localised «Grupo predeterminado» with no number at all.
PREFIX = re.compile(r"^(?P<who>.+?)(?:_(?P<id>\d+))?_assignsubmission_(?P<plugin>[a-z]+)"
                    r"(?P<rest>_.*)?$")
ANONYMOUS = {"participante", "participant"}
ZIP_ORDER = "Moodle lists a student's files oldest first in its download zip"

FEEDBACK_FILE = "informe_de_evaluacion.html"

GRADE = ("calificación", "calificacion", "grade")
MAXIMUM = ("calificación máxima", "calificacion maxima", "maximum grade")
COMMENTS = ("comentarios de retroalimentación", "comentarios de retroalimentacion",
            "feedback comments")
FULL_NAME = ("nombre completo", "full name")


def fits(name, names=()):
    """Whether one top-level entry is named Moodle's way."""
    return bool(PREFIX.match(name))


def partial_matters(fitting, names):
    return True


def uploads(tree, roster=None):
    """Every participant's (or team's) ``Upload``, or None when ``tree`` is not a Moodle
    download. Identities are checked against ``roster`` (the grading worksheet) when given."""
    students, ignored = {}, []
    in_zip = any(item.member is not None for item in tree.items)
    for item in tree.items:
        match = PREFIX.match(item.parts[0])
        if not match:
            ignored.append((item.path, "not part of Moodle's layout"))
            continue
        folder = len(item.parts) > 1
        key = (match["who"], match["id"])
        upload = students.get(key)
        if upload is None:
            upload = students[key] = Upload(_name(match["who"]), match["id"], origin="",
                                            files=[])
        if match["plugin"] == "file":
            if folder or (match["rest"] and len(match["rest"]) > 1):
                upload.origin = upload.origin or (
                    item.parts[0] if folder else
                    f"{match['who']}{'_' + match['id'] if match['id'] else ''}"
                    "_assignsubmission_file_")
                upload.files.append(item)
                if in_zip:
                    upload.newness[item.path] = item.order
                    upload.order_source = ZIP_ORDER
            else:
                upload.unread.append((item, "a file of Moodle's file plugin without a name"))
            continue
        if match["plugin"] == "onlinetext":
            note = ("tu entrega incluye texto en línea, que no se evalúa en esta tarea: solo se "
                    "evalúan el cuaderno o su exportación")
            upload.origin = upload.origin or item.parts[0]
            upload.unread.append((item, "online text (Moodle's onlinetext): not graded in this "
                                        "assignment"))
        else:
            note = f"lo que entregaste en «{match['plugin']}» no se evalúa en esta tarea"
            upload.unread.append((item, f"Moodle's «{match['plugin']}» submission plugin: not "
                                        "graded in this assignment"))
        if note not in upload.notes:
            upload.notes.append(note)
    if not students:
        return None
    notices = _identify(list(students.values()), roster)
    return Found(list(students.values()), ignored=ignored, notices=notices)


def _identify(uploads, roster):
    """Who each upload is: a participant, or a team. A team download names each folder by its
    group's name and group id, and the members without a group by a folder without a number;
    a download of one folder per participant names each by the full name and participant id.
    A download is one or the other, and the download as a whole decides which, never one
    folder: a student whose full name is a group's («Grupo A») is that participant, and their
    folder cannot take the group's grade from its members."""
    teams = _team_download(uploads, roster)
    notices = []
    for upload in uploads:
        who = upload.student_name or ""
        members, clash = roster.team(who) if roster and who else ([], [])
        if teams:
            upload.group, upload.group_id = who, upload.student_id
            upload.student_name = upload.student_id = None
            upload.members = [(p.name, p.student_id) for p in members]
            if clash:
                notices.append(_groups_alike(upload, clash, roster))
            continue
        person = roster.people.get(upload.student_id) if roster else None
        if _own(upload, roster):
            if members or clash:
                notices.append(_named_like_a_group(upload, roster))
            continue  # a participant, as the worksheet says
        if roster is None or (person is None and not members and not clash):
            continue  # a participant the worksheet (if any) does not list
        listed = f"whom the worksheet calls «{person.name}»" if person else \
            "who is not in the worksheet, and whose name is a group's"
        upload.doubt = (f"the download names «{who}» for participant {upload.student_id}, "
                        f"{listed}: graded, given to nobody")
        upload.student_id = None
    team_uploads = [u for u in uploads if u.group is not None]
    if team_uploads and (roster is None or not roster.has_groups):
        notices.append(Notice(
            "team", f"{len(team_uploads)} team submissions (one folder per group): each is "
                    "graded once, for its group; make export gives every member the group's "
                    "grade from the grading worksheet's «Grupo» column",
            f"{len(team_uploads)} entregas en grupo (una carpeta por grupo): cada una se evalúa "
            "una vez, para su grupo; make export pone la nota del grupo a cada miembro según la "
            "columna «Grupo» de la hoja de calificaciones"))
    for upload in team_uploads:
        if roster is not None and roster.has_groups and not upload.members and \
                not any(n.kind == "team" and upload.group in n.en for n in notices):
            notices.append(Notice(
                "team", f"group «{upload.group}»: no member in {roster.path.name}",
                f"grupo «{upload.group}»: ningún miembro en {roster.path.name}"))
    return notices


def _own(upload, roster):
    """Whether the worksheet's participant of ``upload``'s number has its name. An anonymous
    download names everyone «Participante», where the number alone says who; Moodle up to 4.0
    gave each member of a team a copy named «<group>-<member>»."""
    person = roster.people.get(upload.student_id) if roster and upload.student_id else None
    if person is None:
        return False
    if upload.student_name is None or _same_name(person.name, upload.student_name):
        return True
    return download_name(upload.student_name).endswith("-" + download_name(person.name))


def _team_download(uploads, roster):
    """Whether ``uploads`` are a team download's: a folder without a number (Moodle's team of
    members without a group), or, with the worksheet, folders named as its groups and none
    named as the participant its number would be. A download where some folders are
    participants' own is one of participants, whatever the others are called."""
    if any(upload.student_id is None for upload in uploads):
        return True
    if roster is None or any(_own(upload, roster) for upload in uploads):
        return False
    return any(any(roster.team(upload.student_name or "")) for upload in uploads)


def _named_like_a_group(upload, roster):
    who, number = upload.student_name, upload.student_id
    return Notice(
        "identity", f"«{who}» ({number}) has the name of a group of {roster.path.name}; "
                    "graded as that participant's own submission, never the group's",
        f"«{who}» ({number}) se llama como un grupo de {roster.path.name}; se ha evaluado como "
        "la entrega de esa persona, nunca como la del grupo")


def _groups_alike(upload, clash, roster):
    names = ", ".join(f"«{g}»" for g in clash)
    return Notice(
        "team", f"group «{upload.group}» ({upload.group_id or 'no number'}): {roster.path.name} "
                f"has {len(clash)} groups that Moodle writes alike ({names}), and the download "
                "cannot tell which: graded, given to nobody; rename one group in Moodle and "
                "download again",
        f"grupo «{upload.group}»: {roster.path.name} tiene {len(clash)} grupos que Moodle "
        f"escribe igual en la descarga ({names}) y no se sabe cuál es: evaluado, sin nota para "
        "nadie; cambia el nombre de uno de los grupos en Moodle y vuelve a descargar")


def _same_name(listed, written):
    """A worksheet's full name against the one Moodle wrote into a file name."""
    return not listed or download_name(listed) == download_name(written)


def _name(who):
    return None if who.strip().casefold() in ANONYMOUS else shown_name(who)


def participant_number(identifier):
    """«Participante 123» -> "123"; None when the cell holds no number."""
    match = re.search(r"(\d+)\s*$", identifier or "")
    return match.group(1) if match else None


# --- back to Moodle ---------------------------------------------------------------------------


def worksheet_columns(worksheet: Worksheet):
    """``(identifier, grade, maximum, comments)`` column indexes. By their Spanish or English
    headers first; a worksheet from a Moodle in another language is read by its structure:
    the identifier is the column of «<word><number>» cells, the maximum the column whose every
    row holds one same positive number, and the grade, as Moodle writes it, the column just
    before the maximum (its comments column is then found only by header)."""
    from .roster import participant_column

    identifier = worksheet.column(MOODLE_IDENTIFIER)
    if identifier is None:
        identifier = participant_column(worksheet)
    grade, maximum = worksheet.column(GRADE), worksheet.column(MAXIMUM)
    if maximum is None and identifier is not None:
        maximum = _constant_number_column(worksheet, after=identifier)
    if grade is None and maximum is not None and maximum - 1 > identifier:
        grade = maximum - 1
    if identifier is None or grade is None:
        shown = ", ".join(f"«{title}»" for title in worksheet.header)
        raise WorksheetError(f"{worksheet.path.name} is not Moodle's grading worksheet: no column "
                             "of «Participante N» identifiers and grades; its columns are: "
                             f"{shown}")
    return identifier, grade, maximum, worksheet.column(COMMENTS)


def _constant_number_column(worksheet, after):
    rows = [row for row in worksheet.rows if any(cell.strip() for cell in row)]
    for index in range(after + 1, len(worksheet.header)):
        cells = {Worksheet.cell(row, index).strip() for row in rows}
        if len(cells) == 1:
            value = worksheet.number(next(iter(cells)))
            if value is not None and value > 0:
                return index
    return None


def fill_worksheet(worksheet: Worksheet, grades, comments):
    """Fill the grade and the comment of every participant in ``grades`` (``{participant id:
    (points, points possible)}``, the kit's scale, rescaled to the worksheet's «Calificación
    máxima»), keeping every other cell. Returns ``(filled ids, ids of the worksheet's rows
    without a grade, notes for the instructor)``."""
    identifier, grade, maximum, comment = worksheet_columns(worksheet)
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
