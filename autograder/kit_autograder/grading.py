"""One submission, end to end: load -> sandbox -> verdicts -> scores. Both doors use it:
``batch.py`` (make grade) for a folder, ``otter_plugin.py`` for one Otter run.

The notebook runs once, in a sandbox job. Then, still in that job, each graded function is
called on this submission's own hidden inputs (hidden_inputs.py), with the reference standing
in for the graded functions it calls (answered here, in the grader). The lesson judges each
answer; the data questions are graded on the variables the notebook left behind, by the
lesson's trusted code; the zip's public tests run here too, with the student's functions
answered by the job. Scores come from the points in the zip's Otter tests.

Fail closed: a case whose answer never came (the job timed out, ran out of memory, died or
sent something unreadable) fails with a Spanish reason and a flag for a person. Nothing the
job says is trusted as code, as a path or as a score.
"""

import ast
import dataclasses
import functools
import inspect
import json
import re
import threading
import time
import traceback

import numpy as np

from . import lesson as lesson_module, notebook_causes, policy, submission as submission_module
from . import hidden_inputs
from .hidden_inputs import generator
from .sandbox.client import JobFailed, checked_error
from .verdicts import budget, summary
from .verdicts.in_process import as_called, run_in_process
from .verdicts.messages import (cell_error_text, error_message, line_text, placed,
                                shell_escapes_note, unverified_message)
from .verdicts.outcome import Failure, Outcome
from .verdicts.record import Diagnosis, Flag, Record, Verdict
from .verdicts.sizes import CaseSizes
from .parsing import LOCK as AST_LOCK, parse

MAX_EXPORT_BYTES = 1 << 20
# A call's error kinds that say the function was not written: raise NotImplementedError (the
# notebook's stub), or no such function.
NOT_WRITTEN = {"not_implemented", "missing"}
MAX_STAND_IN_AXIS = 1024


def _arrays(value):
    """Every ndarray inside nested lists, tuples and dicts (the wire's plain data)."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _arrays(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)


class StudentFunctionFailed(Exception):
    """Raised where trusted code called a student's function and the sandbox reported an
    error; the message is the grader's own Spanish sentence."""


def hidden_test_name(question, case):
    """The hidden test of a case or criterion in the zip, as the build names it."""
    return f"test_{question}_{case}"


def as_uploaded(printed, notebook_name):
    """What the notebook printed, with the kit's own mentions of it naming the file the
    student uploaded.

    The job runs every notebook as ``hidden_inputs.NOTEBOOK_NAME``, because the upload's name
    must not reach it (a name can carry a table of answers). So the first cell's «Listo:
    cuaderno «entrega.ipynb»» named a file the student never had; the grader, outside the
    job, gives the name back where the kit quotes it, in «». What the student's own code
    printed of its folder stays as the job saw it: that is what the job saw."""
    return printed.replace(f"«{hidden_inputs.NOTEBOOK_NAME}»", f"«{notebook_name}»")


# Where a contained bug of ours goes, per grading thread: make grade keeps each traceback in
# OUT/internal-errors.log with the file it met (issue 51.7), instead of printing it amid the
# batch's progress lines; on Otter's doors (no sink) stderr is already the instructor's log.
_SINK = threading.local()


def _caught():
    """Keep the traceback of the exception being handled: a bug of ours, contained."""
    sink = getattr(_SINK, "caught", None)
    if sink is None:
        traceback.print_exc()
    else:
        sink.append(traceback.format_exc())


class Grader:
    """Grades submissions against one bundle; safe to use from several threads."""

    def __init__(self, bundle):
        self.bundle = bundle
        self.lesson = bundle.lesson
        self.salt = bundle.salt
        self.support = bundle.support_files()
        self._tests, self._tests_lock = None, threading.Lock()
        # (A stand-in answers only for functions already graded; lesson.load checks that order.)
        # The notebook variables that data questions and the public tests take, by name;
        # the graded functions are answered by the job instead. Read from the tests' text, not
        # from Otter's test objects: the notebook starts before Otter is imported (start).
        self.export = sorted({variable for name in bundle.question_names()
                              for variable in bundle.test_parameters(name)
                              if variable not in self.lesson.FUNCTIONS}
                             | {v for q in self.lesson.DATA_QUESTIONS.values()
                                for v in q.variables})
        # Hidden calls pass their inputs as the notebook and the public tests do: positionally,
        # in the order of the reference's parameters, whatever the student named them.
        signatures = {name: inspect.signature(getattr(self.lesson.REFERENCE, name))
                      for name in self.lesson.FUNCTIONS}
        self.parameters = {name: tuple(s.parameters) for name, s in signatures.items()}
        # As the statement writes them, for messages: ("Q", "K", "V", "mask=None").
        self.statements = {name: tuple(str(p) for p in s.parameters.values())
                           for name, s in signatures.items()}

    @property
    def tests(self):
        """{question: Otter's test file}, read once, when first needed: reading them imports
        Otter, which the notebook's run need not wait for."""
        with self._tests_lock:
            if self._tests is None:
                self._tests = {name: self.bundle.test_file(name)
                               for name in self.bundle.question_names()}
            return self._tests

    # --- the chain --------------------------------------------------------------------------

    def grade_file(self, sandbox, path, stem, caught=None) -> Record:
        """``path`` graded; the tracebacks of our bugs it met and survived are appended to
        ``caught`` when given (else printed to stderr)."""
        _SINK.caught = caught
        try:
            return self._grade_file(sandbox, path, stem)
        finally:
            _SINK.caught = None

    def _grade_file(self, sandbox, path, stem) -> Record:
        try:
            loaded = submission_module.load(path, self.bundle.assignment_name)
        except submission_module.Rejected as rejected:
            return self.rejected(submission_module.shown_name(path.name), stem, rejected.reason,
                                 rejected.otter_error)
        return self.grade(sandbox, loaded, stem)

    def rejected(self, file, stem, reason, otter_error=None) -> Record:
        record = Record(file=file, stem=stem, graded=False, reason=reason,
                        otter_error=otter_error)
        record.scores = {q: [0.0, float(t.possible)] for q, t in self.tests.items() if t}
        return record

    def grade(self, sandbox, loaded, stem) -> Record:
        return self.finish(self.start(sandbox, loaded, stem))

    def start(self, sandbox, loaded, stem) -> "Started":
        """The notebook handed to a job of ``sandbox``, where it runs while the caller does
        something else (Gradescope's run imports Otter meanwhile); ``finish`` grades it."""
        record = Record(file=loaded.file, stem=stem, notes=list(loaded.notes))
        if float(self.bundle.settings.get("manual_points", 0)):
            record.empty_answers = submission_module.empty_written_answers(loaded.notebook_bytes)
        job = sandbox.open_job(stem)
        try:
            # What the job sees of the submission is its world, the very bytes its inputs hash.
            world = loaded.world(self.support)
            started = Started(sandbox, job, loaded, record, world)
            try:
                job.send_notebook(hidden_inputs.NOTEBOOK_NAME, loaded.cells,
                                  {**world, **self.support}, self.export, MAX_EXPORT_BYTES)
            except JobFailed as failed:
                started.failed = failed.reason
            return started
        except BaseException:
            job.close(kill=True)
            raise

    def finish(self, started) -> Record:
        """``started``'s submission graded, once its notebook has run."""
        try:
            return self._graded(started)
        except BaseException:
            # A bug of ours: the job must not outlive it, holding its process and memory
            # while the batch goes on (or tries this file again).
            started.job.close(kill=True)
            raise

    def _graded(self, started) -> Record:
        sandbox, job, loaded, record = started.sandbox, started.job, started.loaded, started.record
        with AST_LOCK:  # ast is not thread-safe in CPython 3.11 (parsing.py)
            definitions = _definitions(loaded.cells, self.lesson.FUNCTIONS)
        conversation = _Conversation(job, self.answer_stand_in, self.parameters,
                                     self.statements, loaded.cells, definitions)
        try:
            if started.failed:
                raise JobFailed(started.failed)
            ran = job.notebook_ran()
            record.cell_errors = _with_raised_lines(ran.errors, loaded.cells)
            record.output = as_uploaded(ran.output, loaded.notebook_name)
            record.output_chars = ran.output_chars + len(record.output) - len(ran.output)
            if ran.shell_escapes:
                record.notes.append(shell_escapes_note(ran.shell_escapes))
            values = {name: _parse_json(ran.exported.get(name)) for name in self.export}
        except JobFailed as failed:
            conversation.failed = failed.reason
            values = {}
        # What the student will read of their own functions' values (the lab's criteria, the
        # public tests' messages) is computed before any hidden input enters the job: a
        # function that kept the hidden inputs it was given could otherwise hand them back
        # as the "weights" of a public test, and its failure message would print them.
        proxies = {name: conversation.proxy(name, spec.parts,
                                            _defining_cell_error(name, record.cell_errors))
                   for name, spec in self.lesson.FUNCTIONS.items()}
        data_verdicts = []
        for question, data_question in self.lesson.DATA_QUESTIONS.items():
            data_verdicts += self._grade_data(conversation, question, data_question, values,
                                              proxies)
            if data_question.texts is not None:
                record.texts.update(data_question.texts(values))
        public_verdicts, public_failures = self._public_tests(conversation, values, proxies)
        identity = hidden_inputs.identity(started.world)
        conversation.hidden = True  # from here on, the job may hold hidden inputs
        changed = {}  # {function: {case: the parameters it changed}}
        for function in self.lesson.FUNCTIONS:
            verdicts, diagnoses, changed[function] = self._grade_function(
                conversation, function, identity, record.cell_errors)
            record.verdicts += verdicts
            if diagnoses:
                record.diagnoses[function] = diagnoses
        self._blame(public_failures, {**values, **proxies}, conversation, record.verdicts)
        self._notebook_causes(loaded, record)
        # Last, when every graded answer is in: these calls run the student's functions
        # together, and nothing they leave behind (a cache) may reach a graded call.
        for function, cases in changed.items():
            if cases:
                self._judge_changes(conversation, function, cases, identity, record)
        _without_guesses(public_verdicts, record.diagnoses)
        record.verdicts += data_verdicts + public_verdicts  # the order the feedback shows
        ending = job.close(kill=conversation.failed is not None)
        record.sandbox = {**sandbox.description, "ending": ending.reason,
                          "exit": ending.exit, "peak_mb": ending.peak_mb,
                          "cpu_seconds": ending.cpu_seconds, "seconds": ending.seconds}
        if ending.reason in WHOLE_JOB_LIMITS:
            _fail_closed(record, ending.reason)
        record.flags += self._flags(conversation, record, loaded)
        record.scores = self.scores(record)
        failed = record.cell_errors or any(not v.passed for v in record.verdicts)
        if failed and any(STAR_IMPORT.search(cell) for cell in loaded.cells):
            record.notes.append(STAR_IMPORT_NOTE)
        return record

    def data_question_on(self, sandbox, loaded, question, values) -> list:
        """The data question ``question`` graded on ``values`` (a result file's variables, not
        the notebook's), with the notebook's functions answered by a job that ran it, as
        grading answers them: ``make validate``'s verdicts. No hidden input is used."""
        job = sandbox.open_job("validate")
        conversation = _Conversation(job, self.answer_stand_in, self.parameters,
                                     self.statements, loaded.cells)
        try:
            try:
                job.run_notebook(hidden_inputs.NOTEBOOK_NAME, loaded.cells,
                                 {**loaded.world(self.support), **self.support}, [],
                                 MAX_EXPORT_BYTES)
            except JobFailed as failed:
                conversation.failed = failed.reason
            proxies = {name: conversation.proxy(name, spec.parts)
                       for name, spec in self.lesson.FUNCTIONS.items()}
            return self._grade_data(conversation, question,
                                    self.lesson.DATA_QUESTIONS[question], values, proxies)
        finally:
            job.close(kill=True)

    def answer_stand_in(self, name, args, kwargs):
        """A stand-in's call, answered by the reference here: its result as plain arrays.

        The arguments are the student's, and the reference runs in the grader: an attention
        on 12,000 one-dimensional rows (a few KB over the wire) would build a 1 GB score
        matrix here. No axis beyond MAX_STAND_IN_AXIS, then, far beyond any hidden
        case's, which bounds every reference call to a few MB and milliseconds."""
        if any(axis > MAX_STAND_IN_AXIS for array in _arrays((args, kwargs))
               for axis in array.shape):
            raise ValueError(f"la versión de referencia de `{name}` solo acepta arrays de hasta "
                             f"{MAX_STAND_IN_AXIS} elementos por eje, como los de esta tarea")
        function = lesson_module.stand_in(self.lesson, name)
        with np.errstate(all="ignore"):
            result = function(*args, **kwargs)
        if isinstance(result, tuple):
            return tuple(np.array(part, dtype=np.float64) for part in result)
        return np.array(result, dtype=np.float64)

    # --- graded functions -------------------------------------------------------------------

    def _grade_function(self, conversation, function, identity, cell_errors):
        """The verdicts of every hidden case of ``function`` (their symptoms), and what
        explains the failing ones together (the lesson's ``summarize``), said once."""
        spec = self.lesson.FUNCTIONS[function]
        defining = _defining_cell_error(function, cell_errors)
        verdicts, judged, unstable, side_effect_cases, changed = [], [], None, [], {}
        for case in self.lesson.cases_for(function):
            inputs = case.inputs(generator(self.salt, identity, function, case.name))
            outcome = conversation.call(function, inputs, spec)
            if outcome.unverified:
                verdicts.append(_unverified(function, case.name, case.description,
                                            outcome.unverified))
                continue
            try:
                failures = self.lesson.judge(function, inputs, outcome)
            except Exception:  # a bug of ours meeting this answer: this case only, flagged
                _caught()
                verdicts.append(_unverified(function, case.name, case.description, "internal"))
                continue
            effects = side_effects(outcome)
            if effects:
                side_effect_cases.append(case.name)
            if outcome.mutated:  # judged by its effect, once every function is graded
                changed[case.name] = outcome.mutated
            if defining is not None and (outcome.error or {}).get("kind") == "missing":
                # Not "missing" as the student sees it: its cell ran and failed. Say that.
                failures[0].message = defining
            shown = summary.symptoms(failures) + effects
            verdicts.append(Verdict(function, case.name, case.description, not shown,
                                    [failure.message for failure in shown],
                                    [failure.details.get("kind", "") for failure in shown]))
            # The lesson explains its own failures; a side effect is the engine's to say.
            judged.append(summary.Judged(case.name, case.description, inputs, outcome,
                                         failures))
            if failures and outcome.parts is not None and unstable is None:
                # One more call on the first failing case: an answer that changes from call to
                # call (dropout, an unseeded draw) explains every failure better than any mistake.
                again = conversation.call(function, inputs, spec)
                unstable = again.parts is not None and not _same_parts(outcome.parts, again.parts)
        failing = [j for j in judged if j.failures]
        # The function was not written (every failing case raised NotImplementedError, or it
        # does not exist): no answer, no mistake to name. Each case says so itself, and the
        # lesson's mutants and probes, a thousand runs for a stub, would find nothing to add.
        unwritten = bool(failing) and all((j.outcome.error or {}).get("kind") in NOT_WRITTEN
                                          for j in failing)
        with budget.probes():  # what explaining the failures may measure (budget.py)
            diagnoses = (summary.grouped(judged) if unwritten
                         else self._summarize(function, judged))
            if not unstable and not unwritten and not summary.explained_everywhere(
                    diagnoses, [j.case for j in failing]):
                # Partly named cases, a guess per case or nothing at all: where the function
                # departs, measured on every failing case, says more, and is said instead.
                found = self._located(conversation, function, spec, failing)
                diagnoses = summary.with_located(diagnoses, found) if found else diagnoses
        if unstable:
            diagnoses = [Diagnosis("finding", UNSTABLE.format(function=function),
                                   [j.case for j in judged if j.failures], ["nondeterministic"])]
        stale = self._stale(conversation, function, spec, judged, identity)
        if stale is not None:
            # An answer kept from another call explains every failure better than any
            # mistake, as an answer that changes from call to call does.
            _fail_case(verdicts, stale, STALE_SYMPTOM)
            diagnoses = [Diagnosis("finding", STALE.format(function=function),
                                   [v.case for v in verdicts if not v.passed],
                                   ["side_effects.stale_answer"])]
        if side_effect_cases:
            diagnoses += _side_effect_diagnoses(function, verdicts, side_effect_cases)
        summary.annotate(verdicts, diagnoses)
        for diagnosis in diagnoses:
            if diagnosis.located:  # the class report's blind spot: found, but not catalogued
                for verdict in verdicts:
                    if verdict.case in diagnosis.cases and not verdict.passed:
                        verdict.kinds.append("located")
        return verdicts, diagnoses, changed

    def _stale(self, conversation, function, spec, judged, identity):
        """The case whose answer the function gives again for other inputs, or None: the
        first passing case is called once more with its arrays of numbers drawn afresh (or,
        with no array, each of its sizes one larger), and if the reference's answer changes
        and the student's is the one it gave before, it answers from something it kept (a
        cache keyed on sizes, on one argument or on an object's id)."""
        first = next((j for j in judged if not j.failures and j.outcome.parts is not None),
                     None)
        if first is None:
            return None
        redrawn = _redrawn(first.inputs, generator(self.salt, identity, function,
                                                   f"{first.case}:again"))
        reference = lesson_module.stand_in(self.lesson, function)
        before = run_in_process(reference, first.inputs, len(spec.parts)).parts
        if before is None:
            return None
        # A function of sizes alone (no array to redraw) is asked again with each size one
        # larger: a cache keyed on the other sizes answers as before.
        for again_inputs in [redrawn] if redrawn is not None else _sizes_grown(first.inputs):
            if self._answers_as_before(conversation, function, spec, first, before,
                                       again_inputs):
                return first.case
        return None

    def _answers_as_before(self, conversation, function, spec, first, before, inputs):
        """True when ``function`` fails on ``inputs`` and a part of its answer is the one it
        gave for ``first`` though the reference's part changed (``before``: the reference's
        answer for ``first``)."""
        again = conversation.call(function, inputs, spec)
        if again.parts is None:
            return False
        try:
            failures = self.lesson.judge(function, inputs, again)
            after = run_in_process(lesson_module.stand_in(self.lesson, function), inputs,
                                   len(spec.parts)).parts
        except Exception:  # a bug of ours: no claim
            _caught()
            return False
        if not failures or after is None:
            return False
        # Stale: it fails there, and a part of its answer is the one it gave before, where
        # the right one moved (omega stays the same for another number of positions).
        return any(_same_parts([new], [old]) and not _same_parts([right_new], [right_old])
                   for new, old, right_new, right_old
                   in zip(again.parts, first.outcome.parts, after, before))

    def _notebook_causes(self, loaded, record):
        """For each graded function that lost points on a hidden case, what the notebook's
        layout holds that changes what the grade calls (notebook_causes.py): a name it uses
        defined again in a later cell, or its code in a Markdown or Raw cell. Said first,
        as what the notebook holds: the other diagnoses are about the code the grade ran."""
        for function, spec in self.lesson.FUNCTIONS.items():
            verdicts = [v for v in record.verdicts if v.question == function
                        and not v.public and not v.passed]
            if not verdicts:
                continue
            with AST_LOCK:  # ast is not thread-safe in CPython 3.11 (parsing.py)
                said = [(notebook_causes.REDEFINED, sentence) for sentence in
                        notebook_causes.redefinitions(function, loaded.cells, spec.stand_ins)]
                text_cell = notebook_causes.text_cell_definitions(function, loaded.text_cells)
            if text_cell is not None:
                said.append((notebook_causes.TEXT_CELL, text_cell))
            if not said:
                continue
            cases = [v.case for v in verdicts]
            found = [Diagnosis("finding", sentence, cases, [finding_id])
                     for finding_id, sentence in said]
            record.diagnoses[function] = found + record.diagnoses.get(function, [])
            summary.annotate(verdicts, found)

    # --- arguments changed in place, judged by their effect -------------------------------

    def _judge_changes(self, conversation, function, cases, identity, record):
        """``function`` changed its arguments on ``cases`` ({case: parameters}). That alone
        costs nothing, and is told; it costs those cases where it changes a result the grade
        measures: what the student's own functions that call it compute (``_harmed``)."""
        names = sorted({name for changed in cases.values() for name in changed},
                       key=self.parameters[function].index)
        listed = ", ".join(names)
        harmed = self._harmed(conversation, function, identity)
        if harmed is None:
            record.notes.append(CHANGED_HARMLESS.format(function=function, names=listed,
                                                        name=names[0]))
            return
        symptom = CHANGED_SYMPTOM.format(names=listed, caller=harmed)
        verdicts = [v for v in record.verdicts if v.question == function and not v.public]
        for verdict in verdicts:
            if verdict.case in cases:
                verdict.passed = False
                verdict.messages.append(symptom)
                verdict.kinds.append("side_effect")
        diagnosis = Diagnosis("finding", CHANGED_HARMFUL.format(
            function=function, names=listed, name=names[0], caller=harmed),
            list(cases), ["side_effects.mutates_arguments"])
        record.diagnoses.setdefault(function, []).append(diagnosis)
        summary.annotate(verdicts, [diagnosis])

    def _harmed(self, conversation, function, identity):
        """The first of the student's own graded functions that call ``function`` (the
        lesson's stand-ins say which) whose answer on one of its hidden cases changes when
        ``function`` gets copies of its arguments, or None. Everything runs as the student
        wrote it, no stand-in: it is their code calling their code. A caller whose answer
        differs from one call to the next proves nothing, and is passed over."""
        for caller, spec in self.lesson.FUNCTIONS.items():
            if function not in spec.stand_ins:
                continue
            for case in self.lesson.cases_for(caller):
                inputs = case.inputs(generator(self.salt, identity, caller, case.name))
                own = conversation.call(caller, inputs, spec, stand_ins=())
                if own.unverified:
                    return None  # the job is gone: nothing more is measured
                guarded = conversation.call(caller, inputs, spec, stand_ins=(),
                                            guarded=(function,))
                if guarded.unverified or _same_outcome(own, guarded):
                    continue
                again = conversation.call(caller, inputs, spec, stand_ins=())
                if _same_outcome(own, again):
                    return caller
        return None

    def _located(self, conversation, function, spec, failing):
        """The lesson's ``locate``, if any, on every failing case (``summary.located``): it
        calls the student's function again on probes it builds and says where it departs."""

        def call(name, probe_inputs):
            budget.spend()
            return conversation.call(name, probe_inputs, spec).parts

        try:
            return summary.located(getattr(self.lesson, "locate", None), function, failing,
                                   call, getattr(self.lesson, "locate_raised", None))
        except budget.Spent:  # no place measured on every case: what the summary said stays
            return None
        except Exception:  # a bug of ours: what the summary said stays
            _caught()
            return None

    def _summarize(self, function, judged):
        together = getattr(self.lesson, "summarize", None)
        if together is None:
            return summary.grouped(judged)
        try:
            return together(function, judged)
        except budget.Spent:  # the budget ran out: the cases' own diagnoses, measured
            return summary.grouped(judged)
        except Exception:  # a bug of ours: the cases' own diagnoses, each said once
            _caught()
            return summary.grouped(judged)

    # --- data questions ---------------------------------------------------------------------

    def _grade_data(self, conversation, question, data_question, values, proxies):
        if conversation.failed:
            reason = conversation.failed
            return [_unverified(question, criterion, title, reason)
                    for criterion, title in data_question.criteria]
        try:
            results = data_question.grade(values, proxies)
        except JobFailed as failed:
            conversation.failed = failed.reason
            return self._grade_data(conversation, question, data_question, values, proxies)
        except Exception:  # a bug of ours in this question's trusted code: this question only
            _caught()  # the instructor's log; the student gets the fixed sentence
            return [_unverified(question, criterion, title, "internal")
                    for criterion, title in data_question.criteria]
        titles = dict(data_question.criteria)
        return [Verdict(question, criterion, titles.get(criterion, criterion), bool(passed),
                        [] if passed else [str(message)], [] if passed else ["criterion"])
                for criterion, passed, message in results]

    def _public_tests(self, conversation, values, proxies):
        """The zip's public tests, run here with the student's functions answered by the job:
        what the student saw in ``grader.check``, worth no points. Each test function is
        called directly, so what reaches the student is the test's own Spanish message (or
        the grader's), never Otter's English report. Returns the verdicts, and the failing
        ones with their test (for ``_blame``)."""
        verdicts, failures = [], []
        environment = {**values, **proxies}
        for question, test_file in self.tests.items():
            for case in (test_file.test_cases if test_file else []):
                if case.hidden or conversation.failed:
                    continue
                try:
                    message = _public_message(case, environment)
                except JobFailed as failed:
                    conversation.failed = failed.reason
                    continue
                verdicts.append(Verdict(question, case.body.test_func.__name__, case.name,
                                        message is None, [message] if message else [],
                                        ["public"] if message else [], public=True))
                if message is not None:
                    failures.append((verdicts[-1], case))
        return verdicts, failures

    def _blame(self, failures, environment, conversation, verdicts):
        """Which function each failing public test fails for (``Verdict.blamed``), measured
        where it is in doubt: the test's own function passes all its hidden cases, so the
        failure comes through another one it depends on. A test whose own function fails its
        hidden cases is that function's (the reruns cost a trained model each). It runs after
        the hidden cases were sent to the job, and all it reports is one function's name: no
        value a test computes reaches the student from here."""
        failing = {v.question for v in verdicts if not v.public and not v.passed}
        for verdict, case in failures:
            if verdict.question not in failing and not conversation.failed:
                verdict.blamed = self._blamed_safely(case, environment, conversation)

    def _blamed_safely(self, case, environment, conversation):
        """``_blamed``, where a bug of ours only leaves the blame unmeasured."""
        try:
            return self._blamed(case, environment, conversation)
        except JobFailed:
            raise
        except Exception:
            _caught()
            return []

    def _blamed(self, case, environment, conversation):
        """The graded function this failing public test depends on that, replaced alone by
        the reference, makes it pass, as a list; [] when it depends on one only, or no single
        one does. A function the test calls directly is replaced in the test; one the
        student's functions call inside the job (``attention`` inside ``multihead``) is stood
        in for there."""
        functions = self.lesson.FUNCTIONS
        used = [name for name in inspect.signature(case.body.test_func).parameters
                if name in functions]
        depends = [name for name in functions
                   if name in used or any(name in functions[u].stand_ins for u in used)]
        if len(depends) < 2:
            return []
        # In the lesson's order a function's stand-ins come before it: the first swap that
        # makes the test pass names the one function it fails for (a later caller would pass
        # only through it), so the rest need not run.
        for name in depends:
            swapped = dict(environment)
            if name in used:
                swapped[name] = lesson_module.stand_in(self.lesson, name)
            for caller in used:
                if caller != name and name in functions[caller].stand_ins:
                    swapped[caller] = conversation.proxy(caller, functions[caller].parts,
                                                         stand_ins=(name,))
            try:
                if _public_message(case, swapped) is None:
                    return [name]
            except JobFailed as failed:
                conversation.failed = failed.reason
                return []
        return []

    # --- scores and flags -------------------------------------------------------------------

    def scores(self, record):
        """{question: [earned, possible]} from the zip's points and the hidden verdicts."""
        passed = {hidden_test_name(v.question, v.case): v.passed
                  for v in record.verdicts if not v.public}
        scores = {}
        for question, test_file in self.tests.items():
            if test_file is None:
                continue
            earned = sum(case.points or 0 for case in test_file.test_cases
                         if case.hidden and passed.get(case.body.test_func.__name__))
            scores[question] = [float(earned), float(test_file.possible)]
        return scores

    def _flags(self, conversation, record, loaded):
        flags = []
        ending = record.sandbox.get("ending")
        reason = conversation.failed or ending
        if reason in ("time", "memory", "disk"):
            flags.append(Flag("límite", unverified_message(reason)))
        elif reason:
            flags.append(Flag("ejecución", unverified_message(reason)))
        if any(verdict.unverified == "internal" for verdict in record.verdicts):
            flags.append(Flag("ejecución", unverified_message("internal")))
        slow = [e for e in record.cell_errors if e.get("slow")]
        if any(e["kind"] == "time" and not e.get("slow") for e in record.cell_errors):
            flags.append(Flag("límite", "el cuaderno no terminó de ejecutarse en el tiempo "
                                        "permitido"))
        elif slow:
            cells, one = ", ".join(f"[{e['cell']}]" for e in slow), len(slow) == 1
            flags.append(Flag("límite", f"{'la celda' if one else 'las celdas'} {cells} "
                                        f"{'tardó' if one else 'tardaron'} más de "
                                        f"{slow[0].get('budget')} s y "
                                        f"{'se detuvo' if one else 'se detuvieron'}"
                                        + ("; el resto del cuaderno se ejecutó"
                                           if slow[-1].get("more") else "")))
        with AST_LOCK:  # ast is not thread-safe in CPython 3.11 (parsing.py)
            hints = policy.review_hints(loaded.cells, self.bundle.settings.get("given", []))
        flags += [Flag("revisar", hint) for hint in hints]
        return flags


@dataclasses.dataclass
class Started:
    """A submission whose notebook a job is running (Grader.start), to be graded (finish)."""

    sandbox: object
    job: object
    loaded: object
    record: Record
    world: dict
    failed: str = None  # the job's failure reason if the notebook could not even be sent


class _Conversation:
    """A job's calls, with the reference standing in, and the first failure remembered."""

    def __init__(self, job, stand_in, parameters, statements, cells=(), definitions=None):
        self.job, self.stand_in, self.failed = job, stand_in, None
        self.cells = cells  # the notebook's code, where an error's line is read (placed)
        self.definitions = definitions or {}  # _definitions(cells)
        # The lines errors came out of while no hidden input had entered the job (the lab's
        # and the public tests' calls, on the student's own values and public inputs):
        # {(function, kind, exception): line}. Where a hidden case's error came out is never
        # read from the hidden call itself: code that saw a hidden input could choose the line.
        self.public_lines, self.hidden = {}, False
        self.parameters = parameters  # {function: the reference's parameter names}
        self.statements = statements  # {function: its parameters as the statement writes them}

    def call(self, function, inputs, spec, stand_ins=None, guarded=()) -> Outcome:
        if self.failed:
            return Outcome(unverified=self.failed)
        args, kwargs, names = as_called(inputs, self.parameters[function])
        try:
            reply = self.job.call(function, args, kwargs, parts=len(spec.parts),
                                  stand_ins=spec.stand_ins if stand_ins is None else stand_ins,
                                  callback=self.stand_in, names=names, guarded=guarded)
        except JobFailed as failed:
            self.failed = failed.reason
            return Outcome(unverified=failed.reason)
        if "error" in reply:
            return Outcome(error=self._with_public_line(function, reply["error"]))
        # The job says which arguments changed by their positions; their names are the
        # contract's, as this call passed them (names of its own would be the student's to
        # choose, and could spell the hidden inputs).
        passed = [*names, *kwargs]
        return Outcome(parts=reply["parts"],
                       mutated=tuple(passed[position] for position in reply.get("mutated", ())),
                       aliased=bool(reply.get("aliased")))

    def _with_public_line(self, function, error):
        """A hidden call's error, with the line the same error came out of on a public call."""
        error = on_a_hidden_call(_unplaced(error), self.parameters[function])
        line = self.public_lines.get((function, error.get("kind"), error.get("exception")))
        return {**error, "public_line": line} if line else error

    def proxy(self, name, part_names, when_missing=None, stand_ins=()):
        """The student's ``name`` as a plain callable for trusted code (the lab, the public
        tests): it runs in the job and returns arrays, or raises with a Spanish message
        (``when_missing``: what to say if the function does not exist). ``part_names``: what
        it returns, one name per part, which the message of a wrong count says.
        ``stand_ins``: graded functions the reference answers for while it runs."""
        conversation = self
        parts = len(part_names)

        def call(*args, **kwargs):
            if conversation.failed:
                raise JobFailed(conversation.failed)
            try:
                reply = conversation.job.call(name, args, kwargs, parts=parts,
                                              names=conversation.parameters[name][:len(args)],
                                              stand_ins=stand_ins,
                                              callback=conversation.stand_in)
            except JobFailed as failed:
                conversation.failed = failed.reason
                raise
            if "parts" in reply:
                values = reply["parts"]
                return tuple(values) if parts > 1 else values[0]
            error = reply["error"]
            if not conversation.hidden:
                error = placed(error, conversation.cells)
                span = conversation.definitions.get(name)
                if error.get("line") and span and span[0] == error["at"][0] \
                        and span[1] < error["at"][1] <= span[2]:
                    conversation.public_lines.setdefault(
                        (name, error["kind"], error.get("exception")), error["line"])
            error = _unplaced(error)
            if conversation.hidden:
                error = on_a_hidden_call(error, conversation.parameters[name])
            if error["kind"] == "not_implemented":
                raise NotImplementedError(f"todavía no has implementado `{name}`")
            if error["kind"] == "missing" and when_missing:
                raise StudentFunctionFailed(when_missing)
            raise StudentFunctionFailed(error_message(name, error, part_names,
                                                      parameters=conversation.statements[name],
                                                      sizes=CaseSizes.of(*args, kwargs)))

        call.__name__ = name
        return call


# Limits of the job's whole process tree. The poll sees them some time after they are crossed,
# on a loaded machine after more or fewer cases were graded: keeping those cases would make the
# score depend on the load (6 points on one run, 0 on the next). Every verdict fails closed.
WHOLE_JOB_LIMITS = ("memory", "disk")


def _fail_closed(record, reason):
    """Every verdict of ``record`` unverified for ``reason``, and nothing diagnosed."""
    record.verdicts = [v if v.unverified else dataclasses.replace(
        v, passed=False, messages=[unverified_message(reason)], kinds=["unverified"],
        misconceptions=[], findings=[], unverified=reason) for v in record.verdicts]
    record.diagnoses = {}


def _public_message(case, environment):
    """None when the public test ``case`` passes with ``environment``, else the Spanish
    message the student reads (JobFailed goes up: the job is gone)."""
    try:
        with np.errstate(all="ignore"):
            case.body.call_func(environment)
        return None
    except JobFailed:
        raise
    except (AssertionError, StudentFunctionFailed, NotImplementedError) as exc:
        message = str(exc) or case.failure_message or "la prueba no se cumple"
    except Exception as exc:  # the test's own code met something unexpected
        message = (f"la prueba lanzó {type(exc).__name__} al usar tu función: "
                   "revisa qué devuelve")
    if case.failure_message and case.failure_message not in message:
        message = f"{message}\n{case.failure_message}"
    return message


def _unverified(question, case, description, reason):
    """A case or criterion that failed closed: no answer to judge, or no judge that could."""
    return Verdict(question, case, description, False, [unverified_message(reason)],
                   ["unverified"], unverified=reason)


# A public test's message may end with its author's guess at the cause, «…: ¿usas la base
# 10000?». Once the diagnosis names a cause, or the test is measured to fail for another
# function (Verdict.blamed), that guess would point elsewhere: it is cut (the rule is the
# student's public_checks.fact_of, so that grader.check cuts the same guesses).
NAMING = ("misconception", "ambiguous", "finding")


def _without_guesses(public_verdicts, diagnoses):
    # Beside notebook_code, a student-side module the grader's Python finds the same way.
    from public_checks import fact_of

    named = {question for question, found in diagnoses.items()
             if any(d.kind in NAMING for d in found)}
    for verdict in public_verdicts:
        elsewhere = verdict.blamed and verdict.question not in verdict.blamed
        if verdict.question not in named and not elsewhere:
            continue
        kept = []
        for message in verdict.messages:
            lines = [fact_of(line) for line in message.split("\n")]
            kept.append("\n".join(line for line in lines if line) or message)
        verdict.messages = kept


# `from numpy import *` puts NumPy's sum, max, min, abs, round, any and all in place of
# Python's, silently: max(a, b) then reads b as an axis. Said when something failed.
STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+numpy[ \t]+import[ \t]+\*", re.MULTILINE)
STAR_IMPORT_NOTE = (
    "Tu cuaderno hace `from numpy import *`: eso cambia, sin avisar, `sum`, `max`, `min`, "
    "`abs`, `round`, `any` y `all` de Python por las de NumPy, que se comportan distinto (por "
    "ejemplo, `max(a, b)` toma `b` como el eje). Si algo falla sin motivo aparente, usa "
    "`import numpy as np` y escribe `np.` delante de lo que sea de NumPy.")
UNSTABLE = ("tu `{function}` no da el mismo resultado dos veces con la misma entrada: ¿usas "
            "dropout o números al azar? Al evaluar no puede haber azar (el dropout solo se usa "
            "al entrenar), y mientras lo haya ninguna comparación con la referencia dice nada: "
            "quítalo y vuelve a comprobarla")


# A function that changes its arguments is told so; it loses the cases it did it on only where
# the change is measured to change what the student's own functions that call it compute.
CHANGED_HARMLESS = (
    "tu `{function}` cambia los arrays o listas que recibe ({names}). Ningún resultado de los "
    "que mide la nota cambia por ello (tus funciones que la usan calculan lo mismo si recibe "
    "copias), así que `{function}` no pierde puntos; pero quien la llame otra vez con esos "
    "mismos arrays (una celda posterior, el laboratorio) los recibirá cambiados. Trabaja sobre "
    "una copia: {name} = {name} + …, no {name} += … (o {name} = {name}.copy() al empezar)")
CHANGED_HARMFUL = (
    "tu `{function}` cambia los arrays o listas que recibe ({names}), y eso cambia el "
    "resultado de tu `{caller}`, que la usa: con copias de sus argumentos, tu `{caller}` da "
    "otro resultado (por ejemplo, si pasa el mismo array a cada llamada, la siguiente lo "
    "recibe cambiado). Trabaja sobre una copia: {name} = {name} + …, no {name} += … (o "
    "{name} = {name}.copy() al empezar); a una lista no le quites ni le añadas elementos "
    "(pop, append): recórrela, o copia con list({name})")
CHANGED_SYMPTOM = ("cambia los arrays o listas que recibe ({names}), y eso cambia lo que "
                   "calcula tu `{caller}`")
ALIASED = ("tu `{function}` cambia, al llamarla otra vez, lo que devolvió antes: devuelve "
           "vistas de un array suyo que reutiliza (un búfer global o guardado). Devuelve un "
           "array nuevo en cada llamada")
STALE = ("tu `{function}` da, para otra entrada, parte de la misma respuesta que para la "
         "anterior: ¿guardas resultados entre llamadas (una caché por tamaños, por uno de los "
         "argumentos o por id de un objeto)? Calcula cada respuesta con la entrada que recibe")
STALE_SYMPTOM = "con otra entrada devuelve parte de la respuesta que dio para este caso"


def side_effects(outcome):
    """The side effects of one answered call that fail its case by themselves: an answer that
    a later call changes. (Arguments changed in place are judged by their effect:
    ``Grader._judge_changes``.)"""
    found = []
    if outcome.aliased:
        found.append(Failure("cambia lo que la función había devuelto antes", None,
                             {"kind": "side_effect"}))
    return found


def _side_effect_diagnoses(function, verdicts, cases):
    """One finding for the cases whose answers a later call changed."""
    aliased = [v.case for v in verdicts if v.case in cases and
               "cambia lo que la función había devuelto antes" in v.messages]
    if aliased:
        return [Diagnosis("finding", ALIASED.format(function=function), aliased,
                          ["side_effects.changes_earlier_answers"])]
    return []


def _fail_case(verdicts, case, message):
    for verdict in verdicts:
        if verdict.case == case:
            verdict.passed = False
            verdict.messages.append(message)
            verdict.kinds.append("side_effect")


def _redrawn(inputs, rng):
    """``inputs`` with every array of real numbers drawn afresh (``hidden_inputs.redrawn``),
    or None when it has none."""
    new = {name: hidden_inputs.redrawn(value, rng) for name, value in inputs.items()}
    if all(value is None for value in new.values()):
        return None
    return {name: value if new[name] is None else new[name] for name, value in inputs.items()}


# A function whose inputs are only sizes is probed with each of at most this many grown.
MAX_GROWN_SIZES = 3


def _sizes_grown(inputs):
    """``inputs`` with one of its positive integers one larger, one dict per integer."""
    sizes = [name for name, value in inputs.items() if type(value) is int and value > 0]
    return [dict(inputs, **{name: inputs[name] + 1}) for name in sizes[:MAX_GROWN_SIZES]]


def _same_parts(first, second):
    return len(first) == len(second) and all(
        np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)
        for a, b in zip(first, second))


def _defining_cell_error(function, cell_errors):
    """A sentence about the failed, stopped or never-reached cell that was meant to define
    ``function``, if any: «no encuentro la función» only when it is not in the notebook."""
    for error in cell_errors:
        defines = (function in error.get("defines", ())
                   or error.get("first_line", "").startswith(f"def {function}("))
        if not defines:
            continue
        if error.get("skipped"):
            stopped = next((e for e in cell_errors if e["kind"] == "time" and not e.get("skipped")
                            and not e.get("slow")), None)
            where = (f" en la celda [{stopped['cell']}] (`{stopped.get('first_line', '')}`)"
                     if stopped else "")
            return (f"tu cuaderno agotó su tiempo{where} antes de llegar a la celda que define "
                    f"`{function}`, así que no se pudo evaluar: haz más rápidas las celdas "
                    "lentas, o muévelas al final del cuaderno")
        if error["kind"] == "time":
            return (f"la celda [{error['cell']}] que define `{function}` tardó más de "
                    f"{error.get('budget') or 'el tiempo permitido'} s y se detuvo antes de "
                    "definirla: saca de esa celda lo que tarda")
        said = cell_error_text(error["exception"], error.get("message"))
        return (f"la celda [{error['cell']}] que define `{function}` falló al ejecutarse "
                f"({said}), así que la función no existe: corrige esa celda")
    return None


def _same_outcome(first, second):
    """Two answers of the same call that agree: the same arrays, or the same kind of error."""
    if first.parts is not None and second.parts is not None:
        return _same_parts(first.parts, second.parts)
    return (first.error is not None and second.error is not None
            and first.error.get("kind") == second.error.get("kind"))


# What a hidden call's error may say: its kind, Python's or NumPy's class, integers that are
# shown only as the case's sizes (verdicts/sizes.py) and the line the same error came out of in
# public. An attribute's name and its object's class (AttributeError(name=…, obj=…), a class
# made by type(…)) and a NameError's name are the student's code's to choose, so on a hidden
# call they are dropped; on a public one they stay (its inputs are the student's own).
CHOSEN_BY_THE_CODE = ("name", "owner", "module")


def on_a_hidden_call(error, parameters=()):
    """``error`` as a hidden call may report it. The one name kept is an "arguments" report's
    keyword when it is one of the contract's ``parameters``: the grader passed it."""
    kept = {key: value for key, value in error.items() if key not in CHOSEN_BY_THE_CODE}
    if error.get("kind") == "arguments" and error.get("name") in parameters:
        kept["name"] = error["name"]
    return kept


def _unplaced(error):
    """``error`` without the job's "at": its line, where said, is "line" or "public_line"."""
    return {key: value for key, value in error.items() if key != "at"}


def _with_raised_lines(errors, cells):
    """The notebook's cell errors, each with the student's line it came out of when that is
    not the failing cell's own line (a function the cell called): "raised_line"."""
    for error in errors:
        if error.get("at") and error["at"] != [error.get("position"), error.get("line")]:
            text = line_text(cells, error["at"])
            if text:
                error["raised_line"] = text
    return errors


def _definitions(cells, functions):
    """``{function: (cell, first line, last line)}`` of each function's own top-level ``def``
    (the last one, as running the notebook leaves it): the only place a public error's line
    is said to be shared by a hidden case. A line elsewhere (a helper, or the student's
    attention inside their multihead, where the hidden case has the reference's) may be
    another error of the same kind."""
    spans = {}
    for position, source in enumerate(cells):
        for name, first, last in _top_level_defs(source):
            if name in functions:
                spans[name] = (position, first, last)
    return spans


@functools.lru_cache(maxsize=256)
def _top_level_defs(source):
    """``((name, first line, last line), ...)`` of one cell's top-level ``def``s; none where it
    does not parse. Most cells of a class's notebooks are the ones everybody received: each is
    parsed once per batch, not once per student (as policy.parsed_cells)."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    return tuple((node.name, node.lineno, node.end_lineno or node.lineno)
                 for node in tree.body if isinstance(node, ast.FunctionDef))


def _parse_json(exported):
    if not exported or "json" not in exported:
        return None
    try:
        return json.loads(exported["json"])
    except (ValueError, RecursionError):
        return None


