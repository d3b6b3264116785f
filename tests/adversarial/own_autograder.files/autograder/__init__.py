"""A student's replacement for the grader's package."""
