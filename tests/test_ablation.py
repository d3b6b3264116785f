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


@pytest.fixture(scope="module")
def measured():
    return ablacion.run((0, 1, 2))


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


def test_the_command_prints_the_contract_and_draws_the_curves(tmp_path):
    figure = tmp_path / "ablacion.png"
    done = subprocess.run([sys.executable, str(ROOT / "assignments" / "attention" / "ablacion.py"),
                           "--semillas", "0", "--figura", str(figure)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["kind"] == ablacion.KIND and result["limitations"]
    assert figure.read_bytes().startswith(b"\x89PNG")
    wrong = subprocess.run([sys.executable, str(ROOT / "assignments" / "attention" / "ablacion.py"),
                            "--semillas", "uno"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "números enteros" in wrong.stderr
    assert "usage" not in wrong.stderr + wrong.stdout  # argparse's English never shows


def test_the_saved_results_lab_py_cites_are_what_ablacion_py_measures(measured):
    """lab.py's three «ablacion_…» facts read ablacion_resultados.json: those numbers must be
    this ablacion.py's, to its printed precision (a BLAS may move the last digit)."""
    result, _ = measured
    saved = json.loads((ROOT / "assignments" / "attention" / "ablacion_resultados.json")
                       .read_text("utf-8"))
    assert [e["id"] for e in saved["evidence"]] == [e["id"] for e in result["evidence"]]
    for kept, fresh in zip(saved["evidence"], result["evidence"]):
        assert kept["fact"] == fresh["fact"] and kept["holds"] == fresh["holds"]
        for key, values in fresh["values"].items():
            assert kept["values"][key] == pytest.approx(values, rel=1e-2, abs=1e-4), key


def test_lab_py_carries_the_ablation_so_a_challenge_can_cite_it(tmp_path):
    from attention import lab

    facts = {e["id"]: e for e in lab.run_lab({}, seed=lab.DEFAULT_SEED)["evidence"]}
    for ablation_id, *_ in ablacion.ABLATIONS:
        fact = facts[f"ablacion_{ablation_id}"]
        assert fact["holds"] is True and fact["functions"] == []
        assert fact["values"]["held_out_loss_without"]
    # The control: without the saved file the facts are not measured, and say why.
    missing = tmp_path / "no_existe.json"
    original = lab.ABLATION_RESULTS
    try:
        lab.ABLATION_RESULTS = missing
        facts = {e["id"]: e for e in lab.run_lab({}, seed=lab.DEFAULT_SEED)["evidence"]}
    finally:
        lab.ABLATION_RESULTS = original
    assert facts["ablacion_sin_residuales"]["holds"] is None
    assert "falta no_existe.json junto a lab.py" in facts["ablacion_sin_residuales"]["not_measured"]
