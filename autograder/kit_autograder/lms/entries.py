"""From what each student handed in to the one file the batch grades, and the manifest of it.

A layout (moodle.py, canvas.py, gradescope.py) says who handed in which files (``Upload``);
this module picks the file to grade, the newest notebook or export, and words in Spanish what
was left aside, so that the student's feedback says it. ``OUT/submissions.json`` keeps who is
who for every row of ``final_grades.csv``: the review page, ``make report`` and ``make export``
read it, never the download again.
"""

import json
import re
import shutil
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from ..sandbox.inside.wire import valid_text

MANIFEST = "submissions.json"
FORMAT = 1


@dataclass
class Upload:
    """What one student handed in, as the LMS laid it out."""

    student_name: Optional[str]
    student_id: Optional[str]
    origin: str  # the folder, or the file-name prefix, that names this student in the download
    files: list  # tree.Item, gradable or not
    late: bool = False
    notes: list = field(default_factory=list)  # Spanish: what the LMS gave that is not a file
    newness: dict = field(default_factory=dict)  # item path -> rank, higher is newer
    labels: dict = field(default_factory=dict)  # item path -> the name the student gave it


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


@dataclass
class Absent:
    """Someone the download names who handed in nothing the kit can grade."""

    student_name: Optional[str]
    student_id: Optional[str]
    origin: str
    reason: str  # Spanish


class Ingested:
    """The entries of one download; ``with`` removes the files extracted for grading."""

    def __init__(self, layout, source, entries, absent=(), notes=(), workdir=None, tree=None):
        self.layout, self.source = layout, source
        self.entries, self.absent = list(entries), list(absent)
        self.notes = list(notes)  # for the instructor, English
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
                "entries": entries, "absent": [asdict(a) for a in self.absent]}

    def write_manifest(self, out: Path, stems):
        text = json.dumps(self.manifest(stems), ensure_ascii=False, indent=1)
        (Path(out) / MANIFEST).write_text(text, "utf-8", errors="replace")


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


def build_entries(tree, uploads, workdir: Path):
    """``(entries, absent)`` for ``uploads``: each student's newest gradable file, on disk."""
    entries, absent, hints = [], [], set()
    for upload in uploads:
        gradable = [item for item in upload.files if item.gradable]
        if not gradable:
            absent.append(Absent(upload.student_name, upload.student_id, upload.origin,
                                 _nothing_gradable(upload)))
            continue
        chosen = max(gradable, key=lambda item: (upload.newness.get(item.path, 0), item.mtime,
                                                 item.path))
        others = [item for item in upload.files if item is not chosen]
        path, refusal = tree.materialize(chosen, workdir, len(entries))
        entry = Entry(file=chosen.path, name_hint=_unique_hint(upload, chosen, hints),
                      path=path, refusal=refusal, student_name=upload.student_name,
                      student_id=upload.student_id, late=upload.late, origin=upload.origin,
                      not_graded=[item.path for item in others])
        if others:
            entry.notes.append(_others_note(chosen, others, upload.labels))
        entry.notes += upload.notes
        entries.append(entry)
    return entries, absent


def _unique_hint(upload, chosen, hints):
    who = "_".join(part for part in (upload.student_name, upload.student_id) if part)
    base = slug(who) if who else slug(Path(chosen.name).stem)
    hint, number = base + chosen.suffix, 1
    while hint.casefold() in hints:
        number += 1
        hint = f"{base}_{number}{chosen.suffix}"
    hints.add(hint.casefold())
    return hint


def _names(items, labels=None):
    return ", ".join(f"«{(labels or {}).get(item.path, item.name)}»" for item in items)


def _others_note(chosen, others, labels):
    name = labels.get(chosen.path, chosen.name)
    if any(item.gradable for item in others):
        return (f"entregaste varios archivos; se ha evaluado el cuaderno o la exportación más "
                f"reciente, «{name}». No se han evaluado: {_names(others, labels)}")
    return (f"se ha evaluado «{name}»; no se han evaluado tus otros archivos: "
            + _names(others, labels))


def _nothing_gradable(upload):
    if upload.files:
        return ("ninguno de sus archivos es un cuaderno .ipynb ni una exportación .zip: "
                + _names(upload.files, upload.labels))
    if upload.notes:
        return "solo entregó texto en línea o un enlace, que no se evalúan en esta tarea"
    return "no entregó ningún archivo"
