"""What an LMS gives the instructor, as the list of files ``make grade`` grades.

    with ingest(Path("entregas.zip")) as ingested:
        for entry in ingested.entries: ...   # entry.path, entry.file, entry.student_name...

``ingest`` takes a folder or a zip and recognises, in this order, Gradescope's «Export
Submissions» (gradescope.py), Moodle's «Descargar todas las entregas» in folders or flat
(moodle.py) and Canvas's «Download Submissions» (canvas.py). Anything else is a plain folder of
notebooks and ``grader.export()`` zips, graded exactly as before (every such file directly in
the folder), or a single export zip. Each student is graded on their newest notebook or export;
their other files and any online text are listed in their feedback (entries.py).
"""

import tempfile
from pathlib import Path

from ..submission import find_submissions, shown_name
from . import canvas, gradescope, moodle
from .entries import Entry, Ingested, build_entries, read_manifest  # noqa: F401 (the API)
from . import tree as tree_module
from .tree import IngestError, Tree

LAYOUTS = (("gradescope", gradescope), ("moodle", moodle), ("canvas", canvas))


def ingest(source) -> Ingested:
    source = Path(source)
    if not source.exists():
        raise IngestError(f"no such submissions folder or zip: {source}")
    if source.is_dir() and not _named_like_a_download(source):
        return _plain_folder(source)  # read as before, without walking its subfolders
    tree = Tree.of(source)
    try:
        # A download inside one folder (a zip of it, Gradescope's assignment_<id>_export/) is
        # read below that folder, unless the folder is itself the layout's (one student).
        unwrapped = tree.without_wrapper()
        for candidate in (tree, unwrapped) if unwrapped is not tree else (tree,):
            for name, layout in LAYOUTS:
                try:
                    found = layout.uploads(candidate)
                except ValueError as exc:
                    raise IngestError(f"{source}: {exc}") from None
                if found is None:
                    continue
                uploads, notes = found
                workdir = Path(tempfile.mkdtemp(prefix="kit-lms-"))
                entries, absent = build_entries(candidate, uploads, workdir)
                return Ingested(name, source, entries, absent, notes, workdir, tree)
        if source.is_dir():
            tree.close()
            return _plain_folder(source)
        return _plain_zip(source, unwrapped, tree)
    except BaseException:
        tree.close()
        raise


def _named_like_a_download(folder, depth=0):
    """Whether a folder's own entries carry an LMS's names (or sit in one folder that does)."""
    try:
        children = [c for c in folder.iterdir() if not tree_module.debris(c.name)]
    except OSError as exc:
        raise IngestError(f"cannot read {folder}: {exc}") from None
    names = [child.name for child in children]
    if any(layout.named_like(names) for _, layout in LAYOUTS):
        return True
    return (depth == 0 and len(children) == 1 and children[0].is_dir()
            and _named_like_a_download(children[0], 1))


def _plain_folder(folder):
    """Today's folder: every .ipynb and .zip directly in it, one submission each."""
    entries = [Entry(file=shown_name(path.name), name_hint=path.name, path=path)
               for path in find_submissions(folder)]
    return Ingested("folder", folder, entries)


def _plain_zip(source, inner, tree):
    """A zip that no LMS wrote: one export (a single notebook at its top), or a zipped folder
    of submissions."""
    top = [item for item in inner.items if len(item.parts) == 1 and item.gradable]
    notebooks = [item for item in top if item.suffix == ".ipynb"]
    if not top or (len(top) == 1 and notebooks):
        tree.close()
        return Ingested("export", source, [Entry(file=shown_name(source.name),
                                                 name_hint=source.name, path=source)])
    workdir = Path(tempfile.mkdtemp(prefix="kit-lms-"))
    entries = []
    for number, item in enumerate(sorted(top, key=lambda item: item.path)):
        path, refusal = inner.materialize(item, workdir, number)
        entries.append(Entry(file=item.path, name_hint=item.name, path=path, refusal=refusal))
    return Ingested("folder", source, entries, workdir=workdir, tree=tree)
