"""LMS downloads and worksheets built in the tests, as Moodle 4.x and Canvas document them
(see the docstrings of kit_autograder/lms/moodle.py and canvas.py), around the built demo
submissions. Every name, id and address here is invented.

The class has accents, two students with the same name, a late Canvas file, a student with two
uploads, an online-text folder, other scripts, a student of the worksheet who handed in nothing
and a submission the worksheet does not list.
"""

import io
import json
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "assignments" / "attention" / "examples"

# Nine written answers, Markdown as students write it, one with HTML that must stay text.
ANSWERS = {
    "buena": [
        "La **atención** es una media ponderada de los valores; los pesos salen de la softmax "
        "de los productos escalares entre consultas y claves, divididos por $\\sqrt{d_k}$.",
        "La autoatención saca Q, K y V de la misma secuencia; *multi-head* repite eso con "
        "proyecciones propias y concatena; la codificación posicional da el orden.",
        "Todo el JSON: mismas entradas, mismos números de `evidence`, código de salida 0.",
        "- Permitida: con la máscara causal el peso futuro es 0.\n"
        "- Exagerada: «mi implementación sirve en producción».",
        "Una fila de la máscara sin ninguna clave permitida: la softmax da NaN.",
        "(a) No cambian: a cada fila se le suma q·c/√d_k. (b) Se concentran en la clave mayor.",
        "Con $W^Q = W^K = \\lambda I$ y normas iguales, la propia puntuación es la mayor.",
        "Q, K y V se permutan con X, las puntuaciones pasan a $PSP^\\top$ y $P^\\top P = I$.",
        "Sin √d_k el orden de las puntuaciones no cambia; la ablación mide la pérdida, mayor sin ella.",
    ],
    "floja": [
        "Es lo que usa GPT.",
        "Son cosas del Transformer.",
        "Los resultados.",
        "No sé.",
        "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
        "Probar con `n = 1`.",
        "Cambian.",
        "No sé.",
        "Es obvio.",
        "Porque la escala no sirve.",
    ],
}


def demo(name):
    return (DEMO / name).read_bytes()


def with_answers(notebook: bytes, texts):
    """The notebook with its written answer cells holding ``texts``."""
    raw = json.loads(notebook.decode("utf-8"))
    cells = [c for c in raw["cells"] if c["cell_type"] == "markdown"
             and "otter_answer_cell" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == len(texts), f"{len(cells)} answer cells"
    for cell, text in zip(cells, texts):
        cell["source"] = text
    return json.dumps(raw, ensure_ascii=False, indent=1).encode("utf-8")


def export_with_answers(texts):
    """The demo's export zip, its notebook holding ``texts``."""
    with zipfile.ZipFile(DEMO / "exportada.zip") as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    for name in members:
        if name.endswith(".ipynb"):
            members[name] = with_answers(members[name], texts)
    return zip_bytes(members)


class _UnflaggedName(zipfile.ZipInfo):
    """As some zip writers do: a name's UTF-8 bytes without the zip's UTF-8 flag, which
    Python, like the zip format, then reads as cp437."""

    def _encodeFilenameFlags(self):
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def zip_bytes(members, dates=None, utf8_flag=True):
    """A zip of ``{name: bytes}``; ``dates``: ``{name: (y, m, d, h, min, s)}``."""
    buffer = io.BytesIO()
    kind = zipfile.ZipInfo if utf8_flag else _UnflaggedName
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = kind(name, (dates or {}).get(name, (2026, 11, 20, 10, 0, 0)))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buffer.getvalue()


# --- Moodle -----------------------------------------------------------------------------------

DOWNLOAD_TIME = (2026, 11, 20, 10, 0, 0)

MOODLE_STUDENTS = [  # participant, full name (as Moodle shows it), email
    ("1234567", "María José García López", "mjgarcia@example.org"),
    ("2000001", "José Pérez", "jperez@example.org"),
    ("3000001", "Ana Martín", "amartin1@example.org"),
    ("3000002", "Ana Martín", "amartin2@example.org"),
    ("4000001", "Lucía Fernández", "lfernandez@example.org"),
    ("5000001", "王小明", "wang@example.org"),
    ("6000001", "Zoë D'Angelo", "zdangelo@example.org"),
    ("7000001", "Pedro Sin Entrega", "psin@example.org"),
]


def moodle_download():
    """«Descargar todas las entregas» of Moodle 4.1+, in folders (``…_assignsubmission_file/``),
    as Moodle writes it: every member dated with the time of the download, a student's files
    oldest first, names cleaned of ``' & < > "``."""
    folder = lambda who, number, plugin="file": f"{who}_{number}_assignsubmission_{plugin}"
    members, dates = {}, {}

    def put(path, data):
        members[path] = data
        dates[path] = DOWNLOAD_TIME

    put(f"{folder('María José García López', '1234567')}/notebook_student.ipynb",
        with_answers(demo("correcta.ipynb"), ANSWERS["buena"]))
    # Two uploads, listed oldest first: the notebook, then the export zip, which is graded.
    put(f"{folder('José Pérez', '2000001')}/notebook_student.ipynb",
        with_answers(demo("sin_hacer.ipynb"), ANSWERS["floja"]))
    put(f"{folder('José Pérez', '2000001')}/entrega/exportada.zip",
        export_with_answers(ANSWERS["buena"]))
    put(f"{folder('Ana Martín', '3000001')}/notebook_student.ipynb",
        with_answers(demo("parcial.ipynb"), ANSWERS["floja"]))
    put(f"{folder('Ana Martín', '3000002')}/notebook_student.ipynb",
        with_answers(demo("correcta.ipynb"), ANSWERS["buena"]))
    put(f"{folder('Lucía Fernández', '4000001', 'onlinetext')}/onlinetext.html",
        "<p>Mi respuesta va aquí, no en el cuaderno.</p>".encode())
    put(f"{folder('王小明', '5000001')}/notebook_student (1).ipynb",
        with_answers(demo("sin_hacer.ipynb"), ANSWERS["floja"]))
    put(f"{folder('王小明', '5000001', 'onlinetext')}/onlinetext.html", "<p>你好</p>".encode())
    # Moodle drops the apostrophe of «Zoë D'Angelo» from the folder's name.
    put(f"{folder('Zoë DAngelo', '6000001')}/notebook_student.ipynb",
        demo("rota.ipynb"))
    # In the download, not in the worksheet (enrolled after it was downloaded).
    put(f"{folder('Nadie Enlista', '8000001')}/notebook_student.ipynb",
        with_answers(demo("correcta.ipynb"), ANSWERS["buena"]))
    return zip_bytes(members, dates)


MOODLE_HEADER_ES = ["Identificador", "Nombre completo", "Dirección de correo", "Estado",
                    "Calificación", "Calificación máxima", "La calificación puede ser cambiada",
                    "Última modificación (entrega)", "Última modificación (calificación)",
                    "Comentarios de retroalimentación"]


def moodle_worksheet_es():
    """The grading worksheet as a Spanish Moodle site exports it with «;» and a decimal
    comma (UTF-8, CRLF, every field quoted)."""
    lines = [";".join(f'"{title}"' for title in MOODLE_HEADER_ES)]
    for number, name, email in MOODLE_STUDENTS:
        status = "Sin entrega" if number in ("7000001", "4000001") else "Enviado para calificar"
        cells = [f"Participante{number}", name, email, status, "", "10,00", "Sí",
                 "jueves, 20 de noviembre de 2026, 10:00", "-", ""]
        lines.append(";".join('"' + cell.replace('"', '""') + '"' for cell in cells))
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


# --- Canvas -----------------------------------------------------------------------------------

CANVAS_STUDENTS = [  # user id, sortable name (as the gradebook shows it), SIS id, login
    ("101", "García López, María José", "S101", "mgarcia"),
    ("102", "Pérez, José", "S102", "jperez"),
    ("103", "Martín, Ana", "S103", "amartin"),
    ("104", "Martín, Ana", "S104", "amartin2"),
    ("105", "Fernández, Lucía", "S105", "lfernandez"),
    ("106", "王, 小明", "S106", "wang"),
    ("107", "Sin Entrega, Pedro", "S107", "psin"),
]


def canvas_download():
    """«Download Submissions»: flat, ``<name>[_LATE]_<user id>_<file id>_<file>``."""
    members = {
        "garcíalópezmaríajosé_101_9001_notebook_student.ipynb":
            with_answers(demo("correcta.ipynb"), ANSWERS["buena"]),
        "pérezjosé_LATE_102_9002_notebook_student.ipynb":
            with_answers(demo("parcial.ipynb"), ANSWERS["buena"]),
        # Two uploads: file id 9003, then 9010, which is the newer and is graded.
        "martínana_103_9003_notebook_student.ipynb":
            with_answers(demo("sin_hacer.ipynb"), ANSWERS["floja"]),
        "martínana_103_9010_notebook_student-1.ipynb":
            with_answers(demo("correcta.ipynb"), ANSWERS["buena"]),
        "martínana_104_9004_notebook_student.ipynb":
            with_answers(demo("parcial.ipynb"), ANSWERS["floja"]),
        "fernándezlucía_105_text.html": "<p>Texto en línea.</p>".encode(),
        "王小明_106_9006_exportada.zip": export_with_answers(ANSWERS["floja"]),
        "nadieenlista_999_9099_notebook_student.ipynb":
            with_answers(demo("correcta.ipynb"), ANSWERS["buena"]),
    }
    return zip_bytes(members)


CANVAS_COLUMN = "Tarea 055: Atención (55123)"


def canvas_gradebook():
    """The gradebook export, with another assignment, read-only totals and a test student."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", CANVAS_COLUMN,
              "Práctica 1 (55001)", "Current Score", "Unposted Current Score", "Final Score",
              "Unposted Final Score"]
    rows = [header, ["    Points Possible", "", "", "", "", "30.00", "10.00", "(read only)",
                     "(read only)", "(read only)", "(read only)"]]
    for user, name, sis, login in CANVAS_STUDENTS:
        rows.append([name, user, sis, login, "IA 2026", "", "8.50", "85.00", "85.00", "42.50",
                     "42.50"])
    rows.append(["Student, Test", "999999", "", "", "IA 2026", "", "", "", "", "", ""])
    out = io.StringIO()
    import csv

    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


# --- teams ------------------------------------------------------------------------------------

DEFAULT_TEAM = "Grupo predeterminado"


def moodle_team_download(groups, without_group=None):
    """«Descargar todas las entregas» of a Moodle 4.1+ team assignment: one folder per group,
    named by the group's name (its «_» written as a space, as mod/assign's downloader does) and
    the group's id, ``<name>_<group id>_assignsubmission_file/``; the members without a group
    share ``Grupo predeterminado_assignsubmission_file/``, with no number. ``groups``:
    ``[(group name, group id, notebook bytes)]``."""
    members = {f"{name.replace('_', ' ')}_{group_id}_assignsubmission_file/notebook_student.ipynb":
               data for name, group_id, data in groups}
    if without_group is not None:
        members[f"{DEFAULT_TEAM}_assignsubmission_file/notebook_student.ipynb"] = without_group
    return zip_bytes(members, {name: DOWNLOAD_TIME for name in members})


def moodle_worksheet(people, groups=True):
    """The grading worksheet of a Spanish Moodle: ``people`` is ``[(participant, full name,
    group)]``. For a team assignment Moodle adds «Grupo» after «Estado» (the grading table's
    «team» column), naming each member's group, or «Grupo predeterminado» for none."""
    header = ["Identificador", "Nombre completo", "Dirección de correo", "Estado"]
    header += ["Grupo"] if groups else []
    header += ["Calificación", "Calificación máxima", "La calificación puede ser cambiada",
               "Última modificación (entrega)", "Última modificación (calificación)",
               "Comentarios de retroalimentación"]
    lines = [";".join(f'"{title}"' for title in header)]
    for number, name, group in people:
        cells = [f"Participante{number}", name, f"p{number}@example.org",
                 "Enviado para calificar"] + ([group or DEFAULT_TEAM] if groups else [])
        cells += ["", "10,00", "Sí", "jueves, 20 de noviembre de 2026, 10:00", "-", ""]
        lines.append(";".join('"' + cell.replace('"', '""') + '"' for cell in cells))
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def canvas_group_download(groups):
    """«Download Submissions» of a Canvas group assignment: one file per group, named after the
    group (Assignment#representatives gives the representative the group's name) with the user
    id of one member, ``<group, lower-cased, non-word characters removed>_<user id>_<file
    id>_<file>``. ``groups``: ``[(group name, user id, file id, notebook bytes)]``."""
    import re as regex

    squashed = lambda name: regex.sub(r"[^\w]", "", name.lower())
    return zip_bytes({f"{squashed(name)}_{user}_{file_id}_notebook_student.ipynb": data
                      for name, user, file_id, data in groups})


def canvas_groups_csv(rows):
    """A group set's export (People → the group set → Export): one row per membership.
    ``rows``: ``[(display name, canvas user id, group name)]``."""
    import csv

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["name", "canvas_user_id", "user_id", "login_id", "sections", "group_name",
                     "canvas_group_id", "group_id"])
    for number, (name, user, group) in enumerate(rows):
        writer.writerow([name, user, f"S{user}", f"login{user}", "IA 2026", group,
                         str(700 + number // 2), ""])
    return out.getvalue().encode("utf-8")


def canvas_gradebook_of(people, points="10.00"):
    """A gradebook export with one assignment column: ``people`` is ``[(sortable name, user
    id)]``."""
    import csv

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", CANVAS_COLUMN])
    writer.writerow(["    Points Possible", "", "", "", "", points])
    for name, user in people:
        writer.writerow([name, user, f"S{user}", f"login{user}", "IA 2026", ""])
    return out.getvalue().encode("utf-8")
