"""Shell escapes in the sandbox's shell: refused, remembered, and the cell goes on.

Each form IPython knows (``!cmd``, ``!!cmd``, ``x = !cmd``, ``%sx``, ``%system``, ``%pip``,
``%conda``, aliases, ``%%bash``, ``%%sh``, ``%%script``, ``%%python3``, ``%%!``, an indented
``!`` and ``get_ipython().system``) runs once in a plain IPython shell, the positive control,
where it creates its marker file by starting a process, and once in the shell the sandbox's
jobs inherit (``notebook.warm``), where no marker appears, no process is started (an audit
hook watches every way Python has to start one), every line after the escape runs, and the
refused command is remembered with its cell. Through the sandbox itself, tests/test_probe.py
grades notebooks with these lines.

The student's folder has a list of its own: ``notebook_code`` runs a notebook outside Jupyter
for the lab with the same escapes skipped. The two lists must agree, so every name either
lists (and every form above) runs through both shells, and each must refuse it; the control
takes one name off the lab's list and sees the comparison fail.
"""

import json
import subprocess
import sys
import textwrap

import pytest

import notebook_code
from kit_autograder.sandbox.inside import shell_escapes
from kit_autograder.verdicts.messages import shell_escapes_note

# (marker, the cell); each cell defines after_<marker> after its escape, where it can.
FORMS = [
    ("bang", "!touch {d}/bang\nafter_bang = 1"),
    ("bangbang", "!!touch {d}/bangbang\nafter_bangbang = 1"),
    ("capture", "salida = !touch {d}/capture\nafter_capture = 1"),
    ("sx", "%sx touch {d}/sx\nafter_sx = 1"),
    ("system", "resultado = %system touch {d}/system\nafter_system = 1"),
    ("pip", "%pip --version > {d}/pip\nafter_pip = 1"),
    ("alias", "%alias toca touch {d}/alias\n%toca\nafter_alias = 1"),
    ("indented", "if True:\n    !touch {d}/indented\nafter_indented = 1"),
    ("explicit", "get_ipython().system('touch {d}/explicit')\nafter_explicit = 1"),
    ("bash", "%%bash\ntouch {d}/bash"),
    ("sh", "%%sh\ntouch {d}/sh"),
    ("script", "%%script bash\ntouch {d}/script"),
    ("python3", "%%python3\nopen('{d}/python3', 'w').close()"),
    ("cellbang", "%%!\ntouch {d}/cellbang"),
]
# Refused in the sandbox, but no marker in the control: outside a conda environment IPython's
# own %conda refuses to run.
SANDBOX_ONLY = [("conda", "%conda install -y numpy\nafter_conda = 1")]

# Every name either list refuses that no form above uses, as a form of its own: what the two
# shells must agree on is generated from both lists.
_COVERED = {source.split()[0].lstrip("%") for _, source in FORMS + SANDBOX_ONLY
            if source.startswith("%")}
BOTH_LISTS = [
    (f"line_{name}", f"%{name} touch {{d}}/line_{name}\nafter_line_{name} = 1")
    for name in sorted(set(shell_escapes.LINE_MAGICS) | set(notebook_code._PROGRAM_LINE_MAGICS))
    if name not in _COVERED
] + [
    (f"cell_{name}", f"%%{name}\ntouch {{d}}/cell_{name}")
    for name in sorted(set(shell_escapes.CELL_MAGICS) | set(notebook_code._PROGRAM_CELL_MAGICS))
    if name not in _COVERED
]

SCRIPT = textwrap.dedent('''
    import json, os, sys
    mode, folder = sys.argv[1], sys.argv[2]
    forms = json.loads(sys.argv[3])
    if mode == "sandbox":
        from kit_autograder.sandbox.inside import notebook
        shell = notebook.warm()
    elif mode.startswith("lab"):
        import notebook_code
        if mode == "lab_without_bash":  # the control: a list that lacks one name
            notebook_code._PROGRAM_CELL_MAGICS = tuple(
                name for name in notebook_code._PROGRAM_CELL_MAGICS if name != "bash")
        shell = notebook_code._fresh_shell()
        notes = []
        notebook_code._without_programs(shell, notes)
    else:
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.system = shell.system_raw  # no pty needed: the control works anywhere
    started = []
    PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.fork",
                      "os.forkpty", "os.spawn", "pty.spawn"}
    sys.addaudithook(lambda event, args: started.append(event) if event in PROCESS_EVENTS
                     else None)
    cells = [source.format(d=folder) for _, source in forms] + ["after_all = 1"]
    if mode == "sandbox":
        output = notebook.BoundedOutput()
        errors = notebook.run_cells(shell, cells, 60, output)
        refused = notebook.refused_shell_escapes()
    elif mode.startswith("lab"):
        errors, refused = [], []
        for number, cell in enumerate(cells, start=1):
            before = len(notes)
            if not shell.run_cell(cell).success:
                errors.append(cell)
            refused += [{"cell": number, "command": note} for note in notes[before:]]
    else:
        errors = [c for c in cells if not shell.run_cell(c).success]
        refused = []
    print("RESULT" + json.dumps({
        "markers": sorted(os.listdir(folder)), "started": sorted(set(started)),
        "defined": sorted(k for k in shell.user_ns if k.startswith("after_")),
        "errors": errors, "refused": refused}))
''')


def run(mode, folder, forms):
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode, str(folder), json.dumps(forms)],
                          capture_output=True, text=True, timeout=300, cwd=folder)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(line[len("RESULT"):])


@pytest.fixture(scope="module")
def control(tmp_path_factory):
    return run("control", tmp_path_factory.mktemp("control"), FORMS)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    return run("sandbox", tmp_path_factory.mktemp("sandbox"), FORMS + SANDBOX_ONLY)


def test_control_every_form_starts_a_process_in_a_plain_shell(control):
    assert control["markers"] == sorted(marker for marker, _ in FORMS)
    assert control["started"], "the control should have started processes"


def test_no_form_starts_anything_in_the_sandboxs_shell(sandbox):
    assert sandbox["markers"] == []
    assert sandbox["started"] == []


def test_the_rest_of_each_cell_runs_after_the_refused_line(sandbox):
    assert sandbox["errors"] == []
    line_forms = [marker for marker, source in FORMS + SANDBOX_ONLY if "after_" in source]
    assert sandbox["defined"] == sorted([f"after_{m}" for m in line_forms] + ["after_all"])


def test_each_refused_command_is_remembered_with_its_cell(sandbox):
    refused = sandbox["refused"]
    commands = [r["command"] for r in refused]
    # One per form (the alias is defined, then refused when used), in cell order.
    assert len(refused) == len(FORMS + SANDBOX_ONLY)
    assert [r["cell"] for r in refused] == list(range(1, len(refused) + 1))
    assert commands[0].startswith("!touch ") and commands[0].endswith("/bang")
    assert commands[5].startswith("%pip --version")
    assert commands[9] == "%%bash" and commands[11] == "%%script bash"
    assert commands[-1] == "%conda install -y numpy"


@pytest.fixture(scope="module")
def both_shells(tmp_path_factory):
    forms = FORMS + SANDBOX_ONLY + BOTH_LISTS
    return forms, {mode: run(mode, tmp_path_factory.mktemp(mode), forms)
                   for mode in ("sandbox", "lab", "lab_without_bash")}


def refused_forms(result, forms):
    """The markers of the forms a shell refused, and of those that started something."""
    refused = {forms[entry["cell"] - 1][0] for entry in result["refused"]}
    return refused, set(result["markers"])


def test_the_lab_and_the_sandbox_refuse_the_same_escapes(both_shells):
    forms, results = both_shells
    assert BOTH_LISTS, "the lists name escapes the forms above do not use"
    everything = {marker for marker, _ in forms}
    for mode in ("sandbox", "lab"):
        refused, ran = refused_forms(results[mode], forms)
        assert sorted(everything - refused) == [], f"{mode} does not refuse these"
        assert ran == set() and results[mode]["started"] == [], mode


def test_control_a_name_the_lab_lacks_is_seen(both_shells):
    forms, results = both_shells
    refused, ran = refused_forms(results["lab_without_bash"], forms)
    assert sorted({marker for marker, _ in forms} - refused) == ["bash"]
    assert ran == {"bash"}, "without its name, %%bash runs in the lab's shell"


def test_the_note_lists_the_commands_with_their_cells_in_spanish():
    escapes = [{"cell": 2, "command": "%pip install -q numpy"},
               {"cell": 5, "command": "!ls `pwd`"}] + [{"cell": 9, "command": "!ls"}] * 5
    note = shell_escapes_note(escapes)
    assert "`%pip install -q numpy` (celda [2])" in note
    assert "`!ls 'pwd'` (celda [5])" in note  # a backtick cannot end the code span
    assert "y 2 más" in note
    assert "el resto de esas celdas sí se ejecutó" in note
