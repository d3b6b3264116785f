"""A mistake in a lesson's master that its author fixes there, said as one line with the place:
``assignments/<lesson>/master.py:LINE: what is wrong; what to do``.

The build works on the master as a notebook, whose cells have no line numbers; the error
carries what the master's text holds at the place (a question's ``name:``, a stub's first
line, a demo's code), and the build, which knows the master's file, finds the line.
"""

from pathlib import Path


class MasterError(ValueError):
    """``message`` says what is wrong and what to do; ``text``: what to find its line by."""

    def __init__(self, message: str, text: str = ""):
        super().__init__(message)
        self.message, self.text, self.where = message, text, None

    def locate(self, master: Path, shown: str):
        """Say the place from now on: ``shown`` (the master as the author types its path),
        with the line where ``text`` is, when the master has it."""
        line = line_of(Path(master).read_text("utf-8"), self.text) if self.text else None
        self.where = f"{shown}:{line}" if line else shown
        return self

    def __str__(self):
        return f"{self.where}: {self.message}" if self.where else self.message


def line_of(master_text: str, text: str):
    """The number (from 1) of the master's line where ``text`` starts, or None. A cell's code
    is in the text master as it is (jupytext's percent format); a raw cell's lines are behind
    ``# ``, so a line is also found inside one."""
    def plain(line):
        return line.strip().removeprefix("# ").strip()

    wanted = [plain(line) for line in text.splitlines() if plain(line)]
    lines = [plain(line) for line in master_text.splitlines()]
    if not wanted:
        return None
    for number, line in enumerate(lines):
        if line == wanted[0] and [kept for kept in lines[number:] if kept][:len(wanted)] == wanted:
            return number + 1
    # Else the first line that holds its first line: the text may be part of a longer one.
    return next((number + 1 for number, line in enumerate(lines) if wanted[0] in line), None)
