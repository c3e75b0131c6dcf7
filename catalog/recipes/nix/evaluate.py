"""Evaluate recipes with `nix-instantiate` against the stand-in nixpkgs in `standin/`.

Offline and store-free: `--store dummy://` and `--readonly-mode` (no Nix database, nothing
built or fetched), restricted evaluation (a recipe reads only its own folder), and a throwaway
state and configuration folder, so it works as root or as any user on a machine with nothing but
Debian's `nix-bin`. Many recipes share one process: `standin/verify.nix` traces one record per
recipe as it goes, so when a recipe fails (or runs past its time) the caller knows which one,
records why, and resumes with the next in a fresh process. No Django import.
"""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

STANDIN = Path(__file__).resolve().parent / "standin"
FILE_TIMEOUT_S = 20.0  # one recipe's evaluation; a real one takes milliseconds
# Offline, read only what is allowed, no build users (root or not).
NIX_OPTIONS = {
    "restrict-eval": "true",
    "allowed-uris": "",
    "substitute": "false",
    "build-users-group": "",
}
MEMORY_LIMIT = 1024**3  # address space of one nix-instantiate process (it needs ~100 MiB)
# The Python side reads nix-instantiate's stderr within bounds too (a recipe can trace without
# end): lines are cut at MAX_LINE characters, only the last TAIL_LINES after a record are kept,
# cut shorter (Nix's error comes last), the queue between the reading thread and the runner is
# bounded, and
# a run that writes more than MAX_OUTPUT characters is stopped.
MAX_LINE = 256 * 1024
QUEUED_LINES = 32  # at most 8 MiB waiting
TAIL_LINES, TAIL_LINE = 200, 4096  # Nix's error and its location lines are short
MAX_OUTPUT = 64 * 1024**2
TOTAL_TIMEOUT_S = 900.0  # the whole verification, whatever the number of recipes
_ERROR_LINE = re.compile(r"^error: (?P<message>.*)$")
_LOCATION_LINE = re.compile(r"^\s*at (?P<path>/[^:]+):(?P<line>\d+):(?P<column>\d+):?$")


class EvaluatorUnavailable(RuntimeError):
    """nix-instantiate is missing or cannot evaluate at all; the message says what to do."""


@dataclass(frozen=True)
class Evaluation:
    path: Path
    record: dict | None  # what the stand-in records about the recipe, when it evaluated
    error: str = ""  # why it did not


def nix_instantiate() -> str | None:
    return shutil.which("nix-instantiate")


def evaluate(
    paths: Sequence[Path],
    *,
    jobs: int = 2,
    file_timeout: float = FILE_TIMEOUT_S,
    total_timeout: float = TOTAL_TIMEOUT_S,
) -> list[Evaluation]:
    """One Evaluation per path, in order. `jobs` processes share the list between them; past
    `total_timeout` seconds the recipes not yet evaluated are reported as such."""
    program = nix_instantiate()
    if program is None:
        raise EvaluatorUnavailable(
            "nix-instantiate is not installed; install Nix (Debian: apt-get install nix-bin)."
        )
    # Not resolved: a recipe that is a link out of its folder must stay outside what may be read.
    paths = [Path(p).absolute() for p in paths]
    with tempfile.TemporaryDirectory(prefix="verify-recipes-") as tmp:
        runner = _Runner(program, Path(tmp), _allowed_dirs(paths), file_timeout)
        runner.deadline = time.monotonic() + total_timeout
        runner.overall = (
            f"not evaluated: the verification ran past its overall limit ({total_timeout:g} s)"
        )
        runner.self_test()
        if not paths:
            return []
        jobs = max(1, min(jobs, len(paths)))
        size = -(-len(paths) // jobs)
        chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
        with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
            results = list(pool.map(runner.run_chunk, range(len(chunks)), chunks))
    return [evaluation for chunk in results for evaluation in chunk]


def _allowed_dirs(paths: Sequence[Path]) -> list[Path]:
    """The folders restricted evaluation may read: each recipe's own folder (its siblings), as
    given and with links resolved, since Nix compares resolved paths."""
    dirs = sorted({d for p in paths for d in (p.parent, p.parent.resolve())})
    return [d for d in dirs if not any(d != o and d.is_relative_to(o) for o in dirs)]


class _Runner:
    def __init__(self, program: str, tmp: Path, allowed: list[Path], file_timeout: float):
        self.program = program
        self.tmp = tmp
        self.allowed = allowed
        self.file_timeout = file_timeout
        self.deadline = float("inf")  # of the whole verification (time.monotonic())
        self.overall = "not evaluated: the verification ran past its overall limit"
        for name in ("state", "log", "conf", "home", "lists"):
            (tmp / name).mkdir()
        (tmp / "conf" / "nix.conf").write_text("")  # no user or system settings apply

    def _environment(self) -> dict[str, str]:
        home = str(self.tmp / "home")
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "XDG_CONFIG_HOME": home,
            "XDG_CACHE_HOME": home,
            "XDG_DATA_HOME": home,
            "NIX_STATE_DIR": str(self.tmp / "state"),
            "NIX_LOG_DIR": str(self.tmp / "log"),
            "NIX_CONF_DIR": str(self.tmp / "conf"),
            "NIX_PATH": "",
            "LANG": "C.UTF-8",
        }

    def _command(self, list_file: Path, nonce: str) -> list[str]:
        command = [self.program, "--eval", "--readonly-mode", "--store", "dummy://"]
        for name, value in NIX_OPTIONS.items():
            command += ["--option", name, value]
        # Restricted evaluation reads only these; "name=" keeps a "=" in a path from splitting it.
        for i, folder in enumerate([STANDIN, list_file.parent, *self.allowed]):
            command += ["-I", f"allowed{i}={folder}"]
        arguments = {"listFile": str(list_file), "nonce": nonce}
        command.append(str(STANDIN / "verify.nix"))
        for name, value in arguments.items():
            command += ["--argstr", name, value]
        return command

    def self_test(self) -> None:
        """Evaluate an empty list, so a broken Nix is one clear error, not one per recipe."""
        records, tail, failure = self._run("check", [])
        if failure:
            message = _error_message(tail) or failure
            raise EvaluatorUnavailable(f"nix-instantiate cannot evaluate the stand-in: {message}")

    def run_chunk(self, index: int, paths: list[Path]) -> list[Evaluation]:
        done: list[Evaluation] = []
        while len(done) < len(paths):
            rest = paths[len(done) :]
            if time.monotonic() >= self.deadline:
                return done + [Evaluation(p, None, self.overall) for p in rest]
            records, tail, failure = self._run(f"{index}-{len(done)}", rest)
            done += [Evaluation(rest[i], records[i]) for i in range(len(records))]
            if failure and len(records) < len(rest):
                # The recipe after the last record stopped the run; say why and go on past it.
                bad = rest[len(records)]
                done.append(Evaluation(bad, None, _error_message(tail, bad.parent) or failure))
            elif failure:
                break
        return done

    def _run(self, name: str, paths: list[Path]) -> tuple[list[dict], list[str], str]:
        """Records in order, the stderr lines after the last one, and why the run stopped
        early ("" when it finished)."""
        list_file = self.tmp / "lists" / f"{name}.json"
        list_file.write_text(json.dumps([str(p) for p in paths]))
        nonce = secrets.token_hex(16)
        marker = f"trace: {nonce} "
        process = subprocess.Popen(
            self._command(list_file, nonce),
            env=self._environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
        _limit_memory(process.pid)
        lines: queue.Queue = queue.Queue(maxsize=QUEUED_LINES)
        threading.Thread(target=_pump, args=(process.stderr, lines), daemon=True).start()
        records: list[dict] = []
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        deadline = min(time.monotonic() + self.file_timeout, self.deadline)
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = TIMED_OUT
            if line in (TIMED_OUT, TOO_MUCH):
                process.kill()
                process.wait()
                if line is TOO_MUCH:  # the reading thread has stopped
                    return records, [], f"it wrote more than {MAX_OUTPUT // 1024**2} MiB"
                _drain(lines)
                if deadline >= self.deadline:
                    return records, [], self.overall
                return records, [], f"evaluation did not finish within {self.file_timeout:g} s"
            if line is None:
                break
            if line.startswith(marker):
                entry = json.loads(line[len(marker) :])
                if entry["i"] == len(records):
                    records.append(entry["record"])
                    tail.clear()
                    deadline = min(time.monotonic() + self.file_timeout, self.deadline)
                    continue
            tail.append(line[:TAIL_LINE].rstrip("\n"))
        code = process.wait()
        if code == 0 and len(records) == len(paths):
            return records, list(tail), ""
        return records, list(tail), f"nix-instantiate stopped (exit status {code})"


TIMED_OUT, TOO_MUCH = object(), object()


def _pump(stream, lines: queue.Queue) -> None:
    """Lines of at most MAX_LINE characters, until the stream ends (None) or more than
    MAX_OUTPUT characters have come (TOO_MUCH); the bounded queue blocks a fast writer."""
    total = 0
    while line := stream.readline(MAX_LINE):
        total += len(line)
        if total > MAX_OUTPUT:
            lines.put(TOO_MUCH)
            return
        lines.put(line)
    lines.put(None)


def _drain(lines: queue.Queue) -> None:
    """Read the killed process's last lines, so the reading thread, which may be blocked on the
    full queue, reaches the end of its stream and finishes."""
    while True:
        try:
            if lines.get(timeout=5) in (None, TOO_MUCH):
                return
        except queue.Empty:
            return


def _limit_memory(pid: int) -> None:
    try:
        import resource

        resource.prlimit(pid, resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, AttributeError, OSError, ValueError):
        pass  # not Linux, or the process is already gone: the timeout still bounds it


def _error_message(lines: list[str], base: Path | None = None) -> str:
    """Nix's first error line, with the first location in the recipes (not the stand-in)."""
    message = ""
    for line in lines:
        match = _ERROR_LINE.match(line)
        if match:
            message = match["message"].strip()
            break
    if not message:
        return ""
    for line in lines:
        match = _LOCATION_LINE.match(line)
        if match and not Path(match["path"]).is_relative_to(STANDIN):
            path = Path(match["path"])
            shown = path.relative_to(base) if base and path.is_relative_to(base) else path
            return f"{message} (at {shown}:{match['line']})"
    return message
