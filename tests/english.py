"""What Otter 7 and argparse print in English, as their sources spell it: none of it may reach
a student, in the notebook, the student folder, the feedback or a box of results.json."""

ENGLISH = [
    "Initialize Otter", "Make sure you have run all cells", "Please save before exporting",
    "Save your notebook first", "All test cases passed", "Test case failed", "Test case passed",
    "Error at line", "results:", "Running your submission", "Your submission",
    "Type your answer here", "Kernel is running over TCP", "usage:", "options:",
    "positional arguments", "show this help message", "python -m autograder", "python -m attention",
]
# Otter's summary of a test file (TestFile.summary), which Gradescope would show in each box.
OTTER_SCAFFOLDING = ["results:", "All test cases passed", "result:", " message:",
                     "The autograder failed", "Otter encountered"]
