"""Run many short commands of the kit (``python -m autograder.assign …``, ``python -m
kit_autograder.batch …``) for one test module, each as its own process, without paying the
imports each time.

    python tests/forked_commands.py JOBS.json RESULTS.json

This process imports the commands' modules once (a second each, most of it nbformat's
jsonschema), then forks a child per job: the child is that command's process as a person would
start it, with its own environment, working folder, stdout, stderr and exit status, and none
of the other jobs' state (a lesson imported by one is not imported by the next). A job is
``{"command": "assign" | "batch", "argv": [...], "root": course or null, "env": {...},
"cwd": folder}``; its result ``{"status", "stdout", "stderr"}``.
"""

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path


def _preload():
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot  # noqa: F401  (the demos' import, done once)

    import autograder.assign as assign
    import kit_autograder.batch as batch

    return {"assign": assign.main, "batch": batch.main}


def _child(main, job, out, err):
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    os.chdir(job.get("cwd") or os.getcwd())
    os.environ.update(job.get("env") or {})
    for name in job.get("unset") or ():
        os.environ.pop(name, None)
    try:
        kwargs = {"root": Path(job["root"])} if job.get("root") else {}
        status = main(job["argv"], **kwargs)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()  # what Python prints for an uncaught exception
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status or 0)


def run(jobs, parallel):
    commands = _preload()
    results, running = [None] * len(jobs), {}
    with tempfile.TemporaryDirectory(prefix="kit-forked-") as work:
        def reap():
            pid, wait_status = os.wait()
            index, out, err = running.pop(pid)
            out.seek(0), err.seek(0)
            results[index] = {"status": os.waitstatus_to_exitcode(wait_status),
                              "stdout": out.read(), "stderr": err.read()}
            out.close(), err.close()

        for index, job in enumerate(jobs):
            while len(running) >= parallel:
                reap()
            out = open(Path(work) / f"{index}.out", "w+", encoding="utf-8")
            err = open(Path(work) / f"{index}.err", "w+", encoding="utf-8")
            sys.stdout.flush(), sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(commands[job["command"]], job, out, err)
            running[pid] = (index, out, err)
        while running:
            reap()
    return results


if __name__ == "__main__":
    jobs = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    results = run(jobs, parallel=max(1, len(os.sched_getaffinity(0))))
    Path(sys.argv[2]).write_text(json.dumps(results), "utf-8")
