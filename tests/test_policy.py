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


TRICKY_CELLS = [
    "%matplotlib inline\nimport numpy as np", "%%time\nx = 1", "!pip install numpy",
    "files = !ls", "t = %timeit -o sum(range(9))", "np.exp?", "np.exp??", "?np.exp",
    ">>> x = 1\n>>> x + 1", "In [1]: x = 2\n   ...: y = x", "/print 1, 2", ",print a b",
    ";print a b", "    x = 1\n    y = 2", "\n\nx = 1", "x = 5 % 2", "print('100 %')",
    "a = b != c", "x = 1 if y else 2\n# ¿Por qué? Porque sí.", "def f(x):\n    return x\n",
    "s = '...'\n...", "class A:\n    pass", "while True:\n    break", "x = (\n    1,\n)",
    "print(f'{x:.1%}')", "def g():\n    !ls\n", "x =", "import os; os.system('ls')  # !",
]


def master_cells():
    """The code cells of the lesson's master, as students and the solution have them."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "assignments" / "attention" / "master.py"
            ).read_text("utf-8")
    return [cell.split("\n", 1)[1] if "\n" in cell else "" for cell in text.split("\n# %%")
            if not cell.lstrip(" ").startswith("[markdown]")]


def test_a_plain_python_cell_is_read_as_ipython_would_read_it():
    # cell_python skips IPython's transformations where they would find nothing to change:
    # every cell must parse to the same tree either way (or fail to parse either way).
    from IPython.core.inputtransformer2 import TransformerManager

    def tree(text):
        try:
            return ast.dump(ast.parse(text))
        except SyntaxError:
            return "SyntaxError"

    cells = TRICKY_CELLS + master_cells()
    skipped = 0
    for cell in cells:
        ipython = TransformerManager().transform_cell(cell)
        assert tree(policy.cell_python(cell)) == tree(ipython), cell
        skipped += policy.cell_python(cell) is cell
    # Control: the magics, escapes and prompts above are transformed, not skipped.
    assert all(policy.cell_python(cell) != cell for cell in TRICKY_CELLS[:15])
    assert skipped > len(cells) // 2
