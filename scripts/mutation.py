"""Mutation testing of the pure (Django-free) modules: do the tests notice a changed line?

Each mutant changes one operator, condition, constant or statement of one module (found by
walking its AST). The tree is copied once per worker into a temporary folder; a mutant is
written into that copy and the module's unit tests run against it (`pytest -x`), in a child
forked from a process that has already imported pytest and the third-party packages, so a
mutant costs the tests' own time and not an interpreter start. A mutant is killed when the
tests fail, survives when they pass, and times out past a multiple of the unmutated run.

    .venv/bin/python scripts/mutation.py [--limit 100] [--workers 2] [MODULE ...]

Tests that need the database or a browser are left out (`-m "not django_db and not browser"`):
they load the seed catalogue and would make each mutant cost half a minute. Figures are
therefore a lower bound of what the whole suite catches.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The modules under test and the unit test files that exercise them (decision as data).
MODULES: dict[str, tuple[str, ...]] = {
    "catalog/naming.py": ("tests/test_naming.py", "tests/test_mutation_naming.py"),
    "catalog/recipes/nix/edit.py": (
        "tests/test_nix_edit.py",
        "tests/test_nix_read.py",
        "tests/test_mutation_nix_edit.py",
    ),
    "catalog/wizard/engine.py": (
        "tests/test_recommend_engine.py",
        "tests/test_mutation_engine.py",
    ),
    "catalog/wizard/detect/nvidia_smi_csv.py": (
        "tests/test_recommend_detect.py",
        "tests/test_mutation_nvidia_smi_csv.py",
    ),
}
PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist")
PYTEST_ARGS += ("-m", "not django_db and not browser")
# Imported once in the parent so children start warm; never the project's own packages.
PRELOAD = ("pytest", "django", "hypothesis", "archspec.cpu", "tree_sitter", "pytest_django")
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", "__pycache__", ".cache", "export", "staticfiles"
)
TIMEOUT_FACTOR, TIMEOUT_SLACK_S = 3.0, 10.0
CONSTANT = "constant"

BINOP_SWAPS = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}
COMPARE_SWAPS = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.BitOr: "|", ast.BitAnd: "&", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=",
    ast.Gt: ">", ast.GtE: ">=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is",
    ast.IsNot: "is not",
}  # fmt: skip


@dataclass(frozen=True)
class Mutant:
    path: str
    index: int  # position of the node in ast.walk order
    option: int  # which of the node's mutations
    line: int
    category: str  # operator, condition, constant or statement
    text: str


@dataclass
class Tally:
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    timed_out: int = 0
    nonconstant: int = 0
    nonconstant_killed: int = 0
    survivors: list[Mutant] = field(default_factory=list)


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """Docstrings, annotations and `from __future__` cannot change behaviour when mutated."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                skip.update(id(n) for n in ast.walk(body[0]))
        for name in ("annotation", "returns"):
            sub = getattr(node, name, None)
            if isinstance(sub, ast.AST):
                skip.update(id(n) for n in ast.walk(sub))
        if isinstance(node, ast.ImportFrom):
            skip.update(id(n) for n in ast.walk(node))
    return skip


Change = tuple[str, str, Callable[[ast.AST], ast.AST]]  # category, text, transform


def _constant_changes(node: ast.Constant) -> Iterator[Change]:
    value = node.value
    if isinstance(value, bool):
        yield CONSTANT, f"{value} -> {not value}", lambda n: ast.Constant(not value)
    elif isinstance(value, int | float):
        yield CONSTANT, f"{value} -> {value + 1}", lambda n: ast.Constant(value + 1)
    elif isinstance(value, str):
        new = f"XX{value}XX"
        yield CONSTANT, f"{value!r} -> {new!r}", lambda n: ast.Constant(new)


def _set_op(node: ast.AST, attr: str, op: type) -> ast.AST:
    setattr(node, attr, op())
    return node


def _compare_changes(node: ast.Compare) -> Iterator[Change]:
    for i, op in enumerate(node.ops):
        swap = COMPARE_SWAPS.get(type(op))
        if swap:

            def change(n: ast.AST, i: int = i, swap: type = swap) -> ast.AST:
                n.ops[i] = swap()  # type: ignore[attr-defined]
                return n

            yield "condition", f"{SYMBOLS[type(op)]} -> {SYMBOLS[swap]}", change


def _negated(attr: str) -> Callable[[ast.AST], ast.AST]:
    def change(n: ast.AST) -> ast.AST:
        setattr(n, attr, ast.UnaryOp(ast.Not(), getattr(n, attr)))
        return n

    return change


def _expression_changes(node: ast.AST) -> Iterator[Change]:
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in BINOP_SWAPS:
        swap = BINOP_SWAPS[type(node.op)]
        text = f"{SYMBOLS[type(node.op)]} -> {SYMBOLS[swap]}"
        yield "operator", text, lambda n: _set_op(n, "op", swap)
    elif isinstance(node, ast.BoolOp):
        swap = ast.Or if isinstance(node.op, ast.And) else ast.And
        text = "and -> or" if swap is ast.Or else "or -> and"
        yield "condition", text, lambda n: _set_op(n, "op", swap)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        text = "not x -> x" if isinstance(node.op, ast.Not) else "-x -> x"
        yield "condition", text, lambda n: n.operand  # type: ignore[attr-defined]
    elif isinstance(node, ast.Compare):
        yield from _compare_changes(node)
    elif isinstance(node, ast.Constant):
        yield from _constant_changes(node)
    if isinstance(node, ast.If | ast.IfExp | ast.While):
        yield "condition", "condition negated", _negated("test")


def _statement_changes(node: ast.AST) -> Iterator[Change]:
    removable = ast.Raise | ast.AugAssign
    if isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield "statement", "return value -> return None", lambda n: ast.Return(None)
    elif isinstance(node, removable) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    ):
        yield "statement", f"{type(node).__name__.lower()} removed", lambda n: ast.Pass()
    elif isinstance(node, ast.Continue):
        yield "statement", "continue -> break", lambda n: ast.Break()
    elif isinstance(node, ast.Break):
        yield "statement", "break -> continue", lambda n: ast.Continue()


def _changes(node: ast.AST) -> list[Change]:
    return [*_expression_changes(node), *_statement_changes(node)]


def mutants_of(path: str, source: str) -> list[Mutant]:
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        for option, (category, text, _) in enumerate(_changes(node)):
            found.append(Mutant(path, index, option, node.lineno, category, text))
    return found


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, transform: Callable[[ast.AST], ast.AST]) -> None:
        self.target, self.transform = target, transform

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.transform(node)
        return super().visit(node)


def mutated_source(source: str, mutant: Mutant) -> str:
    tree = ast.parse(source)
    node = next(n for i, n in enumerate(ast.walk(tree)) if i == mutant.index)
    transform = _changes(copy.deepcopy(node))[mutant.option][2]
    tree = _Replace(node, transform).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


def _child(workdir: Path, tests: tuple[str, ...]) -> None:
    """Runs in the forked child: import the project from the copy, run the tests, exit."""
    import pytest

    os.chdir(workdir)
    # The copy comes first; the editable install maps only the settings package (site/), which
    # is not mutated. The canary in _check_baseline proves the copy is what the tests import.
    sys.path[:] = [str(workdir)] + [p for p in sys.path if Path(p).resolve() != ROOT]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os._exit(int(pytest.main([*PYTEST_ARGS, *tests])))


def _run(workdir: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float]:
    """Outcome of the tests against `workdir`: passed, failed or timeout, and the seconds."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            _child(workdir, tests)
        finally:
            os._exit(99)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return ("passed" if os.waitstatus_to_exitcode(status) == 0 else "failed"), (
                time.monotonic() - start
            )
        if time.monotonic() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - start
        time.sleep(0.05)


def _check_baseline(work: Path, path: str, source: str, tests: tuple[str, ...]) -> float:
    """The unmutated tests must pass, and a module that raises on import must be caught."""
    outcome, seconds = _run(work, tests, 600)
    if outcome != "passed":
        raise SystemExit(f"{path}: its tests fail without any mutation; fix them first.")
    (work / path).write_text("raise RuntimeError('mutation canary')\n" + source)
    canary, _ = _run(work, tests, 600)
    (work / path).write_text(source)
    if canary != "failed":
        raise SystemExit(f"{path}: a module that cannot import was not caught; tests not run?")
    return seconds


def _record(tally: Tally, mutant: Mutant, outcome: str) -> None:
    tally.mutants += 1
    killed = outcome == "failed"
    tally.killed += killed
    tally.survived += outcome == "passed"
    tally.timed_out += outcome == "timeout"
    if mutant.category != CONSTANT:
        tally.nonconstant += 1
        tally.nonconstant_killed += killed
    if outcome == "passed":
        tally.survivors.append(mutant)


def test_module(path: str, limit: int, workers: list[Path]) -> Tally:
    tests = MODULES[path]
    source = (ROOT / path).read_text()
    mutants = mutants_of(path, source)
    if limit and len(mutants) > limit:
        mutants = sorted(random.Random(path).sample(mutants, limit), key=lambda m: m.index)
    baseline = _check_baseline(workers[0], path, source, tests)
    timeout = baseline * TIMEOUT_FACTOR + TIMEOUT_SLACK_S
    tally, pending = Tally(), list(mutants)
    running: dict[int, tuple[Path, Mutant, float]] = {}
    free = list(workers)
    while pending or running:
        while pending and free:
            work, mutant = free.pop(), pending.pop(0)
            (work / path).write_text(mutated_source(source, mutant))
            pid = os.fork()
            if pid == 0:
                try:
                    _child(work, tests)
                finally:
                    os._exit(99)
            running[pid] = (work, mutant, time.monotonic())
        for pid, (work, mutant, start) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done and time.monotonic() - start > timeout:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                outcome = "timeout"
            elif done:
                code = os.waitstatus_to_exitcode(status)
                outcome = "passed" if code == 0 else "failed"
            else:
                continue
            _record(tally, mutant, outcome)
            (work / path).write_text(source)
            free.append(work)
            del running[pid]
        time.sleep(0.05)
    return tally


def _rate(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


def _report(path: str, tally: Tally, seconds: float) -> None:
    print(
        f"{path}: {tally.mutants} mutants, {tally.killed} killed, {tally.survived} survived, "
        f"{tally.timed_out} timed out; killed {_rate(tally.killed, tally.mutants)}, "
        f"{_rate(tally.nonconstant_killed, tally.nonconstant)} of {tally.nonconstant} "
        f"leaving out constant changes ({seconds:.0f} s)"
    )
    for m in sorted(tally.survivors, key=lambda m: (m.line, m.index, m.option)):
        print(f"  survived {m.path}:{m.line}: {m.text} [{m.category}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=list(MODULES), metavar="MODULE")
    parser.add_argument("--limit", type=int, default=100, help="mutants per module (0: all)")
    parser.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 8))
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"not a module under mutation testing: {', '.join(unknown)}")
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    sys.dont_write_bytecode = True  # a mutant written within the same second must not hit a cache
    for name in PRELOAD:
        __import__(name)
    total, started = Tally(), time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        workers = []
        for i in range(max(args.workers, 1)):
            shutil.copytree(ROOT, Path(tmp) / f"w{i}", ignore=COPY_IGNORE, symlinks=True)
            workers.append(Path(tmp) / f"w{i}")
        for path in args.modules:
            start = time.monotonic()
            tally = test_module(path, args.limit, workers)
            _report(path, tally, time.monotonic() - start)
            for name in ("mutants", "killed", "survived", "timed_out"):
                setattr(total, name, getattr(total, name) + getattr(tally, name))
            total.nonconstant += tally.nonconstant
            total.nonconstant_killed += tally.nonconstant_killed
    print(
        f"overall: {total.mutants} mutants, killed {_rate(total.killed, total.mutants)}, "
        f"{_rate(total.nonconstant_killed, total.nonconstant)} leaving out constant changes "
        f"({time.monotonic() - started:.0f} s, {len(workers)} workers)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
