"""Who is in the class, and in which group, from a file the LMS itself exports (``ROSTER=``).

A download names each student (or each team) by what the LMS put in a file name; a name is
something a student can type, so the kit checks it against the class list where it has one:

* Moodle's **grading worksheet** («Descargar hoja de calificaciones»): «Participante48211» (or
  «Participant 48211», in any of Moodle's languages) with the full name, and a «Grupo»/«Group»
  column when the assignment is for teams;
* Canvas's **gradebook export**: «Student» (the sortable name) and «ID» (the user id);
* a **groups CSV** (Canvas: the group set's export, one row per member with its user id and its
  group's name; or any CSV with a user-id column and a group column).

Columns are found by their headers in several languages first, then by the shape of their
cells, so a worksheet exported from a French or German Moodle is read too.
"""

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..sandbox.inside.wire import valid_text
from .worksheet import Worksheet, WorksheetError

# «Participante48211», «Participant 48211», «Teilnehmer/in48211»: letters, then the number.
PARTICIPANT_CELL = re.compile(r"^\s*[^\W\d_][^\d]*?\s?(\d+)\s*$")
FULL_NAME = ("nombre completo", "full name", "nom complet", "vollständiger name",
             "nome completo", "nom", "name")
GROUP = ("grupo", "group", "groupe", "gruppe", "gruppo", "grup", "group_name", "group name")
CANVAS_STUDENT = ("student",)
# Moodle's «Identificador» column (assignfeedback_offline's «recordid»), as it is headed.
MOODLE_IDENTIFIER = ("identificador", "identifier", "identifiant", "identifikator",
                     "identificatore")
CANVAS_ID = ("id", "canvas_user_id", "user_id")
# Moodle's team names: its «Grupo predeterminado» for members without a group, in the site's
# language (mod/assign's «defaultteam» string).
DEFAULT_TEAM = ("grupo predeterminado", "default group", "groupe par défaut", "standardgruppe",
                "gruppo predefinito", "grupo padrão")


@dataclass
class Person:
    student_id: str
    name: str = ""
    groups: list = field(default_factory=list)


class RosterError(Exception):
    """The file is not a class list the kit can read; the message says what it expected."""


@dataclass
class Roster:
    path: Path
    kind: str  # "moodle", "canvas" or "groups"
    people: dict  # student id -> Person

    def members_of(self, group) -> list:
        """The people of the group named exactly ``group``."""
        return [p for p in self.people.values() if group in p.groups]

    def team(self, who):
        """``(members, clash)`` of the group a download calls ``who``, as Moodle writes a
        group's name into a folder's. Two groups whose names are one once written so («Equipo
        1», «Equipo_1») are told apart by case where it differs («EQUIPO_1» is written «EQUIPO
        1»); where nothing tells them apart, ``clash`` names them and nobody is a member: a
        grade is never given to a group the download may not mean."""
        if download_name(who) in DEFAULT_TEAM:
            return [p for p in self.people.values()
                    if not p.groups or any(download_name(g) in DEFAULT_TEAM for g in p.groups)], []
        named = sorted({g for p in self.people.values() for g in p.groups
                        if download_name(g) == download_name(who)})
        if len(named) > 1:
            exact = [g for g in named if moodle_written(g) == moodle_written(who)]
            if len(exact) != 1:
                return [], named
            named = exact
        return (self.members_of(named[0]) if named else []), []

    @property
    def has_groups(self):
        return any(p.groups for p in self.people.values())

    def group_of(self, student_id):
        person = self.people.get(student_id)
        return person.groups[0] if person and person.groups else None


def shown_name(text) -> str:
    """A name as read and shown: composed (NFC), accents kept. macOS and sync tools write file
    names decomposed (NFD), so «Núñez» from a download may not equal the gradebook's «Núñez»
    character for character, though a person reads one name."""
    return unicodedata.normalize("NFC", valid_text(str(text or "")))


def moodle_written(text) -> str:
    """A name as Moodle writes it into a download's folder name: ``_`` turned into spaces,
    ``' & < > "`` and the other characters its file names refuse dropped, blanks collapsed."""
    text = shown_name(text).replace("_", " ")
    text = re.sub(r"[\\/:*?\"<>|&'\x00-\x1f\x7f]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def download_name(text) -> str:
    """A name as it can be compared with what an LMS wrote into a file name: as Moodle writes
    it, and case and accents' composition do not matter."""
    return moodle_written(text).casefold()


def canvas_name(sortable) -> str:
    """A sortable name as Canvas writes it into a download (lib/content_zipper.rb): pieces
    ``_<digits>_`` lose their underscores, the name is lower-cased, and every character that is
    not a letter, a digit or ``_`` is removed. Composed and case-folded, as ``same_canvas_name``
    compares it."""
    text = re.sub(r"_(\d+)_", r"\1", shown_name(sortable)).casefold()
    return re.sub(r"[^\w]", "", text)


def same_canvas_name(listed, written) -> bool:
    """Whether the gradebook's sortable name ``listed`` («Pérez, José») is the one a download
    wrote. In a group assignment Canvas writes a student without a group by their display name
    (Assignment#groups_and_ungrouped), which the gradebook does not give: «José Pérez» is read
    from the sortable name's two sides as well."""
    wanted = {shown_name(written).casefold(), canvas_name(written)}
    last, comma, first = shown_name(listed).partition(",")
    return canvas_name(listed) in wanted or bool(comma) and canvas_name(f"{first} {last}") in wanted


def read(path) -> Roster:
    path = Path(path)
    try:
        sheet = Worksheet(path)
    except WorksheetError as exc:
        raise RosterError(str(exc)) from None
    found = of_sheet(sheet)
    if found is None:
        shown = ", ".join(f"«{title}»" for title in sheet.header[:12])
        raise RosterError(f"{path.name} is neither Moodle's grading worksheet (a column of "
                          "«Participante N»), Canvas's gradebook («Student», «ID») nor a groups "
                          f"CSV (a user-id and a group column); its columns are: {shown}")
    return found


def of_sheet(sheet: Worksheet) -> Optional[Roster]:
    """The class list ``sheet`` holds, or None when it is no LMS file the kit knows."""
    kind, identifier = kind_of(sheet)
    if kind == "moodle":
        return _moodle(sheet.path, sheet, identifier)
    if kind in ("canvas", "groups"):
        # Canvas's group set export names each member in «name» (the display name).
        student = sheet.column(CANVAS_STUDENT)
        return _canvas(sheet.path, sheet, student if student is not None else
                       sheet.column(("name",)), sheet.column(CANVAS_ID), sheet.column(GROUP),
                       kind)
    return None


def kind_of(sheet: Worksheet):
    """``(kind, Moodle's identifier column or None)``: which LMS file ``sheet`` is, by its own
    columns first. Moodle's worksheet by its identifier's header, Canvas's gradebook by
    «Student» and «ID», a groups CSV by a user-id and a group column; only a file that none of
    these fits is read by the shape of its cells (a worksheet from a Moodle in another
    language), so that a Canvas «Section» of «IA 2026» never passes for Moodle's «Participante
    N». ``kind`` is None when nothing fits."""
    identifier = sheet.column(MOODLE_IDENTIFIER)
    if identifier is not None:
        return "moodle", identifier
    user = sheet.column(CANVAS_ID)
    if user is not None and sheet.column(CANVAS_STUDENT) is not None:
        return "canvas", None
    if user is not None and sheet.column(GROUP) is not None:
        return "groups", None
    identifier = participant_column(sheet)
    if identifier is not None:
        return "moodle", identifier
    return None, None


KINDS = {"moodle": "Moodle's grading worksheet", "canvas": "Canvas's gradebook",
         "groups": "a groups CSV"}


def summary(roster: Roster) -> str:
    """What make grade read in ``ROSTER=``, in one line for the instructor."""
    groups = sorted({g for p in roster.people.values() for g in p.groups})
    return (f"roster: {roster.path.name} read as {KINDS[roster.kind]}: "
            f"{len(roster.people)} {'person' if len(roster.people) == 1 else 'people'}, "
            + (f"{len(groups)} {'group' if len(groups) == 1 else 'groups'}" if groups
               else "no groups"))


def participant_column(sheet: Worksheet) -> Optional[int]:
    """The column of Moodle's participant identifiers, by its cells: whatever the site's
    language calls it, most of its cells are a word and a number."""
    rows = [row for row in sheet.rows if any(cell.strip() for cell in row)]
    if not rows:
        return None
    for index in range(len(sheet.header)):
        cells = [Worksheet.cell(row, index) for row in rows]
        matched = sum(bool(PARTICIPANT_CELL.match(cell)) for cell in cells)
        words = {re.sub(r"[\s\d]+", "", cell).casefold() for cell in cells if cell.strip()}
        # One word for every row ("participante"), not a column of names that end in digits.
        if matched >= max(1, 0.8 * len(cells)) and len(words) == 1:
            return index
    return None


def participant_number(cell) -> Optional[str]:
    match = PARTICIPANT_CELL.match(cell or "")
    return match.group(1) if match else None


def _groups(cell):
    """A group cell: one group's name (Moodle's worksheet names a member's team; a groups CSV
    has a row per membership), «-» or nothing for none. Never split: a teacher may put a comma
    in a group's name."""
    name = (cell or "").strip()
    return [name] if name and name != "-" else []


def _moodle(path, sheet, identifier):
    name = sheet.column(FULL_NAME)
    if name is None and identifier + 1 < len(sheet.header):
        name = identifier + 1  # Moodle writes the full name right after the identifier
    group = sheet.column(GROUP)
    people = {}
    for row in sheet.rows:
        number = participant_number(Worksheet.cell(row, identifier))
        if number:
            people[number] = Person(number, Worksheet.cell(row, name).strip(),
                                    _groups(Worksheet.cell(row, group)) if group is not None
                                    else [])
    return Roster(path, "moodle", people)


def _canvas(path, sheet, student, user, group, kind):
    people = {}
    for row in sheet.rows:
        number = Worksheet.cell(row, user).strip()
        if not number.isdigit():  # «Points Possible», «Manual Posting», blank lines
            continue
        person = people.setdefault(number, Person(number))
        if student is not None and not person.name:
            person.name = Worksheet.cell(row, student).strip()
        if group is not None:
            person.groups += [g for g in _groups(Worksheet.cell(row, group))
                              if g not in person.groups]
    return Roster(path, kind, people)
