"""Step 5: what people read, rendered from the records (verdicts/record.py) and nothing else:
Otter's formats (final_grades.csv, results.json), the student's feedback, the class report."""
