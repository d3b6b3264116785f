"""From what each student handed in to the one file the batch grades, and the account of every
file of the download.

A layout (moodle.py, canvas.py, gradescope.py) says who handed in which files (``Upload``);
this module picks the file to grade and says why, on evidence only: the order the LMS gives
(Moodle lists a student's files oldest first in its zip; Canvas numbers attachments in the
order they were uploaded), then the time an export zip carries in its own name, then the
instructor's ``PICK=``. Where none decides, the choice is said to be undecided, in the terminal
and the class report, never only in one student's feedback.

Two files come out of it, in OUT:

* ``ingest.csv``: one row per file of the download, graded or not, with why (for the
  instructor, and for a spreadsheet: every text cell through ``csv_cells.safe``);
* ``submissions.json``: the kit's own record of who is who for every row of
  ``final_grades.csv``, with the instructor's notices; the review page, ``make report`` and
  ``make export`` read it, never the download again.
"""

import csv
import io
import json
import re
import shutil
import unicodedata
import zipfile
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Optional

from ..csv_cells import safe
from ..sandbox.inside.wire import valid_text

MANIFEST = "submissions.json"
INGEST_CSV = "ingest.csv"
FORMAT = 2

GRADED, SUPERSEDED, NOT_A_SUBMISSION, UNREADABLE, IGNORED = (
    "graded", "superseded", "not a submission", "unreadable", "ignored")

# Otter's grader.export() names its zip <notebook>_<%Y_%m_%dT%H_%M_%S_%f>.zip
# (otter/check/notebook.py); the kit's export cell leaves out the microseconds. A browser or a
# file manager that saves a second copy adds « (1)» or «-1» before the suffix, which is still
# that export.
EXPORT_STAMP = re.compile(
    r"_(\d{4})_(\d{2})_(\d{2})T(\d{2})_(\d{2})_(\d{2})(?:_(\d{6}))?(?: ?\(\d+\)|-\d+)?"
    r"\.zip$", re.I)


@dataclass
class Upload:
    """What one student (or team) handed in, as the LMS laid it out."""

    student_name: Optional[str]
    student_id: Optional[str]
    origin: str  # the folder, or the file-name prefix, that names this student in the download
    files: list  # tree.Item, gradable or not
    late: bool = False
    notes: list = field(default_factory=list)  # Spanish: what the LMS gave that is not a file
    newness: dict = field(default_factory=dict)  # item path -> rank the LMS gives, higher newer
    order_source: str = ""  # English: what ``newness`` is, when it is evidence
    labels: dict = field(default_factory=dict)  # item path -> the name the student gave it
    group: Optional[str] = None  # the team's name, when the upload is a team's
    group_id: Optional[str] = None  # the LMS's number of that team (never a student's id)
    members: list = field(default_factory=list)  # [(name, id)] of the team, from the roster
    doubt: Optional[str] = None  # English: why the name's identity was not trusted
    # Items of the student's that are not files to grade (online text, another plugin's),
    # each with why, in English: listed in ingest.csv like every other file.
    unread: list = field(default_factory=list)  # [(tree.Item, reason)]


@dataclass
class Entry:
    """One row of final_grades.csv: the file graded and whose it is."""

    file: str  # what every output calls it: its path inside the download
    name_hint: str  # a file name whose stem becomes the submission's stem in OUT
    path: Optional[Path] = None  # on disk, to grade
    refusal: Optional[str] = None  # Spanish: why it cannot even be read (then path is None)
    student_name: Optional[str] = None
    student_id: Optional[str] = None
    late: bool = False
    origin: str = ""
    not_graded: list = field(default_factory=list)  # the student's other files
    notes: list = field(default_factory=list)  # Spanish, for the student's feedback
    group: Optional[str] = None
    group_id: Optional[str] = None
    members: list = field(default_factory=list)  # [[name, id]]: who gets this row's grade
    chosen_because: str = ""  # English, when the student had several candidates


@dataclass
class Found:
    """What a layout read from a download: who handed in what, and what it set aside."""

    uploads: list
    notes: list = field(default_factory=list)  # English, the layout's remarks
    notices: list = field(default_factory=list)  # Notice: what the instructor must see
    ignored: list = field(default_factory=list)  # [(path, English reason)]


@dataclass
class Absent:
    """Someone the download or the roster names who handed in nothing the kit can grade."""

    student_name: Optional[str]
    student_id: Optional[str]
    origin: str
    reason: str  # Spanish


@dataclass
class FileRow:
    """One file of the download, and what was done with it."""

    file: str
    action: str  # GRADED, SUPERSEDED, …
    reason: str  # English, for the instructor
    student_name: str = ""
    student_id: str = ""
    group: str = ""


@dataclass
class Notice:
    """Something the instructor must see in the terminal and the class report: a choice the
    kit could not make on evidence, a file or a student without a row."""

    # "candidates", "undecided", "not graded", "absent", "identity", "layout", "team", "pick"
    kind: str
    en: str
    es: str


class Ingested:
    """The entries of one download; ``with`` removes the files extracted for grading."""

    def __init__(self, layout, source, entries, absent=(), notes=(), workdir=None, tree=None,
                 files=(), notices=()):
        self.layout, self.source = layout, source
        self.entries, self.absent = list(entries), list(absent)
        self.notes = list(notes)  # for the instructor, English (the layout's own remarks)
        self.files, self.notices = list(files), list(notices)
        self._workdir, self._tree = workdir, tree

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._tree is not None:
            self._tree.close()
            self._tree = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def manifest(self, stems) -> dict:
        """``stems``: ``{entry.name_hint: stem}``, as the batch named the outputs."""
        entries = []
        for entry in self.entries:
            data = asdict(entry)
            for private in ("path", "refusal", "name_hint"):
                data.pop(private)
            entries.append({"stem": stems[entry.name_hint], **data})
        return {"format": FORMAT, "layout": self.layout, "source": str(self.source),
                "entries": entries, "absent": [asdict(a) for a in self.absent],
                "files": [asdict(f) for f in self.files],
                "notices": [asdict(n) for n in self.notices]}

    def write_manifest(self, out: Path, stems):
        text = json.dumps(self.manifest(stems), ensure_ascii=False, indent=1)
        (Path(out) / MANIFEST).write_text(text, "utf-8", errors="replace")
        write_ingest_csv(Path(out) / INGEST_CSV, self.files)


INGEST_COLUMNS = ("file", "action", "reason", "student_name", "student_id", "group")


def write_ingest_csv(path: Path, rows):
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(INGEST_COLUMNS)
    for row in rows:
        writer.writerow([safe(valid_text(str(getattr(row, c) or ""))) for c in INGEST_COLUMNS])
    # A byte-order mark, which spreadsheets need to read the accents of names right.
    path.write_text("\ufeff" + buffer.getvalue(), "utf-8", newline="")


def read_manifest(out) -> Optional[dict]:
    """OUT's manifest, or None for a folder graded before the kit wrote one."""
    path = Path(out) / MANIFEST
    if not path.is_file():
        return None
    return json.loads(path.read_text("utf-8"))


def slug(text) -> str:
    """A name as a file name: letters of any script, digits, ``.``, ``-``; the rest ``_``."""
    text = unicodedata.normalize("NFC", valid_text(str(text)))
    text = re.sub(r"[^\w.\-]+", "_", text).strip("._-")
    return re.sub(r"_+", "_", text)[:80] or "entrega"


def export_time(name) -> Optional[datetime]:
    """When ``grader.export()`` wrote a zip, from the name it gave it; None for other names."""
    match = EXPORT_STAMP.search(name or "")
    if not match:
        return None
    try:
        return datetime(*(int(part) for part in match.groups() if part is not None))
    except ValueError:
        return None


def export_stem(name) -> Optional[str]:
    """The notebook an export zip was written from («notebook_student»), or None."""
    match = EXPORT_STAMP.search(name or "")
    return name[:match.start()] if match and export_time(name) is not None else None


def zip_own_name(data: bytes) -> Optional[str]:
    """The name an export zip says it was written under (its ``__zip_filename__``)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            info = zf.getinfo("__zip_filename__")
            if info.file_size > 1024:
                return None
            return zf.read(info).decode("utf-8", "replace").strip()
    except (KeyError, zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError,
            NotImplementedError):
        return None


def who_of(upload) -> str:
    parts = [upload.group or upload.student_name, upload.student_id or upload.group_id]
    return " ".join(p for p in parts if p) or upload.origin


def build_entries(tree, uploads, workdir: Path, picks=()):
    """``(entries, absent, file rows, notices)`` for ``uploads``: each student's chosen file,
    on disk, and what became of every other file."""
    entries, absent, rows, notices, hints = [], [], [], [], set()
    picks = set(picks)
    for upload in uploads:
        identity = dict(student_name=upload.student_name or "", student_id=upload.student_id or "",
                        group=upload.group or "")
        rows += [FileRow(item.path, NOT_A_SUBMISSION, reason, **identity)
                 for item, reason in upload.unread]
        gradable = [item for item in upload.files if item.gradable and not item.link]
        links = [item for item in upload.files if item.link]
        for item in links:
            rows.append(FileRow(item.path, UNREADABLE, "a symbolic link: never followed",
                                **identity))
        if not gradable:
            absent.append(Absent(upload.student_name, upload.student_id, upload.origin,
                                 _nothing_gradable(upload)))
            rows += [FileRow(item.path, NOT_A_SUBMISSION, "not a notebook or an export zip",
                             **identity) for item in upload.files if not item.link]
            continue
        chosen, because, decided = choose(tree, upload, gradable, picks)
        others = [item for item in upload.files if item is not chosen]
        path, refusal = tree.materialize(chosen, workdir, len(entries))
        entry = Entry(file=chosen.path, name_hint=_unique_hint(upload, chosen, hints),
                      path=path, refusal=refusal, student_name=upload.student_name,
                      student_id=upload.student_id, late=upload.late, origin=upload.origin,
                      not_graded=[item.path for item in others], group=upload.group,
                      group_id=upload.group_id, members=[list(m) for m in upload.members],
                      chosen_because=because if len(gradable) > 1 else "")
        if others:
            entry.notes.append(_others_note(chosen, others, upload.labels, because))
        entry.notes += upload.notes
        entries.append(entry)
        reason = "unreadable: " + refusal if refusal else (because or "the student's only file")
        rows.append(FileRow(chosen.path, UNREADABLE if refusal else GRADED, reason, **identity))
        for item in others:
            if item.link:
                continue
            if item in gradable:
                rows.append(FileRow(item.path, SUPERSEDED,
                                    f"superseded by {chosen.path} ({because})", **identity))
            else:
                rows.append(FileRow(item.path, NOT_A_SUBMISSION,
                                    "not a notebook or an export zip", **identity))
        if len(gradable) > 1:
            kind = "candidates" if decided else "undecided"
            names = ", ".join(item.path for item in gradable)
            notices.append(Notice(
                kind, f"{who_of(upload)}: {len(gradable)} candidates ({names}); graded "
                      f"{chosen.path}: {because}",
                f"{who_of(upload)}: {len(gradable)} archivos que podrían evaluarse ({names}); "
                f"se ha evaluado «{chosen.path}»" + (f" ({_spanish_reason(because)})" if decided
                                                      else "") + ("" if decided else
                                               ": la descarga no dice cuál es el más reciente; "
                                               "elige otro con PICK=<archivo>")))
        if upload.doubt:
            notices.append(Notice("identity", f"{who_of(upload)}: {upload.doubt}",
                                  f"{who_of(upload)}: no se ha podido confirmar de quién es "
                                  f"«{chosen.path}» ({upload.doubt})"))
    return entries, absent, rows, notices


def choose(tree, upload, gradable, picks):
    """``(item, why, decided)``: the file to grade among a student's candidates."""
    if len(gradable) == 1:
        return gradable[0], "", True
    picked = [item for item in gradable if item.path in picks]
    if picked:
        return picked[-1], "chosen by the instructor with PICK=", True
    ranks = [upload.newness.get(item.path) for item in gradable]
    if None not in ranks and len(set(ranks)) == len(ranks):
        return max(gradable, key=lambda item: upload.newness[item.path]), \
            upload.order_source or "the LMS's order", True
    stamps = {item.path: _export_stamp(tree, item) for item in gradable}
    if None not in stamps.values() and len(set(stamps.values())) == len(stamps):
        newest = max(gradable, key=lambda item: stamps[item.path])
        return newest, (f"the newest export: {newest.name} was written by grader.export() at "
                        f"{stamps[newest.path]:%Y-%m-%d %H:%M:%S}"), True
    last = max(gradable, key=lambda item: (item.order, item.path))
    return last, ("undecided: the download gives no trustworthy order of these files (their "
                  "dates are the download's); took the last listed; choose another with "
                  "PICK=<file>"), False


def _spanish_reason(because):
    if because.startswith("Moodle"):
        return "Moodle pone los archivos de cada estudiante del más antiguo al más reciente"
    if because.startswith("Canvas"):
        return "Canvas numera los archivos en el orden en que se subieron"
    if because.startswith("the newest export"):
        return "por la fecha que lleva el nombre de cada exportación"
    if because.startswith("chosen by the instructor"):
        return "elegido con PICK="
    return "por el orden en que la plataforma da los archivos"


def _export_stamp(tree, item):
    """When an export zip was written: by its own name, or by the name it carries inside."""
    if item.suffix != ".zip":
        return None
    stamp = export_time(item.name)
    if stamp is not None:
        return stamp
    from .tree import MAX_GRADED_BYTES  # a bounded read, as every read of the download

    try:
        data = tree.read(item, MAX_GRADED_BYTES[".zip"])
    except (OSError, zipfile.BadZipFile, EOFError, RuntimeError, ValueError,
            NotImplementedError):
        return None
    return export_time(zip_own_name(data) or "")


def _unique_hint(upload, chosen, hints):
    who = "_".join(part for part in (upload.group or upload.student_name,
                                     upload.student_id or upload.group_id) if part)
    base = slug(who) if who else slug(PurePosixPath(chosen.name).stem)
    hint, number = base + chosen.suffix, 1
    while hint.casefold() in hints:
        number += 1
        hint = f"{base}_{number}{chosen.suffix}"
    hints.add(hint.casefold())
    return hint


def _names(items, labels=None):
    return ", ".join(f"«{(labels or {}).get(item.path, item.name)}»" for item in items)


def _others_note(chosen, others, labels, because):
    name = labels.get(chosen.path, chosen.name)
    if any(item.gradable for item in others):
        return (f"entregaste varios archivos; se ha evaluado «{name}», {_why_for_student(because)}"
                f". No se han evaluado: {_names(others, labels)}")
    return (f"se ha evaluado «{name}»; no se han evaluado tus otros archivos: "
            + _names(others, labels))


def _why_for_student(because):
    """What decided among a student's files, as the student reads it: the LMS's order, the
    date in an export's name, the instructor's choice, or nothing (the last listed)."""
    if because.startswith("chosen by the instructor"):
        return "el que ha elegido tu profesor o profesora"
    if because.startswith("undecided"):
        return ("el último de la lista, porque la descarga no dice cuál es el más reciente; si "
                "no es el que querías entregar, díselo a tu profesor o profesora")
    return f"el más reciente ({_spanish_reason(because)})"


def _nothing_gradable(upload):
    if upload.files:
        return ("ninguno de sus archivos es un cuaderno .ipynb ni una exportación .zip: "
                + _names(upload.files, upload.labels))
    if upload.notes:
        return "solo entregó texto en línea o un enlace, que no se evalúan en esta tarea"
    return "no entregó ningún archivo"
