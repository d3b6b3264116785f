"""What an LMS download holds, as one list of files, whether it is a folder or its zip.

The layouts (moodle.py, canvas.py, gradescope.py) read names, sizes and dates only; the few
files chosen for grading are then brought to disk by ``materialize``, one bounded read each.
A zip is never extracted whole: an LMS download can hold every upload of a class (PDFs,
videos), and a member's header can lie about its size.
"""

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Optional

from ..sandbox.inside.wire import valid_text
from ..submission import MAX_EXTRA_BYTES, MAX_NOTEBOOK_BYTES, SUFFIXES, _too_big

# A class of 500 with a few files each is some thousands of members; far more is not a download.
MAX_MEMBERS = 100_000
# What one graded file may weigh on disk: a notebook, or an export zip with its other files.
MAX_GRADED_BYTES = {".ipynb": MAX_NOTEBOOK_BYTES,
                    ".zip": MAX_NOTEBOOK_BYTES + MAX_EXTRA_BYTES + 2**20}
# Metadata the layouts read themselves (Gradescope's submission_metadata.yml).
MAX_METADATA_BYTES = 8 * 2**20


NO_SUCH = ("{source}: no such folder or zip; give the folder of notebooks and export zips, or the "
           "LMS's download")


class IngestError(Exception):
    """The download cannot be read at all (not a folder, a damaged zip, too many members)."""


@dataclass
class Item:
    """One file of the download."""

    path: str  # posix, relative to the download's root, as every output shows it
    size: int
    mtime: float  # seconds since the epoch; the zip's stored date for a member
    local: Optional[Path] = None  # the file itself, when the download is a folder
    member: Optional[zipfile.ZipInfo] = field(default=None, repr=False)
    order: int = 0  # its place in the download: a zip's member order, which an LMS writes
    link: bool = False  # a symbolic link in a folder: listed, never followed

    @property
    def parts(self):
        return PurePosixPath(self.path).parts

    @property
    def name(self):
        return PurePosixPath(self.path).name

    @property
    def suffix(self):
        return PurePosixPath(self.path).suffix.lower()

    @property
    def gradable(self):
        return self.suffix in SUFFIXES and not self.name.startswith(".")


LINK_REASON = ("«{name}» es un enlace simbólico, no un archivo: el corrector no sigue enlaces. "
               "Entrega el cuaderno o su exportación, no un enlace")


class Tree:
    """The files of a folder or a zip, hidden files and OS debris left out."""

    def __init__(self, root_name, items, archive=None):
        self.root_name, self.items, self._archive = root_name, items, archive

    @classmethod
    def of(cls, source: Path) -> "Tree":
        source = Path(source)
        if source.is_dir():
            return cls(source.name, _folder_items(source))
        if source.is_file() and zipfile.is_zipfile(source):
            try:
                archive = zipfile.ZipFile(source)
            except (zipfile.BadZipFile, OSError) as exc:
                raise IngestError(f"cannot open the zip {source}: {exc}") from None
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                archive.close()
                raise IngestError(f"{source} has {len(infos)} members, more than any LMS "
                                  f"download ({MAX_MEMBERS})")
            return cls(source.stem, _zip_items(infos), archive)
        raise IngestError(NO_SUCH.format(source=source))

    def close(self):
        if self._archive is not None:
            self._archive.close()
            self._archive = None

    def without_wrapper(self) -> "Tree":
        """The same tree below its one top folder, when everything sits in one (a zip of a
        folder, Gradescope's ``assignment_<id>_export/``)."""
        tops = {item.parts[0] for item in self.items}
        if len(tops) == 1 and all(len(item.parts) > 1 for item in self.items):
            top = tops.pop()
            items = [_moved(item, str(PurePosixPath(*item.parts[1:]))) for item in self.items]
            return Tree(top, items, self._archive)
        return self

    def read(self, item: Item, limit: int) -> bytes:
        """At most ``limit`` + 1 bytes of ``item``: the caller tells a file over its limit."""
        if item.local is not None:
            if item.link:
                raise OSError(f"{item.path} is a symbolic link")
            # O_NOFOLLOW: a file swapped for a link after the listing is refused too.
            descriptor = os.open(item.local, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(descriptor, "rb") as f:
                return f.read(limit + 1)
        with self._archive.open(item.member) as member:
            return member.read(limit + 1)

    def materialize(self, item: Item, workdir: Path, number: int):
        """``(path on disk, None)`` for a file to grade, or ``(None, Spanish reason)`` when it
        is over what a submission may weigh or is a link. A folder's files are graded where
        they are."""
        if item.link:
            return None, LINK_REASON.format(name=item.name)
        limit = MAX_GRADED_BYTES.get(item.suffix, MAX_NOTEBOOK_BYTES)
        if item.size > limit:
            return None, _too_big(item.name, item.size)
        try:
            data = self.read(item, limit)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError,
                ValueError):
            if item.local is not None:
                return None, f"no se puede leer «{item.name}»: vuelve a entregarlo"
            return None, (f"«{item.name}» está dañado dentro del .zip de descarga y no se "
                          "puede leer: vuelve a entregarlo")
        if len(data) > limit:
            return None, _too_big(item.name, len(data))
        # A copy, even of a folder's file: what is graded is what was read, never a path a
        # student may swap. One folder per file, named by a number: nothing the student chose
        # becomes a path.
        folder = workdir / str(number)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / _safe_file_name(item.name, item.suffix)
        target.write_bytes(data)
        return target, None


def _folder_items(root: Path):
    """Every file under ``root``. A symbolic link, to a file or a folder, is an item of its own
    marked ``link`` and never followed: where students can write into the folder, a link
    could make the grader read a file they cannot (the solution, another student's)."""
    items = []
    for folder, dirs, files in os.walk(root):  # os.walk does not descend into linked folders
        kept = []
        for name in sorted(dirs):
            if debris(name):
                continue
            if os.path.islink(os.path.join(folder, name)):
                files.append(name)  # listed as a link below
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if debris(name):
                continue
            path = Path(folder) / name
            try:
                stat = path.lstat()
            except OSError:
                continue
            link = path.is_symlink()
            if not link and not path.is_file():
                continue
            relative = path.relative_to(root).as_posix()
            items.append(Item(valid_text(relative), 0 if link else stat.st_size, stat.st_mtime,
                              local=path, order=len(items), link=link))
        if len(items) > MAX_MEMBERS:
            raise IngestError(f"{root} holds more than {MAX_MEMBERS} files: is it a download?")
    return items


def _zip_items(infos):
    import datetime

    items = []
    for order, info in enumerate(infos):
        if info.is_dir():
            continue
        name = _member_name(info)
        parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".")]
        # Absolute, parent-relative or drive-letter names are not where an LMS puts files.
        if not parts or parts[0] == "/" or ".." in parts or ":" in parts[0]:
            continue
        if any(debris(part) for part in parts):
            continue
        try:
            mtime = datetime.datetime(*info.date_time).timestamp()
        except (ValueError, OverflowError):
            mtime = 0.0
        items.append(Item(valid_text("/".join(parts)), info.file_size, mtime, member=info,
                          order=order))
    return items


def _member_name(info):
    """The member's name as the LMS meant it. Without the zip's UTF-8 flag Python decodes
    names as cp437, which turns a UTF-8 «María» into «MarÃ\xada»-like noise; such names are
    UTF-8 more often than cp437 in LMS downloads, so that reading is tried first."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def debris(name):
    """Files no student handed in: hidden files, macOS and Windows leftovers."""
    return (name.startswith(".") or name == "__MACOSX" or name.startswith("~$")
            or name in ("Thumbs.db", "desktop.ini"))


def _moved(item, path):
    return Item(path, item.size, item.mtime, local=item.local, member=item.member,
                order=item.order, link=item.link)


def _safe_file_name(name, suffix):
    cleaned = "".join(c for c in valid_text(name) if c not in '/\\\0' and c.isprintable())
    cleaned = cleaned.strip().lstrip(".")
    stem = cleaned[:-len(suffix)] if cleaned.lower().endswith(suffix) else cleaned
    return (stem[:100] or "entrega") + suffix
