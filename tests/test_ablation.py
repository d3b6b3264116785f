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
