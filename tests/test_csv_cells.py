"""The spreadsheet-safe cells every CSV of the kit writes (csv_cells.py)."""

import pytest
from hypothesis import given, strategies as st

from kit_autograder.csv_cells import original, safe

FORMULA = "=HYPERLINK(CONCATENATE(CHAR(104),CHAR(116)),CHAR(88))"


@pytest.mark.parametrize("text", [FORMULA, "+1", "-2+3", "@SUM(A1)", "\tcmd", "\r=1"])
def test_a_cell_a_spreadsheet_would_run_starts_with_a_quote(text):
    assert text[0] in "=+-@\t\r"  # the control: each would be read as a formula
    assert safe(text) == "'" + text


@pytest.mark.parametrize("text", ["María García", "notebook.ipynb", "1,5", "", "a=b"])
def test_ordinary_text_is_written_as_it_is(text):
    assert safe(text) == text


def test_numbers_the_kit_writes_are_not_text():
    assert safe(-1.5) == -1.5 and safe(0) == 0 and safe(None) is None


@given(st.text())
def test_every_text_reads_back_as_itself(text):
    assert original(safe(text)) == text
    assert not str(safe(text)).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_a_spreadsheet_that_dropped_the_quote_gives_the_original_back():
    assert original(FORMULA) == FORMULA
