"""Text a student controls, made inert in every page the kit writes: Markdown and HTML.

A file name, a kernel's name, an exception's text, a cell's first line, what the notebook
printed, the texts of ``student_extension``, and any verdict message that quotes one of them:
all of it is the student's, and a renderer that pasted it raw would let ``<img onerror=…>``
run or ``# NOTA FINAL 10/10`` become a heading of the student's report. Every renderer
(feedback.md, the boxes of results.json, the class report's HTML) writes its own markup and
passes everything else through one of these:

* ``text``: a run of text inside a line. Every character Markdown could read as syntax is
  backslash-escaped (CommonMark lets any ASCII punctuation be), so no emphasis, link,
  autolink, raw HTML, entity or code span can open; line breaks become spaces and leading
  blanks go, so no block (heading, list, quote, fence, table, indented code) can start.
* ``code``: one inline code span showing the text as it is, whatever backticks it holds.
* ``block``: a fenced block holding many lines as they are, with a fence none can close.
* ``message``: a sentence the kit wrote, where ```…``` marks code and any other part may
  quote the student: each part goes through ``code`` or ``text``. A stray backtick of the
  student's can only move the code formatting, never let markup through.
* ``html``: text for an HTML page or attribute (the class report).

The Markdown stays safe when a renderer allows raw HTML (Gradescope's ``md`` format may):
tests/test_markup.py renders it with markdown-it-py, HTML enabled, in Chromium.
"""

import html as html_module
import re

# Line breaks and the other controls a renderer might treat as one; inside a line they read
# as a space (text) or as a visible ⏎ (code, where the student may want to see them).
_BREAKS = re.compile(r"\r\n|[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_BLANKS = re.compile(r"[ \t]+")
# What Markdown could read as syntax anywhere in a line: CommonMark's inlines (code, emphasis,
# links, raw HTML, entities), GFM's tables and strikethrough, and the $ of the math some
# renderers add. An underscore between two letters or digits (d_model) can neither open nor
# close emphasis, so it stays as it is, and the report stays readable as plain text.
_ANYWHERE = re.compile(r"([\\`*<>&|~$]|(?<![^\W_])_|_(?![^\W_]))")
# Brackets make a link or a reference definition only where a «]» is followed by «(», «[» or
# «:» (an inline link, a reference, a definition); a shortcut reference «[x]» needs a
# definition, which no inline text can write. So only such a «]» is escaped, and one that ends
# the run, which the kit's own text could follow: «V = [[1, 2], [3, 4]]» stays as it reads.
_CLOSING = re.compile(r"\](?=[(\[:]|$)")
NEWLINE_MARK = " ⏎ "


def _inline(value, at_line_start):
    flat = _BLANKS.sub(" ", _BREAKS.sub(" ", str(value)))
    if at_line_start:
        flat = flat.lstrip()  # four blanks would open an indented code block
    escaped = _CLOSING.sub(r"\\]", _ANYWHERE.sub(r"\\\1", flat))
    if at_line_start:
        # What opens a block only at a line's start: a heading, a list item ("-", "+", "1.",
        # "1)"), a setext underline.
        escaped = re.sub(r"^(\d+)([.)])", r"\1\\\2", escaped)
        escaped = re.sub(r"^([#+\-=])", r"\\\1", escaped)
    return escaped


def text(value) -> str:
    """``value`` as Markdown that renders as exactly its characters, on one line, wherever
    the line puts it (its start included)."""
    return _inline(str(value).strip(), at_line_start=True).rstrip()


def code(value) -> str:
    """``value`` as one inline code span. Code spans show their content literally (no HTML,
    no escapes), so only two things need care: a line break, which would end the line and
    could open a block, and backticks, which need a longer fence."""
    flat = _BREAKS.sub(lambda m: NEWLINE_MARK if m.group() in ("\r\n", "\r", "\n") else " ",
                       str(value))
    if not flat.strip():
        return "` `"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    # A span that starts or ends with a backtick (or a blank) needs a blank at each end,
    # which CommonMark strips again.
    padded = f" {flat} " if flat[0] in "` " or flat[-1] in "` " else flat
    return f"{fence}{padded}{fence}"


def block(value, info="text") -> str:
    """``value`` as a fenced code block (its lines kept), ending without a newline."""
    content = str(value).replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{content}\n{fence}"


def message(value) -> list:
    """A sentence the kit wrote, as Markdown lines: one per line of the sentence, each with
    its ```…``` parts as code and every other part as ``text``."""
    lines = []
    for line in str(value).splitlines() or [""]:
        # Only a lone backtick marks code: the kit writes `name`, and a run of them (``` in a
        # student's text) is text.
        parts = re.split(r"(?<!`)`(?!`)", line)
        if len(parts) % 2 == 0:  # an unmatched backtick: the last one is text
            parts[-2:] = ["`".join(parts[-2:])]
        # Two code parts with nothing between them were one code part holding a backtick
        # (the student's): rendered apart, their fences would run together.
        merged = [parts[0]]
        for i in range(1, len(parts), 2):
            if i > 1 and merged[-1] == "" and len(merged) > 1:
                merged.pop()
                merged[-1] += "`" + parts[i]
            else:
                merged.append(parts[i])
            if i + 1 < len(parts):
                merged.append(parts[i + 1])
        rendered = "".join(code(part) if i % 2 else _inline(part, at_line_start=i == 0)
                           for i, part in enumerate(merged))
        lines.append(rendered.rstrip())
    return lines


def sentence(value) -> str:
    """``message`` on one line: for a note, a flag or a reason, which have no line structure."""
    return " ".join(line for line in message(value) if line)


def html(value) -> str:
    """``value`` for an HTML page, in text or in a quoted attribute."""
    return html_module.escape(str(value), quote=True)
