"""Numbers as a Spanish reader writes them, for every page and file a person reads: the
feedback, the written answers' section, the class report, the LMS's import files. One place,
below all of them, so that a score reads the same wherever it is shown."""


def number(value):
    """A score: 5, 1,67."""
    text = f"{round(float(value), 2):.2f}".rstrip("0").rstrip(".")
    return text.replace(".", ",")


def thousands(value):
    """A count: 12.345."""
    return f"{int(value):,}".replace(",", ".")
