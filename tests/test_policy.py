"""The reviewer's hints (kit_autograder/policy.py): what they point at, what they exempt, and
that what they keep in memory does not grow with the class."""

import ast
import gc

from kit_autograder import policy

GIVEN = [
    "import numpy as np\nrng = np.random.default_rng(55)",
    "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
    "    return e / e.sum(axis=axis, keepdims=True)",
]


def test_a_student_cell_that_runs_code_built_at_run_time_is_pointed_at():
    hints = policy.review_hints(GIVEN + ["exec('x = 1')"], policy.given_fingerprints(GIVEN))
    assert hints == ["revisar la celda [3]: ejecuta código construido en tiempo de ejecución "
                     "(`exec`)"]


def test_the_cells_students_received_are_exempt_even_with_other_numbers():
    reseeded = [GIVEN[0].replace("55", "7"), GIVEN[1]]
    risky = "import os\nos.listdir('.')"
    # Control: without the fingerprints, the same risky statement in a given cell is pointed at.
    assert policy.review_hints([risky], [])
    assert policy.review_hints(reseeded, policy.given_fingerprints(GIVEN)) == []
    assert policy.review_hints([risky], policy.given_fingerprints([risky])) == []


def test_each_students_own_cells_pass_through_the_parse_cache():
    # A class of distinct notebooks: the cache keeps a bounded number of trees, and nothing
    # else holds on to the rest.
    policy._parsed.cache_clear()
    given = policy.given_fingerprints(GIVEN)
    for student in range(2000):
        policy.review_hints(GIVEN + [f"# entrega {student}\nx = {student}"], given)
    info = policy._parsed.cache_info()
    assert info.currsize <= info.maxsize < 2000
    assert info.hits >= 2 * 2000 - len(GIVEN)  # the given cells were parsed once, then reused
    gc.collect()
    alive = sum(isinstance(o, ast.Assign) for o in gc.get_objects())
    assert alive <= info.maxsize + 10, alive  # the students' statements went with their trees


def test_indexing_ones_own_array_with_a_library_call_is_not_modifying_the_library():
    idioms = ["import numpy as np\ndef f(scores, mask):\n"
              "    scores[np.where(mask == 0)] = -1e9\n    return scores",
              "import numpy as np\ndef f(s, mask):\n    s[np.logical_not(mask)] = -np.inf\n"
              "    return s"]
    for source in idioms:
        # Control: the target does hold an attribute of the imported library.
        target = ast.parse(source).body[1].body[0].targets[0]
        assert any(isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "np"
                   for node in ast.walk(target))
        assert not [h for h in policy.review_hints([source], []) if "biblioteca" in h]
    patched = "import numpy as np\nnp.where = lambda *args: 0"
    assert [h for h in policy.review_hints([patched], []) if "biblioteca" in h]
