"""The grade's diagnosis, on public inputs, in the student's kernel: ``grader.check`` adds it.

``make assign`` writes ``public_checks.npz`` beside the notebook (kit_autograder/build/
public_checks.py): for each graded function, public cases of every kind the hidden cases have
(fixed public draws: the hidden ones are drawn afresh for each submission), the reference's
answer on each with the allowance the grade gives every entry, the output of each mistake the
grade names (its catalogued mutants, and known mistakes with the words the grade says of them
on these cases), and measurements the lesson declares. Only data: no code of the reference or
of the mutants.

``Checks.report(function, env)`` runs the student's own function on those cases and, where it
departs, says what the grade would: the mistake whose output it reproduces on every failing
case and only there, in the grade's words; several with «¿…?»; otherwise where the grade's
locators place it: the build derived their probes from each public case and wrote the
reference's answers on them, and the first step of the case's ladder whose tests the student's
function meets is the place, said only when every failing case that answered shows the same
one; otherwise, case by case, what is off (an error, a shape, NaN, what a declared
measurement reads, the rows or columns that differ). A function that calls other graded
functions is blamed on them first when they fail their own cases. Nothing here raises into
the notebook: a missing or unreadable file is an old folder, and says nothing. Student-facing
text is Spanish.
"""

import contextlib
import copy
import inspect
import io
import json
import math
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np

DATA_NAME = "public_checks.npz"
FORMAT = 1
SPEC_KEY = "spec"

# A function the student has not written raises this: Otter's tests already say so.
NOT_WRITTEN = ("NotImplementedError",)


# --- a public test's guess ---------------------------------------------------------------------

# A public test's message may end with a guess at the cause («…, y tu omega es …: ¿usas la base
# 10000?»). Where a diagnosis names the cause, the guess would point elsewhere: the grade's
# feedback (kit_autograder.grading._without_guesses) and grader.check both cut it with this.
GUESS = re.compile(r"^(?P<fact>.*\S)\s*:\s*¿[^¿]*\?\s*$", re.DOTALL)


def fact_of(line):
    """``line`` without a trailing «: ¿…?»; '' when it is only a question."""
    if line.lstrip().startswith("¿") and line.rstrip().endswith("?"):
        return ""
    match = GUESS.match(line)
    return f"{match['fact']}." if match else line


def failing(lines, function):
    """Whether the checks' lines about ``function`` say a case fails (not only a note)."""
    return bool(lines) and lines[0].startswith(f"{function}: no se cumple")


def names_a_cause(lines):
    """Whether the checks' lines name a cause (a diagnosis, or another function to fix first)
    rather than only say what is off."""
    return any(line.lstrip().startswith(("Diagnóstico", "Arregla primero")) for line in lines)


# --- the data file ----------------------------------------------------------------------------


def encode(value, arrays, seen=None):
    """``value`` as JSON with every array stored in ``arrays`` under a key of its own, once
    however many times it is held (probes share their unchanged arguments)."""
    seen = {} if seen is None else seen
    if isinstance(value, np.ndarray):
        if id(value) not in seen:  # ``value`` lives as long as the spec: its id is its own
            seen[id(value)] = f"a{len(arrays)}"
            arrays[seen[id(value)]] = value
        return {"array": seen[id(value)]}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, arrays, seen) for v in value]}
    if isinstance(value, list):
        return [encode(v, arrays, seen) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: encode(v, arrays, seen) for k, v in value.items()}}
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    return value


def decode(value, arrays):
    if isinstance(value, list):
        return [decode(v, arrays) for v in value]
    if isinstance(value, dict):
        if "array" in value:
            return np.array(arrays[value["array"]])  # a copy: the caller may change it
        if "tuple" in value:
            return tuple(decode(v, arrays) for v in value["tuple"])
        return {k: decode(v, arrays) for k, v in value["dict"].items()}
    return value


def save(path, spec):
    """Write ``spec`` (JSON data holding arrays) as ``path``, an .npz that ``np.load`` reads:
    uncompressed, so that the build's check for hidden content reads every byte of it, and
    with fixed dates, so that building twice gives the same bytes."""
    arrays = {}
    text = json.dumps(encode(spec, arrays), ensure_ascii=False)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        # The JSON as UTF-8 bytes, not a NumPy string (UTF-32), so that its text is readable
        # in the file as it is.
        spec = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        for key, array in {SPEC_KEY: spec, **arrays}.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0)),
                        buffer.getvalue())


def spec_text(path):
    """The data file's JSON, every word it says included, as text."""
    with np.load(path, allow_pickle=False) as data:
        return _spec_of(data)


def _spec_of(data) -> str:
    return data[SPEC_KEY].tobytes().decode("utf-8")


def load(folder):
    """The folder's checks, or None when it has no readable data file (an older folder)."""
    path = Path(folder) / DATA_NAME
    try:
        with np.load(path, allow_pickle=False) as data:  # opened once: 2.8 MB
            arrays = {key: data[key] for key in data.files if key != SPEC_KEY}
            text = _spec_of(data)
        spec = decode(json.loads(text), arrays)
    except Exception:  # missing, truncated, another version: the checks stay quiet
        return None
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        return None
    return Checks(spec)


# --- outcomes ---------------------------------------------------------------------------------


def as_parts(value, count):
    """What a function returned, as a list of float arrays: its ``count`` parts when it
    returned a tuple or list of that many, else everything it returned. Raises when a part is
    not numbers."""
    if isinstance(value, (tuple, list)) and not (count == 1 and _is_matrix_list(value)):
        items = list(value)
    else:
        items = [value]
    return [np.asarray(item, dtype=float) for item in items]


def _is_matrix_list(value):
    # A single answer written as nested lists of numbers is one part, not several.
    return all(isinstance(v, (list, tuple)) for v in value) and not any(
        isinstance(v, np.ndarray) for v in value)


def call(fn, inputs, count, parameters=()):
    """``{"parts": [...]}`` or ``{"error": type name, "message": …}``, never raising. The
    arguments go by position in the order of ``parameters`` (the statement's), as the grade
    passes them, so a function that renames its parameters is called as it is graded."""
    given = copy.deepcopy(inputs)
    kwargs, args = dict(given), []
    for name in parameters:
        if name not in kwargs:
            break
        args.append(kwargs.pop(name))
    try:
        # What the function prints (a debugging print) would repeat once per case: unsaid.
        with warnings.catch_warnings(), np.errstate(all="ignore"), \
                contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            value = _called(fn, args, kwargs, parameters)
            parts = as_parts(value, count)
    except (Exception, SystemExit) as exc:  # the student's code: said, never raised
        return {"error": type(exc).__name__, "message": " ".join(str(exc).split())[:160]}
    # What it changed of its arguments, and a copy of what it returned as it returned it: a
    # later call that changes an earlier answer shows against this copy.
    changed = [name for name in inputs if not _same_value(given[name], inputs[name])]
    return {"parts": parts, "returned": [np.array(part) for part in parts], "changed": changed}


def moved_inputs(inputs):
    """``inputs`` with every float array moved a little (same shapes, other numbers); None
    when it holds none."""
    found = []

    def move(value):
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            found.append(True)
            return value * 1.25 + 0.1
        if isinstance(value, (list, tuple)):
            return type(value)(move(v) for v in value)
        return value

    moved = {name: move(value) for name, value in inputs.items()}
    return moved if found else None


def _same_value(a, b):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
                and len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b)))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f")))
    return a == b


def _called(fn, args, kwargs, parameters):
    """``fn(*args, **kwargs)``; when the signature takes the last arguments only by name
    (``*, mask=None``), those go by the statement's names, as the grade calls it."""
    try:
        return fn(*args, **kwargs)
    except TypeError:
        try:
            signature = inspect.signature(fn)
            signature.bind(*args, **kwargs)
        except TypeError:
            pass  # the call itself did not fit: try the last arguments by name
        except ValueError:
            raise
        else:
            raise  # raised inside the function
    for keep in range(len(args) - 1, -1, -1):
        by_name = {**kwargs, **dict(zip(parameters[keep:], args[keep:]))}
        try:
            signature.bind(*args[:keep], **by_name)
        except TypeError:
            continue
        return fn(*args[:keep], **by_name)
    return fn(*args, **kwargs)  # raises the call's own TypeError


def _same_places(a, b):
    return bool(np.array_equal(np.isnan(a), np.isnan(b))
                and np.array_equal(np.where(np.isinf(a), np.sign(a), 0),
                                   np.where(np.isinf(b), np.sign(b), 0)))


def within(got, centre, allowance):
    """Same shape, NaN and infinities in the same places, every finite entry within its
    allowance of ``centre``."""
    if got.shape != centre.shape or not _same_places(got, centre):
        return False
    finite = np.isfinite(centre)
    return bool(np.all(np.abs(got[finite] - centre[finite]) <= np.broadcast_to(
        allowance, centre.shape)[finite]))


def case_passes(case, outcome):
    """Every part within its allowance, and no property the case declares broken (a weight
    past the mask is wrong however small: the grade's standard says so too)."""
    parts = outcome.get("parts")
    if parts is None or len(parts) != len(case["expected"]) or not all(
            within(got, centre, allowance)
            for got, centre, allowance in zip(parts, case["expected"], case["allowance"])):
        return False
    return not any(_broken(measure, parts) for measure in case.get("measures", []))


def _broken(measure, parts):
    if measure.get("kind") != "zero_where":
        return False
    got = parts[measure["part"]]
    where = np.asarray(measure["where"], dtype=bool)
    return got.shape == where.shape and bool(np.any(np.abs(got[where]) > measure["atol"]))


# --- the checks -------------------------------------------------------------------------------


class Checks:
    """The public checks of one lesson, as ``make assign`` computed them."""

    def __init__(self, spec):
        self.spec = spec
        self.functions = spec["functions"]
        self.atol, self.rtol = spec["atol"], spec["rtol"]

    def has(self, function):
        return function in self.functions

    # -- running the student's function ------------------------------------------------------

    def _run(self, function, fn):
        entry = self.functions[function]
        results = []
        for case in entry["cases"]:
            outcome = call(fn, case["inputs"], len(entry["parts"]), entry["parameters"])
            results.append((case, outcome, self._passes(case, outcome)))
        return results

    def _passes(self, case, outcome):
        return case_passes(case, outcome)

    def passes(self, function, env):
        fn = env.get(function)
        return callable(fn) and all(ok for _, _, ok in self._run(function, fn))

    # -- the report --------------------------------------------------------------------------

    def report(self, function, env):
        """Spanish lines about ``function`` as the kernel holds it; [] when there is nothing
        to add (it passes every case, it is not written yet, or the lesson has no checks)."""
        if function not in self.functions:
            return []
        fn = env.get(function)
        if not callable(fn):
            return []
        entry = self.functions[function]
        results = self._run(function, fn)
        failing = [(case, outcome) for case, outcome, ok in results if not ok]
        if failing and all(outcome.get("error") in NOT_WRITTEN for _, outcome in failing):
            return []  # not written yet: its public tests already say so
        effects = self._side_effects(function, fn, env, results)
        if not failing:
            return [f"{function}: {effects[0]}"] + [f"  {e}" for e in effects[1:]] \
                if effects else []
        total = len(results)
        head = (f"{function}: no se cumple{'n' if len(failing) > 1 else ''} {len(failing)} de "
                f"{total} casos de comprobación (los mismos tipos de caso que las pruebas "
                "ocultas, con números públicos):")
        lines = [head] + [f"  ✗ {case['description']}" for case, _ in failing]
        blamed = self._blame(function, entry, env)
        if blamed:
            return lines + [f"  Arregla primero tu {blamed}: no cumple sus propios casos de "
                            f"comprobación (mira grader.check(\"{blamed}\")), y {function} "
                            f"la usa, así que su fallo puede venir de ahí."]
        passing = {case["name"] for case, _, ok in results if ok}
        return lines + [f"  {line}" for line in self._diagnosis(entry, failing, passing, total,
                                                                fn) + effects]

    # -- side effects, judged by their effect as the grade judges them --------------------

    def _side_effects(self, function, fn, env, results):
        """What the function does besides answering, in the grade's words (the spec's
        ``side_effects``): it changes its arguments (said to matter where it changes what the
        student's functions that call it compute), it changes an earlier answer when called
        again, or it answers another input with part of an earlier answer."""
        words, said = self.spec.get("side_effects", {}), []
        changed = next((o["changed"] for _, o, _ in results if o.get("changed")), [])
        if changed and "changed_harmless" in words:
            names = ", ".join(changed)
            caller = self._harmed_caller(function, env)
            key = "changed_harmful" if caller else "changed_harmless"
            said.append(_full_stop(words[key].format(function=function, names=names,
                                                     name=changed[0], caller=caller)))
        if "aliased" in words and any(
                "parts" in o and not all(_same_value(np.asarray(p, dtype=float), r)
                                         for p, r in zip(o["parts"], o["returned"]))
                for _, o, _ in results):
            said.append(_full_stop(words["aliased"].format(function=function)))
        if "stale" in words and self._stale(function, fn, results):
            said.append(_full_stop(words["stale"].format(function=function)))
        return said

    def _harmed_caller(self, function, env):
        """A graded function of the kernel that calls ``function`` and computes otherwise when
        ``function`` gets copies of its arguments; None when there is none."""
        original = env[function]

        def on_copies(*args, **kwargs):
            return original(*copy.deepcopy(args), **copy.deepcopy(kwargs))

        for caller, entry in self.functions.items():
            if function not in entry.get("uses", []) or not callable(env.get(caller)) \
                    or not self._calls(caller, function, env):
                continue
            mine = self._run(caller, env[caller])
            env[function] = on_copies
            try:
                copied = self._run(caller, env[caller])
            finally:
                env[function] = original
            for (_, first, _), (_, second, _) in zip(mine, copied):
                if ("parts" in first) != ("parts" in second) or "parts" in first and not all(
                        _same_value(a, b) for a, b in zip(first["parts"], second["parts"])):
                    return caller
        return None

    def _stale(self, function, fn, results):
        """Whether an input of the same shapes with other numbers (the case's ``twin``, with
        the reference's answer to it) gets a wrong answer that repeats, bit for bit, a part of
        the answer to the case: a cache by sizes, not a function."""
        entry = self.functions[function]
        for case, outcome, ok in results:
            twin = case.get("twin")
            if twin is None or not ok:
                continue
            again = call(fn, twin["inputs"], len(entry["parts"]), entry["parameters"])
            if "parts" in again and not case_passes(twin, again) and any(
                    _same_value(a, b) for a, b in zip(again["parts"], outcome["returned"])):
                return True
        return False

    def _blame(self, function, entry, env):
        """The first graded function this one builds on that fails its own cases and that
        this one calls, measured: a vectorised multihead that never calls attention is not
        told to fix it first."""
        for other in entry.get("uses", []):
            if other in self.functions and callable(env.get(other)) \
                    and not self.passes(other, env) and self._calls(function, other, env):
                return other
        return None

    def _calls(self, function, other, env):
        """Whether the kernel's ``function`` calls the kernel's ``other`` (directly or through
        another function) on its first public case."""
        entry, original = self.functions[function], env[other]

        def sentinel(*args, **kwargs):
            raise _Called()

        env[other] = sentinel
        try:
            call(env[function], entry["cases"][0]["inputs"], len(entry["parts"]),
                 entry["parameters"])
        except _Called:
            return True
        finally:
            env[other] = original
        return False

    def _diagnosis(self, entry, failing, passing, total, fn=None):
        scope = _scope(len(failing), total)
        named = [m for m in entry["mistakes"] if self._explains(m, failing, passing)]
        named = list({m["id"]: m for m in named}.values())  # one mistake, several forms
        raised = all("error" in outcome for _, outcome in failing)
        if len(named) == 1:
            return _words(named[0], scope, raised)
        if 1 < len(named) <= MAX_CANDIDATES:
            return _candidates(named, scope, raised)
        measured = _measured_everywhere(failing)
        if measured:
            return [f"Diagnóstico, en {scope}: {_full_stop(measured)}"]
        located = self._located(entry, failing, fn) if fn is not None else None
        if located is not None:
            # As the grade: the place covers the cases that answered; those that raised keep
            # their error, which explains them.
            raised = [(case, outcome) for case, outcome in failing if "error" in outcome]
            return [located] + _grouped([(case, self._case_lines(entry, case, outcome))
                                         for case, outcome in raised], len(failing))
        return _grouped([(case, self._case_lines(entry, case, outcome))
                         for case, outcome in failing], len(failing))

    # -- where it departs: the grade's locating probes ---------------------------------------

    def _located(self, entry, failing, fn):
        """The grade's words for the place where every failing case that answered departs
        first, measured on the probes the build derived from it (its ``locating`` steps); None
        when a case has none, a probe raises, or two cases depart at different places: a place
        that explains one case only would be a guess for the others."""
        answered = [(case, outcome) for case, outcome in failing if "parts" in outcome]
        if not answered or any("locating" not in case for case, _ in answered):
            return None
        if any(_before_locating(case, outcome) for case, outcome in answered):
            return None  # a measurement explains the answer whole: the case lines say it
        places = {self._place(entry, case, outcome, fn) for case, outcome in answered}
        if len(places) != 1 or None in places:
            return None
        return places.pop()

    def _place(self, entry, case, outcome, fn):
        """The words of the first step of the case's ladder whose tests all hold, or None."""
        ladder, count = case["locating"], len(entry["parts"])
        answers = {-1: outcome}

        def mine(index):
            if index not in answers:
                answers[index] = call(fn, ladder["probes"][index], count, entry["parameters"])
            return answers[index]

        try:
            for step in ladder["steps"]:
                held = True
                for test in step["tests"]:
                    got = mine(test["probe"])
                    if "parts" not in got or len(got["parts"]) != count:
                        return None  # what it cannot take says nothing of a place
                    other = (mine(step["tests"][test["other"]]["probe"])
                             if test.get("other") is not None else None)
                    answer = (case["expected"] if test["probe"] == -1 else None) \
                        if test.get("answer", -1) == -1 else ladder["answers"][test["answer"]]
                    second = ladder["answers"][test["second"]] \
                        if test.get("second") is not None else None
                    if not _holds(test, got["parts"], answer, other, self.atol, self.rtol,
                                  second):
                        held = False
                        break
                if held:  # a step without words: what it measured allows no place
                    return None if step["words"] is None else entry["places"][step["words"]]
        except Exception:  # a measurement that cannot read this answer says nothing
            return None
        return None

    def _explains(self, mistake, failing, passing):
        """The mistake fails exactly the failing cases, and reproduces each of them."""
        outputs = mistake["outcomes"]
        if any(outputs.get(name) is not None for name in passing):
            return False
        for case, outcome in failing:
            theirs = outputs.get(case["name"])
            if theirs is None or not self._same(case, outcome, theirs):
                return False
        return True

    def _same(self, case, mine, theirs):
        if "error" in mine or "error" in theirs:
            # The same kind of error with the same message (NumPy's names the sizes that do
            # not fit): one mistake. The kind alone would fit any code that raises it.
            return (mine.get("error"), mine.get("message")) == (theirs.get("error"),
                                                                theirs.get("message"))
        if len(mine["parts"]) != len(theirs["parts"]):
            return False
        for index, (got, other) in enumerate(zip(mine["parts"], theirs["parts"])):
            allowance = self.atol + self.rtol * np.abs(other)
            if index < len(case["allowance"]) and other.shape == case["expected"][index].shape:
                allowance = np.maximum(allowance, case["allowance"][index])
            if not within(got, other, allowance):
                return False
        return True

    # -- what is off, case by case -----------------------------------------------------------

    def _case_lines(self, entry, case, outcome):
        """What is off on one failing case: clauses, the first one the case's lead."""
        if "error" in outcome:  # Python's and NumPy's English in Spanish, as the grade says it
            said = cell_error_text(outcome["error"], outcome.get("message"))
            return [f"tu función lanza {said}"]
        parts, names = outcome["parts"], entry["parts"]
        if len(parts) != len(names):
            said = " y ".join(names)
            return [f"tu función devuelve {len(parts)} valor{'es' if len(parts) != 1 else ''} "
                    f"y deberían ser {len(names)}: {said}" + (", en ese orden" if len(names) > 1 else "")]
        found = []
        for index, (name, got, centre, allowance) in enumerate(
                zip(names, parts, case["expected"], case["allowance"])):
            if within(got, centre, allowance):
                continue
            if got.shape != centre.shape:
                prefix = _right_first_rows(got, centre, allowance)
                if prefix:
                    found.append(prefix.format(name=name))
                    continue
                found.append(f"{name} tiene forma {_shape(got.shape)} y debería tener "
                             f"{_shape(centre.shape)}")
                continue
            if not np.isfinite(got).all() and np.isfinite(centre).all():
                found.append(f"hay NaN o infinitos en {name}")
                continue
            measured = [said for measure in case.get("measures", [])
                        if measure["part"] == index
                        for said in [_measure(measure, got, centre, allowance)] if said]
            if measured:  # what a part measures explains the parts computed from it
                return [measured[0]]
            found.append(_where_it_differs(name, got, centre, allowance))
        right = [name for name, got, centre, allowance in zip(names, parts, case["expected"],
                                                              case["allowance"])
                 if within(got, centre, allowance)]
        if found and right:  # where the mistake is not: what comes before it is right
            found[0] = f"tu función acierta en {' y '.join(right)}, pero {found[0]}"
        return [found[0]] + [f"y {line}" for line in found[1:]] if found else []


MAX_CANDIDATES = 3


def _holds(test, parts, answer, other, atol, rtol, second=None):
    """Whether one locating test holds of the student's ``parts`` on its probe:

    * against ``answer``: ``matches``; ``departs`` (anything but a match); ``differs`` (the
      same shapes, finite, not a match); ``monotone`` (differs, one monotone function of the
      answer entry by entry); ``permuted`` (differs, the answer's columns in another order);
      ``rows_either`` (each row ``answer``'s or ``second``'s, some of each). A value of part
      ``where_part`` above ``where_atol`` where ``where`` forbids (a weight past the mask)
      is no match;
    * against the student's own answer on another probe (``other``): ``same`` or ``moved``
      on ``columns``, ``identical`` bit for bit or ``changed``;
    * of the answer alone: ``not_finite``, ``informative`` (finite, not all 0)."""
    holds, index = test["holds"], test.get("part")  # keys a test leaves unset are absent
    if holds == "not_finite":
        return not all(np.isfinite(p).all() for p in parts)
    if holds == "informative":  # finite and not all 0: an answer that can show what it reads
        return all(np.isfinite(p).all() for p in parts) and any(np.any(p) for p in parts)
    if holds in ("identical", "changed"):  # bit for bit the answer on the other probe or not
        same = len(parts) == len(other["parts"]) and all(
            _same_value(a, b) for a, b in zip(parts, other["parts"]))
        return same if holds == "identical" else not same
    if holds == "rows_either":  # each row one answer's or the other's, some of each
        got, first, other_rows = (np.asarray(a[index or 0], dtype=float)
                                  for a in (parts, answer, second))
        if got.ndim != 2 or got.shape != first.shape or got.shape != other_rows.shape:
            return False
        ones = [within(g, w, atol + rtol * np.abs(w)) for g, w in zip(got, first)]
        twos = [within(g, w, atol + rtol * np.abs(w)) for g, w in zip(got, other_rows)]
        return all(a or b for a, b in zip(ones, twos)) and any(ones) and not all(ones)
    if holds in ("same", "moved"):
        start, stop = test["columns"]
        mine, theirs = (np.asarray(p[index or 0])[:, start:stop] for p in (parts,
                                                                          other["parts"]))
        if mine.shape != theirs.shape or not (np.isfinite(mine).all()
                                              and np.isfinite(theirs).all()):
            return False
        same = within(mine, theirs, atol + rtol * np.abs(theirs))
        return same if holds == "same" else not same
    if answer is None or len(parts) != len(answer):
        return False
    chosen = range(len(parts)) if index is None else [index]
    got, want = [parts[i] for i in chosen], [np.asarray(answer[i], dtype=float) for i in chosen]
    close = all(within(g, w, atol + rtol * np.abs(w)) for g, w in zip(got, want))
    where = test.get("where")
    if where is not None:  # entries that must be 0 however small (a weight past the mask)
        leak = parts[test.get("where_part", -1)]
        where = np.asarray(where, dtype=bool)
        close = close and not (leak.shape == where.shape
                               and bool(np.any(np.abs(leak[where]) > test["where_atol"])))
    if holds in ("matches", "departs"):  # departs: anything but a match (NaN, a shape…)
        return close if holds == "matches" else not close
    comparable = all(g.shape == w.shape and np.isfinite(g).all() for g, w in zip(got, want))
    if not comparable or close:
        return False
    if holds == "differs":
        return True
    if holds == "monotone":
        return all(_monotone(g, w, test.get("min_values") or 0, atol) for g, w in zip(got, want))
    if holds == "permuted":
        return all(_permuted(g, w, atol, rtol) for g, w in zip(got, want))
    return False


def _before_locating(case, outcome):
    """Whether a measurement the lesson says comes before any place (a whole answer in half
    precision) reads on a failing part of ``outcome``."""
    parts = outcome["parts"]
    return any(measure.get("before_locating") and measure["part"] < len(parts)
               and _measure(measure, parts[measure["part"]], case["expected"][measure["part"]],
                            None)
               for measure in case.get("measures", []))


def _monotone(got, expected, min_values, atol):
    if np.unique(np.round(expected, 9)).size < min_values:
        return False
    order = np.argsort(expected, axis=None)
    steps = np.diff(got.ravel()[order])
    return bool((steps >= -atol).all() or (steps <= atol).all())


def _permuted(got, expected, atol, rtol):
    if got.ndim != 2:
        return False
    unused = list(range(expected.shape[1]))
    for column in got.T:
        match = next((j for j in unused if within(column, expected[:, j],
                                                  atol + rtol * np.abs(expected[:, j]))), None)
        if match is None:
            return False
        unused.remove(match)
    return True


class _Called(BaseException):
    """Raised by the stand-in of a function whose use is measured: a BaseException, so that a
    student's ``except Exception`` lets it through."""


def _grouped(said, failing):
    """``[(case, clauses)]`` as lines, the cases that say the same said once together."""
    together = {}
    for case, clauses in said:
        together.setdefault(tuple(clauses), []).append(case["description"])
    lines = []
    for clauses, cases in together.items():
        if not clauses:
            continue
        if len(cases) == failing:
            where = "En ese caso" if failing == 1 else "En todos ellos"
        elif len(cases) == 1:
            where = f"En el caso «{cases[0]}»"
        else:
            where = "En los casos " + ", ".join(f"«{c}»" for c in cases[:-1]) + f" y «{cases[-1]}»"
        lines.append(f"{where}, {_full_stop(clauses[0])}")
        lines += [f"  {_full_stop(clause)}" for clause in clauses[1:]]
    return lines


def _right_first_rows(got, centre, allowance):
    """When ``got`` has fewer rows than it should and those are the right first ones, what
    that says (a ``{name}`` slot for the part), else None."""
    rows = got.shape[0] if got.ndim else 0
    if got.ndim != centre.ndim or got.shape[1:] != centre.shape[1:] or not 0 < rows < len(centre):
        return None
    if not within(got, centre[:rows], np.broadcast_to(allowance, centre.shape)[:rows]):
        return None
    return (f"{{name}} tiene {rows} filas en lugar de {len(centre)}, y esas {rows} son las "
            f"correctas: ¿tiene tu cálculo un tamaño máximo fijo, como una tabla de {rows} filas "
            "que recortas? Devuelve tantas filas como te piden")


def _scope(failing, total):
    # The grade's scope (diagnose._scope) said of the public cases.
    return ("el único caso de comprobación que falla" if failing == 1 else
            f"los {failing} casos de comprobación"
            + (", que fallan todos" if failing == total else " que fallan"))


def _words(mistake, scope, raised):
    if "words" in mistake:  # a known mistake: what the grade says of it on these cases
        return mistake["words"]
    if raised:  # an error matches by its kind alone, which other mistakes raise too
        return [f"Diagnóstico: en {scope}, tu función lanza el mismo error que un error típico: ¿"
                f"{_lower(mistake['name'])}? {mistake['explanation']}",
                f"Pista: {mistake['hint']}"]
    return [f"Diagnóstico: error típico reconocido, que explica {scope}: {mistake['name']}. "
            f"{mistake['explanation']}", f"Pista: {mistake['hint']}"]


def _candidates(mistakes, scope, raised):
    names = "?; ¿o ".join(_lower(m["name"]) for m in mistakes)
    hints = " ".join(dict.fromkeys(m["hint"] for m in mistakes if "hint" in m))
    verb = "lanza el mismo error que" if raised else "se comporta como"
    return [f"Diagnóstico: en {scope}, tu función {verb} {len(mistakes)} errores típicos que estos casos no "
            f"distinguen: ¿{names}?"] + ([f"Pistas: {hints}"] if hints else [])


def _full_stop(text):
    return text if text.endswith((".", "?", "!")) else text + "."


def _lower(text):
    return text[:1].lower() + text[1:]


def _shape(shape):
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _number(value):
    return f"{value:.3g}".replace(".", ",")


# A tail of rows at 0 after this many right ones reads as a table of fixed size; fewer right
# rows say nothing of a size (an array of integers keeps only row 0's cos 0 = 1).
TABLE_ROWS = 16


def _where_it_differs(name, got, centre, allowance):
    """Which rows or columns of a part of the right shape differ; the whole part otherwise."""
    # Rows of 0s with one 1 are what a saturated softmax gives in any precision (scores a
    # thousand apart): integers, but no sign of an integer array.
    one_hot = got.ndim == 2 and np.isin(got, (0, 1)).all() and (got.sum(axis=1) == 1).all()
    if np.isfinite(got).all() and np.array_equal(got, np.round(got)) and not one_hot \
            and not np.array_equal(centre, np.round(centre)):
        return (f"todos los valores de {name} son números enteros, y no deberían: ¿los guardas "
                "en un array de enteros (np.zeros(…, dtype=int)) o divides con //?")
    off = np.abs(got - centre) > np.broadcast_to(allowance, centre.shape)
    if got.ndim == 2 and off.any():
        rows, columns = np.flatnonzero(off.any(axis=1)), np.flatnonzero(off.any(axis=0))
        zero = np.all(got[:, columns] == 0, axis=0)
        if columns.size < got.shape[1] and zero.all():
            which = _indices(columns, got.shape[1])
            verb = "vale" if columns.size == 1 else "valen"
            return (f"{which} de {name} {verb} 0 en todas las filas, y no debería"
                    f"{'' if columns.size == 1 else 'n'}; las demás columnas están bien")
        if rows.size < got.shape[0] and rows[0] > 0 and np.array_equal(
                rows, np.arange(rows[0], got.shape[0])) and np.all(got[rows] == 0) \
                and rows[0] >= TABLE_ROWS:
            first = ("la primera es la correcta" if rows[0] == 1 else
                     f"las {rows[0]} primeras son las correctas")
            return (f"las filas de {name} desde la {rows[0]} hasta la última valen 0, y {first}: "
                    "¿tiene tu cálculo un tamaño máximo fijo?")
        if columns.size < got.shape[1]:
            return (f"{_indices(columns, got.shape[1])} de {name} "
                    f"{_differ(columns)}; las demás columnas sí")
        if rows.size < got.shape[0]:
            return (f"{_indices(rows, got.shape[0], 'fila')} de {name} {_differ(rows)}; las "
                    "demás filas sí")
    return f"los valores de {name} no coinciden con los esperados"


def _differ(found):
    return "no coincide con la esperada" if found.size == 1 else "no coinciden con las esperadas"


def _indices(found, size, noun="columna"):
    if found.size == 1:
        last = " (la última)" if found[0] == size - 1 else ""
        return f"la {noun} {found[0]}{last}"
    shown = ", ".join(str(i) for i in found[:6]) + (", …" if found.size > 6 else "")
    return f"las {noun}s {shown}"


# --- measurements a lesson declares on a part --------------------------------------------------


def _measure(measure, got, centre, allowance):
    """What ``measure`` reads of one failing part, in Spanish, or None."""
    try:
        if measure.get("kind") == "rows_sum_to_one":
            return _rows_sum(measure, got)
        if measure.get("kind") == "rows_standardised":
            return _rows_standardised(measure, got, centre)
        if measure.get("kind") == "half_precision":
            return _half_precision(measure, got, centre)
        if measure.get("kind") == "softmax_factor":
            keys = _factor_keys(measure, got)
            if keys is None:
                return None
            if isinstance(keys, float):
                # A factor far from any scale (a weight nearly uniform fits almost any tiny
                # one) says a number, not a cause.
                if not 1 / FAR_FACTOR < keys / measure["expected"] < FAR_FACTOR:
                    return None
                return measure["other_words"].format(factor=_number(keys),
                                                     expected=_number(measure["expected"]))
            return _either([measure["words"][key] for key in keys])
    except Exception:  # a measurement that cannot read this answer says nothing
        return None
    return None


FAR_FACTOR = 50


def _measured_everywhere(failing):
    """One reading of a declared factor that every failing case shares, in Spanish, or None:
    the grade says a mistake for the function only when it explains every failing case."""
    shared, words = None, {}
    for case, outcome in failing:
        parts = outcome.get("parts")
        keys = None
        for measure in case.get("measures", []):
            if measure.get("kind") != "softmax_factor" or parts is None \
                    or measure["part"] >= len(parts):
                continue
            try:
                found = _factor_keys(measure, parts[measure["part"]])
            except Exception:
                found = None
            if isinstance(found, list) and found:
                keys, words = set(found), {**words, **measure["words"]}
        if keys is None:
            return None
        shared = keys if shared is None else shared & keys
        if not shared:
            return None
    return _either([words[key] for key in sorted(shared)]) if shared else None


def _either(said):
    """One reading said as it is; several that the cases cannot tell apart, as questions."""
    if len(said) == 1:
        return said[0]
    return "tus pesos encajan con varias lecturas que estos casos no distinguen: ¿" + \
        "?; ¿o ".join(_lower(s) for s in said) + "?"


def _rows_sum(measure, got):
    if got.ndim != 2:
        return None
    tol = measure["atol"]
    if np.all(np.abs(got.sum(axis=1) - 1) <= tol):
        return None
    # With one key, the only column's sum is the whole matrix's: a softmax over every entry at
    # once looks the same, so "columns instead of rows" would send the student to the axis.
    if min(got.shape) > 1 and np.all(np.abs(got.sum(axis=0) - 1) <= tol):
        return measure["columns_words"]
    return measure["rows_words"]


def _half_precision(measure, got, centre):
    """The measure's words when every entry of ``got`` is a float16 number, and enough need
    most of its bits (simple numbers are float16 numbers in any precision), where the right
    answer's are not."""
    entries, bits = measure["entries"], measure["rich_bits"]
    if got.shape != centre.shape or not float16_valued(got, entries, bits) or float16_valued(
            centre, entries, bits):
        return None
    return measure["words"]


def float16_valued(array, entries, rich_bits):
    """Every entry of ``array`` is a float16 number, and at least ``entries`` need
    ``rich_bits`` or more of its 11 significant bits (the grade's judge reads precision with
    this too: attention/findings.py)."""
    array = np.asarray(array, dtype=float)
    if not np.isfinite(array).all() or not np.array_equal(
            array.astype(np.float16).astype(np.float64), array):
        return False
    significands = np.abs(np.frexp(array[array != 0])[0] * 2 ** 11).astype(np.int64)
    lowest_bit = significands & -significands  # 2^(trailing zero bits)
    bits = 11 - np.log2(lowest_bit).astype(int)
    return int((bits >= rich_bits).sum()) >= entries


def _rows_standardised(measure, got, centre):
    """Whether each row has mean 0 and variance 1, as the lesson says each way."""
    if got.shape != centre.shape or got.ndim != 2 or not np.isfinite(got).all():
        return None
    standard = (np.abs(got.mean(axis=-1)).max() <= measure["mean_atol"]
                and np.abs(got.var(axis=-1) - 1).max() <= measure["var_atol"])
    return measure["standard_words" if standard else "other_words"]


def _factor_keys(measure, got):
    """When ``got`` is a row-wise softmax of ``factor·scores`` over the allowed entries, the
    keys of the lesson's named factors that equal the fitted one (a list), or the factor itself
    when none does (a float); None when ``got`` is no such softmax or the factor is right."""
    scores, allowed = measure["scores"], np.asarray(measure["allowed"], dtype=bool)
    if got.shape != scores.shape or not np.isfinite(got).all():
        return None
    if np.any(np.abs(got[~allowed]) > measure["masked_atol"]):
        return None
    usable = allowed & (got > measure["smallest_weight"])
    centred_s, centred_l = [], []
    for row in range(got.shape[0]):
        keep = usable[row]
        if abs(got[row].sum() - 1) > measure["atol"]:
            return None  # not a softmax by rows: another measurement says what
        if keep.sum() < 2:
            continue
        s, logs = scores[row, keep], np.log(got[row, keep])
        centred_s.append(s - s.mean())
        centred_l.append(logs - logs.mean())
    if not centred_s:
        return None
    s, logs = np.concatenate(centred_s), np.concatenate(centred_l)
    if np.dot(s, s) < 1e-12:
        return None
    factor = float(np.dot(s, logs) / np.dot(s, s))
    if np.abs(logs - factor * s).max() > measure["fit_atol"]:
        return None  # not a softmax of the scores times one number
    if math.isclose(factor, measure["expected"], rel_tol=measure["factor_rtol"]):
        return None
    keys = [key for key, value in measure["factors"]
            if math.isclose(factor, value, rel_tol=measure["factor_rtol"])]
    return keys or factor


# --- the student's errors in Spanish: Python's and NumPy's common messages ---------------------
# One wording for the grade's feedback on a cell's error (kit_autograder/verdicts/messages.py
# calls cell_error_text) and for what grader.check says when the student's function raises.

_CELL_FILE = re.compile(r"\s*\(<ipython-input-\d+-[0-9a-f]+>, line (\d+)\)")
_LINE_BREAKS = re.compile(r"\s*[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+\s*")
_PYTHON = [  # (exception, pattern, Spanish with \1 for the groups)
    ("NameError", r"name '(\w+)' is not defined", r"el nombre `\1` no está definido"),
    (None, r"incomplete input", "la celda está incompleta: ¿falta cerrar un paréntesis, un "
                                "corchete o una comilla?"),
    (None, r"invalid syntax\. Perhaps you forgot a comma\?", "sintaxis no válida: ¿falta una coma?"),
    (None, r"invalid syntax", "sintaxis no válida"),
    (None, r"unexpected indent", "sangría inesperada"),
    (None, r"unindent does not match any outer indentation level",
     "la sangría no coincide con ningún nivel anterior"),
    (None, r"expected an indented block after (.+) on line (\d+)",
     r"falta el bloque sangrado que sigue a la línea \2"),
    (None, r"unterminated string literal.*", "hay una cadena de texto sin cerrar"),
    (None, r"'(.)' was never closed", r"el «\1» nunca se cierra"),
    (None, r"unmatched '(.)'", r"«\1» sin su pareja"),
    ("ZeroDivisionError", r".*division by zero", "división por cero"),
    ("ModuleNotFoundError", r"No module named '([\w.]+)'", r"no existe el módulo `\1`"),
    ("TypeError", r"(\w+)\(\) missing (\d+) required positional arguments?: (.+)",
     r"a `\1()` le faltan argumentos obligatorios: \3"),
    ("TypeError", r"(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:was|were) given",
     r"`\1()` acepta \2 argumentos y recibió \3"),
    ("TypeError", r"'(\w+)' object is not subscriptable", r"un valor de tipo `\1` no admite índices"),
    ("TypeError", r"'(\w+)' object is not callable", r"un valor de tipo `\1` no se puede llamar"),
    ("AttributeError", r"module '([\w.]+)' has no attribute '(\w+)'",
     r"el módulo `\1` no tiene `\2`"),
    ("AttributeError", r"'(\w+)' object has no attribute '(\w+)'",
     r"un objeto `\1` no tiene el atributo `\2`"),
    ("IndexError", r"list index out of range", "índice de lista fuera de rango"),
]


# NumPy's common messages: glossed in Spanish, with the original kept beside the gloss (the
# student may search for it). Shapes are the student's own arrays in their own cell.
_NUMPY = [  # (exception, pattern, Spanish with \1 for the groups)
    ("ValueError", r"operands could not be broadcast together with shapes (.+?)\s*$",
     r"NumPy no puede combinar elemento a elemento arrays de formas \1: cada eje tiene que "
     "coincidir o valer 1 (difusión, «broadcasting»)"),
    ("ValueError", r"matmul: Input operand 1 has a mismatch in its core dimension 0.*"
                   r"\(size (\d+) is different from (\d+)\)",
     r"en el producto de matrices A @ B, B tiene \1 filas y A tiene \2 columnas: tienen que "
     "ser iguales"),
    ("ValueError", r"shapes (\(.*?\)) and (\(.*?\)) not aligned: (\d+) \(dim (\d+)\) != (\d+).*",
     r"np.dot no puede multiplicar formas \1 y \2: la última dimensión del primero (\3) "
     r"tiene que ser igual a la primera del segundo (\5)"),
    ("IndexError", r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)",
     r"el índice \1 se sale del eje \2, que tiene tamaño \3 (los índices van de 0 a tamaño − 1)"),
    ("AxisError", r"(?:\w+: )?axis (-?\d+) is out of bounds for array of dimension (\d+)",
     r"el eje \1 no existe en un array de \2 dimensiones (los ejes van de 0 a \2 − 1)"),
    ("ValueError", r"cannot reshape array of size (\d+) into shape (.+)",
     r"un array de \1 elementos no cabe en la forma \2: el número de elementos tiene que ser "
     "el mismo"),
    ("ValueError", r"all the input array dimensions except for the concatenation axis must "
                   r"match exactly.*",
     "para concatenar, los arrays tienen que tener el mismo tamaño en todos los ejes salvo el "
     "de la concatenación"),
    ("ValueError", r"all input arrays must have the same shape",
     "para apilar (np.stack), todos los arrays tienen que tener la misma forma"),
    ("ValueError", r"setting an array element with a sequence.*",
     "intentas meter una secuencia en un solo elemento de un array: las filas que juntas "
     "tienen que tener todas la misma longitud"),
    ("ValueError", r"could not broadcast input array from shape (\(.*?\)) into shape "
                   r"(\(.*?\)).*",
     r"guardas un array de forma \1 en un hueco de forma \2, que no encajan: el trozo del "
     "array donde escribes tiene que tener la forma de lo que guardas"),
    ("ValueError", r"The truth value of an array with more than one element is ambiguous.*",
     "usas un array de varios elementos como condición (en un if, and, or o not): di si "
     "quieres que se cumpla en todos, .all(), o en alguno, .any()"),
    ("IndexError", r"too many indices for array: array is (\d+)-dimensional, but (\d+) "
                   r"were indexed",
     r"usas \2 índices en un array de \1 dimensiones"),
    ("ValueError", r"zero-size array to reduction operation (\w+) which has no identity",
     r"calculas \1 de un array vacío, que no tiene resultado: revisa por qué está vacío"),
    ("TypeError", r"only integer scalar arrays can be converted to a scalar index",
     "usas como índice o como tamaño un array o un número con decimales: tiene que ser un "
     "entero"),
    ("TypeError", r"'(float|numpy\.float64)' object cannot be interpreted as an integer",
     "un número con decimales no sirve donde va un entero (un tamaño, un rango, un índice): "
     "conviértelo con int(...) o usa la división entera //"),
    ("TypeError", r"Calling np\.sum\(generator\) is deprecated.*",
     "np.sum no acepta un generador: es lo que pasa al escribir sum(...) sobre un generador "
     "después de `from numpy import *`, que cambia la sum de Python por la de NumPy; "
     "escribe la lista entre corchetes, o usa import numpy as np"),
]


def _numpy_gloss(exception, message):
    for name, pattern, spanish in _NUMPY:
        match = re.match(pattern, message) if name == exception else None
        if match:
            return f"{exception}: {match.expand(spanish)}. Mensaje original de NumPy: {message}"
    return None


def cell_error_text(exception, message):
    """An error of the student's own cell, as one line: Python's common messages in
    Spanish, IPython's internal file names out; anything else as the student's code said it."""
    message = _CELL_FILE.sub(r" (línea \1)", str(message or ""))
    message = _LINE_BREAKS.sub(" ", message).strip()  # one line, whatever the student raised
    for name, pattern, spanish in _PYTHON:
        if name not in (None, exception):
            continue
        match = re.match(pattern, message)
        if match:
            return f"{exception}: {match.expand(spanish)}{message[match.end():]}"
    glossed = _numpy_gloss(exception, message)
    if glossed:
        return glossed
    if _english(message):  # a library's message nobody glossed: framed in Spanish, kept whole
        return f"{exception} (mensaje original de Python o de NumPy, en inglés): {message}"
    return f"{exception}: {message}" if message else exception


_ENGLISH_WORDS = {"the", "is", "of", "to", "must", "cannot", "with", "not", "be", "array", "have", "and", "but", "same",
                  "object", "has", "an", "for", "was", "are", "expected", "got", "invalid"}


def _english(message):
    """True for a message that reads as a library's English sentence (a student's own raise
    is Spanish, or too short to tell)."""
    words = re.findall(r"[a-z]+", message.lower())
    return message.isascii() and len([w for w in words if w in _ENGLISH_WORDS]) >= 2
