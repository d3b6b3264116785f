"""Reviewer's hints: what in a submission's code a person may want to look at.

This is not a defence. Scores are decided by the sandbox and the verdicts, which hold whatever
this module misses (and it misses plenty: ``np.lib._npyio_impl.os`` reaches files through a
plain attribute chain). It reads the notebook with ``ast``, statement by statement, and points
at file and process access, code built at run time, introspection of the interpreter,
monkeypatching what was imported, and types that decide their own comparisons. Statements the
student received unchanged are exempt: their fingerprints ship in the plugin's configuration
(``given_fingerprints``), numbers masked so that a new seed still matches.

A hint never changes a score; it is worded as "revisar", not as proof.
"""

import ast
import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Iterable, Optional
from .parsing import parse

_FILE_OR_PROCESS = frozenset({
    "os", "posix", "nt", "subprocess", "pathlib", "shutil", "socket", "ssl", "http", "urllib",
    "requests", "ftplib", "smtplib", "io", "fileinput", "glob", "tempfile", "mmap", "ctypes",
    "cffi", "signal", "resource", "fcntl", "pty", "tty", "multiprocessing", "concurrent",
    "threading", "_thread", "asyncio", "pickle", "marshal", "shelve", "dbm", "sqlite3",
    "zipfile", "tarfile", "gzip", "bz2", "lzma", "zipimport", "webbrowser", "pty",
})
_INTROSPECTION = frozenset({
    "sys", "importlib", "imp", "pkgutil", "runpy", "inspect", "gc", "builtins", "__builtin__",
    "code", "codeop", "dis", "types", "traceback", "ast", "faulthandler", "atexit", "copyreg",
    "site", "sysconfig", "tracemalloc", "weakref",
})
# The grader's own code, reachable from a kernel that shares the grading folder.
_GRADER_MODULES = frozenset({"reference", "autograder", "kit_autograder", "tests", "run_otter"})

_DYNAMIC_CODE_CALLS = frozenset({"exec", "eval", "compile", "__import__"})
_CONSOLE_CALLS = frozenset({"input", "breakpoint"})
_NAMESPACE_CALLS = frozenset({"globals", "locals", "vars"})
_ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "delattr"})
# numpy functions that read or write files.
_NUMPY_FILE_FUNCTIONS = frozenset({
    "load", "loadtxt", "genfromtxt", "fromfile", "fromregex", "memmap", "save", "savez",
    "savez_compressed", "savetxt", "tofile", "DataSource", "ctypeslib",
})
# Attributes of frames, code objects and generators: the road from a function to its globals.
_FRAME_ATTRIBUTES = frozenset({
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "tb_frame", "tb_next",
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "co_code", "co_consts",
    "co_names", "func_globals", "func_code",
})
_BENIGN_DUNDERS = frozenset({"__name__", "__doc__", "__version__", "__init__", "__main__",
                             "__qualname__", "__repr__", "__str__", "__len__"})
# Special methods that let an object answer comparisons or conversions its own way.
_DECEPTIVE_METHODS = frozenset({
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__float__",
    "__index__", "__int__", "__array__", "__array_ufunc__", "__array_function__",
    "__array_finalize__", "__array_wrap__", "__array_priority__", "__getattr__",
    "__getattribute__", "__instancecheck__", "__subclasscheck__", "__abs__", "__sub__",
    "__rsub__", "__hash__", "__class_getitem__", "__init_subclass__", "__set_name__",
})
_ALLOWED_LINE_MAGICS = frozenset({"matplotlib", "time", "timeit", "precision", "config",
                                  "who", "whos", "autoreload"})
_ALLOWED_CELL_MAGICS = frozenset({"time", "timeit", "capture"})
_DUNDER = re.compile(r"^__\w+__$")


@dataclass(frozen=True, order=True)
class Violation:
    """One statement the policy flags: where it is and, in Spanish, what it does."""

    cell: int
    message: str


# --- reading cells --------------------------------------------------------------------------


# What IPython's input transformations act on: magics, shell escapes and help (``%``, ``!``,
# ``?``), pasted prompts (``>>>``, ``...``, ``In [1]:``), escaped calls (a line starting with
# ``/``, ``,`` or ``;``), and a cell that starts with blank or indented lines. A cell with none
# of them is plain Python already: IPython tokenizes it line by line for every transformation
# it tries, which took most of the grader's own CPU on a student's own cells.
_IPYTHON_SYNTAX = re.compile(r"[%!?]|^[ \t]*(?:>>>|\.\.\.|In \[|[/,;])", re.MULTILINE)


def cell_python(source: str) -> str:
    """A cell as plain Python: IPython turns magics and ``!`` lines into ``get_ipython()``
    calls, which the rules below can then see."""
    if not source[:1].isspace() and not _IPYTHON_SYNTAX.search(source):
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:  # a cell IPython cannot read is read as it is
        return source


def parsed_cells(cells) -> Iterable[tuple]:
    """(number, parsed module, fingerprint of each of its statements) for every cell that
    parses, numbered as Jupyter shows them after "Restart & Run All" ([1], [2]... over
    non-empty cells). Bounded by the submission's size limits; a cell that breaks the parser
    runs nothing and is skipped."""
    number = 0
    for source in cells:
        if not source.strip():
            continue
        number += 1
        parsed = _parsed(source)
        if parsed is not None:
            yield number, *parsed


def cell_tree(source):
    """One cell's tree (IPython's syntax read) from the parse cache, or None."""
    parsed = _parsed(source)
    return parsed[0] if parsed is not None else None


# Small on purpose: the cells everybody received are met in every notebook and stay in; each
# student's own cells pass through, so the grader's memory does not grow with the class. The
# fingerprints are kept beside their tree, never keyed by a statement, which would keep every
# student's trees alive.
@functools.lru_cache(maxsize=256)
def _parsed(source):
    """One cell's tree and its statements' fingerprints, or None. Most cells of a class's
    notebooks are the ones everybody received, unchanged: each is parsed once per batch, not
    once per student. The key is the cell's exact text."""
    try:
        tree = parse(cell_python(source))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return tree, tuple(fingerprint(statement) for statement in tree.body)


def _masked(node, out):
    """The syntax tree as text, positions left out and every number written as 0."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex)) \
            and not isinstance(node.value, bool):
        out.append("N")
        return
    if isinstance(node, ast.AST):
        out.append(type(node).__name__ + "(")
        for name, value in ast.iter_fields(node):
            out.append(name + "=")
            _masked(value, out)
            out.append(",")
        out.append(")")
    elif isinstance(node, list):
        out.append("[")
        for item in node:
            _masked(item, out)
            out.append(",")
        out.append("]")
    else:
        out.append(repr(node))


def fingerprint(statement: ast.stmt) -> str:
    """A statement's identity for the given-code exemption: its syntax tree, numbers masked,
    so that a notebook whose seed or sizes changed still matches what students received."""
    out = []
    _masked(statement, out)
    return hashlib.sha256("".join(out).encode("utf-8")).hexdigest()[:24]


def given_fingerprints(cells) -> list:
    """Fingerprints of every top-level statement of the notebook students receive."""
    return sorted({p for _, _, prints in parsed_cells(cells) for p in prints})


# --- the rules ------------------------------------------------------------------------------


def _root_module(name: Optional[str]) -> str:
    return (name or "").split(".")[0]


def _module_category(module: str) -> Optional[str]:
    root = _root_module(module)
    if root in _FILE_OR_PROCESS:
        return f"accede a archivos o a procesos (`{module}`)"
    if root in _INTROSPECTION:
        return f"inspecciona o modifica el intérprete (`{module}`)"
    if root in _GRADER_MODULES or (root == "otter" and module != "otter"):
        return f"usa el código del corrector (`{module}`)"
    return None


def _imported_names(trees) -> tuple:
    """Names bound by imports anywhere in the notebook: all of them, and those of risky modules."""
    every, risky = set(), {}
    for tree in trees:
        cell_every, cell_risky = _cell_imports(tree)
        every |= cell_every
        risky.update(cell_risky)
    return every, risky


# As _parsed: a cell everybody received is walked once per batch, not once per student (the
# walk over every node of every cell was a third of the grader's own CPU on a notebook).
@functools.lru_cache(maxsize=256)
def _cell_imports(tree) -> tuple:
    """``(names, ((name, risky module), ...))`` bound by the imports of one cell's tree."""
    every, risky = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                every.add(bound)
                if _module_category(alias.name):
                    risky[bound] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                bound = alias.asname or alias.name
                every.add(bound)
                full = f"{node.module}.{alias.name}"
                if _module_category(node.module) or _module_category(full):
                    risky[bound] = full
    return frozenset(every), tuple(risky.items())


def _modified(target):
    """The attributes and items an assignment target writes: ``np.x`` in ``np.x = 1``, but
    not ``np.where`` in ``scores[np.where(mask)] = 0``, which only reads it to index the
    student's own array."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _modified(element)
    elif isinstance(target, ast.Starred):
        yield from _modified(target.value)
    elif isinstance(target, (ast.Attribute, ast.Subscript)):
        yield target


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _dotted(node) -> str:
    try:
        return ast.unparse(node)[:60]
    except Exception:
        return "?"


class _StatementRules(ast.NodeVisitor):
    """Every notebook-wide rule, applied to one top-level statement."""

    def __init__(self, imported, risky, numpy_names):
        self.imported, self.risky, self.numpy_names = imported, risky, numpy_names
        self.found = []

    def flag(self, message):
        if message not in self.found:
            self.found.append(message)

    def visit_Import(self, node):
        for alias in node.names:
            message = _module_category(alias.name)
            if message:
                self.flag(message)

    def visit_ImportFrom(self, node):
        module = "." * node.level + (node.module or "")
        message = _module_category(module)
        if message is None and node.level == 0:
            for alias in node.names:
                message = message or _module_category(f"{node.module}.{alias.name}")
        if message:
            self.flag(message)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ATTRIBUTE_CALLS:
            self._attribute_call(func.id, node)
        elif isinstance(func, ast.Name) and func.id in _CONSOLE_CALLS:
            self.flag(f"usa la consola o el depurador (`{func.id}`)")
        elif isinstance(func, ast.Attribute) and self._ipython_call(node):
            for child in node.args + node.keywords:
                self.visit(child)
            return
        elif isinstance(func, ast.Attribute):
            self._numpy_file_call(func)
        self.generic_visit(node)

    def _attribute_call(self, name, node):
        on = node.args[0] if node.args else None
        target = node.args[1] if len(node.args) > 1 else None
        if name != "getattr" and on is not None and _root_name(on) in self.imported:
            self.flag(f"modifica una biblioteca importada (`{name}({_dotted(on)}, …)`)")
        elif not (isinstance(target, ast.Constant) and isinstance(target.value, str)):
            self.flag(f"usa atributos con nombres calculados (`{name}`)")

    def _ipython_call(self, node):
        """True for ``get_ipython().<method>(…)``, which is how IPython spells magics."""
        func = node.func
        if not (isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "get_ipython"):
            return False
        first = node.args[0] if node.args else None
        magic = first.value if isinstance(first, ast.Constant) else None
        allowed = ((func.attr == "run_line_magic" and magic in _ALLOWED_LINE_MAGICS)
                   or (func.attr == "run_cell_magic" and magic in _ALLOWED_CELL_MAGICS))
        if not allowed:
            what = f"%{magic}" if magic and "magic" in func.attr else f"!… ({func.attr})"
            self.flag(f"ejecuta órdenes de la consola o magias de IPython (`{what}`)")
        return True

    def _numpy_file_call(self, func):
        if func.attr == "tofile" or (func.attr in _NUMPY_FILE_FUNCTIONS
                                     and _root_name(func) in self.numpy_names):
            self.flag(f"lee o escribe archivos con numpy (`{_dotted(func)}`)")

    def visit_Attribute(self, node):
        if _DUNDER.match(node.attr) and node.attr not in _BENIGN_DUNDERS:
            self.flag(f"usa atributos internos de Python (`{node.attr}`)")
        elif node.attr in _FRAME_ATTRIBUTES:
            self.flag(f"usa marcos o código de funciones (`{node.attr}`)")
        root = _root_name(node)
        if root in self.risky and isinstance(node.value, ast.Name):
            self.flag(_module_category(self.risky[root]))
        self.generic_visit(node)

    def visit_Name(self, node):
        # Any reference counts, called or not: `run = eval` is as telling as `eval(...)`.
        if _DUNDER.match(node.id) and node.id not in _BENIGN_DUNDERS:
            self.flag(f"usa nombres internos de Python (`{node.id}`)")
        elif node.id in _DYNAMIC_CODE_CALLS:
            self.flag(f"ejecuta código construido en tiempo de ejecución (`{node.id}`)")
        elif node.id == "open":
            self.flag("abre archivos (`open`)")
        elif node.id in _NAMESPACE_CALLS:
            self.flag(f"lee o cambia espacios de nombres (`{node.id}()`)")
        elif node.id == "get_ipython":
            self.flag("usa el intérprete de IPython directamente (`get_ipython`)")

    def visit_Constant(self, node):
        if isinstance(node.value, str) and _DUNDER.match(node.value) and \
                node.value not in _BENIGN_DUNDERS:
            self.flag(f"nombra atributos internos de Python (`{node.value!r}`)")

    def _targets(self, targets):
        for node in (modified for target in targets for modified in _modified(target)):
            if _root_name(node) in self.imported:
                self.flag(f"modifica una biblioteca importada (`{_dotted(node)}`)")
                return

    def visit_Assign(self, node):
        self._targets(node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._targets([node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._targets([node.target])
        self.generic_visit(node)

    def visit_Delete(self, node):
        self._targets(node.targets)
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        bases = " ".join(_dotted(base) for base in node.bases)
        if "ndarray" in bases:
            self.flag(f"define una subclase de ndarray (`{node.name}`)")
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    item.name in _DECEPTIVE_METHODS:
                self.flag(f"define un tipo que decide sus propias comparaciones "
                          f"(`{node.name}.{item.name}`)")
        self.generic_visit(node)


def review_hints(cells, given: Iterable[str] = ()) -> list:
    """Spanish hints for a reviewer, for every statement the student wrote or changed."""
    given = set(given)
    try:
        trees = list(parsed_cells(cells))
        imported, risky = _imported_names(tree for _, tree, _ in trees)
        numpy_names = {name for name in imported if name in ("np", "numpy")}
        found = set()
        for number, tree, prints in trees:
            for statement, print_ in zip(tree.body, prints):
                if print_ in given:
                    continue
                rules = _StatementRules(imported, risky, numpy_names)
                rules.visit(statement)
                found |= {Violation(number, message) for message in rules.found}
    except (MemoryError, RecursionError):
        return ["revisar a mano: el código es demasiado complejo para el análisis automático"]
    return [f"revisar la celda [{v.cell}]: {v.message}" for v in sorted(found)]
