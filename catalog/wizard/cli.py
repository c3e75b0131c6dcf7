"""The command line of "which variant?" (`python manage.py which-variant`; the command module
only wires this up).

Every public Step field (catalog.wizard.steps) is an option (`--compute-cap 9.0`; repeatable
where the field takes several values); tool outputs come from files (`--lscpu FILE`, `-` for
standard input) or from this machine (`--detect`). It ends like any Django command: exit 0 with
the answer on standard output (warnings on standard error), or a `CommandError` — exit 1 when no
variant fits (the answer is printed first), exit 2 for input it cannot use.
"""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from django.core.management.base import CommandError

from catalog.wizard import inputs, steps
from catalog.wizard import output as wizard_output
from catalog.wizard.readers import AnswerError

if TYPE_CHECKING:
    from catalog.wizard.host_probe import Probe

FILES = ("nvidia_smi", "lscpu", "cpuinfo", "uname", "sysctl")  # paste fields read from files
INVALID, NO_FIT = 2, 1  # exit codes (0: a variant fits)


def add_arguments(parser: ArgumentParser) -> None:
    for fld in steps.FIELDS.values():
        if not fld.public:
            continue
        names = [fld.cli, *("--" + a.replace("_", "-") for a in fld.aliases)]
        choices = fld.choices if isinstance(fld.choices, tuple) else ()
        text = (fld.help or fld.label) + (
            f" ({', '.join(c.value for c in choices)})" if choices else ""
        )
        if fld.multi:
            parser.add_argument(
                *names,
                dest=fld.name,
                action="append",
                default=[],
                help=text + "; repeat for several",
            )
        else:
            parser.add_argument(*names, dest=fld.name, help=text)
    for name in FILES:
        parser.add_argument(
            "--" + name.replace("_", "-"),
            dest=f"{name}_file",
            metavar="FILE",
            help=f"a file holding the output of {inputs.PASTES[name]} ('-' for standard input)",
        )
    parser.add_argument(
        "--detect",
        action="store_true",
        help="run nvidia-smi and read /proc/cpuinfo and uname on this machine",
    )
    parser.add_argument(
        "--save-detected", metavar="DIR", help="with --detect: keep the tool outputs read in DIR"
    )
    parser.add_argument("--json", action="store_true", help="print the API's JSON answer")


def _read_file(name: str, path: str):
    label = "--" + name.replace("_", "-")
    try:
        if path == "-":
            return sys.stdin.buffer.read(inputs.MAX_BYTES + 1)
        with Path(path).open("rb") as handle:
            return handle.read(inputs.MAX_BYTES + 1)  # more is refused, never read in full
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise AnswerError(f"Cannot read {label} {path}: {reason}.", name) from None


def params(options: dict, probe_result: Probe | None = None) -> dict:
    """CLI options (and a --detect probe) -> the same fields the API takes."""
    out: dict = {}
    if probe_result is not None:
        out.update({key: [text] for key, text in probe_result.texts.items()})
        if (
            probe_result.has_gpu == "no"
            and not options.get("gpu")
            and not options.get("compute_cap")
        ):
            out["has_gpu"] = ["no"]
    for fld in steps.FIELDS.values():
        value = options.get(fld.name) if fld.public else None
        if value not in (None, [], ""):
            out[fld.name] = list(value) if isinstance(value, list) else [value]
    for name in FILES:
        if options.get(f"{name}_file"):
            out[name] = [_read_file(name, options[f"{name}_file"])]
    return out


def _probe(options: dict, probe: Callable[[], Probe] | None) -> tuple[Probe | None, list[str]]:
    if not options.get("detect"):
        if options.get("save_detected"):
            raise AnswerError("--save-detected needs --detect.")
        return None, []
    from catalog.wizard import host_probe

    found = (probe or host_probe.probe)()
    notes = list(found.notes)
    if options.get("save_detected"):
        try:
            notes += [f"saved {path}" for path in host_probe.save(found, options["save_detected"])]
        except OSError as exc:
            raise AnswerError(
                f"Cannot write --save-detected {options['save_detected']}: {exc.strerror or exc}."
            ) from None
    return found, notes


def run(
    options: dict,
    stdout: TextIO,
    stderr: TextIO,
    probe: Callable[[], Probe] | None = None,
) -> None:
    """The whole of `which-variant`: raises CommandError (returncode 1 or 2) unless a variant
    fits."""
    notes: list[str] = []
    try:
        found, notes = _probe(options, probe)
        parsed = inputs.parse(params(options, found), strict=True)
        if not parsed.answers:
            raise AnswerError(
                "Nothing to go on: give answers (e.g. --os linux --arch x86_64 "
                "--gpu H100), tool output files (--nvidia-smi FILE --lscpu FILE), "
                "or --detect."
            )
        rec = inputs.decide(parsed.answers)
    except AnswerError as exc:
        for note in notes:
            stderr.write(f"Note: {note}\n")
        raise CommandError(exc.message, returncode=INVALID) from None
    from catalog.queries import availability_json, build_answer  # the database, once answered

    body = wizard_output.with_availability(wizard_output.api_body(rec, parsed), availability_json)
    if options.get("json"):
        for note in notes:
            stderr.write(f"Note: {note}\n")
        stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        # The web wizard's build answer: status first, the nearest built one, the five steps.
        keys = [(v["repository"], v["branch"], v["pname"]) for v in wizard_output.picks(body)]
        answers = {key: build_answer(*key) for key in keys}
        stdout.write(wizard_output.format_text(body, notes, answers))
    for warning in wizard_output.all_warnings(body):
        stderr.write(f"Warning: {warning}\n")
    if not wizard_output.picks(body):
        raise CommandError(
            "No variant fits this machine; the reasons and the nearest alternatives are above.",
            returncode=NO_FIT,
        )
