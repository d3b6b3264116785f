"""The written answers: read from each notebook at grading time (answers.py), graded by a
person in a browser or a spreadsheet (review.py, scores.py) against the rubric's levels
(questions.py), and joined to the CSV, the feedback and the class report (merge.py,
feedback_section.py)."""
