"""The ablation lab (assignments/attention/ablacion.py, issue 33): without √d_k, without
positions and without residuals the tiny model measurably learns worse, beyond its variation
over seeds; a change that removes nothing is not called a degradation."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from attention import ablacion

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


ABLACION = ROOT / "assignments" / "attention" / "ablacion.py"
LAB_SOURCE = ROOT / "assignments" / "attention" / "lab.py"


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """What the student's command prints and draws, three seeds: one run serves every test
    (training is the module's whole cost)."""
    figure = tmp_path_factory.mktemp("ablacion") / "ablacion.png"
    done = subprocess.run([sys.executable, str(ABLACION), "--figura", str(figure)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), figure


def test_every_ablation_degrades_on_every_seed(measured):
    result, _ = measured
    assert [e["id"] for e in result["evidence"]] == [a[0] for a in ablacion.ABLATIONS]
    for fact in result["evidence"]:
        values = fact["values"]
        assert fact["holds"], fact["id"]
        assert min(values["held_out_loss_without"]) > max(values["held_out_loss_with"]), fact["id"]


def test_without_the_scale_the_softmax_starts_saturated(measured):
    result, _ = measured
    (fact,) = [e for e in result["evidence"] if e["id"] == "sin_escala_raiz_dk"]
    assert min(fact["values"]["initial_max_weight_without"]) > max(
        fact["values"]["initial_max_weight_with"])


def test_a_change_that_removes_nothing_is_not_a_degradation(monkeypatch):
    """Positive control of the criterion: the same setup twice must not «hold»."""
    same = ("nada", "Nada cambia.", ablacion.Setup(steps=60), dict(momentum=0.9))
    monkeypatch.setattr(ablacion, "ABLATIONS", (same,))
    result, _ = ablacion.run((0, 1))
    assert result["evidence"][0]["holds"] is False


def test_the_same_seed_trains_the_same_way():
    setup = replace(ablacion.Setup(), steps=20)
    assert ablacion.train(setup, 3)["loss"] == ablacion.train(setup, 3)["loss"]


def test_the_command_prints_the_contract_and_draws_the_curves(measured):
    result, figure = measured
    assert result["kind"] == ablacion.KIND and result["limitations"]
    assert result["seeds"] == list(ablacion.DEFAULT_SEEDS)
    assert figure.read_bytes().startswith(b"\x89PNG")
    wrong = subprocess.run([sys.executable, str(ABLACION), "--semillas", "uno"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "números enteros" in wrong.stderr
    assert "usage" not in wrong.stderr + wrong.stdout  # argparse's English never shows


def lab_copy_text(result):
    """``result``, what ablacion.py prints, as the ``ABLATION = {...}`` literal of lab.py."""
    lines = ["ABLATION = {", f"    \"kind\": {json.dumps(result['kind'])},",
             f"    \"seeds\": {json.dumps(result['seeds'])},", "    \"evidence\": ["]
    for item in result["evidence"]:
        lines += ["        {", f"            \"id\": {json.dumps(item['id'])},",
                  f"            \"fact\": {json.dumps(item['fact'], ensure_ascii=False)},",
                  f"            \"holds\": {item['holds']},", "            \"values\": {"]
        lines += [f"                {json.dumps(key)}: {json.dumps(value)},"
                  for key, value in item["values"].items()]
        lines += ["            },", "        },"]
    lines += ["    ],", "    \"limitations\": ["]
    lines += [f"        {json.dumps(text, ensure_ascii=False)}," for text in result["limitations"]]
    return "\n".join(lines + ["    ],", "}"])


def test_lab_py_carries_exactly_what_ablacion_py_prints(measured):
    """lab.py's result.ablacion is this copy of the command's output, which a student who runs
    `python ablacion.py` reads: the numbers they cite must be the lab's."""
    from attention import lab

    result, _ = measured
    assert lab.ABLATION == result, ("lab.py's ABLATION is not what ablacion.py prints now; "
                                    "replace it with:\n" + lab_copy_text(result))
    assert lab_copy_text(result) in LAB_SOURCE.read_text("utf-8")  # and written as this prints it
    assert set(result["evidence"][0]["values"]) <= set(lab.GLOSSES)  # each key has its Spanish


def test_every_number_ablacion_py_prints_cited_with_its_measurement_passes_criterion_4(measured):
    """Criterion 4, as the grader applies it, on every number of the command's output: cited
    beside its gloss it is evidence; in a sentence about a cat it is not (the control)."""
    from attention import lab
    from extension import lab_run_with, validate
    from reference import attention as reference

    result, _ = measured
    functions = {name: getattr(reference, name) for name in lab.GRADED}
    run = lab_run_with(lab, functions, lab.DEFAULT_SEED)
    printed = json.loads(run.stdout)
    extension = {"supuesto": "Quitar una pieza empeora el entrenamiento del modelo diminuto.",
                 "conclusion": "Sin números aquí.", "limitacion": "Un modelo de juguete y tres semillas.",
                 "riesgo": "No vale para decidir la arquitectura de un modelo grande."}
    cited = 0
    for item in result["evidence"]:
        for key, values in item["values"].items():
            for value in values:
                if value in (0.0, 1.0):
                    continue  # 0 and 1 are in any sentence: never citable (TRIVIAL_VALUES)
                shown = f"{value:.4g}".replace(".", ",")
                for text, evidence in ((f"{lab.GLOSSES[key].capitalize()}: {shown}.", True),
                                       (f"Mi gato pesa {shown} kilos y duerme.", False)):
                    data = {**printed, "student_extension": {**extension, "medicion": text}}
                    (verdict,) = validate(data, only="cites_lab_numbers", lab_run=run,
                                          glosses=lab.GLOSSES)
                    assert verdict.passed is evidence, (item["id"], key, text, verdict.message)
                cited += 1
    assert cited > 50
