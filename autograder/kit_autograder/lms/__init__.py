"""What an LMS gives the instructor, as the list of files ``make grade`` grades.

    with ingest(Path("entregas.zip"), roster=None, picks=()) as ingested:
        for entry in ingested.entries: ...   # entry.path, entry.file, entry.student_name...
        ingested.files      # one row per file of the download: graded or not, and why
        ingested.notices    # what the instructor must see: choices, doubts, files left out

``ingest`` takes a folder or a zip and recognises Gradescope's «Export Submissions»
(gradescope.py), Moodle's «Descargar todas las entregas» in folders or flat (moodle.py) and
Canvas's «Download Submissions» (canvas.py), each only when **every** entry of the download is
named that LMS's way: one file named like a Moodle upload does not make a folder of notebooks
a Moodle download. Anything else is a plain folder (or zip) of notebooks and ``grader.export()``
zips: one row per such file directly in it, every other file accounted for in ``ingest.csv``.
"""

import os
import tempfile
from pathlib import Path

from . import canvas, gradescope, moodle
from .entries import (  # noqa: F401 (the API)
    IGNORED, NOT_A_SUBMISSION, UNREADABLE, Entry, FileRow, Found, Ingested, Notice, build_entries,
    export_stem, export_time, read_manifest)
from .roster import (  # noqa: F401 (the API)
    Roster, RosterError, read as read_roster, summary as roster_summary)
from ..sandbox.inside.wire import valid_text
from .tree import NO_SUCH, IngestError, Item, Tree, debris

LAYOUTS = (("gradescope", gradescope), ("moodle", moodle), ("canvas", canvas))


def ingest(source, roster: Roster = None, picks=()) -> Ingested:
    ingested = _ingest(Path(source), roster, picks)
    try:
        ingested.notices += _picks_checked(ingested, picks)
    except BaseException:
        ingested.close()
        raise
    return ingested


def _picks_checked(ingested, picks):
    """``PICK=`` names files as ingest.csv does: one that is not a file of the download stops
    the batch (a typo would otherwise grade what the instructor meant to replace), and one
    that had nothing to choose between is a notice."""
    rows = {row.file: row for row in ingested.files}
    unknown = [pick for pick in picks if pick not in rows]
    if unknown:
        undecided = [e.file for e in ingested.entries if e.chosen_because.startswith("undecided")]
        raise IngestError(
            f"PICK=\"{unknown[0]}\": no such file in {ingested.source.name}; name the file as "
            "the «file» column of ingest.csv does, its path inside the download"
            + (f" (the undecided ones: {', '.join(undecided[:3])})" if undecided else ""))
    chosen = {e.file for e in ingested.entries
              if e.chosen_because.startswith("chosen by the instructor")}
    return [Notice("pick", f"PICK=\"{pick}\" chose nothing: {rows[pick].action} "
                           f"({rows[pick].reason})",
                   f"PICK=\"{pick}\" no ha elegido nada: ese archivo no era uno de los varios "
                   "de un mismo estudiante")
            for pick in picks if pick not in chosen]


def _ingest(source, roster, picks) -> Ingested:
    if source.is_symlink():
        raise IngestError(f"{source} is a symbolic link: pass the folder or zip itself")
    if not source.exists():
        raise IngestError(NO_SUCH.format(source=source))
    notices = []
    if source.is_dir():
        names = _top_names(source)
        layout = _fitting_layout(names, notices, source.name)
        inner = _only_folder(source, names)
        if layout is None and inner is not None:
            layout = _fitting_layout(_top_names(inner), notices, f"{source.name}/{inner.name}")
        if layout is None:
            return _plain_folder(source, notices)
    tree = Tree.of(source)
    try:
        unwrapped = tree.without_wrapper()
        misfit = []
        for candidate in (tree, unwrapped) if unwrapped is not tree else (tree,):
            misfit = []
            tops = sorted({item.parts[0] for item in candidate.items})
            layout = _fitting_layout(tops, misfit, source.name)
            if layout is None:
                continue
            name, module = layout
            try:
                found = module.uploads(candidate, roster)
            except ValueError as exc:
                raise IngestError(f"{source}: {exc}") from None
            if found is None:
                continue
            workdir = Path(tempfile.mkdtemp(prefix="kit-lms-"))
            entries, absent, rows, more = build_entries(candidate, found.uploads, workdir, picks)
            rows += [FileRow(path, IGNORED, reason) for path, reason in found.ignored]
            more += _without_a_row(roster, entries, absent)
            return Ingested(name, source, entries, absent, found.notes, workdir, tree,
                            files=rows, notices=found.notices + more + notices)
        notices += misfit
        if source.is_dir():
            tree.close()
            return _plain_folder(source, notices)
        return _plain_zip(source, unwrapped, tree, notices)
    except BaseException:
        tree.close()
        raise


def _without_a_row(roster, entries, absent):
    """Everyone the roster lists whom no row of final_grades.csv (theirs or their team's)
    and no «not graded» line covers: they handed in nothing, as far as this download says."""
    if roster is None:
        return []
    covered = {e.student_id for e in entries} | {a.student_id for a in absent}
    covered |= {member[1] for e in entries for member in e.members}
    missing = [p for number, p in roster.people.items() if number not in covered]
    if not missing:
        return []
    shown = ", ".join(f"{p.name or '?'} ({p.student_id})" for p in missing)
    one = len(missing) == 1
    return [Notice("absent",
                   f"{len(missing)} of the {len(roster.people)} people of {roster.path.name} "
                   f"{'has' if one else 'have'} nothing in the download: {shown}",
                   f"{len(missing)} de las {len(roster.people)} personas de {roster.path.name} no "
                   f"{'tiene' if one else 'tienen'} nada en la descarga: {shown}")]


def _top_names(folder):
    try:
        return sorted(entry.name for entry in os.scandir(folder) if not debris(entry.name))
    except OSError as exc:
        raise IngestError(f"cannot read {folder}: {exc}") from None


def _only_folder(folder, names):
    """The one folder a download was unzipped into (``assignment_9_export/``), if that is all."""
    if len(names) == 1:
        inner = Path(folder) / names[0]
        if inner.is_dir() and not inner.is_symlink():
            return inner
    return None


def _fitting_layout(names, notices, where):
    """The layout every one of ``names`` fits, or None; a layout that some names fit and
    others do not becomes a notice: those files are graded as a plain folder's, and the
    instructor is told which names broke the layout."""
    for name, module in LAYOUTS:
        fitting = [n for n in names if module.fits(n, names)]
        if fitting and len(fitting) == len(names):
            return name, module
        if fitting and module.partial_matters(fitting, names):
            misfits = [n for n in names if n not in fitting]
            shown = ", ".join(misfits[:5]) + (" …" if len(misfits) > 5 else "")
            notices.append(Notice(
                "layout",
                f"{where}: {len(fitting)} of {len(names)} entries are named like a {name} "
                f"download but {len(misfits)} are not ({shown}); graded as a plain folder, "
                "one row per notebook or export directly in it",
                f"{where}: {len(fitting)} de {len(names)} entradas tienen nombres de una "
                f"descarga de {name} y {len(misfits)} no ({shown}); se ha evaluado como una "
                "carpeta normal, una fila por cuaderno o exportación"))
    return None


def _plain_folder(folder, notices):
    """A folder of submissions: each notebook and export zip directly in it is one row, copied
    before grading with ``O_NOFOLLOW`` (a symbolic link is refused, never followed); a
    subfolder is not read, and says so."""
    items, rows = [], []
    for number, raw in enumerate(_top_names(folder)):
        path, name = Path(folder) / raw, valid_text(raw)  # a name that is not UTF-8 shows U+FFFD
        try:
            stat = path.lstat()
        except OSError:
            continue
        link = path.is_symlink()
        if not link and path.is_dir():
            rows.append(FileRow(name + "/", IGNORED, "a subfolder: a plain folder is graded one "
                                "notebook or export directly in it; its subfolders are not read"))
            continue
        item = Item(name, 0 if link else stat.st_size, stat.st_mtime, local=path, order=number,
                    link=link)
        if link and path.is_dir():
            rows.append(FileRow(name + "/", UNREADABLE, "a symbolic link: never followed"))
        elif item.gradable or (link and item.suffix in (".ipynb", ".zip")):
            items.append(item)
        else:
            rows.append(FileRow(name, NOT_A_SUBMISSION, "not a notebook or an export zip"))
    tree = Tree(folder.name, items)
    return _plain(folder, tree, items, rows, notices)


def _plain_zip(source, inner, tree, notices):
    """A zip that no LMS wrote: one export (a single notebook at its top), or a zipped folder
    of submissions."""
    top = [item for item in inner.items if len(item.parts) == 1 and item.gradable]
    notebooks = [item for item in top if item.suffix == ".ipynb"]
    if not top or (len(top) == 1 and notebooks):
        tree.close()
        from ..submission import shown_name

        return Ingested("export", source, [Entry(file=shown_name(source.name),
                                                 name_hint=source.name, path=source)],
                        files=[FileRow(shown_name(source.name), "graded", "one export zip")],
                        notices=notices)
    rows = [FileRow(item.path, IGNORED if len(item.parts) > 1 else NOT_A_SUBMISSION,
                    "inside a subfolder of the zip: not read" if len(item.parts) > 1
                    else "not a notebook or an export zip")
            for item in inner.items if item not in top]
    return _plain(source, inner, sorted(top, key=lambda item: item.path), rows, notices,
                  close=tree)


def _plain(source, tree, items, rows, notices, close=None):
    workdir = Path(tempfile.mkdtemp(prefix="kit-lms-"))
    entries = []
    for number, item in enumerate(items):
        path, refusal = tree.materialize(item, workdir, number)
        entries.append(Entry(file=item.path, name_hint=item.name, path=path, refusal=refusal))
        rows.append(FileRow(item.path, UNREADABLE if refusal else "graded",
                            ("unreadable: " + refusal) if refusal else "one row per file"))
    notices += _same_notebook_exports(items)
    return Ingested("folder", source, entries, workdir=workdir, tree=close or tree,
                    files=rows, notices=notices)


def _same_notebook_exports(items):
    """Several ``grader.export()`` zips of one notebook in a plain folder: every Run All writes
    one, so they may be one student's, or several students' with the default name. Each is its
    own row; the instructor is told, since only they know whose they are."""
    stems = {}
    for item in items:
        stem = export_stem(item.name)
        if stem is not None:
            stems.setdefault(stem, []).append(item.path)
    notices = []
    for stem, paths in sorted(stems.items()):
        if len(paths) > 1:
            notices.append(Notice(
                "candidates",
                f"{len(paths)} exports of {stem}.ipynb, each graded as its own row: "
                f"{', '.join(paths)}. If some are one student's, keep that student's newest "
                "(the date in its name)",
                f"{len(paths)} exportaciones de {stem}.ipynb, cada una evaluada en su propia "
                f"fila: {', '.join(paths)}. Si varias son de un mismo estudiante, quédate con "
                "la más reciente (la fecha de su nombre)"))
    return notices
