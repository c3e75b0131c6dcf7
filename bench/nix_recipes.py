"""Time parsing, reading and editing recipes with `catalog.recipes.nix` (no database involved).

Usage: .venv/bin/python bench/nix_recipes.py [DIR ...]
Reads every .nix under the given folders (default: ../shared/real-recipes, the real
repositories' recipes) and prints the cost per file of: parsing alone, read_recipe, an edit
passing every field as it already is (what a no-op export does), a one-value edit (the nixpkgs
pin or, without one, the pname) and a CPU-flag edit. An edit reads the recipe, splices, and
reads the result back to check it. The real repositories hold 1,355 recipes; the last line
scales the read cost to that many.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catalog.recipes.nix.edit import EDITORS, edit_recipe  # noqa: E402
from catalog.recipes.nix.read import read_recipe  # noqa: E402
from catalog.recipes.nix.syntax import Source  # noqa: E402

REAL_RECIPES = Path(__file__).resolve().parent.parent.parent / "shared" / "real-recipes"
REPOSITORY_RECIPES = 1355
ROUNDS = 5


def per_file(texts: list, work) -> tuple[float, float]:
    """Best of ROUNDS, in milliseconds per file: (wall clock, CPU time of this process; the
    second is what a busy shared machine disturbs least)."""
    wall = cpu = float("inf")
    for _ in range(ROUNDS):
        start, start_cpu = time.perf_counter(), time.process_time()
        for text in texts:
            work(text)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall * 1000 / len(texts), cpu * 1000 / len(texts)


def one_value(text: str) -> dict:
    facts = read_recipe(text)
    if facts.nixpkgs_pin:
        return {"nixpkgs_pin": "0" * 40}
    return {"pname": facts.pname + "-x"}


def cpu_flag(text: str) -> dict:
    facts = read_recipe(text)
    if "cpu_flags" not in facts.spans:
        return {}
    return {"cpu_flags": [*facts.cpu_flags[:-1], "-mtest"]}


def all_unchanged(text: str) -> dict:
    facts = read_recipe(text)
    return {name: getattr(facts, name) for name in EDITORS}


def main() -> None:
    folders = [Path(a) for a in sys.argv[1:]] or [REAL_RECIPES]
    files = sorted(p for folder in folders for p in folder.rglob("*.nix"))
    if not files:
        sys.exit(f"no .nix files under {', '.join(map(str, folders))}")
    texts = [p.read_text(encoding="utf-8") for p in files]
    size = sum(len(t.encode()) for t in texts) / len(texts)
    print(f"{len(texts)} recipes, {size / 1024:.1f} KiB each on average")
    edits = {
        "edit: every field as it is": [(t, all_unchanged(t)) for t in texts],
        "edit: one value (pin/pname)": [(t, one_value(t)) for t in texts],
        "edit: one CPU flag": [(t, cpu_flag(t)) for t in texts if cpu_flag(t)],
    }
    figures = {
        "parse (tree-sitter only)": per_file(texts, Source),
        "read_recipe": per_file(texts, read_recipe),
    }
    for label, cases in edits.items():
        figures[label] = per_file(cases, lambda case: edit_recipe(*case))
    print(f"{'':<28} {'wall':>6}   {'CPU':>6}")
    for label, (wall, cpu) in figures.items():
        print(f"{label:<28} {wall:6.2f}   {cpu:6.2f} ms/file")
    wall, cpu = (ms * REPOSITORY_RECIPES / 1000 for ms in figures["read_recipe"])
    print(f"read of {REPOSITORY_RECIPES} recipes at that rate: {wall:.2f} s ({cpu:.2f} s CPU)")


if __name__ == "__main__":
    main()
