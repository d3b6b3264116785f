"""The student_extension validator: five criteria, exit codes 0/1/2, Spanish messages."""

import contextlib
import copy
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
import extension
from extension import CRITERION_IDS, UnusableInput, check_criterion, validate
from notebook_code import restart_and_run_all
from test_lab import GRADED, LAB, LAB_RUNNER, NOTEBOOK_CODE, reference_notebook, stub

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "autograder" / "extension.py"
SCHEMA = ROOT / "autograder" / "extension_schema.json"

# Cites seed 003's worked example, which result.worked_example prints for any seed.
def printed_by_lab(data):
    """A lab run that printed ``data`` without its extension, as a fresh run would."""
    from extension import LabRun

    printed = {k: v for k, v in data.items() if k != "student_extension"}
    return LabRun("python lab.py", 0, json.dumps(printed))


GOOD_EXTENSION = {
    "assumption": "Mi attention reparte el peso de cada consulta según la afinidad con cada clave.",
    "measurement": "En el ejemplo trabajado, la fila 1 de pesos es 0,6698 y 0,3302.",
    "conclusion": "El token 1 pone un 67 % del peso en su propia clave, como predice el apunte.",
    "limitation": "Solo dos tokens y una semilla; no prueba n distinto de m.",
    "risk": "No usar estos pesos aleatorios para interpretar frases reales.",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A student folder: the notebook, lab.py, notebook_code.py and the validator, flat."""
    folder = tmp_path_factory.mktemp("student")
    for source in (LAB, NOTEBOOK_CODE, LAB_RUNNER, EXTENSION, SCHEMA):
        shutil.copy(source, folder / source.name)
    reference_notebook(folder / "notebook_student.ipynb")
    return folder


@pytest.fixture(scope="module")
def lab_output(folder):
    done = subprocess.run([sys.executable, "lab.py", "--seed", "55"], cwd=folder, capture_output=True, check=True)
    return json.loads(done.stdout)


@pytest.fixture
def good(lab_output):
    return {**copy.deepcopy(lab_output), "student_extension": dict(GOOD_EXTENSION)}


def failed(results):
    return {r.id: r.message for r in results if not r.passed}


def run_validator(path, *args, cwd=None, module=True):
    command = [sys.executable, "-m", "extension"] if module else [sys.executable, "extension.py"]
    return subprocess.run([*command, str(path), *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=120)


def write(folder, data, name="resultado.json"):
    path = folder / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


# -- a good extension ----------------------------------------------------------------------


def test_good_extension_passes_all_five_criteria_in_rubric_order(good, folder):
    results = validate(good, folder / "notebook_student.ipynb")
    assert [r.id for r in results] == list(CRITERION_IDS)
    assert failed(results) == {}


def test_spanish_field_names_are_accepted(good, folder):
    english_to_spanish = {"assumption": "supuesto", "measurement": "medición", "conclusion": "conclusión",
                          "limitation": "limitacion", "risk": "riesgo"}
    good["student_extension"] = {english_to_spanish[k]: v for k, v in GOOD_EXTENSION.items()}
    assert failed(validate(good, folder / "notebook_student.ipynb")) == {}


def test_cli_exits_0_from_the_student_folder_alone(good, folder):
    path = write(folder, good)
    done = run_validator(path.name, cwd=folder, module=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 de 5 criterios se cumplen" in done.stdout


# -- each criterion fails alone, with its Spanish message ----------------------------------


def extra_field(data):
    data["student_extension"]["notas"] = "texto que el contrato no prevé"


def edited_evidence(data):
    values = next(item for item in data["evidence"] if item["id"] == "softmax_saturation")["values"]
    values["max_weight_scaled"][2] = 0.25


def no_lab_number(data):
    data["student_extension"]["measurement"] = "Medí que los pesos suman 1 en 3 casos."
    data["student_extension"]["conclusion"] = "Funciona en un 42,7 % de los casos que imaginé."


def blank_risk(data):
    data["student_extension"]["risk"] = "   "


def no_risk_at_all(data):
    data["student_extension"]["risk"] = "Ninguno."


@pytest.mark.parametrize("break_it, criterion, message", [
    (extra_field, "result_schema", "«notas»"),
    (edited_evidence, "lab_output_unchanged", "«evidence[3].values.max_weight_scaled[2]»"),
    (no_lab_number, "cites_lab_numbers", "no citan ningún número"),
    (blank_risk, "declares_risk", "al menos un riesgo"),
    (no_risk_at_all, "declares_risk", "no cuenta"),
], ids=["extension_with_extra_field_fails_only_criterion_2",
        "extension_editing_lab_evidence_fails_only_criterion_3",
        "extension_citing_no_lab_number_fails_only_criterion_4",
        "extension_with_blank_risk_fails_only_criterion_5",
        "extension_saying_no_risk_fails_only_criterion_5"])
def test_broken_extension_fails_only_its_criterion(good, folder, break_it, criterion, message):
    break_it(good)
    assert list(failed(validate(good, folder / "notebook_student.ipynb"))) == [criterion]
    assert message in failed(validate(good, folder / "notebook_student.ipynb", only=criterion))[criterion]


def test_a_lab_that_measures_nothing_earns_nothing(good, tmp_path):
    # `good` is a correct lab's output: with every function a stub, a copy of it is borrowed
    # evidence, and no criterion holds: a risk of using a result needs a result (issue 51.6).
    stubs = {name: stub(name) for name in GRADED}
    notebook = reference_notebook(tmp_path / "notebook_student.ipynb", **stubs)
    problems = failed(validate(good, notebook, lab=LAB))
    assert list(problems) == list(CRITERION_IDS)
    assert "no se ha podido medir ningún hecho" in problems["lab_exits_zero"]
    assert "criterio 1" in problems["result_schema"]
    assert "criterio 1" in problems["lab_output_unchanged"]
    assert "criterio 1" in problems["cites_lab_numbers"] and "criterio 1" in problems["declares_risk"]


def test_one_stub_costs_only_the_criteria_that_read_its_facts(tmp_path):
    # The extension is the student's own, on their own lab run: a stub transformer_block leaves
    # every other fact measured, so a citation of one of them keeps all five criteria.
    folder = tmp_path / "carpeta"
    folder.mkdir()
    for source in (LAB, NOTEBOOK_CODE, LAB_RUNNER, EXTENSION, SCHEMA):
        shutil.copy(source, folder / source.name)
    notebook = reference_notebook(folder / "notebook_student.ipynb",
                                  transformer_block=stub("transformer_block"))
    done = subprocess.run([sys.executable, "lab.py"], cwd=folder, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    data = {**json.loads(done.stdout), "student_extension": dict(GOOD_EXTENSION)}
    assert failed(validate(data, notebook)) == {}


def test_cited_numbers_must_be_printed_by_a_fresh_run_not_by_the_copy(good, folder):
    # Edit a printed number and cite the edited value: the copy says it, a fresh run does not.
    fact = good["evidence"][0]
    key = next(k for k, v in fact["values"].items() if isinstance(v, (int, float)))
    fact["values"][key] = 0.123456
    good["student_extension"]["measurement"] = "El valor medido es 0,123456."
    good["student_extension"]["conclusion"] = "No saco ninguna otra conclusión de este valor."
    problems = failed(validate(good, folder / "notebook_student.ipynb"))
    assert list(problems) == ["lab_output_unchanged", "cites_lab_numbers"]


def test_missing_lab_fails_criterion_1_with_where_to_put_it(good, tmp_path, monkeypatch):
    monkeypatch.setattr("extension.find_lab", lambda notebook=None: None)
    problems = failed(validate(good, reference_notebook(tmp_path / "nb.ipynb")))
    assert "no encuentro lab.py" in problems["lab_exits_zero"]


def test_lab_that_hangs_is_stopped_by_the_timeout(good, tmp_path):
    looping = "def attention(Q, K, V, mask=None):\n    while True:\n        pass\n"
    notebook = reference_notebook(tmp_path / "notebook_student.ipynb", attention=looping)
    problems = failed(validate(good, notebook, lab=LAB, only="lab_exits_zero", timeout=3))
    assert "no terminó en 3 s" in problems["lab_exits_zero"]


def test_a_changed_seed_is_caught_because_the_rerun_uses_it(good, folder):
    good["seed"] = 7
    assert list(failed(validate(good, folder / "notebook_student.ipynb"))) == ["lab_output_unchanged"]


def test_cli_prints_one_spanish_line_per_failure_and_exits_1(good, folder):
    no_lab_number(good)
    blank_risk(good)
    done = run_validator(write(folder, good, "dos_fallos.json"), "--notebook", folder / "notebook_student.ipynb")
    failures = [line for line in done.stdout.splitlines() if line.startswith("✗")]
    assert done.returncode == 1
    assert [line.split(":")[0] for line in failures] == ["✗ Criterio 4", "✗ Criterio 5"]
    # The criterion's id is code: no English identifier in the line the student reads.
    assert not any(word in done.stdout for word in ("cites_lab_numbers", "declares_risk"))
    assert "3 de 5 criterios se cumplen" in done.stdout


def test_check_criterion_raises_the_spanish_message_for_otter(good, folder):
    notebook = folder / "notebook_student.ipynb"
    check_criterion("declares_risk", good, notebook)  # holds: no exception
    blank_risk(good)
    with pytest.raises(AssertionError, match="al menos un riesgo"):
        check_criterion("declares_risk", good, notebook)
    with pytest.raises(AssertionError, match="no null"):
        check_criterion("declares_risk", None)


# -- citing numbers: rounding, decimal commas, percentages, exponents ----------------------


@pytest.mark.parametrize("printed, text, cites", [
    (0.369412, "el peso de «pecho» es 0,369", True),
    (0.369412, "el peso de «pecho» es 0.37", True),
    (0.369412, "un 36,9 % del peso", True),
    (0.369412, "casi un 37% del peso", True),
    (0.831925, "un peso de 0,831, truncado", True),
    (0.369412, "0,38", False),
    (0.369412, "0,4", False),  # one significant digit proves nothing
    (2.44249e-15, "un error del peso de 2,4 × 10^-15", True),
    (2.44249e-15, "un error del peso de 2,4·10⁻¹⁵", True),
    (2.44249e-15, "un error del peso de 2.44e-15", True),
    (2.44249e-15, "un error del peso de 2,4e-14", True),  # round-off: matched by its size
    (2.44249e-5, "un error del peso de 2,4e-4", False),
    (1.0, "el mayor peso es 1,000", False),  # 0 and 1 appear in any sentence
    (512.5, "con 512,5 de dispersión", True),
], ids=lambda value: str(value)[:24])
def test_cited_number_matches_what_the_lab_printed(printed, text, cites):
    # «en la atención»: with «peso» or «dispersión», the two words that name the measurement.
    data = {"evidence": [{"fact": "El peso y la dispersión de la atención.", "id": "peso",
                          "functions": ["attention"], "holds": True, "values": {"x": printed}}],
            "result": {},
            "student_extension": {**GOOD_EXTENSION, "measurement": f"{text} en la atención",
                                  "conclusion": "Sin números."}}
    (result,) = validate(data, only="cites_lab_numbers", lab_run=printed_by_lab(data))
    assert result.passed is cites


@pytest.mark.parametrize("text", [
    "Mi gato pesa 0,3694 kilos y duerme mucho todo el día.",
    "Lorem ipsum dolor sit amet 0,3694 consectetur adipiscing elit.",
])
def test_a_number_the_lab_printed_is_no_evidence_without_its_measurement_named(text):
    """Issue 30.3: any number equal to one the lab printed earned the criterion."""
    fact = {"fact": "Cada fila de pesos de la autoatención suma 1.", "id": "rows_sum_to_one",
            "functions": ["attention"], "holds": True, "values": {"max_abs_row_sum_error": 0.369412}}
    data = {"evidence": [fact], "result": {},
            "student_extension": {**GOOD_EXTENSION, "measurement": text, "conclusion": "Sin números."}}
    (result,) = validate(data, only="cites_lab_numbers", lab_run=printed_by_lab(data))
    assert not result.passed and "no dices de qué medición sale" in result.message
    # Positive control: the same number beside its measurement's words is evidence.
    data["student_extension"]["measurement"] = "La suma de cada fila de pesos se desvía 0,3694."
    (result,) = validate(data, only="cites_lab_numbers", lab_run=printed_by_lab(data))
    assert result.passed


def test_integers_such_as_sizes_are_not_citable_measurements():
    data = {"evidence": [{"values": {"d_k": [4, 64, 512]}}], "result": {},
            "student_extension": {**GOOD_EXTENSION, "measurement": "d_k = 512", "conclusion": "con 64"}}
    assert validate(data, only="cites_lab_numbers", lab_run=printed_by_lab(data))[0].passed is False


# -- the challenge measures thinking: junk is rejected with a Spanish reason (issue 21) ---------

JUNK_X = {"assumption": "x", "measurement": "0,34", "conclusion": "x", "limitation": "x", "risk": "x"}
JUNK_BOASTFUL = {**GOOD_EXTENSION, "risk": "no hay riesgo alguno",
                 "conclusion": "mi código es perfecto y listo para producción"}


def test_an_extension_of_xs_fails_the_texts_and_the_risk(good, folder):
    good["student_extension"] = dict(JUNK_X)
    problems = failed(validate(good, folder / "notebook_student.ipynb"))
    # «0,34» is a number the lab printed, but nothing says what it measures: no evidence.
    assert set(problems) == {"result_schema", "declares_risk", "cites_lab_numbers"}
    assert "«supuesto» (o «assumption») no dice nada todavía («x»)" in problems["result_schema"]
    assert "«riesgo» (o «risk») no dice nada todavía" in problems["declares_risk"]


def test_a_risk_that_denies_risk_fails_criterion_5(good, folder):
    good["student_extension"] = dict(JUNK_BOASTFUL)
    problems = failed(validate(good, folder / "notebook_student.ipynb"))
    assert list(problems) == ["declares_risk"]
    assert "decir que no hay ninguno" in problems["declares_risk"]


@pytest.mark.parametrize("field, text, criterion, reason", [
    ("assumption", "<el supuesto que pones a prueba>", "result_schema", "texto de ejemplo"),
    ("measurement", "ejemplo trabajado: 0,6698", "result_schema", "demasiado corto"),
    ("conclusion", "asdf asdf asdf asdf", "result_schema", "no dice nada"),
    ("limitation", "Ninguna limitación.", "result_schema", "demasiado corto"),
    ("risk", "Sin riesgos.", "declares_risk", "no cuenta"),
    ("risk", "Ninguno en absoluto, es un ejemplo.", "declares_risk", "no cuenta"),
    ("risk", "ok", "declares_risk", "no dice nada"),
], ids=["placeholder", "too_short", "filler", "limitation_too_short", "no_risks",
        "none_at_all", "ok"])
def test_each_text_must_say_something(good, folder, field, text, criterion, reason):
    good["student_extension"][field] = text
    problems = failed(validate(good, folder / "notebook_student.ipynb"))
    assert list(problems) == [criterion] and reason in problems[criterion]


@pytest.mark.parametrize("risk", [
    "No hay riesgo si solo se usa en clase, pero sí si se usa para decidir algo real.",
    "Nada de esto vale para un modelo entrenado: los pesos aquí son aleatorios.",
])
def test_a_risk_that_names_a_condition_is_accepted_even_if_it_starts_with_no(good, folder, risk):
    good["student_extension"]["risk"] = risk
    assert failed(validate(good, folder / "notebook_student.ipynb")) == {}


# -- unusable input: exit 2, a clear message, never a traceback ----------------------------


def unusable(tmp_path, raw: bytes, *, size=None):
    path = tmp_path / "resultado.json"
    path.write_bytes(raw)
    if size is not None:
        with open(path, "r+b") as f:
            f.truncate(size)
    return run_validator(path)


@pytest.mark.parametrize("raw, message", [
    (b'{"kind": "attention",}', "no es JSON válido (línea 1"),
    (b"[1, 2, 3]", "debe ser un objeto JSON"),
    (b'{"kind": "attention", "seed": 55}', "Falta la clave «student_extension»"),
    (b'{"student_extension": "mi texto"}', "«student_extension» debe ser un objeto, no un texto"),
    (b'{"student_extension": {"risk": 5}}', "«student_extension.risk» debe ser un texto, no un número"),
    (b'{"student_extension": {"risk": null}}', "«student_extension.risk» está sin rellenar (None)"),
    (b'{"student_extension": {"risk": NaN}}', "no es JSON válido"),
    (b"\xff\xfe{\x00", "no es JSON válido"),
    (b"caf\xe9", "no está en UTF-8"),
], ids=["not_json", "top_level_array", "missing_student_extension", "extension_is_a_string",
        "risk_is_a_number", "risk_left_as_none", "nan", "truncated_utf16", "latin1"])
def test_unusable_input_exits_2_with_a_spanish_reason(tmp_path, raw, message):
    done = unusable(tmp_path, raw)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_a_50_mb_file_exits_2_without_being_read(tmp_path):
    done = unusable(tmp_path, b"{", size=50 * 1024 * 1024)
    assert done.returncode == 2
    assert "52.4 MB" in done.stderr and "¿Es el archivo correcto?" in done.stderr


def test_missing_file_exits_2(tmp_path):
    done = run_validator(tmp_path / "no_existe.json")
    assert done.returncode == 2
    assert "No puedo leer el archivo" in done.stderr


def test_utf16_file_from_powershell_is_read(good, folder, tmp_path):
    path = tmp_path / "resultado.json"
    path.write_bytes(json.dumps(good, ensure_ascii=False).encode("utf-16"))
    done = run_validator(path, "--notebook", folder / "notebook_student.ipynb")
    assert done.returncode == 0, done.stdout + done.stderr


def test_cli_without_a_file_is_a_spanish_usage_error():
    done = subprocess.run([sys.executable, "-m", "extension"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert "argumentos no válidos" in done.stderr


# -- the notebook's "Reto verificable" -----------------------------------------------------


def notebook_extension(notebook):
    """The notebook's student_extension, as Restart & Run All leaves it."""
    return restart_and_run_all(notebook).namespace["student_extension"]


def test_model_answer_of_the_solution_notebook_passes_every_criterion(built_dist, tmp_path):
    solution = shutil.copy(built_dist / "solution" / SOLUTION_NAME, tmp_path / NOTEBOOK_NAME)
    done = subprocess.run([sys.executable, str(LAB), "--notebook", str(solution)], capture_output=True, check=True)
    data = {**json.loads(done.stdout), "student_extension": notebook_extension(solution)}
    assert failed(validate(data, solution, lab=LAB)) == {}


def test_untouched_student_template_is_unusable_with_a_fill_in_message(built_dist):
    data = {"student_extension": notebook_extension(built_dist / "student" / NOTEBOOK_NAME)}
    with pytest.raises(UnusableInput, match="está sin rellenar"):
        validate(data)


def test_criteria_1_and_3_share_one_lab_run_until_the_notebook_changes(good, folder, tmp_path,
                                                                       monkeypatch):
    import extension

    copy_of = shutil.copytree(folder, tmp_path / "copia")
    calls = []
    real = extension._run_lab
    monkeypatch.setattr(extension, "_run_lab", lambda *args: calls.append(args) or real(*args))
    for criterion in ("lab_exits_zero", "lab_output_unchanged"):
        check_criterion(criterion, good, copy_of / NOTEBOOK_NAME)
    assert len(calls) == 1
    notebook = copy_of / NOTEBOOK_NAME
    notebook.write_text(notebook.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    check_criterion("lab_exits_zero", good, notebook)
    assert len(calls) == 2


# -- the notebook runs the validator in its own process, with the same output (issue 13) ---


@pytest.mark.parametrize("break_it", [None, blank_risk], ids=["passes", "fails_criterion_5"])
def test_in_process_validation_prints_what_the_command_line_prints(good, folder, break_it):
    if break_it:
        break_it(good)
    path = write(folder, good, "mismo.json")
    done = run_validator(path.name, cwd=folder, module=False)
    import extension

    extension._LAB_RUNS.clear()  # the in-process run must not reuse the command line's
    with contextlib.chdir(folder):
        in_process = extension.run_cli([path.name], in_process=True)
    assert (in_process.code, in_process.stdout, in_process.stderr) == (done.returncode, done.stdout, done.stderr)


def test_in_process_lab_run_equals_the_subprocess_run(folder):
    import extension

    notebook = folder / "notebook_student.ipynb"
    arguments = extension._lab_arguments(55, notebook)
    assert extension._run_lab_in_process(arguments, folder / "lab.py", 60) == \
        extension._run_lab(arguments, folder / "lab.py", 60)


def test_a_failing_lab_reads_the_same_in_process(good, tmp_path):
    import extension

    stubs = {name: stub(name) for name in GRADED}
    notebook = reference_notebook(tmp_path / "notebook_student.ipynb", **stubs)
    arguments = extension._lab_arguments(55, notebook)
    in_process = extension._run_lab_in_process(arguments, LAB, 60)
    assert in_process == extension._run_lab(arguments, LAB, 60)
    assert "no se ha podido medir ningún hecho" in in_process.problem


def test_help_is_spanish_and_names_the_student_command():
    done = subprocess.run([sys.executable, str(EXTENSION), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("uso: python extension.py")
    for english in ("usage:", "options:", "show this help", "positional arguments", "-m autograder", "-m attention"):
        assert english not in done.stdout


def test_missing_jsonschema_is_named_in_spanish_without_a_traceback(tmp_path):
    code = (f"import sys, runpy; sys.modules['jsonschema'] = None; sys.argv = ['extension.py', 'x.json']; "
            f"runpy.run_path({str(EXTENSION)!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert "falta el paquete jsonschema" in done.stderr and "pip install -r requirements.txt" in done.stderr
    assert "Traceback" not in done.stderr


# -- inside the notebook: the kernel's own functions, not the saved file (issue 20) ---------


def test_the_save_and_validate_cell_writes_the_result_then_validates_it(good, folder, capsys,
                                                                       monkeypatch):
    import extension
    from reference import attention as reference

    kernel = {name: getattr(reference, name) for name in GRADED}
    monkeypatch.chdir(folder)
    assert eval("extension.save_and_validate(good, 'resultado.json')",
                {**kernel, "extension": extension, "good": good}) == 0
    assert json.loads((folder / "resultado.json").read_text("utf-8")) == good
    assert "5 de 5 criterios se cumplen." in capsys.readouterr().out


def test_in_the_notebook_the_validator_reruns_the_lab_on_the_kernels_functions(good, folder, capsys):
    import extension
    from reference import attention as reference

    path = write(folder, good, "en_el_cuaderno.json")
    kernel = {name: getattr(reference, name) for name in GRADED}
    assert extension.run_in_notebook(path, kernel) == 0
    assert "5 de 5 criterios se cumplen." in capsys.readouterr().out
    # The control: a kernel whose attention has since changed measures other numbers, so the
    # same result no longer matches a fresh run (criterion 3), whatever the saved file holds.
    kernel["attention"] = lambda Q, K, V, mask=None: reference.attention(2 * Q, K, V, mask)
    assert extension.run_in_notebook(path, kernel) == 1
    assert "✗ Criterio 3:" in capsys.readouterr().out


def test_criterion_3_compares_which_facts_were_measured_not_the_wording_of_why():
    """The notebook's lab run explains a failing function with the kernel's exception; the
    grader's fresh run, with its own sentence about the same failure. Only the facts count."""
    from extension import _differences

    fresh = {"evidence": [{"id": "a", "holds": None, "not_measured": "`multihead` lanzó ValueError"}]}
    mine = {"evidence": [{"id": "a", "holds": None, "not_measured": "`multihead` falló con ValueError: …"}]}
    assert _differences(fresh, mine, "") == []
    measured = {"evidence": [{"id": "a", "holds": True, "values": {"x": 1.0}}]}
    assert _differences(fresh, measured, "")  # control: a fact measured on one side only


def late_helper_copy(good):
    """What the notebook's lab cell printed when attention used a helper defined in the last
    cell: every fact that needs attention not measured, with the kernel's NameError."""
    copy_ = copy.deepcopy(good)
    for item in copy_["evidence"]:
        if "attention" in item["functions"]:
            item.update(holds=None, values={},
                        not_measured="`attention` falló con NameError: name '_ayuda' is not defined")
    evidence = copy_["evidence"]
    measured = [i for i in evidence if i["holds"] is not None]
    copy_["result"].update(checks_measured=len(measured),
                           checks_passed=sum(i["holds"] for i in measured),
                           failed_checks=[i["id"] for i in measured if not i["holds"]],
                           not_measured=[i["id"] for i in evidence if i["holds"] is None],
                           worked_example=None)
    return copy_


def test_a_helper_defined_below_the_lab_cell_is_not_called_an_edit(good, folder):
    """Issue 31.4: helpers in the notebook's last cell cost a point and «No edites su salida»."""
    late = late_helper_copy(good)
    assert "lab_output_unchanged" not in failed(validate(late, folder / "notebook_student.ipynb"))
    # Positive control: an edited number among those measured is still an edit.
    edited = late_helper_copy(good)
    measured = next(i for i in edited["evidence"] if i["holds"] is not None and i["values"])
    key = next(k for k, v in measured["values"].items() if isinstance(v, float))
    measured["values"][key] += 1
    problems = failed(validate(edited, folder / "notebook_student.ipynb"))
    assert "No edites su salida" in problems["lab_output_unchanged"]


def test_a_citation_lost_to_a_wrong_function_names_that_function():
    """Issue 31.3: with attention wrong, criterion 4 failed and nothing linked it to attention.
    A positional encoding that works keeps the evidence gate open (issue 51.6)."""
    fact = {"fact": "Cada fila de pesos de la autoatención suma 1.", "id": "rows_sum_to_one",
            "functions": ["attention"], "holds": False, "values": {"max_abs_row_sum_error": 0.25}}
    works = {"fact": "PE(pos + 3) es una rotación de PE(pos).", "id": "pe_rotation",
             "functions": ["positional_encoding"], "holds": True,
             "values": {"max_rotation_error": 0.5}}
    data = {"evidence": [fact, works], "result": {},
            "student_extension": {**GOOD_EXTENSION, "measurement": "Los pesos suman 0,0001 de más.",
                                  "conclusion": "Sin números."}}
    (result,) = validate(data, only="cites_lab_numbers", lab_run=printed_by_lab(data))
    assert not result.passed and "que usa `attention`" in result.message
    # Positive control: when every fact holds, the message blames no function.
    data["evidence"][0]["holds"] = True
    (result,) = validate(data, only="cites_lab_numbers", lab_run=printed_by_lab(data))
    assert not result.passed and "Ojo" not in result.message


def test_criterion_4_says_which_functions_move_the_numbers_in_singular_and_plural():
    from extension import _failing_functions

    one = {"evidence": [{"holds": False, "functions": ["attention"]}, {"holds": True}]}
    two = {"evidence": [{"holds": False, "functions": ["attention"]},
                        {"holds": False, "functions": ["multihead", "attention"]}]}
    assert "no se cumple 1 hecho del laboratorio, que usa `attention`" in _failing_functions(one)
    assert "Arregla primero esa función" in _failing_functions(one)
    said = _failing_functions(two)
    # Blame by measurement: both facts need attention, so attention alone is named.
    assert "no se cumplen 2 hechos del laboratorio, y todos usan `attention`:" in said
    assert "multihead" not in said
    # No common function: every function of the failing facts, but those a fact of their
    # own clears.
    apart = {"evidence": [{"holds": False, "functions": ["attention"]},
                          {"holds": False, "functions": ["transformer_block",
                                                         "positional_encoding"]},
                          {"holds": True, "functions": ["positional_encoding"]}]}
    said = _failing_functions(apart)
    assert "usan `attention`, `transformer_block`:" in said and "Arregla primero esas" in said
    assert "positional_encoding" not in said
    # The control: with every fact holding, nothing is blamed.
    assert _failing_functions({"evidence": [{"holds": True, "functions": ["attention"]}]}) == ""


def test_a_lab_word_elsewhere_in_the_texts_does_not_make_a_coincidence_evidence(good, folder):
    # «Mi gato pesa 0,34 kilos» beside a conclusion that speaks of «pesos»: the number's own
    # sentence names no measurement. The control: the same number in a sentence that does.
    fresh = validate(good, folder / "notebook_student.ipynb")
    assert not failed(fresh)
    number = next(v for item in good["evidence"] for v in _numbers_in(item["values"])
                  if 0.1 < abs(v) < 1)
    shown = f"{number:.2f}".replace(".", ",")
    extension = good["student_extension"]
    extension["measurement"] = f"Mi gato pesa {shown} kilos y come dos veces al día."
    extension["conclusion"] = "Los pesos de atención se reparten entre las claves según el escalado."
    assert "cites_lab_numbers" in failed(validate(good, folder / "notebook_student.ipynb"))
    extension["measurement"] = f"El mayor peso medio de la atención es {shown} con estas entradas."
    assert "cites_lab_numbers" not in failed(validate(good, folder / "notebook_student.ipynb"))


def _numbers_in(values):
    for value in values.values():
        for item in (value if isinstance(value, list) else [value]):
            if isinstance(item, float):
                yield item


def test_a_result_that_changes_between_runs_names_the_functions_its_facts_use():
    """Criterion 3 says who changes from run to run (issue 31: a block with unseeded dropout
    was «alguna de tus funciones»): the functions every changed fact uses; the control, a
    change outside the facts, still names nobody."""
    fresh = {"evidence": [{"id": "a", "functions": ["attention"], "values": {"x": 1}},
                          {"id": "b", "functions": ["attention", "transformer_block"],
                           "values": {"y": 2}},
                          {"id": "c", "functions": ["transformer_block"], "values": {"z": 3}}]}
    said = extension._changing_functions(fresh, ["evidence[1].values.y", "evidence[2].values.z"])
    assert said.startswith("tu `transformer_block`")
    both = extension._changing_functions(fresh, ["evidence[1].values.y"])
    assert "`attention` o `transformer_block`" in both
    assert extension._changing_functions(fresh, ["seed"]) == "alguna de tus funciones"



def test_criterion_3_tells_randomness_from_a_stale_copy_by_a_second_fresh_run():
    """Issue 31: a block with dropout read «No edites su salida», as if the student had edited.
    A second fresh run decides: runs that disagree are randomness, named by the facts that
    moved (a fact that repeats clears its functions); runs that agree mean the saved copy is
    not what the functions give now, and only then is an edit mentioned."""
    def fact(i, functions, value):
        return {"id": f"f{i}", "functions": functions, "holds": True, "values": {"v": value}}

    def printed(values):
        return printed_by_lab({"seed": 55, "evidence": [
            fact(0, ["attention"], values[0]),
            fact(1, ["attention", "transformer_block"], values[1])]})

    saved = {"seed": 55, "evidence": [fact(0, ["attention"], 1.0),
                                      fact(1, ["attention", "transformer_block"], 2.0)],
             "student_extension": GOOD_EXTENSION}
    (random,) = validate(saved, only="lab_output_unchanged", lab_run=printed([1.0, 2.5]),
                         rerun=lambda: printed([1.0, 2.7]))
    assert not random.passed and "y no por tu copia" in random.message
    assert "tu `transformer_block`" in random.message and "No edites" not in random.message
    # The control: two fresh runs that agree, and a saved copy that does not.
    (stale,) = validate(saved, only="lab_output_unchanged", lab_run=printed([1.0, 2.5]),
                        rerun=lambda: printed([1.0, 2.5]))
    assert not stale.passed and "dos ejecuciones nuevas coinciden" in stale.message
    assert "No edites su salida" in stale.message and "transformer_block" not in stale.message

# -- the ablation's numbers, carried by the lab as result.ablacion, are citable (issue 33) ------


def ablation_number():
    """A number ``python ablacion.py`` prints, and lab.py carries: the gradient that reaches
    W_Q and W_K early in training without √d_k, seed 0."""
    from attention.lab import ABLATION

    (fact,) = [item for item in ABLATION["evidence"] if item["id"] == "sin_escala_raiz_dk"]
    return fact["values"]["early_gradient_without"][0]


def citing(good, measurement, conclusion="Sin la escala, el modelo aprende peor que con ella."):
    data = copy.deepcopy(good)
    data["student_extension"].update(measurement=measurement, conclusion=conclusion)
    return data


def spanish(value, digits=4):
    return f"{value:.{digits}g}".replace(".", ",")


def test_a_number_of_the_ablation_counts_only_beside_one_of_the_student_s_own_on_every_door(
        good, folder, capsys):
    """Issue 51.6: the ablation's numbers are every student's, so alone they earn nothing; beside
    a number of the student's own working code they do no harm. The terminal's validator (a fresh
    lab.py in a folder without ablacion.py), the notebook's (the lab on the kernel's functions)
    and the grader's (the lesson's lab, the student's functions answered as the sandbox answers)
    agree."""
    import extension
    from attention import lab
    from kit_autograder import challenge
    from reference import attention as reference

    ablation = (f"Sin dividir por √d_k, el gradiente que llega a W_Q y W_K al principio con la "
                f"semilla 0 es {spanish(ablation_number())}.")
    alone = citing(good, ablation)
    assert not (folder / "ablacion.py").exists()
    problems = failed(validate(alone, folder / "notebook_student.ipynb"))
    assert list(problems) == ["cites_lab_numbers"]
    assert "de result.ablacion, que son los mismos para toda la clase" in problems["cites_lab_numbers"]
    functions = {name: getattr(reference, name) for name in GRADED}
    verdicts = {criterion: passed for criterion, passed, _ in challenge.grade(lab, alone, functions)}
    assert verdicts["cites_lab_numbers"] is False and sum(verdicts.values()) == 4
    # The control: the same sentence beside a number of the student's own working attention.
    both = citing(good, ablation + " " + GOOD_EXTENSION["measurement"])
    assert failed(validate(both, folder / "notebook_student.ipynb")) == {}
    assert all(passed for _, passed, _ in challenge.grade(lab, both, functions))
    assert extension.run_in_notebook(write(folder, both, "ablacion_citada.json"), functions) == 0
    assert "5 de 5 criterios se cumplen." in capsys.readouterr().out


@pytest.mark.parametrize("measurement", [
    "Mi gato pesa {n} kilos y duerme mucho todo el día.",  # a coincidence: no word of the ablation
    "Sin dividir por √d_k, el gradiente que llega a W_Q y W_K es {off}.",  # a number not printed
    "Es {n}. Sin dividir por √d_k, el gradiente que llega a W_Q y W_K sube.",  # its word elsewhere
])
def test_a_coincidence_or_a_number_the_ablation_did_not_print_is_no_evidence(good, folder,
                                                                              measurement):
    number = ablation_number()
    off = number + 0.001  # no number the lab printed, as the assertion below shows
    assert spanish(off).replace(",", ".") not in json.dumps(good)
    data = citing(good, measurement.format(n=spanish(number), off=spanish(off)),
                  "Sin la escala, el modelo aprende peor que con ella.")
    assert "cites_lab_numbers" in failed(validate(data, folder / "notebook_student.ipynb"))


def test_a_word_that_could_belong_to_anything_does_not_name_the_measurement(good, folder,
                                                                              monkeypatch):
    """Issue 48.11: «Los pesos de mi gato suman 0,34 kilos.» and «La pérdida de mi equipo de
    fútbol fue 0,49 goles por partido.» passed criterion 4 with one word of a fact beside a
    number the lab printed. Two words of the measurement are needed; the control names it."""
    (saturation,) = [e for e in good["evidence"] if e["id"] == "softmax_saturation"]
    weight = saturation["values"]["max_weight_unscaled"][0]
    (positions,) = [e for e in good["result"]["ablacion"]["evidence"]
                    if e["id"] == "sin_codificacion_posicional"]
    loss = positions["values"]["held_out_loss_median_with"]
    for coincidence in (f"Los pesos de mi gato suman {spanish(weight, 3)} kilos.",
                        f"La pérdida de mi equipo de fútbol fue {spanish(loss, 3)} goles por partido."):
        data = citing(good, coincidence, "Sin números en esta frase.")
        (verdict,) = validate(data, folder / "notebook_student.ipynb", only="cites_lab_numbers")
        assert not verdict.passed and "dos palabras" in verdict.message, coincidence
        with monkeypatch.context() as one_word:  # the attack's control: one word was enough
            one_word.setattr(extension, "MIN_NAMING_WORDS", 1)
            (before,) = validate(data, folder / "notebook_student.ipynb", only="cites_lab_numbers")
        # (the ablation's loss, once named, is every student's number: issue 51.6)
        assert before.passed or "no cuentan por sí solos" in before.message, coincidence
    named = citing(good, f"El mayor peso medio sin escalar, con d_k = 4, es {spanish(weight, 3)}.",
                   "Sin números en esta frase.")
    (verdict,) = validate(named, folder / "notebook_student.ipynb", only="cites_lab_numbers")
    assert verdict.passed, verdict.message


# -- issue 51.6: the challenge's points follow working code ---------------------------------------

IGNORES_Q_AND_K = '''def attention(Q, K, V, mask=None):
    weights = np.ones((len(Q), len(K))) / len(K)
    return weights @ V, weights
'''


def ablation_only_extension():
    """Five sentences that cite only the ablation's numbers, which lab.py ships to everyone."""
    from attention.lab import ABLATION

    values = {e["id"]: e["values"] for e in ABLATION["evidence"]}
    scale, positions = values["sin_escala_raiz_dk"], values["sin_codificacion_posicional"]
    say = lambda value: spanish(value)  # noqa: E731
    return {
        "supuesto": f"Sin dividir por √d_k el gradiente que llega a W_Q y W_K al principio es "
                    f"{say(scale['early_gradient_without'][0])} con la semilla 0.",
        "medicion": f"El mayor peso medio de la atención antes de entrenar sin la pieza es "
                    f"{say(scale['initial_max_weight_without'][0])} con la semilla 0.",
        "conclusion": f"La mediana de la pérdida en secuencias nuevas sin la pieza es "
                      f"{say(positions['held_out_loss_median_without'])} sin codificación posicional.",
        "limitacion": f"La exactitud sin la pieza es {say(positions['accuracy_without'][0])} "
                      "en un modelo diminuto.",
        "riesgo": "No usaría la mediana de la pérdida en secuencias nuevas para elegir una arquitectura real.",
    }


def challenge_verdicts(functions, extension_texts):
    """The grader's verdicts (kit_autograder/challenge.py) on a notebook whose functions are
    ``functions`` (name -> source) and whose resultado is its own lab run plus the texts."""
    from attention import lab
    from kit_autograder import challenge
    from reference import attention as reference

    # The notebook's given helpers, then its four function cells.
    namespace = {"np": np, "softmax": reference.softmax, "layer_norm": reference.layer_norm}
    for name in GRADED:
        exec(functions.get(name) or stub(name), namespace)
    callables = {name: namespace[name] for name in GRADED}
    data = {**json.loads(extension.lab_run_with(lab, callables, lab.DEFAULT_SEED).stdout),
            "student_extension": extension_texts}
    return {criterion: passed for criterion, passed, _ in challenge.grade(lab, data, callables)}


def test_an_attention_that_ignores_q_and_k_with_the_ablation_s_numbers_earns_nothing(monkeypatch):
    """The attack of issue 51.6 (6/6 of the challenge before): a three-line attention that
    ignores Q and K, the other functions stubs, and five sentences citing the numbers every
    student's lab.py carries. Its control, without the defence (any measured fact is evidence
    and the ablation's numbers are the student's), earns every criterion again; the stub with
    the same sentences earns nothing either way."""
    texts = ablation_only_extension()
    attack = challenge_verdicts({"attention": IGNORES_Q_AND_K}, texts)
    assert not any(attack.values()), attack
    stub_only = challenge_verdicts({}, texts)
    assert not any(stub_only.values()), stub_only
    with monkeypatch.context() as undefended:
        undefended.setattr(extension, "working_facts", lambda fresh: [
            item for item in fresh.get("evidence") or [] if item.get("holds") is not None])
        undefended.setattr(extension, "CARRIED", extension.OWN)
        assert all(challenge_verdicts({"attention": IGNORES_Q_AND_K}, texts).values())


def test_working_code_with_its_own_number_earns_every_criterion_and_one_working_function_is_enough():
    """The legitimate control of the attack: the reference's functions and a sentence citing a
    number of their own earn all six points; one working function (the positional encoding),
    the others stubs, is evidence too, and a citation of its own fact earns the criterion."""
    from reference import attention as reference

    functions = {name: inspect.getsource(getattr(reference, name)) for name in GRADED}
    assert all(challenge_verdicts(functions, dict(GOOD_EXTENSION)).values())
    only_pe = {"positional_encoding": functions["positional_encoding"]}
    # A round-off number, matched by its size (its digits are the machine's).
    texts = {**GOOD_EXTENSION, "measurement": "La mayor diferencia entre PE(pos + 3) y su rotación "
                                              "R_3·PE(pos) es 2,2e-16."}
    assert all(challenge_verdicts(only_pe, texts).values())
