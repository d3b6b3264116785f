"""Grade many notebooks with Otter's API, spread over a few worker processes.

``otter.api.grade_submission`` took 2.6-3.7 s per notebook here against 5.4-5.7 s for the
``otter run`` CLI, whose start-up (imports) it pays once per worker instead of once per
notebook. Each worker is a separate process because Otter changes directory while grading.

Run as a script, a worker grades its notebooks one after another and writes, per notebook and
question, the score, the points possible and the messages of the failed test cases.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

WORKER_TIMEOUT_S = 600
ROOT = Path(__file__).resolve().parent.parent


def grade_many(autograder_zip, notebooks, out_dir, workers=None):
    """{notebook stem: {question: {"score", "possible", "messages"}}} for every notebook."""
    notebooks = [Path(nb) for nb in notebooks]
    workers = max(1, min(workers or os.cpu_count() or 1, len(notebooks)))
    out_dir = Path(out_dir)
    # The kit's packages must import in the worker as they do under `otter run` from the repo
    # root (Otter loads the autograder's plugins in the grading process, not in the kernel).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    jobs = []
    for index in range(workers):
        share = notebooks[index::workers]
        out = out_dir / f"otter-batch-{index}.json"
        command = [sys.executable, __file__, str(autograder_zip), str(out), *map(str, share)]
        jobs.append((out, subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.PIPE, text=True)))
    results = {}
    for out, process in jobs:
        _, stderr = process.communicate(timeout=WORKER_TIMEOUT_S)
        if process.returncode != 0:
            raise RuntimeError(f"Otter worker failed ({process.returncode}):\n{stderr[-3000:]}")
        results.update(json.loads(out.read_text(encoding="utf-8")))
    return results


def _grade(autograder_zip, notebook):
    from otter.api import grade_submission

    graded = grade_submission(str(notebook), ag_path=str(autograder_zip), quiet=True)
    return {
        question: {
            "score": result.score,
            "possible": result.possible,
            "messages": [case.message for case in result.test_case_results if not case.passed],
        }
        for question, result in graded.results.items()
    }


def main(argv):
    autograder_zip, out, *notebooks = argv
    results = {Path(nb).stem: _grade(autograder_zip, nb) for nb in notebooks}
    Path(out).write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
