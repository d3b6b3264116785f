grader.export()
