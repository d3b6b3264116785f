# The kit's one entry point. Every target first makes sure .venv exists and holds
# the pinned requirements, so a fresh clone needs no manual step.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

SUBMISSIONS ?= examples/submissions
OUT ?= dist/grades
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TIMEOUT ?= 120
MEMORY_MB ?= 2048
N ?= 200

.PHONY: all assign test grade bench validate explorer clean

all: assign

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Master notebook -> dist/student (the student notebook, lab, assessment)
#                 -> dist/autograder (the Otter zip and the solution notebook).
assign: $(STAMP)
	$(PY) -m autograder.assign

# pytest's own exit status is kept in .pytest-exit, because make reports every failure as 2
# and CI must tell "tests failed" (1) from "no tests ran" (5).
test: $(STAMP)
	@rm -f .pytest-exit
	$(PY) -m pytest $(PYTEST_ARGS) || { echo $$? > .pytest-exit; exit 1; }

# Checks a lab result extended with student_extension: make validate FILE=resultado.json [NOTEBOOK=...]
validate: $(STAMP)
	$(PY) -m autograder.extension $(FILE) $(if $(NOTEBOOK),--notebook $(NOTEBOOK))

# The interactive class page (seed 002) as one self-contained file: dist/explorer/index.html.
explorer: $(STAMP)
	$(PY) assignments/explorer/build.py dist/explorer

clean:
	rm -rf dist .pytest_cache .pytest-exit tests/artifacts
