"""The static policy: honest notebooks raise nothing, each risky construct is named, and code
students received unchanged is never held against them."""

import nbformat
import pytest

from autograder.assign import NOTEBOOK_NAME, SOLUTION_NAME
from autograder.verify import extraction, policy


def notebook(*cells):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


@pytest.fixture(scope="module")
def student(built_dist):
    return nbformat.read(str(built_dist / "student" / NOTEBOOK_NAME), as_version=4)


@pytest.fixture(scope="module")
def given(student):
    return policy.given_fingerprints(student)


def test_the_notebooks_students_receive_and_the_solution_raise_nothing(built_dist, student, given):
    solution = nbformat.read(str(built_dist / "solution" / SOLUTION_NAME), as_version=4)
    assert policy.notebook_violations(student, given) == []
    assert policy.notebook_violations(solution, given) == []


def test_the_given_validator_cell_would_be_flagged_if_it_were_the_students_own(student):
    # The challenge cell that writes resultado.json opens a file: exempt only because it is given.
    messages = {v.message for v in policy.notebook_violations(student)}
    assert any("`open`" in m for m in messages)


def test_a_given_statement_with_a_new_number_stays_exempt_but_not_with_a_new_string(student, given):
    validator = next(c for c in student.cells if 'open("resultado.json"' in c.source)
    reindented = notebook("import numpy as np", validator.source.replace("indent=2", "indent=4"))
    assert policy.notebook_violations(reindented, given) == []
    other_file = notebook("import numpy as np", validator.source.replace('"resultado.json", "w"', '"evil.py", "w"'))
    assert policy.notebook_violations(other_file, given)


HONEST = [
    "import numpy as np\nimport math\n"
    "def attention(Q, K, V, mask=None):\n"
    "    s = np.einsum('id,jd->ij', Q, K) / math.sqrt(K.shape[1])\n"
    "    if mask is not None:\n        s = np.where(mask, s, np.finfo(s.dtype).min)\n"
    "    w = np.exp(s - s.max(axis=1, keepdims=True))\n    w /= w.sum(axis=1, keepdims=True)\n"
    "    return w @ V, w",
    "import numpy\nfrom math import sqrt\nclass Shapes:\n    def __init__(self, Q):\n"
    "        self.n = Q.shape[0]\n    def __repr__(self):\n        return f'{self.n}'\n",
    "%matplotlib inline\n%timeit sum(range(10))",
    "import numpy as np\nx = np.zeros(3)\nx[0] += 1\nprint(np.__version__, print.__name__)",
    "for t in range(3):\n    outputs = []\n    outputs.append(t)",
]


@pytest.mark.parametrize("source", HONEST)
def test_honest_code_raises_nothing(source):
    assert policy.notebook_violations(notebook("import numpy as np", source)) == []


RISKY = [
    ("import os", "`os`"),
    ("import subprocess\nsubprocess.run(['ls'])", "`subprocess`"),
    ("from pathlib import Path", "`pathlib`"),
    ("import shutil, socket", "`shutil`"),
    ("open('tests/attention.py').read()", "`open`"),
    ("np.load('x.npy')", "numpy"),
    ("exec('x = 1')", "`exec`"),
    ("eval('1')", "`eval`"),
    ("compile('1', 'x', 'eval')", "`compile`"),
    ("__import__('os')", "`__import__`"),
    ("import importlib", "`importlib`"),
    ("import inspect", "`inspect`"),
    ("import gc", "`gc`"),
    ("import sys\nsys.modules['autograder.checks'].check = None", "`sys`"),
    ("import builtins", "`builtins`"),
    ("g = globals()", "`globals()`"),
    ("l = locals()", "`locals()`"),
    ("v = vars()", "`vars()`"),
    ("setattr(np, 'allclose', lambda *a: True)", "modifica una biblioteca importada"),
    ("np.allclose = lambda *a, **k: True", "modifica una biblioteca importada (`np.allclose`)"),
    ("del np.isclose", "modifica una biblioteca importada"),
    ("f = print.__globals__", "`__globals__`"),
    ("c = (lambda: 0).__code__", "`__code__`"),
    ("object.__subclasses__()", "`__subclasses__`"),
    ("getattr(np, name)", "nombres calculados"),
    ("getattr(np, '__dict__')", "'__dict__'"),
    ("from reference import attention", "`reference`"),
    ("import autograder.checks", "`autograder.checks`"),
    ("from otter.test_files import TestFile", "`otter.test_files`"),
    ("class A(np.ndarray):\n    pass", "subclase de ndarray"),
    ("class A:\n    def __eq__(self, other):\n        return True", "`A.__eq__`"),
    ("!cat tests/attention.py", "consola"),
    ("%run otro.py", "`%run`"),
    ("%%bash\nls", "`%bash`"),
    ("import sys\nframe = sys._getframe(1).f_globals", "`f_globals`"),
]


@pytest.mark.parametrize("source, named", RISKY)
def test_each_risky_construct_is_flagged_by_name(source, named):
    found = policy.notebook_violations(notebook("import numpy as np", source))
    messages = [v.message for v in found]
    assert any(named in message for message in messages), messages


def chunks(source, function):
    return extraction.student_chunks(notebook("import numpy as np", source), function)


def test_a_graded_function_may_import_numpy_and_math_only():
    allowed = "import math\ndef attention(Q, K, V, mask=None):\n    import numpy.linalg\n" \
              "    return math.sqrt(2), np.zeros(1)"
    assert policy.graded_import_violations("attention", chunks(allowed, "attention")) == []
    scipy = "def attention(Q, K, V, mask=None):\n    from scipy.special import softmax\n" \
            "    return softmax(Q), Q"
    found = policy.graded_import_violations("attention", chunks(scipy, "attention"))
    assert [v.message for v in found] == ["`attention` importa `scipy.special`, y las funciones "
                                          "evaluadas solo pueden usar numpy y math"]


def test_an_import_line_counts_only_for_the_names_the_function_reads():
    source = ("import numpy as np, json\n"
              "def attention(Q, K, V, mask=None):\n    return np.ones(1), Q")
    assert policy.graded_import_violations("attention", chunks(source, "attention")) == []


def test_extracted_statements_keep_their_cell_numbers():
    nb = notebook("import numpy as np", "x = 1", "def helper(a):\n    return np.sqrt(a)",
                  "def attention(Q, K, V, mask=None):\n    return helper(Q), Q")
    found = extraction.student_chunks(nb, "attention")
    assert [(c["cell"], c["names"]) for c in found] == [(1, ["np"]), (3, ["helper"]),
                                                        (4, ["attention"])]
