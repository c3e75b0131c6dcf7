"""Read branches of a git clone (bare or not) straight from its objects: no work tree is touched.

`git for-each-ref` lists the branches, `git ls-tree` a commit's `.flox/pkgs`, and one
`git cat-file --batch` process streams every blob. Raises GitError with one sentence.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from catalog import vocabulary

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
    ).decode()
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
            f"{repo} has no branch {unknown[0]!r}; its branches: {', '.join(by_name) or 'none'}."
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


def read_branch(repo: Path, commit: str) -> tuple[list[tuple[str, bytes]], bytes | None]:
    """(path, bytes) of each .nix under .flox/pkgs at the commit, and BUILD_MATRIX.md or None."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, PKGS_DIR, BUILD_MATRIX)
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        kind, sha = meta.split()[1:3]
        name = path.decode("utf-8", "surrogateescape")
        if kind == b"blob" and (name.endswith(".nix") or name == BUILD_MATRIX):
            entries.append((name, sha.decode()))
    blobs = _cat_blobs(repo, [sha for _, sha in entries])
    matrix = None
    files = []
    for (name, _sha), data in zip(entries, blobs, strict=True):
        if name == BUILD_MATRIX:
            matrix = data
        else:
            files.append((name, data))
    return sorted(files), matrix


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
