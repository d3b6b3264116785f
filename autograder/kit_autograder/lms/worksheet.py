"""A CSV read and written back in its own dialect: an LMS's worksheet, or the written scores
a spreadsheet saved.

Moodle lets the teacher export and import its grading worksheet in several encodings and with
a comma, semicolon, colon or tab; Canvas exports its gradebook with the user's locale. The LMS
reads back what it wrote, so the kit changes only the cells it fills: the encoding (and a
UTF-8 byte-order mark), the separator, the quoting style, the line endings, the decimal
separator and every other column stay as they were. A spreadsheet that saves the kit's own
``written_scores.csv`` in its locale (a semicolon and decimal commas in Spanish) is read the same
way, and kept so.
"""

import codecs
import csv
import io
import re
import unicodedata
from pathlib import Path

SEPARATORS = ",;\t:"
ENCODINGS = ("utf-8", "cp1252")


class WorksheetError(Exception):
    """The file is not the worksheet the instructor meant (missing column, not a CSV)."""


def _plain(text):
    """A header as matched: case, accents and surrounding spaces do not matter."""
    text = unicodedata.normalize("NFKD", str(text).strip().casefold())
    return "".join(c for c in text if not unicodedata.combining(c))


class Worksheet:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._read()

    @classmethod
    def new(cls, path: Path, header, rows=(), delimiter=","):
        """A sheet the kit starts: UTF-8 with a byte-order mark, which spreadsheets need to
        read its accents right."""
        sheet = cls.__new__(cls)
        sheet.path, sheet.header, sheet.rows = Path(path), list(header), [list(r) for r in rows]
        sheet.bom, sheet.encoding, sheet.newline = True, "utf-8", "\r\n"
        sheet.delimiter, sheet.quote_all = delimiter, False
        return sheet

    def _read(self):
        path = self.path
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise WorksheetError(f"cannot read {path}: {exc}") from None
        self.bom = raw.startswith(codecs.BOM_UTF8)
        if self.bom:
            raw = raw[len(codecs.BOM_UTF8):]
        for encoding in ENCODINGS:
            try:
                text = raw.decode(encoding)
                break
            except UnicodeDecodeError:
                continue
        else:
            text, encoding = raw.decode("latin-1"), "latin-1"
        self.encoding = encoding
        if not text.strip():
            raise WorksheetError(f"{path} is empty")
        self.newline = "\r\n" if "\r\n" in text else "\n"
        first = text.splitlines()[0]
        if len(first) > csv.field_size_limit():
            raise WorksheetError(_too_long(path, 1))
        try:
            self.delimiter = csv.Sniffer().sniff(first, delimiters=SEPARATORS).delimiter
        except csv.Error:
            self.delimiter = ","
        self.quote_all = all(field.startswith('"')
                             for field in _raw_fields(first, self.delimiter))
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter)
        try:
            rows = list(reader)
        except csv.Error as exc:
            # Python's csv refuses a cell over 128 KB (and a NUL byte): no LMS writes one.
            raise WorksheetError(_too_long(path, reader.line_num) if "field larger" in
                                 str(exc) else f"{path.name}, line {reader.line_num}: "
                                 f"{exc}; export the file again from the LMS") from None
        self.header, self.rows = rows[0], rows[1:]

    def column(self, names, required=False):
        """The index of the first column whose header is one of ``names``."""
        wanted = [_plain(name) for name in names]
        for index, title in enumerate(self.header):
            if _plain(title) in wanted:
                return index
        if required:
            shown = ", ".join(f"«{title}»" for title in self.header)
            raise WorksheetError(f"{self.path.name} has no column «{names[0]}» (or "
                                 f"«{names[-1]}»); its columns are: {shown}")
        return None

    @staticmethod
    def cell(row, index):
        return row[index] if index is not None and index < len(row) else ""

    @staticmethod
    def set(row, index, value):
        while len(row) <= index:
            row.append("")
        row[index] = value

    def decimal_separator(self, index):
        """"," when the column's numbers are written with a decimal comma, else "."."""
        for row in self.rows:
            value = self.cell(row, index).strip()
            if re.fullmatch(r"-?\d+,\d+", value):
                return ","
            if re.fullmatch(r"-?\d+\.\d+", value):
                return "."
        return "."

    @staticmethod
    def number(text):
        """``text`` as a number, with either decimal separator; None when it is none."""
        value = str(text or "").strip().replace("\u00a0", "").replace(" ", "")
        if "," in value and "." in value:  # 1.234,5 or 1,234.5: the last one is the decimal
            thousands = "." if value.rfind(",") > value.rfind(".") else ","
            value = value.replace(thousands, "")
        value = value.replace(",", ".")
        try:
            return float(value)
        except ValueError:
            return None

    def write(self, path: Path = None):
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, delimiter=self.delimiter, lineterminator=self.newline,
                            quoting=csv.QUOTE_ALL if self.quote_all else csv.QUOTE_MINIMAL)
        writer.writerow(self.header)
        writer.writerows(self.rows)
        data = buffer.getvalue().encode(self.encoding, errors="replace")
        target = Path(path or self.path)
        # Written beside and renamed: a reader (the spreadsheet, make report) never sees half.
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes((codecs.BOM_UTF8 if self.bom else b"") + data)
        partial.replace(target)


def _too_long(path, line):
    return (f"{Path(path).name}, line {line}: a cell of more than "
            f"{csv.field_size_limit() // 1024} KB, which no LMS export holds; export the file "
            "again from the LMS")


def number_text(value, separator="."):
    """A grade as an LMS reads it: two decimals, with the worksheet's decimal separator."""
    return f"{round(float(value), 2):.2f}".replace(".", separator)


def _raw_fields(line, delimiter):
    """The header line's fields as written, quotes included (to keep the quoting style)."""
    fields, current, quoted = [], "", False
    for char in line:
        if char == '"':
            quoted = not quoted
        if char == delimiter and not quoted:
            fields.append(current)
            current = ""
        else:
            current += char
    fields.append(current)
    return [field.strip() for field in fields]
