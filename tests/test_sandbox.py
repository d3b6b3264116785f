"""The sandbox's own promises: plain data only, limits on what it reads, a zygote that comes
back if something kills it."""

import os
import signal
import socket

import numpy as np
import pytest

from kit_autograder.sandbox.client import JobFailed, Limits, Sandbox, checked_error
from kit_autograder.sandbox.inside import wire


def test_wire_rebuilds_arrays_tuples_and_bytes_exactly():
    header = {"a": np.arange(6, dtype=np.float64).reshape(2, 3), "m": np.eye(2, dtype=bool),
              "t": (1, [2.5, None], "texto"), "b": b"\x00\x01"}
    frame = wire.encode(header)
    back = wire.decode(frame[4:])
    assert np.array_equal(back["a"], header["a"]) and back["a"].dtype == np.float64
    assert back["m"].dtype == np.bool_ and back["t"] == (1, [2.5, None], "texto")
    assert back["b"] == b"\x00\x01"


@pytest.mark.parametrize("limits, header", [
    (wire.Limits(items=10), {"a": np.zeros(100)}),
    (wire.Limits(depth=3), {"a": [[[[[1]]]]]}),
    (wire.Limits(blobs=1), {"a": np.zeros(1), "b": np.zeros(1)}),
])
def test_wire_refuses_what_is_over_its_limits(limits, header):
    with pytest.raises(wire.WireError):
        wire.decode(wire.encode(header)[4:], limits)


def test_wire_refuses_a_frame_that_lies_about_its_arrays():
    frame = bytearray(wire.encode({"a": np.zeros(4)}))
    del frame[-8:]  # one float missing: the header still says 4
    frame[:4] = (len(frame) - 4).to_bytes(4, "big")
    with pytest.raises(wire.WireError):
        wire.decode(bytes(frame[4:]))


def test_an_error_report_keeps_only_known_words_and_integers():
    report = checked_error({"kind": "broadcast", "exception": "ValueError",
                            "shapes": [[6, 4], [6, 3]], "message": "Q = 0.123 0.456"})
    assert report == {"kind": "broadcast", "exception": "ValueError", "shapes": [[6, 4], [6, 3]]}
    for forged in ({"kind": "no such kind"}, {"kind": "other", "exception": "MiError"},
                   {"kind": "index", "numbers": ["1"]}, {"kind": "index", "numbers": [1.5]}):
        with pytest.raises(JobFailed):
            checked_error(forged)
    # The integers are kept, as the job's (what is shown of them is verdicts/sizes.py's
    # business); one no array could have is kept as nothing.
    assert checked_error({"kind": "index", "numbers": [3, 10**9, 10**30]}) == {
        "kind": "index", "numbers": [3, 10**9, None]}


def test_an_errors_line_comes_from_the_graders_copy_of_the_cells_never_from_the_job():
    """The job says where an error came out (a cell's position, a line): two integers. A text
    it sends is dropped, and the line shown is read from the grader's own cells, so code that
    saw a hidden input cannot write it there. The control: the same report's place is kept."""
    from kit_autograder.verdicts.messages import error_message, placed

    cells = ["import numpy as np", "def f(x):\n    y = x @ x.T\n    return y + x"]
    sent = {"kind": "broadcast", "exception": "ValueError", "shapes": [[3, 3], [3, 2]],
            "at": [1, 3], "line": "Q = 0.123 0.456"}
    report = checked_error(sent)
    assert "line" not in report and report["at"] == [1, 3]
    message = error_message("f", placed(report, cells))
    assert message.endswith("salta en tu línea `return y + x`") and "0.123" not in message
    for at in ([2, 1], [1, 4], [1, 0], [-1, 1], ["1", 1], [1, 1.0], [1]):
        assert "line" not in placed(checked_error({**sent, "at": at}), cells)
    # A stub's own `raise NotImplementedError` is no line of a mistake.
    stub = placed(checked_error({"kind": "not_implemented", "at": [1, 2]}), cells)
    assert "línea" not in error_message("f", stub)


def test_a_job_that_sends_garbage_gives_no_answer():
    with Sandbox(Limits(notebook_seconds=10)) as sandbox:
        job = sandbox.open_job()
        cell = ("import socket, os\n"
                "for fd in range(3, 64):\n"
                "    try:\n"
                "        os.write(fd, b'\\x00\\x00\\x00\\x10garbage-garbage!')\n"
                "    except OSError:\n"
                "        pass\n")
        with pytest.raises(JobFailed) as failed:
            job.run_notebook("n.ipynb", [cell], {})
        assert failed.value.reason == "protocol"
        job.close(kill=True)


def test_a_killed_zygote_comes_back_for_the_next_submission():
    with Sandbox(Limits(notebook_seconds=10)) as sandbox:
        os.killpg(sandbox._proc.pid, signal.SIGKILL)
        sandbox._proc.wait()
        job = sandbox.open_job()
        ran = job.run_notebook("n.ipynb", ["def f(x):\n    return x"], {})
        assert ran.errors == []
        assert job.call("f", [2.0])["parts"][0] == 2.0
        job.close()
        assert sandbox.restarts == 1


def test_a_figure_shown_prints_nothing_into_what_the_student_reads():
    # Positive control: the same shell without the hiding prints the figure's English repr.
    cell = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(1, 2)\nprint('antes')\n"
            "plt.show()\nplt.figure()\nprint('después')\n")
    with Sandbox(Limits(notebook_seconds=20)) as sandbox:
        job = sandbox.open_job()
        ran = job.run_notebook("n.ipynb", [cell], {})
        job.close()
    assert ran.errors == [] and "antes" in ran.output and "después" in ran.output
    assert "<Figure" not in ran.output, ran.output


def test_without_hiding_a_shown_figure_would_print_its_english_repr():
    # In a separate process: warm() makes an IPython shell and switches matplotlib's backend.
    import subprocess
    import sys

    script = ("from kit_autograder.sandbox.inside import notebook\n"
              "shell = notebook.warm()\n"
              "import matplotlib.pyplot as plt\n"
              "figure = plt.figure()\n"
              "hidden = shell.display_formatter.format(figure)[0]\n"
              "shell.display_formatter.formatters['text/plain'].pop(type(figure))\n"
              "print(repr(hidden), repr(shell.display_formatter.format(figure)[0]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    hidden, shown = done.stdout.rsplit("} {", 1)
    assert hidden == "{'text/plain': ''", done.stdout + done.stderr
    assert "<Figure size" in shown


def test_a_side_effect_report_names_nothing_but_positions_of_the_calls_own_arguments():
    """The job reports what a call changed as positions; a name, a position beyond the
    call's arguments or one said twice is a forged report, and the job fails closed. The
    control: the positions the call has are read."""
    import numpy as np
    from kit_autograder.sandbox.client import JobFailed, _checked_result

    parts = [np.zeros((2, 2))]
    assert _checked_result({"parts": parts, "mutated": [0, 2]}, 1, 3)["mutated"] == [0, 2]
    for forged in (["Q"], ["m3ff0000000000000"], [3], [-1], [0, 0], [True], "0"):
        with pytest.raises(JobFailed):
            _checked_result({"parts": parts, "mutated": forged}, 1, 3)


def test_a_hidden_calls_error_keeps_no_name_its_code_chose():
    """An attribute's name, its object's class and a NameError's name are the code's to
    choose; on a hidden call only the kind, the class and the sizes are kept, and a keyword
    the call itself passed. The control: the same error from a public call keeps them."""
    from kit_autograder.grading import on_a_hidden_call
    from kit_autograder.sandbox.inside.calls import classify

    owner = type("c3ff0000000000000", (), {})
    for exc in (AttributeError("x", name="a3ff0000000000000", obj=owner()),
                NameError("x", name="n3ff0000000000000")):
        public = classify(exc)
        assert public.get("name", "").endswith("3ff0000000000000")  # the control
        hidden = on_a_hidden_call(public)
        assert "3ff0000000000000" not in repr(hidden), hidden
        assert hidden["kind"] == public["kind"] and hidden["exception"] == public["exception"]
    arguments = {"kind": "arguments", "exception": "TypeError", "numbers": [3, 3, 3]}
    assert on_a_hidden_call({**arguments, "name": "mask"}, ("Q", "K", "V", "mask"))["name"] \
        == "mask"
    assert "name" not in on_a_hidden_call({**arguments, "name": "n3ff0"}, ("Q", "mask"))


def test_a_call_reports_the_arrays_it_changed_and_the_answers_it_overwrote():
    """Side effects, measured inside the job (sandbox/inside/calls.py): the positions of the
    arguments whose arrays the call changed (the grader names them), and whether it changed
    what the function returned before. The controls: a function that works on copies and
    returns new arrays reports nothing."""
    import numpy as np
    from kit_autograder.sandbox.inside import calls

    def in_place(Q, K):
        Q /= 2
        return Q @ K.T

    def on_copies(Q, K):
        return (Q / 2) @ K.T

    buffer = np.zeros((4, 4))

    def views(n):
        buffer[:n, :n] = n
        return buffer[:n, :n]

    Q, K = np.ones((2, 3)), np.ones((2, 3))
    given = calls._arrays_given([Q], {"K": K})
    assert calls._side_effects("a", given, in_place(Q, K)) == {"mutated": [0]}
    Q = np.ones((2, 3))
    given = calls._arrays_given([Q, K], {})
    assert calls._side_effects("b", given, on_copies(Q, K)) == {}
    assert calls._side_effects("views", [], views(2)) == {}
    assert calls._side_effects("views", [], views(3)) == {"aliased": True}
    assert calls._side_effects("copies", [], views(2).copy()) == {}
    assert calls._side_effects("copies", [], views(3).copy()) == {}

    # A ninth blind probe's multihead emptied the caller's list of heads with pop(0), and
    # passed: a list whose items went away is a change too. The control reads it and keeps it.
    def pops(X, heads):
        while heads:
            heads.pop(0)
        return X

    def reads(X, heads):
        return X + sum(W.sum() for W in heads)

    for function, said in ((pops, {"mutated": [1]}), (reads, {})):
        heads = [np.ones((2, 2)), np.ones((2, 2))]
        given = calls._arrays_given([Q], {"heads": heads})
        assert calls._side_effects(function.__name__, given, function(Q, heads)) == said
