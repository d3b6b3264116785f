"""Nothing a student sends is rendered as markup (issue 19): markup.py, the feedback, the
boxes of results.json and the class report, read by a permissive Markdown renderer and a
real browser.

The property tests hand markup.py any text at all (hypothesis) and read the result back with
markdown-it-py, raw HTML enabled: it must come back as exactly that text, with no token of
markup. The browser tests render a report whose every student-controlled field holds a
payload (markup_payloads.py) and load it in Chromium. Each has its positive control: the
same payload, unescaped, does run and does make a heading.
"""

import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from markup_payloads import (FORGED_HEADING, browser, inert,  # noqa: F401 (a fixture)
                             markdown_renderer, payload, seen, to_html)
from kit_autograder.report import class_report, feedback, markup, otter_results
from kit_autograder.verdicts.record import Flag, Record, Verdict

MD = markdown_renderer()
ANY_TEXT = st.text(max_size=200)
# Text as hostile as it gets: Markdown's and HTML's punctuation, line breaks, blanks, digits.
SYNTAX = st.text(alphabet=st.sampled_from(list("`*_[]()<>&#!|~-+=.:;/\\\"' \t\n\r1a")),
                 max_size=60)
HOSTILE = st.one_of(ANY_TEXT, SYNTAX)
KIT_HEADINGS = {"Pregunta a pregunta", "Errores al ejecutar tu cuaderno", "Avisos",
                "Marcado para revisión", "Lo que imprimió tu cuaderno"}


def inline_children(source):
    """The inline tokens of ``source`` when it is one paragraph (or nothing), else fail."""
    tokens = MD.parse(source)
    if not tokens:
        return []
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"], tokens
    return tokens[1].children


def flat(value):
    return re.sub(r"[ \t]+", " ", re.sub(r"\r\n|[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]", " ",
                                         value)).strip()


# --- the module, on any text ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_text_renders_as_exactly_its_characters_and_nothing_else(value):
    children = inline_children(markup.text(value))
    assert {child.type for child in children} <= {"text"}
    assert "".join(child.content for child in children) == flat(value)


@settings(max_examples=300, deadline=None)
@given(HOSTILE, HOSTILE)
def test_text_after_other_text_on_the_line_is_still_only_text(before, value):
    source = f"- {markup.text(before)}: {markup.text(value)}"
    tokens = MD.parse(source)
    assert [t.type for t in tokens if t.type != "inline"] == [
        "bullet_list_open", "list_item_open", "paragraph_open", "paragraph_close",
        "list_item_close", "bullet_list_close"]
    (inline,) = [t for t in tokens if t.type == "inline"]
    assert {child.type for child in inline.children} <= {"text"}


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_code_is_one_code_span_holding_the_text(value):
    children = inline_children(markup.code(value))
    assert [child.type for child in children] == ["code_inline"]
    shown = re.sub(r"\r\n|\r|\n", markup.NEWLINE_MARK, value)
    shown = re.sub(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]", " ", shown)
    assert children[0].content == (shown if shown.strip() else " ")


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_block_is_one_fence_holding_every_line(value):
    tokens = MD.parse(markup.block(value))
    assert [t.type for t in tokens] == ["fence"]
    kept = value.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n").replace("\x00", "\ufffd")
    assert tokens[0].content == kept + "\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(HOSTILE, HOSTILE.map(lambda s: f"`{s}`")), max_size=5))
def test_a_kit_message_quoting_the_student_makes_only_text_and_code(parts):
    lines = markup.message(" ".join(parts))
    for line in lines:
        assert {child.type for child in inline_children(line)} <= {"text", "code_inline"}


def test_a_kit_message_keeps_its_code_and_escapes_the_rest():
    assert MD.render("\n".join(markup.message("usa `attention` y <b>"))) == (
        "<p>usa <code>attention</code> y &lt;b&gt;</p>\n")
    assert markup.html('<a href="x">') == "&lt;a href=&quot;x&quot;&gt;"


def test_a_list_in_brackets_stays_as_written_and_no_link_can_open():
    # Issue 47: the kit's own «V = [[1, 2], [3, 4]]» reached the .md as «\\[\\[1, 2\\], …».
    assert markup.text("V = [[1, 2], [3, 4]].") == "V = [[1, 2], [3, 4]]."
    for hostile in ("[a](http://example.com)", "![a](x.png)", "[a][b]", "[a]:", "x [a]"):
        children = inline_children(markup.text(hostile))
        assert {child.type for child in children} == {"text"}, hostile
    # Positive control: unescaped, the same brackets make a link and an image.
    assert "link_open" in {c.type for c in inline_children("[a](http://example.com)")}
    assert "image" in {c.type for c in inline_children("![a](x.png)")}


def test_control_the_payload_unescaped_is_markup():
    tokens = MD.parse(payload("x"))
    assert "heading_open" in {t.type for t in tokens}
    assert "html_inline" in {c.type for t in tokens if t.children for c in t.children}


# --- the kit's pages, with a payload in every field a student controls -------------------------


def hostile_record(graded=True):
    """A record holding a payload wherever a student's text can land in one."""
    name = "entrega " + payload("archivo", slash=False) + ".ipynb"
    record = Record(file=name, stem="entrega", graded=graded,
                    reason=f"el .zip contiene 2 cuadernos ({payload('zip', slash=False)}.ipynb)"
                    if not graded else None)
    record.scores = {"attention": [0.0, 5.0], "student_extension": [0.0, 6.0]}
    if graded:
        record.verdicts = [
            Verdict("attention", "rectangular", "n ≠ m", False,
                    [f"la celda [3] que define `attention` falló al ejecutarse (ValueError: "
                     f"{payload('definición')}), así que la función no existe"], ["error"]),
            Verdict("student_extension", "risk", "Se declara un riesgo.", False,
                    [f"«student_extension» tiene campos que no se admiten («{payload('clave')}»)"],
                    ["criterion"]),
            Verdict("student_extension", "test_texts", "prueba pública", False,
                    [f"«assumption» dice {payload('texto')}"], ["public"], public=True)]
        record.cell_errors = [
            {"cell": 3, "kind": "error", "exception": payload("excepción"),
             "message": payload("mensaje"), "line": 2, "first_line": payload("línea"),
             "defines": [], "knock_on_of": None, "skipped": False},
            {"cell": 4, "kind": "time", "exception": "", "message": "", "line": None,
             "first_line": "# " + payload("primera"), "defines": [], "knock_on_of": None,
             "skipped": False}]
        record.output = payload("salida") + "\n````\n" + payload("tras la valla")
        record.output_chars = len(record.output)
    record.notes = [f"tu cuaderno pedía el kernel «{payload('kernel')}»; se ha evaluado con "
                    "python3"]
    record.flags = [Flag("revisar", payload("aviso"))]
    return record


def pages_of(record):
    """feedback.md, and each output of the results.json Gradescope would show, as the kit
    renders them (results.json's boxes as Otter's dictionary arrives: one test per question)."""
    sections = feedback.sections(record, manual_points=10)
    otters = {"tests": [{"name": q, "score": 0.0, "max_score": p, "output": "Otter's"}
                        for q, (_, p) in record.scores.items()]}
    if record.graded:
        otters["output"] = otter_results.overview(sections)
        data = otter_results.with_output_format(
            otter_results.with_boxes(otters, otter_results.boxes(sections)))
    else:
        data = otter_results.refusal_results(feedback.join(sections))
    outputs = [part["output"] for part in [data, *data["tests"]] if "output" in part]
    assert all(part.get("output_format") == "md" for part in [data, *data["tests"]]
               if "output" in part)
    return feedback.join(sections), outputs, data


@pytest.mark.parametrize("graded", [True, False])
def test_no_token_of_markup_comes_from_student_text(graded):
    page, outputs, _ = pages_of(hostile_record(graded))
    for source in [page, *outputs]:
        tokens = MD.parse(source)
        kinds = {t.type for t in tokens} | {c.type for t in tokens if t.children
                                             for c in t.children}
        assert not kinds & {"html_block", "html_inline", "link_open", "image"}
        headings = [tokens[i + 1].content for i, t in enumerate(tokens)
                    if t.type == "heading_open"]
        assert all(h in KIT_HEADINGS or h.startswith("Informe de evaluación: ")
                   or re.match(r"`\w+`: ", h) for h in headings), headings
        assert FORGED_HEADING not in headings
        # A payload text still reads as text: the student sees what they wrote.
        assert "NOTA FINAL 10/10" in MD.render(source)


@pytest.mark.parametrize("graded", [True, False])
def test_in_chromium_no_element_script_or_heading_comes_from_student_text(browser, graded):
    page, outputs, data = pages_of(hostile_record(graded))
    found = seen(browser, to_html([page]))
    assert inert(found), found
    assert inert(seen(browser, to_html(outputs))), data
    assert FORGED_HEADING in json.dumps(data, ensure_ascii=False)  # the text is still there


def test_in_chromium_the_class_report_shows_the_payload_as_text(browser, tmp_path):
    from attention import lesson

    (tmp_path / "records").mkdir()
    for graded in (True, False):
        record = hostile_record(graded)
        record.stem = f"entrega_{graded}"
        (tmp_path / "records" / f"{record.stem}.json").write_text(record.to_json(), "utf-8")
    path = class_report.write(tmp_path, lesson=lesson, title="055")
    assert inert(seen(browser, path.read_text("utf-8")))


def test_control_in_chromium_the_payload_unescaped_runs_and_makes_a_heading(browser):
    found = seen(browser, to_html([payload("control")]))
    assert found["ran"] >= 2  # the onerror and the script
    assert FORGED_HEADING in found["headings"]
    assert not inert(found)
