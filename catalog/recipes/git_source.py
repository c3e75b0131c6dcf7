"""Read branches of a git clone (bare or not) straight from its objects: no work tree is touched.

`git for-each-ref` lists the branches, `git ls-tree` a commit's `.flox/pkgs`, and one
`git cat-file --batch` process streams every blob. Raises GitError with one sentence.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from catalog import naming, vocabulary

PKGS_DIR = vocabulary.PKGS_DIR
BUILD_MATRIX = "BUILD_MATRIX.md"


class GitError(Exception):
    """The clone cannot be read as asked; the message is one sentence."""


@dataclass(frozen=True)
class GitBranch:
    name: str
    commit: str  # full hash


def _git(repo: Path, *args: str, input_: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], input=input_, capture_output=True, check=False
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed; install it to import with --git.") from exc
    if done.returncode:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed in {repo}: {detail[-1] if detail else 'no output'}.")
    return done.stdout


def open_clone(path) -> Path:
    repo = Path(path).expanduser()
    if not repo.is_dir():
        raise GitError(f"{repo} is not a directory; pass the path of a clone.")
    try:
        _git(repo, "rev-parse", "--git-dir")
    except GitError as exc:
        raise GitError(f"{repo} is not a git repository; pass the path of a clone.") from exc
    return repo


def branches(repo: Path) -> list[GitBranch]:
    """Local branches, then remote-tracking ones (origin/x) not also local, by name."""
    out = _git(
        repo,
        "for-each-ref",
        "--format=%(refname)%00%(objectname)",
        "refs/heads",
        "refs/remotes",
    ).decode("utf-8", "surrogateescape")  # a name that is not UTF-8 is refused by name later
    found: dict[str, str] = {}
    for line in out.splitlines():
        ref, commit = line.split("\0")
        if ref.startswith("refs/heads/"):
            found[ref.removeprefix("refs/heads/")] = commit
    for line in out.splitlines():
        ref, commit = line.split("\0")
        parts = ref.split("/", 3)
        if ref.startswith("refs/remotes/") and len(parts) == 4 and parts[3] != "HEAD":
            found.setdefault(parts[3], commit)
    return [GitBranch(name, commit) for name, commit in sorted(found.items())]


def select(repo: Path, names: list[str]) -> list[GitBranch]:
    available = branches(repo)
    if not names:
        if not available:
            raise GitError(f"{repo} has no branches to import.")
        return available
    by_name = {b.name: b for b in available}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise GitError(
            f"{repo} has no branch {ascii(unknown[0])}; its branches: "
            f"{', '.join(naming.shown_path(n) for n in by_name) or 'none'}."
        )
    return [by_name[n] for n in names]


def repository_of(repo: Path) -> str:
    """The catalogue repository the clone's remote URL names, or ""."""
    try:
        url = _git(repo, "config", "--get", "remote.origin.url").decode().strip()
    except GitError:
        return ""
    name = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return name if name in vocabulary.REPOSITORIES else ""


def read_branch(
    repo: Path, commit: str, max_bytes: int, max_matrix_bytes: int
) -> tuple[list[tuple[str, bytes, str]], bytes | None, str]:
    """(path, bytes, why refused) of each .nix under .flox/pkgs at the commit, BUILD_MATRIX.md
    or None, and why BUILD_MATRIX.md was refused ("" when it was not). A symbolic link (mode
    120000) or a blob over its size bound is refused unread; the tree's sizes come first."""
    listing = _git(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit, PKGS_DIR, BUILD_MATRIX)
    wanted, files, matrix_refused = [], [], ""
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        mode, kind, sha, size = meta.split()[:4]
        name = path.decode("utf-8", "surrogateescape")
        if kind != b"blob" or not (name.endswith(".nix") or name == BUILD_MATRIX):
            continue
        limit = max_matrix_bytes if name == BUILD_MATRIX else max_bytes
        refused = _refusal(mode, int(size), limit)
        if refused and name == BUILD_MATRIX:
            matrix_refused = refused
        elif refused:
            files.append((name, b"", refused))
        else:
            wanted.append((name, sha.decode()))
    blobs = _cat_blobs(repo, [sha for _, sha in wanted])
    matrix = None
    for (name, _sha), data in zip(wanted, blobs, strict=True):
        if name == BUILD_MATRIX:
            matrix = data
        else:
            files.append((name, data, ""))
    return sorted(files), matrix, matrix_refused


def _refusal(mode: bytes, size: int, limit: int) -> str:
    if mode == b"120000":
        return "a symbolic link; import reads only regular files and never follows one"
    if size > limit:
        return f"the file is over {limit // 1024} KiB; a recipe is a few"
    return ""


def _cat_blobs(repo: Path, shas: list[str]) -> list[bytes]:
    if not shas:
        return []
    out = _git(repo, "cat-file", "--batch", input_="".join(f"{s}\n" for s in shas).encode())
    blobs, pos = [], 0
    for _ in shas:
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        blobs.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1  # the blob, then a newline
    return blobs
