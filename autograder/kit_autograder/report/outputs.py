"""What ``make grade`` writes for each submission as it is graded, and ``make report``'s and
``make export``'s rebuild of the same files from the records, without regrading:

* ``records/<stem>.json``, the verdicts every other file is rendered from;
* ``feedback/<stem>.md``, the student's Spanish report (feedback.py);
* ``results/<stem>.json``, what Gradescope shows (otter_results.py);
* ``final_grades.csv``, Otter's format, with the identities the LMS gave and the written
  scores (written/merge.py).

Below the doors that write them (batch.py, and the rebuild's commands): one way to write each
file, whoever asks.
"""

import json
import sys
import threading
from pathlib import Path

from .. import csv_cells
from ..grading import Grader
from ..lms.entries import read_manifest
from ..verdicts.record import Record
from ..written import merge as written_merge
from ..written.scores import ScoresError
from . import feedback, otter_results


# Sets of scores whose CSV rows are kept (_rows_of): a class has few.
MAX_KEPT_ROWS = 256


class Outputs:
    """Writes each submission's files as it is graded; keeps only its CSV row in memory."""

    def __init__(self, out: Path, grader: Grader, identities=None):
        self.out, self.grader, self.rows, self.lock = out, grader, {}, threading.Lock()
        self._rows = {}  # the CSV's rows of each set of scores met (_rows_of)
        self.config = grader.bundle.otter_config()
        self.identities = identities or {}  # file -> (student name, student id), from the LMS
        self.written = written_merge.Written(out, grader.lesson.NAME)
        if self.written.error:
            print(f"warning: written scores left out: {self.written.error}", file=sys.stderr)
        for problem in getattr(self.written.sheet, "problems", []):
            print(f"warning: {problem}", file=sys.stderr)
        for folder in ("results", "feedback", "records"):
            (out / folder).mkdir(parents=True, exist_ok=True)

    def write(self, record: Record):
        sections = feedback.sections_for(self.grader, record,
                                         written=self.written.marks_for(record.file))
        text = feedback.join(sections)
        tests = {q: self.grader.bundle.test_file(q) for q in self.grader.tests}
        results = otter_results.grading_results(record, tests)
        gradescope = otter_results.gradescope(record, results, self.config, sections)
        row = self._rows_of(results)
        # A lone surrogate that slipped past the wire (the notebook's own JSON can hold one)
        # becomes "?" here rather than an exception that would lose this student's files.
        (self.out / "records" / f"{record.stem}.json").write_text(record.to_json(), "utf-8",
                                                                   errors="replace")
        (self.out / "feedback" / f"{record.stem}.md").write_text(text, "utf-8", errors="replace")
        (self.out / "results" / f"{record.stem}.json").write_text(
            json.dumps(gradescope, indent=2, ensure_ascii=False), "utf-8", errors="replace")
        with self.lock:
            self.rows[record.stem] = (row, [flag.text() for flag in record.flags])

    def _rows_of(self, results):
        """``final_grades([results])``'s rows, as records. Otter's merge_scores_to_df builds
        DataFrames from a deep copy of every test case (5 ms a submission); its rows depend only
        on each question's score and points, as Otter typed them, and on the file's name. So
        they are built once per distinct set of scores, and the file's name put in."""
        if results.has_catastrophic_failure():  # its row holds Otter's error, not scores
            return otter_results.final_grades([results]).to_dict("records")
        key = tuple((name, type(test.score), test.score, type(test.possible), test.possible)
                    for name, test in results.results.items())
        with self.lock:
            rows = self._rows.get(key)
        if rows is None:
            rows = otter_results.final_grades([results]).to_dict("records")
            with self.lock:
                self._rows[key] = rows
                while len(self._rows) > MAX_KEPT_ROWS:  # memory that does not grow with N
                    self._rows.pop(next(iter(self._rows)))
        rows = [dict(row) for row in rows]
        rows[-1]["file"] = results.file
        return rows

    def write_csv(self, order):
        """``order``: the submissions' stems, in the CSV's order."""
        import pandas as pd

        points = next((rows[0] for rows, _ in self.rows.values() if len(rows) == 2), None)
        data, flags = [], []
        for name in order:
            rows, record_flags = self.rows[name]
            data.append(rows[-1])
            flags.append(" | ".join(record_flags))
        frame = pd.DataFrame(([points] if points else []) + data)
        if points:
            questions = [c for c in points if c not in ("file", "total_points_earned",
                                                        "percent_correct", "grading_status")]
            frame[questions] = frame[questions].fillna(0)
            # Otter's columns, with the questions in the lesson's order rather than Otter's
            # alphabetical one, as the feedback and Gradescope show them.
            ordered = [q for q in self.grader.tests if q in questions]
            ordered += [q for q in questions if q not in ordered]
            frame = frame[["file", *ordered, "total_points_earned", "percent_correct",
                           "grading_status"]]
        frame[otter_results.FLAGS_COLUMN] = ([""] if points else []) + flags
        frame = written_merge.extend_final_grades(frame, self.identities, self.written)
        for column in ("file", "student_name", "student_id", "group", otter_results.FLAGS_COLUMN):
            if column in frame:  # names a student typed, which a spreadsheet must not run
                frame[column] = [csv_cells.safe(v) if isinstance(v, str) else v
                                 for v in frame[column]]
        frame.to_csv(self.out / "final_grades.csv", index=False, errors="replace")


def rebuild(out, bundle, log=sys.stderr):
    """``final_grades.csv``, ``feedback/`` and ``results/`` again from ``records/``, the
    manifest and the written scores, without regrading (``make report``, ``make export``)."""
    out = Path(out)
    manifest = read_manifest(out)
    outputs = Outputs(out, Grader(bundle), written_merge.identities(manifest))
    if outputs.written.error:
        raise ScoresError(outputs.written.error)
    stems = []
    for path in sorted((out / "records").glob("*.json")):
        record = Record.from_json(path.read_text("utf-8"))
        outputs.write(record)
        stems.append(record.stem)
    if manifest is not None:
        listed = [e["stem"] for e in manifest["entries"] if e["stem"] in set(stems)]
        stems = listed + [stem for stem in stems if stem not in set(listed)]
    outputs.write_csv(stems)
    print(f"wrote {out / 'final_grades.csv'} and feedback/ from records/"
          + (" and the written scores" if outputs.written.sheet is not None else ""), file=log)
