"""Make targets in a fresh clone: `make test` / `make test-postgres` on a machine without the
system packages they need, and `make lint`.

Each test copies the checkout's tracked files to a fresh folder (what a clone holds: no .venv,
no database) and runs make there. The package tests arrange PATH so that chromium,
nix-instantiate and (unless a fake one is wanted) apt-get are not found: a missing package must
stop the target at once with one sentence naming the command to run; as root with apt-get it
must run `apt-get update`, then `apt-get install` for exactly the missing packages, then go on.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = {"chromium", "nix-instantiate", "apt-get"}
SYSTEM_BIN = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")

pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or shutil.which("git") is None,
    reason="needs make and git (the checkout's tracked files are copied with git ls-files)",
)


@pytest.fixture
def tmp_path():
    """A folder every user can enter (pytest's own lies under a root-only folder), so that the
    unprivileged run can reach the clone and the bin folder."""
    folder = Path(tempfile.mkdtemp(prefix="catalogue-make-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The checkout's files (tracked, or new and not ignored) in a fresh folder, readable by an
    unprivileged user: what a clone of this work holds."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    target = tmp_path / "clone"
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    for folder in (target, *target.rglob("*")):
        if folder.is_dir():
            folder.chmod(0o777)  # the unprivileged run may create .venv there
    return target


@pytest.fixture
def bare_path(tmp_path: Path) -> Path:
    """A bin folder holding every system program except chromium, nix-instantiate, apt-get."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in SYSTEM_BIN:
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if name in HIDDEN or os.path.lexists(bin_dir / name):
                continue
            (bin_dir / name).symlink_to(os.path.join(folder, name))
    bin_dir.chmod(0o755)
    return bin_dir


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def fake_apt(tmp_path: Path, bare_path: Path):
    """An apt-get that logs its calls and, on install, puts stub programs on PATH; plus an `id`
    that says root, so the install path is taken whoever runs the tests."""
    log = tmp_path / "apt.log"
    installed = tmp_path / "installed"
    installed.mkdir()
    provides = {"chromium": "chromium", "nix-bin": "nix-instantiate"}
    stubs = "\n".join(
        f'  {package}) printf "#!/bin/sh\\n" > "{installed}/{program}";'
        f' chmod +x "{installed}/{program}";;'
        for package, program in provides.items()
    )
    executable(
        bare_path / "apt-get",
        f"""#!/bin/sh
echo "$DEBIAN_FRONTEND $*" >> "{log}"
[ -n "${{APT_FAIL:-}}" ] && {{ echo "E: Unable to locate package" >&2; exit 100; }}
[ "$1" = install ] || exit 0
for package in "$@"; do
  case $package in
{stubs}
  esac
done
""",
    )
    (bare_path / "id").unlink(missing_ok=True)
    executable(bare_path / "id", "#!/bin/sh\necho 0\n")
    return log, installed


def make(clone: Path, path: str, *args: str, user: str | None = None, **env: str):
    base = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR")}
    command = ["make", "--no-print-directory", *args]
    if user:
        command = ["runuser", "-u", user, "--", "env", f"PATH={path}", *command]
    started = time.monotonic()
    result = subprocess.run(
        command,
        cwd=clone,
        env={**base, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result, time.monotonic() - started


def sentences(stderr: str) -> list[str]:
    """stderr without make's own "make: *** [...] Error 1" trailer."""
    return [line for line in stderr.splitlines() if line and not line.startswith("make: ***")]


def test_make_test_without_chromium_and_nix_stops_at_once_with_one_sentence(clone, bare_path):
    # No apt-get on PATH: nothing can be installed, whoever runs it.
    result, seconds = make(clone, str(bare_path), "test")
    assert result.returncode != 0
    assert sentences(result.stderr) == [
        "make test needs chromium and nix-instantiate (not found): install them (Debian: "
        "`apt-get install chromium nix-bin` as root) and try again."
    ]
    assert seconds < 10
    assert not (clone / ".venv").exists(), "setup ran although the check failed"


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("runuser") is None,
    reason="running as an unprivileged user needs root and runuser",
)
def test_make_test_as_a_user_names_the_sudo_command(clone, bare_path):
    (bare_path / "apt-get").symlink_to(shutil.which("apt-get") or "/usr/bin/apt-get")
    result, _ = make(clone, str(bare_path), "test", user="nobody", HOME="/tmp")
    assert result.returncode != 0
    assert sentences(result.stderr) == [
        "make test needs chromium and nix-instantiate (not found): run "
        "`sudo apt-get install chromium nix-bin` and try again."
    ]
    assert not (clone / ".venv").exists()


def test_make_test_postgres_names_postgresql_too(clone, bare_path):
    result, _ = make(clone, str(bare_path), "test-postgres", PG_BIN=str(clone / "no-such-dir"))
    assert result.returncode != 0
    assert sentences(result.stderr) == [
        "make test-postgres needs chromium, nix-instantiate and initdb (not found): install them "
        "(Debian: `apt-get install chromium nix-bin postgresql` as root) and try again."
    ]
    assert not (clone / ".venv").exists()


def test_as_root_the_missing_packages_are_installed_after_apt_get_update(
    clone, bare_path, fake_apt
):
    log, installed = fake_apt
    path = f"{bare_path}:{installed}"
    result, _ = make(clone, path, "test-packages")
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "noninteractive update -q",
        "noninteractive install -y -q --no-install-recommends chromium nix-bin",
    ]
    assert result.stderr.splitlines()[-1] == "make test: installed chromium nix-bin."
    # Everything present now: a second run installs nothing and prints nothing.
    again, seconds = make(clone, path, "test-packages")
    assert (again.returncode, again.stderr, again.stdout) == (0, "", "")
    assert len(log.read_text().splitlines()) == 2
    assert seconds < 5


def test_as_root_only_the_missing_package_is_installed(clone, bare_path, fake_apt):
    log, installed = fake_apt
    executable(installed / "chromium", "#!/bin/sh\n")
    result, _ = make(clone, f"{bare_path}:{installed}", "test-packages")
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines()[-1].endswith("--no-install-recommends nix-bin")


def test_a_failed_apt_get_is_one_sentence_with_its_log(clone, bare_path, fake_apt):
    log, installed = fake_apt
    result, _ = make(clone, f"{bare_path}:{installed}", "test", APT_FAIL="1")
    assert result.returncode != 0
    lines = sentences(result.stderr)
    assert len(lines) == 2 and lines[0].startswith("make test: installing chromium nix-bin")
    assert lines[1].startswith("make test needs chromium and nix-instantiate, and installing")
    assert lines[1].endswith("run `apt-get install chromium nix-bin` and try again.")
    apt_log = Path(lines[1].split("(see ")[1].split(")")[0])
    assert "Unable to locate package" in apt_log.read_text()
    assert not (clone / ".venv").exists()


# --- make lint -------------------------------------------------------------------------------


def lint(clone: Path, *paths: str):
    """`make lint` in the clone, with this checkout's .venv (ruff, Django) and its PATH."""
    venv = ROOT / ".venv"
    if not (venv / "bin" / "ruff").exists():
        pytest.skip("make setup has not installed ruff into .venv")
    # -o: never reinstall into this checkout's .venv from the clone (an editable install would
    # then point at a folder about to be deleted), whatever the files' times say.
    stamp = f"-o{venv}/.installed"
    return make(
        clone, os.environ["PATH"], stamp, "lint", f"VENV={venv}", f"LINT_PATHS={' '.join(paths)}"
    )[0]


def test_make_lint_passes_on_clean_files(clone):
    result = lint(clone, "catalog/middleware.py", "tests/test_make_targets.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed!" in result.stdout
    assert "No changes detected" in result.stdout  # makemigrations --check ran too
    assert "Success: no issues found" in result.stdout  # mypy over the pure core


def test_make_lint_reports_a_type_error_in_the_pure_core(clone):
    naming = clone / "catalog" / "naming.py"
    naming.write_text(naming.read_text() + '\n\ndef _typed() -> int:\n    return "text"\n')
    result = lint(clone, "catalog/naming.py")
    assert result.returncode != 0
    assert (
        "catalog/naming.py" in result.stdout and "Incompatible return value type" in result.stdout
    )


def test_make_lint_reports_every_kind_of_finding_and_fails(clone):
    (clone / "catalog" / "lint_sample.py").write_text(
        "import os\nimport sys\n\n\ndef f( x ):\n    return [x,x]\n"
    )
    result = lint(clone, "catalog/lint_sample.py")
    assert result.returncode != 0
    assert "F401" in result.stdout  # ruff check: unused imports
    assert "1 file would be reformatted" in result.stdout  # ruff format --check
    assert "No changes detected" in result.stdout  # and makemigrations still ran
