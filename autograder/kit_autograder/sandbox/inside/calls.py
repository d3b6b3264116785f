"""Call the student's graded functions on the grader's inputs, and reply with arrays only.

Each call names a function of the notebook's namespace, its arguments (plain arrays built by
the grader) and the graded functions that must *stand in* for the student's own while it runs
(``multihead`` is graded with the reference ``attention``). A stand-in does not hold the
reference: it sends its arguments back to the grader, which computes the reference's answer
outside the sandbox and returns it. The reference never enters this process.

What the function returns is turned into float64 arrays here, inside the sandbox, where any
code of the student's that this conversion triggers (``__array__``, ``__float__``) may run. If
it raises, the reply carries the exception's class (only when it is Python's or NumPy's own)
and what kind of error it is, with the integer sizes NumPy reported: never the message itself,
which the student's code could have written from the hidden inputs. What the call changed
besides its answer comes as the *positions* of the arguments it changed: the grader, which
chose the arguments, names them from the lesson's contract.
"""

import builtins
import copy
import inspect
import os
import re
import signal
import types

import numpy as np

from . import wire
from .notebook import where_raised

MAX_ELEMENTS = 10_000_000
MAX_STAND_IN_DEPTH = 4
MAX_STAND_IN_ITEMS = 256
CHILD_READS = wire.Limits(frame_bytes=256 * 2**20, header_bytes=64 * 2**20, items=50_000_000)


class CallTimeout(BaseException):
    """The call's time is up (SIGALRM)."""


class StandInRefused(Exception):
    """The grader refused a stand-in's arguments; the message is the grader's own Spanish."""


# --- serving ----------------------------------------------------------------------------------


def serve(sock, namespace, job_pid):
    """Answer the grader's calls until it says goodbye or goes away."""
    while True:
        try:
            message = wire.receive(sock, CHILD_READS)
        except (EOFError, OSError, wire.WireError):
            return
        if message.get("op") != "call":
            return
        reply = {"op": "result", **call(sock, namespace, message)}
        if os.getpid() != job_pid:
            os._exit(0)  # a child forked during the call: only the job answers
        wire.send(sock, reply)


def call(sock, namespace, message):
    name, parts = message["function"], int(message["parts"])
    function = namespace.get(name)
    if name not in namespace:
        return {"error": {"kind": "missing"}}
    if not callable(function):
        return {"error": {"kind": "not_callable"}}
    stand_ins = list(message.get("stand_ins", []))
    saved = {n: namespace[n] for n in stand_ins if n in namespace}
    for stand_in in stand_ins:
        namespace[stand_in] = StandIn(stand_in, sock, saved.get(stand_in))
    # Functions the call's own functions reach on copies of their arguments ("guarded"): the
    # grader measures whether a function's changes to its arguments change its callers' answers.
    kept = {n: namespace[n] for n in message.get("guarded", [])
            if n in namespace and n not in stand_ins}
    for guarded, original in kept.items():
        namespace[guarded] = _on_copies(original)

    def alarm(signum, frame):
        raise CallTimeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, float(message.get("seconds", 10)))
    args, kwargs = message.get("args", []), message.get("kwargs", {})
    given = _arrays_given(args, kwargs)
    try:
        with np.errstate(all="ignore"):
            result = call_as_notebook(function, args, kwargs, message.get("names", []))
            reply = {"parts": split_parts(result, parts)}
            reply.update(_side_effects(name, given, result))
            return reply
    except CallTimeout as timeout:
        return {"error": {"kind": "time", **where_raised(timeout)}}
    except _Refused as refused:
        return {"error": refused.error}
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the call failed
        return {"error": {**classify(exc), **where_raised(exc)}}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for stand_in in stand_ins:
            if stand_in in saved:
                namespace[stand_in] = saved[stand_in]
            else:
                namespace.pop(stand_in, None)
        namespace.update(kept)


# --- side effects: what a call changed besides its answer -------------------------------------

# The arrays each function last returned, as returned and as they were: a function that
# answers with views of one buffer of its own changes its earlier answers when called again.
_RETURNED = {}


def _arrays_given(args, kwargs):
    """``[(argument, array or list, copy)]`` of every array the call hands the function, and
    of every list: ``argument`` is its position among the call's arguments, the positional
    ones first, then the keyword ones in the order the grader sent them. Positions only: the
    grader, which chose the arguments, names them from the lesson's contract."""
    found = []

    def walk(position, value, depth=0):
        if isinstance(value, np.ndarray):
            found.append((position, value, value.copy()))
        elif isinstance(value, (list, tuple)) and depth < MAX_STAND_IN_DEPTH:
            if isinstance(value, list):  # its items, by identity: a pop or an append shows
                found.append((position, value, list(value)))
            for item in value:
                walk(position, item, depth + 1)

    for position, value in enumerate([*args, *kwargs.values()]):
        walk(position, value)
    return found


def _changed(value, copy):
    """True when an array's values or shape, or a list's items, are not what they were."""
    if isinstance(value, list):
        return len(value) != len(copy) or any(a is not b for a, b in zip(value, copy))
    return value.shape != copy.shape or not _same_values(value, copy)


# Plain arrays of these kinds hold the same values wherever they hold the same bytes.
_BYTES_ARE_VALUES = frozenset("biufc")


def _same_values(array, copy):
    """``np.array_equal(array, copy, equal_nan=True)``, ``copy`` being ``array.copy()`` of
    the same shape. The same bytes are the same values, and comparing them costs a tenth:
    most arrays are unchanged, and every call compares each argument and each earlier answer
    (a public test calls one function a hundred times). Bytes that differ may still be equal
    values (-0.0 and 0.0, NaNs of other payloads), and a subclass, another kind or a dtype
    changed in place is not plain bytes: those ask NumPy, as before."""
    if (type(array) is np.ndarray and array.dtype == copy.dtype
            and array.dtype.kind in _BYTES_ARE_VALUES and array.tobytes() == copy.tobytes()):
        return True
    return np.array_equal(array, copy, equal_nan=True)


def _side_effects(name, given, result):
    """``{"mutated": [positions of the arguments whose arrays or lists the call changed],
    "aliased": True when it changed what this function returned before}``, only what
    happened."""
    effects = {}
    mutated = sorted({position for position, value, copy in given if _changed(value, copy)})
    if mutated:
        effects["mutated"] = mutated
    earlier = _RETURNED.get(name, ())
    if any(array.shape != copy.shape or not _same_values(array, copy)
           for array, copy in earlier):
        effects["aliased"] = True
    values = result if isinstance(result, (tuple, list)) else (result,)
    _RETURNED[name] = [(value, value.copy()) for value in values
                       if isinstance(value, np.ndarray)]
    return effects


def _on_copies(function):
    """``function``, called on copies of the arrays and lists it is given: what its callers
    would compute if it never changed its arguments (the grader compares the two)."""

    def guarded(*args, **kwargs):
        try:
            args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
        except Exception:  # something that cannot be copied: called as it is
            pass
        return function(*args, **kwargs)

    guarded.__name__ = getattr(function, "__name__", "guarded")
    return guarded


class _Refused(Exception):
    def __init__(self, error):
        super().__init__()
        self.error = error


def call_as_notebook(function, args, kwargs, names=()):
    """``function(*args, **kwargs)``, called as the notebook calls it: positionally, whatever
    the student named the parameters. Where the signature takes the last of the arguments only
    by name (``*, mask=None``), those go by the reference's ``names``. A call the signature
    cannot take raises ``_Refused`` with an "arguments" report: how many arguments were given,
    how many the function accepts and requires, and the keyword it lacks (one the caller
    chose, never a name of the student's).

    The signature is read only when the call raises TypeError: Python checks the arguments
    before it runs a line of the function, so a call that did not fit ran nothing."""
    try:
        return function(*args, **kwargs)
    except TypeError:
        signature = _signature(function)
        if signature is None or _binds(signature, args, kwargs):
            raise  # raised inside the function, not by the call
    for keep in range(len(args) - 1, -1, -1) if names else ():
        by_name = {**kwargs, **dict(zip(names[keep:], args[keep:]))}
        if _binds(signature, args[:keep], by_name):
            return function(*args[:keep], **by_name)
    raise _Refused(_arguments_report(signature, args, kwargs))


def _signature(function):
    try:
        return inspect.signature(function)
    except (CallTimeout, _Refused):
        raise
    except BaseException:  # a builtin without one, or a student's __signature__ that raises
        return None


def _binds(signature, args, kwargs):
    try:
        signature.bind(*args, **kwargs)
        return True
    except TypeError:
        return False


def _arguments_report(signature, args, kwargs):
    parameters = list(signature.parameters.values())
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    any_positional = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    any_keyword = any(p.kind == p.VAR_KEYWORD for p in parameters)
    required = sum(p.default is p.empty for p in positional)
    accepted = -1 if any_positional else len(positional)
    # Only what the message needs, bounded by the count the caller chose: a signature is the
    # student's (``__signature__`` can be anything), so its sizes must not carry other numbers.
    given = len(args)
    report = {"kind": "arguments", "exception": "TypeError",
              "numbers": [given, min(accepted, given), min(required, given + 1)]}
    names = {p.name for p in parameters if p.kind != p.POSITIONAL_ONLY}
    unknown = [key for key in kwargs if key not in names and not any_keyword]
    if unknown:
        report["name"] = unknown[0]
    return report


def split_parts(result, parts):
    """``result`` as ``parts`` float64 arrays, or ``_Refused`` saying why it cannot be."""
    if parts > 1:
        if not isinstance(result, (tuple, list)):
            raise _Refused({"kind": "not_a_tuple"})
        if len(result) != parts:
            raise _Refused({"kind": "wrong_count", "numbers": [min(len(result), 10**6)]})
        values = list(result)
    else:
        if isinstance(result, tuple):
            raise _Refused({"kind": "tuple_instead", "numbers": [min(len(result), 10**6)]})
        values = [result]
    arrays = []
    for value in values:
        try:
            array = np.array(value, dtype=np.float64, copy=True, subok=False)
        except (CallTimeout, _Refused):
            raise
        except BaseException:
            raise _Refused({"kind": "unconvertible"}) from None
        if array.size > MAX_ELEMENTS or array.ndim > 4:
            raise _Refused({"kind": "too_large"})
        arrays.append(array)
    return arrays


# --- stand-ins ------------------------------------------------------------------------------


class StandIn:
    """Stands for a graded function while another one is graded: the grader answers.

    The answer comes as a plain tuple of arrays. A student whose own function returns a
    named tuple (``attention(...).output``) reads it by name in the functions that call it,
    so the first call also asks the student's own function (``own``) what kind of tuple it
    returns, and the reference's parts are handed back in that kind: a correct function must
    not fail for the type of what it was given."""

    def __init__(self, name, sock, own=None):
        self.__name__ = self.name = name
        self._sock = sock
        self._own, self._kind = own, None

    def __call__(self, *args, **kwargs):
        try:
            header = {"op": "callback", "name": self.name,
                      "args": [_plain(a, 0) for a in args],
                      "kwargs": {str(k): _plain(v, 0) for k, v in kwargs.items()}}
        except _Unreadable:
            raise TypeError(f"la versión de referencia de `{self.name}` recibió un argumento "
                            "que no es un array de números") from None
        if self._own is not None:
            # On copies: the student's own function may change its arguments (a list of
            # heads emptied by pop), and the caller being graded must not pay for it.
            try:
                own_args, own_kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
            except Exception:
                own_args, own_kwargs = None, None
            self._kind = None if own_args is None else _tuple_kind(self._own, own_args,
                                                                  own_kwargs)
            self._own = None
        wire.send(self._sock, header)
        reply = wire.receive(self._sock, CHILD_READS)
        if "error" in reply:
            raise StandInRefused(str(reply["error"]))
        result = reply["result"]
        if self._kind is not None and isinstance(result, (tuple, list)):
            try:
                return self._kind(result)
            except Exception:  # not a kind that takes its parts this way: the plain tuple
                return result
        return result


def _tuple_kind(own, args, kwargs):
    """How to rebuild the kind of tuple ``own`` returns (a named tuple, say) from a list of
    parts, or None for a plain tuple, anything else, or a function that raises."""
    try:
        with np.errstate(all="ignore"):
            theirs = own(*args, **kwargs)
    except Exception:
        return None
    kind = type(theirs)
    if not isinstance(theirs, tuple) or kind is tuple:
        return None
    return kind._make if hasattr(kind, "_make") else kind


class _Unreadable(Exception):
    pass


def _plain(value, depth):
    """An argument of the student's as something the wire carries: arrays, numbers, None,
    and lists or tuples of those."""
    if depth > MAX_STAND_IN_DEPTH:
        raise _Unreadable()
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_STAND_IN_ITEMS:
            raise _Unreadable()
        items = [_plain(item, depth + 1) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    try:
        array = np.asarray(value)
        if array.dtype != np.bool_:
            array = np.asarray(value, dtype=np.float64)
    except Exception:
        raise _Unreadable() from None
    if array.size > MAX_ELEMENTS or array.ndim > 4:
        raise _Unreadable()
    return np.array(array, copy=True, subok=False)


# --- classifying errors -------------------------------------------------------------------

_SHAPE = re.compile(r"\(([\d,\s]*)\)")
_PATTERNS = [  # (kind, regex); the groups are integers or shapes
    ("broadcast", re.compile(r"could not be broadcast together with (?:remapped )?shapes")),
    ("broadcast_assign", re.compile(r"could not broadcast input array from shape \(([\d, ]*)\) "
                                    r"into shape \(([\d, ]*)\)")),
    ("matmul", re.compile(r"matmul: Input operand \d has a mismatch in its core dimension \d.*"
                          r"\(size (\d+) is different from (\d+)\)")),
    ("not_aligned", re.compile(r"shapes \(([\d, ]*)\) and \(([\d, ]*)\) not aligned")),
    ("reshape", re.compile(r"cannot reshape array of size (\d+) into shape "
                           r"\(([\d, ]*(?:newaxis)?[\d, ]*)\)")),
    ("index", re.compile(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)")),
    ("too_many_indices", re.compile(r"too many indices for array: array is (\d+)-dimensional, "
                                    r"but (\d+) were indexed")),
    ("axis", re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")),
    ("concatenate", re.compile(r"along dimension (\d+), the array at index (\d+) has size (\d+) "
                               r"and the array at index (\d+) has size (\d+)")),
    ("concatenate_ndim", re.compile(r"all the input arrays must have same number of dimensions")),
    ("split_unequal", re.compile(r"array split does not result in an equal division")),
    ("concatenate_empty", re.compile(r"need at least one array to (?:concatenate|stack)")),
    ("stack_not_sequence", re.compile(r"arrays to stack must be passed as a \"sequence\" type")),
    ("invert_not_boolean", re.compile(r"ufunc 'invert' not supported for the input types")),
    ("float_slice", re.compile(r"slice indices must be integers or None or have an "
                               r"__index__ method")),
    ("boolean_index", re.compile(r"boolean index did not match indexed array along "
                                 r"(?:axis|dimension) (\d+); (?:size|dimension) (?:of axis )?is "
                                 r"(\d+) but (?:size|dimension) of corresponding boolean "
                                 r"(?:axis|dimension) is (\d+)")),
    ("float_index", re.compile(r"arrays used as indices must be of integer \(or boolean\) type")),
    ("function_operand", re.compile(r"unsupported operand type\(s\) for .+: "
                                    r"(?:'\w+' and 'function'|'function' and '\w+')")),
    ("scalar_function", re.compile(r"only (?:0-dimensional|length-1|size-1) arrays can be "
                                   r"converted to Python scalars")),
    ("unpack", re.compile(r"(?:not enough|too many) values to unpack \(expected (\d+)"
                          r"(?:, got (\d+))?\)")),
    ("inhomogeneous", re.compile(r"setting an array element with a sequence\. The requested "
                                 r"array has an inhomogeneous shape")),
    ("integer_expected", re.compile(r"only integer scalar arrays can be converted to a scalar "
                                    r"index|cannot be interpreted as an integer")),
    ("ambiguous_truth", re.compile(r"The truth value of an array with more than one element "
                                   r"is ambiguous")),
    ("einsum", re.compile(r"size of label '\w' for operand (\d+) \((\d+)\) does not match "
                          r"previous terms \((\d+)\)")),
]
_KINDS_BY_CLASS = {NotImplementedError: "not_implemented", MemoryError: "memory",
                   RecursionError: "recursion", CallTimeout: "time", SystemExit: "exit",
                   KeyboardInterrupt: "exit", StandInRefused: "stand_in", NameError: "name",
                   AttributeError: "attribute", ZeroDivisionError: "zero_division"}
_NUMPY_CLASSES = {np.exceptions.AxisError, np.linalg.LinAlgError}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")
_NUMPY_REMOVED = re.compile(r"^`np\.([A-Za-z_][A-Za-z0-9_]{0,39})` was removed in the NumPy 2\.0")


def classify(exc):
    """What the grader may know about an exception: its class when it is Python's or NumPy's
    own, a kind, and small integers. Never the message."""
    kind_class = type(exc)
    own = kind_class is getattr(builtins, kind_class.__name__, None) or kind_class in _NUMPY_CLASSES
    error = {"exception": kind_class.__name__ if own else None}
    for cls, kind in _KINDS_BY_CLASS.items():
        if isinstance(exc, cls):
            error["kind"] = kind
            break
    else:
        error["kind"] = "other"
    if not own:
        return error
    if error["kind"] == "name":
        name = getattr(exc, "name", None)  # the identifier the code looked up, not free text
        if isinstance(name, str) and _IDENTIFIER.match(name):
            error["name"] = name
        return error
    if error["kind"] == "attribute":
        return dict(error, **_attribute(exc))
    if error["kind"] != "other":
        return error
    try:
        message = builtins.str(exc)[:2000]
    except BaseException:
        return error
    for kind, pattern in _PATTERNS:
        match = pattern.search(message)
        if match:
            error["kind"] = kind
            error["shapes"] = [_ints(s) for s in _SHAPE.findall(message)][:4]
            error["numbers"] = [int(g) for g in match.groups() if g and re.fullmatch(r"-?\d+", g)][:6]
            break
    return error


def _attribute(exc):
    """The attribute an AttributeError looked up and what it was looked up on (a module's
    name, or the type of a value): identifiers of the code, never the message."""
    found = {}
    name = getattr(exc, "name", None)
    if name is None:
        # NumPy 2's module __getattr__ says which removed name was used, but sets no .name.
        try:
            removed = _NUMPY_REMOVED.search(builtins.str(exc)[:300])
        except BaseException:
            removed = None
        if removed:
            return {"name": removed.group(1), "owner": "numpy", "module": True}
        return found
    if isinstance(name, str) and _IDENTIFIER.match(name):
        found["name"] = name
    try:
        owner = getattr(exc, "obj", None)
        owner = owner.__name__ if isinstance(owner, types.ModuleType) else type(owner).__name__
    except BaseException:
        return found
    if isinstance(owner, str) and all(_IDENTIFIER.match(part) for part in owner.split(".")[:4]):
        found["owner"] = owner
        found["module"] = isinstance(getattr(exc, "obj", None), types.ModuleType)
    return found


def _ints(text):
    return [int(n) for n in text.replace(" ", "").split(",") if n][:6]
