"""kit_autograder: grade Otter notebooks from outside the student's kernel.

The path of one submission, one module per step:

    submission.py   load and bound the file (size, cells), never executing it
    sandbox/        the only code that starts student code: run the notebook once, call the
                    graded functions on that submission's hidden inputs, return plain data
    verdicts/       plain data -> scores, fail closed; what the mistake was
    report/         final_grades.csv (Otter's format), results.json, feedback, report.html

`batch.py` (make grade) and `otter_plugin.py` (Gradescope, `otter run`, `otter grade`) are two
doors into the same rooms. Everything about a lesson comes from the lesson's own package
(`lesson.py` loads it); nothing here knows what attention is.
"""
