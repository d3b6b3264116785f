"""Text cells of the CSV files the kit writes, made safe to open in a spreadsheet, and read back.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula, and a tab or
a carriage return at the start can smuggle one past its import dialog (OWASP's «CSV Injection»).
Student names and file names reach the kit's CSVs (``final_grades.csv``, ``written_scores.csv``,
``ingest.csv``) and may be made of exactly those characters, so every text cell the kit writes
goes through ``safe``: such a cell gets a leading ``'``, which spreadsheets show as text. The
escape is reversible: a cell that already starts with ``'`` gets one more, and ``original``
removes exactly one, so a key the kit writes is the key it reads back, whatever its text.

Numbers the kit writes itself (points, percentages, negative or not) are not text cells: only
strings pass through here.
"""

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def safe(value):
    """``value`` as a CSV cell a spreadsheet shows as text; anything but a string as it is."""
    if isinstance(value, str) and value.startswith(TRIGGERS + (QUOTE,)):
        return QUOTE + value
    return value


def original(value):
    """The text ``safe`` was given: a cell the kit wrote (or a spreadsheet saved back with its
    quote prefix dropped, which is the original already) read as the kit's key."""
    if isinstance(value, str) and value.startswith(QUOTE) and value[1:2] \
            and value[1:].startswith(TRIGGERS + (QUOTE,)):
        return value[1:]
    return value
