# The kit's one entry point. Every target first makes sure .venv exists and holds
# the pinned requirements, so a fresh clone needs no manual step.
#
# A lesson is an input: LESSON=<folder under assignments/> (default: the course's first lesson,
# attention). Each lesson builds into dist/<lesson>/ and grades into dist/<lesson>/grades/.

PYTHON ?= python3
# Every mistake a person can fix ends as one `error:` line; VERBOSE=1 (`make assign VERBOSE=1`)
# prints the traceback above it, for whoever debugs the kit.
export VERBOSE
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

LESSON ?= attention
DIST := dist/$(LESSON)
# The demo `make grade` grades without SUBMISSIONS=: the lesson's own bundled demo,
# assignments/<lesson>/examples/ (DEMO_FOLDER in kit_autograder/build/course.py), if it has one,
# else what its synthetic.py writes from its build: a lesson is its three places and nothing else.
DEMO := assignments/$(LESSON)/examples
SUBMISSIONS ?= $(if $(wildcard $(DEMO)/*),$(DEMO),$(DIST)/demo)
OUT ?= $(DIST)/grades
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TIMEOUT ?= 120
MEMORY_MB ?= 2048
N ?= 200

.PHONY: all assign test test-fast grade report bench validate explorer clean

# The zip that grade, report and bench use is rebuilt whenever a file it is built from is newer,
# so an edited master or rubric is never graded with last week's zip.
ZIP := $(DIST)/autograder/$(LESSON)-autograder.zip
ZIP_SOURCES := $(shell find assignments/$(LESSON) autograder reference rubrics/$(LESSON).yaml \
	assessment.md requirements.txt -type f -not -path '*/__pycache__/*' -not -name '*.pyc' \
	-not -path '$(DEMO)/*' 2>/dev/null)

all: assign

# The .pth line makes this kit importable from the venv wherever it runs, because the zip's
# Otter plugin (kit_autograder.otter_plugin) is imported by `otter run` in the grader's own
# Python, outside the zip.
$(STAMP): requirements.txt Makefile
	@echo "Setting up $(VENV): a virtual environment with the pinned requirements.txt (first run" \
		"or after requirements.txt changed). uv installs them when it can, pip otherwise."
	$(PYTHON) -m venv $(VENV)
	@# uv (pinned in requirements.txt) first, with pip; then everything else with uv, which
	@# prints each step; if uv cannot be had or fails, pip installs all, with its own progress.
	@# -qq: pip's own errors still show, not its warnings about this machine's configuration.
	$(PY) -m pip install -qq --disable-pip-version-check "$$(grep -m1 '^uv==' requirements.txt)" \
		&& $(PY) -m uv pip install --compile-bytecode --python $(PY) -r requirements.txt \
		|| { echo "uv was not available: installing with pip (a minute or more)."; \
		     $(PY) -m pip install --quiet --upgrade pip && \
		     $(PY) -m pip install --progress-bar off -r requirements.txt; }
	$(PY) -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "kit055.pth").write_text("$(CURDIR)\n$(CURDIR)/assignments\n$(CURDIR)/autograder\n")'
	@# jsonschema imports rfc3987_syntax, when installed (JupyterLab's jupyter-events brings it),
	@# only to check "iri" formats, and that import builds a Lark grammar: 0.8 s of CPU in every
	@# Python process that touches nbformat or jsonschema, hundreds of them in `make test`.
	@# The kit checks no IRI: this venv refuses that one import, and jsonschema skips the format.
	$(PY) -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "kit055_imports.pth").write_text("import sys; sys.modules.setdefault(\"rfc3987_syntax\", None)\n")'
	touch $(STAMP)

# Master notebook -> $(DIST)/student (the student notebook, lab, assessment)
#                 -> $(DIST)/autograder (the Otter zip), $(DIST)/solution, $(DIST)/otter.
assign: $(STAMP)
	$(PY) -m autograder.assign --lesson "$(LESSON)"

$(ZIP): $(STAMP) $(ZIP_SOURCES)
	$(PY) -m autograder.assign --lesson "$(LESSON)"

# pytest's own exit status is kept in .pytest-exit, because make reports every failure as 2
# and CI must tell "tests failed" (1) from "no tests ran" (5).
# One worker per core, each taking whole modules (--dist loadfile), so a module's fixtures are
# built once, in conftest.py's LONGEST_FIRST order; TEST_JOBS=1 runs the suite in this process.
# --durations=10: every run ends with its ten slowest tests, the suite's long poles (issue 52).
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

test: $(STAMP)
	@rm -f .pytest-exit
	$(PY) -m pytest $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder) \
		--durations=10 $(PYTEST_ARGS) || { echo $$? > .pytest-exit; exit 1; }

# Everyday work: the tests that need no build and no fresh venv, under a minute: one worker
# per core, test by test (in one process they took 70 s on 2 cores; TEST_JOBS=1 still does that).
test-fast: $(STAMP)
	$(PY) -m pytest -m "not slow" -q $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS)) $(PYTEST_ARGS)

# A folder of notebooks and grader.export() zips -> $(OUT)/final_grades.csv (otter grade's
# format), $(OUT)/results/<stem>.json (Gradescope) and $(OUT)/feedback/<stem>.md, without
# Docker. With no arguments it grades the lesson's bundled demo. The zip is (re)built first.
grade: $(STAMP) $(ZIP) $(if $(filter $(DIST)/demo,$(SUBMISSIONS)),$(DIST)/demo)
	$(PY) -m kit_autograder.batch --autograder $(ZIP) \
		--submissions "$(SUBMISSIONS)" --out "$(OUT)" --jobs "$(JOBS)" \
		--timeout "$(TIMEOUT)" --memory-mb "$(MEMORY_MB)" --roster "$(ROSTER)" \
		--similarity-cutoff "$(SIMILARITY_CUTOFF)" $(if $(PICK),--pick "$(PICK)")

$(DIST)/demo: $(ZIP)
	$(PY) -m autograder.demo_submissions --lesson "$(LESSON)" --dist "$(DIST)" --out "$@"

# $(OUT)/report.html again from $(OUT)/records/ alone, without regrading: the class report that
# make grade writes. The zip supplies the lesson's steps and catalog of mistakes.
report: $(STAMP) $(ZIP)
	$(PY) -m kit_autograder.report.class_report --autograder $(ZIP) \
		--out "$(OUT)" --similarity-cutoff "$(SIMILARITY_CUTOFF)"

# $(N) synthetic submissions (the lesson's synthetic.py) through make grade's engine, a sample
# through `otter run`.
bench: $(STAMP) $(ZIP)
	$(PY) -m kit_autograder.bench --autograder $(ZIP) --dist $(DIST) \
		--n "$(N)" --jobs "$(JOBS)" $(BENCH_ARGS)

# Checks a student's lab result extended with student_extension against the kit's own lab run
# on their notebook (default: the one beside FILE), which runs in the kit's sandbox, as make
# grade runs it: no file of the student's runs outside it.
# make validate FILE=resultado.json [NOTEBOOK=...]
validate: $(STAMP) $(ZIP)
	$(PY) -m kit_autograder.validate --autograder $(ZIP) "$(FILE)" \
		$(if $(NOTEBOOK),--notebook "$(NOTEBOOK)")

# The lesson's interactive class page (assignments/$(LESSON)/explorer/) as one self-contained
# file: $(DIST)/explorer/index.html.
explorer: $(STAMP)
	$(PY) -m kit_autograder.build.pages assignments/$(LESSON)/explorer/index.html $(DIST)/explorer

clean:
	rm -rf dist .pytest_cache .pytest-exit tests/artifacts

# --- The instructor's loop with an LMS: grade the download, mark the written answers, export.
.PHONY: review export

# The written answers of $(OUT), one question at a time across the class, graded in the browser
# against the rubric's levels on a page served on 127.0.0.1; every change is saved at once to
# $(OUT)/written_scores.csv. PORT= picks the port (default 8055).
review: $(STAMP)
	$(PY) -m kit_autograder.written.review --out "$(OUT)" $(if $(PORT),--port "$(PORT)")

# $(OUT)'s grades and feedback in the files the LMS imports, written into $(OUT)/export/:
#   make export LMS=moodle WORKSHEET=<the grading worksheet Moodle gave> OUT=…
#   make export LMS=canvas WORKSHEET=<the exported gradebook> OUT=… [COLUMN="<title (id)>"]
# ROSTER=<the LMS's groups> where the worksheet has no group column; AUTOMATIC_ONLY=1 exports
# the automatic part alone, labelled so, before the written answers are graded.
export: $(STAMP) $(ZIP)
	$(PY) -m kit_autograder.lms.export --autograder $(ZIP) --lms "$(LMS)" \
		--worksheet "$(WORKSHEET)" --out "$(OUT)" $(if $(COLUMN),--column "$(COLUMN)") \
		--roster "$(ROSTER)" $(if $(filter-out 0,$(AUTOMATIC_ONLY)),--automatic-only)
