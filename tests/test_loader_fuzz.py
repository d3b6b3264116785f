"""Every notebook that is valid JSON gets a row with a reason, never «error interno» (issue 19).

A notebook whose ``metadata.kernelspec`` was a string crashed the loader with an
AttributeError. The same class of input, a JSON notebook with fields of the wrong type, is
fuzzed here with hypothesis, using nbformat's own v4 schema as the map: every field the schema
describes (and the kit's ``metadata.otter``), at every level and in every cell and output of a
real submission, is deleted, nulled, given a value of another JSON type, made huge or nested,
and ``nbformat_minor`` takes any integer. ``load`` must then either accept the notebook or
refuse it with a Spanish reason, and what it accepts must render into a report.
"""

import copy
import json
import tempfile
from pathlib import Path

import nbformat
from hypothesis import HealthCheck, given, settings, strategies as st

from kit_autograder.report import feedback
from kit_autograder.submission import Rejected, load
from kit_autograder.verdicts.record import Record

ROOT = Path(__file__).resolve().parent.parent
BASE = json.loads((ROOT / "assignments/attention/examples/parcial.ipynb").read_text("utf-8"))
ASSIGNMENT = BASE["metadata"]["otter"]["assignment_name"]
SCHEMA = json.loads((Path(nbformat.__file__).parent / "v4" / "nbformat.v4.schema.json")
                    .read_text("utf-8"))
JSON_TYPES = ("string", "integer", "number", "boolean", "null", "array", "object")
# What the kit itself reads beyond the schema's fields.
KIT_FIELDS = [(("metadata", "otter"), ("object",)),
              (("metadata", "otter", "assignment_name"), ("string",))]


def _resolve(node):
    while "$ref" in node:  # "#/definitions/misc/source": a JSON pointer into the schema
        target = SCHEMA
        for step in node["$ref"].lstrip("#/").split("/"):
            target = target[step]
        node = target
    return node


def _alternatives(node):
    node = _resolve(node)
    found = [node]
    for key in ("oneOf", "anyOf", "allOf"):
        for option in node.get(key, []):
            found += _alternatives(option)
    return found


def _types(node):
    types = set()
    for option in _alternatives(node):
        kind = option.get("type")
        types |= set(kind) if isinstance(kind, list) else {kind} if kind else set()
    return tuple(sorted(types)) or JSON_TYPES


def schema_fields(node, value, path=()):
    """(path, allowed JSON types) of every field ``node`` describes, inside ``value``."""
    for option in _alternatives(node):
        for name, child in option.get("properties", {}).items():
            yield path + (name,), _types(child)
            if isinstance(value, dict) and name in value:
                yield from schema_fields(child, value[name], path + (name,))
        items = option.get("items")
        if items and isinstance(value, list):
            for index, item in enumerate(value):
                yield from schema_fields(items, item, path + (index,))


FIELDS = sorted(set(schema_fields(SCHEMA, BASE)) | set(KIT_FIELDS), key=repr)
# The same field of every cell (or output) is one kind of field: drawing the kind first gives
# the notebook's few top-level fields as many draws as the hundreds inside its cells.
KINDS = {}
for _path, _allowed in FIELDS:
    KINDS.setdefault(tuple("*" if type(step) is int else step for step in _path), []).append(
        (_path, _allowed))

HUGE = st.sampled_from(["x" * 200_000, 10**30, -(10**30), 1e308, [[[[[[[[[[[]]]]]]]]]]],
                        {"a": {"b": {"c": {"d": [None] * 1000}}}}, ["x"] * 10_000])
VALUES = {
    "string": st.text(max_size=50), "integer": st.integers(-10**6, 10**6),
    "number": st.floats(allow_nan=False, allow_infinity=False), "boolean": st.booleans(),
    "null": st.none(), "array": st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5)),
                                         max_size=4),
    "object": st.dictionaries(st.text(max_size=5), st.one_of(st.none(), st.integers(),
                                                              st.text(max_size=5)), max_size=3),
}


@st.composite
def mutation(draw):
    path, allowed = draw(st.sampled_from(KINDS[draw(st.sampled_from(sorted(KINDS)))]))
    kind = draw(st.sampled_from(["delete", "null", "wrong type", "huge", "nested"]))
    if kind == "delete":
        return path, None, True
    if kind == "null":
        return path, None, False
    if kind == "huge":
        return path, draw(HUGE), False
    if kind == "nested":
        return path, {"nested": [draw(VALUES["object"]), draw(VALUES["array"])]}, False
    wrong = [t for t in JSON_TYPES if t not in allowed] or list(JSON_TYPES)
    return path, draw(VALUES[draw(st.sampled_from(wrong))]), False


def mutated(mutations, minor):
    notebook = json.loads(json.dumps(BASE))
    if minor is not None:
        notebook["nbformat_minor"] = minor
    for path, value, delete in mutations:
        parent = notebook
        for step in path[:-1]:
            if isinstance(parent, dict) and step in parent:
                parent = parent[step]
            elif isinstance(parent, list) and isinstance(step, int) and step < len(parent):
                parent = parent[step]
            else:
                break
        else:
            if isinstance(parent, dict):
                if delete:
                    parent.pop(path[-1], None)
                else:
                    parent[path[-1]] = copy.deepcopy(value)
            elif isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent):
                # A copy: hypothesis may draw one object twice, and a later mutation that walks
                # into it would make the notebook contain itself, which no JSON file can.
                parent[path[-1]] = copy.deepcopy(value)
    return notebook


def loaded_or_refused(data: bytes):
    """What the grader does first with an upload: a Submission, or a Rejected with a reason."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "entrega.ipynb"
        path.write_bytes(data)
        try:
            return load(path, ASSIGNMENT)
        except Rejected as rejected:
            return rejected


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(mutation(), min_size=1, max_size=3),
       st.one_of(st.none(), st.integers(-10**20, 10**20)))
def test_any_json_notebook_is_loaded_or_refused_with_a_spanish_reason(mutations, minor):
    data = json.dumps(mutated(mutations, minor)).encode("utf-8")
    outcome = loaded_or_refused(data)
    if isinstance(outcome, Rejected):
        assert isinstance(outcome.reason, str) and outcome.reason and len(outcome.reason) < 2000
        assert "error interno" not in outcome.reason
        record = Record(file="entrega.ipynb", stem="entrega", graded=False, reason=outcome.reason)
    else:
        assert all(isinstance(cell, str) for cell in outcome.cells)
        assert all(isinstance(note, str) and len(note) < 500 for note in outcome.notes)
        assert set(outcome.world()) == {"entrega.ipynb"}
        record = Record(file=outcome.file, stem="entrega", notes=outcome.notes)
    assert feedback.render(record).startswith("# Informe de evaluación")


def test_a_kernelspec_that_is_a_string_is_graded_with_a_note():
    notebook = json.loads(json.dumps(BASE))
    notebook["metadata"]["kernelspec"] = "python3"
    outcome = loaded_or_refused(json.dumps(notebook).encode())
    assert not isinstance(outcome, Rejected), outcome
    assert outcome.notes == ["tu cuaderno no dice qué kernel usa; se ha evaluado con python3, "
                             "como hace Gradescope"]


def test_control_the_map_covers_the_fields_that_used_to_crash_and_every_cell():
    paths = {path for path, _ in FIELDS}
    assert ("metadata", "kernelspec") in paths and ("metadata", "kernelspec", "name") in paths
    assert ("metadata", "otter", "assignment_name") in paths
    assert ("nbformat_minor",) in paths and ("cells",) in paths
    code_cells = [i for i, cell in enumerate(BASE["cells"]) if cell["cell_type"] == "code"]
    assert all(("cells", i, "source") in paths and ("cells", i, "outputs") in paths
               for i in code_cells)
    # ... and the crash was real: the loader's old reading of the kernel, on a string.
    notebook = mutated([(("metadata", "kernelspec"), "python3", False)], None)
    try:
        (notebook.get("metadata") or {}).get("kernelspec", {}).get("name")
    except AttributeError:
        pass
    else:
        raise AssertionError("a kernelspec string no longer breaks a naive reader")


def test_a_version_of_the_wrong_type_or_unknown_gets_its_own_reason():
    for version, said in (("4", "no es un número entero"), (3, "formato antiguo nbformat 3"),
                          (10**50, "nbformat desconocido"), (5, "nbformat 5")):
        outcome = loaded_or_refused(json.dumps({**BASE, "nbformat": version}).encode())
        assert isinstance(outcome, Rejected) and said in outcome.reason, (version, outcome)
