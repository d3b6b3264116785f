"""The identity covers everything the job can observe of its submission (issue 19).

hidden_inputs.py states the invariant: a job sees, of its submission, exactly its ``world``
(``{name: bytes}``, the notebook always under one fixed name), and the hidden inputs hash that
world. So two submissions whose worlds differ get different inputs, a regrade gets the same,
and renaming a file (or the notebook inside an export zip) changes nothing the job can see.
What a job really sees, on every door, is checked by the attack suite (test_attacks.py,
``28_renombrada``); here, the world and its identity.
"""

import numpy as np
from hypothesis import given, settings, strategies as st

from attention.cases import cases_for
from grading_harness import zip_bytes
from kit_autograder.hidden_inputs import NOTEBOOK_NAME, generator, identity, world
from kit_autograder.submission import load

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent
NOTEBOOK = (ROOT / "assignments/attention/examples/parcial.ipynb").read_bytes()
ASSIGNMENT = "055-atencion-transformer"
SALT = b"una sal de prueba"
# Few names and few bytes, so that equal worlds come up as often as different ones.
WORLDS = st.dictionaries(st.sampled_from(["a", "b", "ab", NOTEBOOK_NAME, "ñ"]),
                         st.sampled_from([b"", b"a", b"b", b"ab", b"\0"]), max_size=3)


def inputs_of(files):
    return [case.inputs(generator(SALT, identity(files), "attention", case.name))["Q"]
            for case in cases_for("attention")]


def loaded(tmp_path, name, data, kit_files=()):
    path = tmp_path / name
    path.write_bytes(data)
    return load(path, ASSIGNMENT).world(kit_files)


@settings(max_examples=500, deadline=None)
@given(WORLDS, WORLDS)
def test_two_worlds_get_the_same_identity_exactly_when_they_are_the_same(first, second):
    assert (identity(first) == identity(second)) == (first == second)


@settings(max_examples=50, deadline=None)
@given(WORLDS, WORLDS)
def test_two_worlds_that_differ_get_different_inputs_and_a_world_always_the_same(first, second):
    again = inputs_of(dict(first))
    assert all(np.array_equal(a, b) for a, b in zip(inputs_of(first), again))
    if first != second:
        assert not any(np.array_equal(a, b) for a, b in zip(inputs_of(first), inputs_of(second)))


def test_the_job_never_learns_the_uploads_name(tmp_path):
    plain = loaded(tmp_path, "entrega_ana.ipynb", NOTEBOOK)
    renamed = loaded(tmp_path, "tabla_de_respuestas_0123456789abcdef.ipynb", NOTEBOOK)
    zipped = loaded(tmp_path, "exportada.zip", zip_bytes({"otra_tabla_fedcba.ipynb": NOTEBOOK}))
    assert plain == renamed == zipped == {NOTEBOOK_NAME: NOTEBOOK}
    assert identity(plain) == identity(renamed) == identity(zipped)


def test_every_file_of_an_export_zip_the_job_sees_is_in_its_world(tmp_path):
    members = {"cuaderno.ipynb": NOTEBOOK, "__zip_filename__": b"ana.zip", "datos.csv": b"1,2"}
    with_files = loaded(tmp_path, "a.zip", zip_bytes(members))
    assert with_files == {NOTEBOOK_NAME: NOTEBOOK, "__zip_filename__": b"ana.zip",
                          "datos.csv": b"1,2"}
    other = loaded(tmp_path, "b.zip", zip_bytes({**members, "datos.csv": b"1,3"}))
    assert identity(other) != identity(with_files)
    # A file named like one of the kit's is replaced by the kit's own: the job never sees it.
    shadowed = loaded(tmp_path, "c.zip", zip_bytes({**members, "lab.py": b"x = 1"}), {"lab.py"})
    assert shadowed == with_files


def test_a_regrade_of_the_same_file_gets_the_same_inputs(tmp_path):
    first = inputs_of(loaded(tmp_path, "a.ipynb", NOTEBOOK))
    second = inputs_of(loaded(tmp_path, "a.ipynb", NOTEBOOK))
    assert all(np.array_equal(a, b) for a, b in zip(first, second))


def test_control_a_name_in_the_identity_would_be_a_second_world_for_the_same_bytes():
    # What the rename attack needs: the same bytes (the same inputs) under another name the
    # job can read. With the name in the job's world, the two worlds would differ while their
    # identities, made of the bytes alone, did not.
    as_uploaded = [{"entrega_ana.ipynb": NOTEBOOK}, {"tabla_0123.ipynb": NOTEBOOK}]
    assert as_uploaded[0] != as_uploaded[1]
    bytes_only = [identity({NOTEBOOK_NAME: files[name]}) for files in as_uploaded
                  for name in files]
    assert bytes_only[0] == bytes_only[1]
