"""test_attacks.py's door tests through Gradescope's entry point (``graded_on_gradescope``).

The same tests, the same arena; only the door differs. Kept in a module of its own because that
door takes minutes (one run per submission): under `make test`'s ``--dist loadfile`` a worker
grades it while another grades test_attacks.py's three doors.
"""

import inspect

import pytest

import test_attacks
from markup_payloads import browser  # noqa: F401  (fixtures, by name)
from test_attacks import arena, graded_on_gradescope  # noqa: F401


@pytest.fixture(params=["graded_on_gradescope"])
def door(request):
    return request.getfixturevalue(request.param)


globals().update({name: test for name, test in vars(test_attacks).items()
                  if name.startswith("test_") and "door" in inspect.signature(test).parameters})
