"""Worst-case CPU milliseconds per input kind on hostile input of 16, 64, 128 and 256 KB: the paste
parsers (detect() on one paste, and one POST /api/recommend of six pastes), the JSON body
reader, the recipe highlighter and the recipe import parser. An input past a limit is refused,
and the figure is what the refusal costs.

    python bench/hostile.py [-n 3]

Each figure is the worst, over the shapes of its kind, of the median of `-n` runs (CPU time of
this process: the test client's encoding of a body is done before the clock starts).
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KB = 1024
SIZES = (16 * KB - 64, 64 * KB, 128 * KB, 256 * KB)  # the first: just under the recipe limit
PASTE_FIELDS = ("uname", "sysctl", "lscpu", "cpuinfo", "nvidia_smi", "paste")
RECIPE = (ROOT / "tests/data/recipes/forms/pytorch-pinned-cuda.nix").read_text()


def cpu_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def fill(line: str, size: int, head: str = "") -> str:
    """`head`, then `line` repeated to about `size` bytes."""
    return head + line * max(1, (size - len(head)) // len(line))


def paste_shapes(size: int) -> dict[str, str]:
    arch = "Architecture: x86_64\n"
    return {
        "short lines": fill("x\n", size, arch),
        "Key: value after lscpu": fill("Key: value\n", size, arch),
        "CSV-like": fill("a,b\n", size, arch),
        "GPU names": fill("Tesla T4\n", size),
        "compute capabilities": fill("9.0\n", size),
        "long lines": fill("x" * 8_000 + "\n", size, arch),
        "cpuinfo flags": fill("flags\t: " + "avx " * 500 + "\n", size, "processor\t: 0\n"),
        "nvidia-smi -q": fill("    Product Name : NVIDIA A100\n", size, "==NVSMI LOG==\n"),
    }


def nix_shapes(size: int) -> dict[str, str]:
    pad = size - len(RECIPE)
    return {
        "dotted run": RECIPE.replace("  gpuArchNum", f"  z = x{'.a' * (pad // 2)};\n  gpuArchNum"),
        "dotted runs of 32": RECIPE + ("x" + ".a" * 32 + "\n") * (pad // 66),
        "numbers": RECIPE + "1" + ".1" * (pad // 2),
        "parentheses": RECIPE + "(" * (pad // 2) + ")" * (pad // 2),
        "keywords": RECIPE + "in " * (pad // 3),
        "comments": RECIPE + "#\n" * (pad // 2),
        "strings": RECIPE + '"" ' * (pad // 3),
        "long list": RECIPE.replace('"-mavx"', " ".join(['"-m"'] * (pad // 5))),
    }


def json_shapes(size: int) -> dict[str, str]:
    return {
        "empty arrays": "[" + "[]," * (size // 3) + "[]]",
        "strings": "[" + '"",' * (size // 3) + "1]",
        "numbers": "[" + "1," * (size // 2) + "1]",
        "escapes": json.dumps({"paste": '\\"' * (size // 4)}),
        "nesting": "[" * (size // 2) + "]" * (size // 2),
    }


def worst(shapes: dict, fn, runs: int) -> tuple[float, str]:
    figures = {name: cpu_ms(lambda v=value: fn(v), runs) for name, value in shapes.items()}
    name = max(figures, key=figures.get)
    return figures[name], name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="runs per figure (median)")
    runs = parser.parse_args().n

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    import django

    django.setup()
    from django.test import RequestFactory

    from catalog.http import JsonBodyError, load_json
    from catalog.recipes.nix.errors import RecipeError
    from catalog.recipes.nix.highlight import highlight_nix
    from catalog.recipes.nix.read import read_recipe
    from catalog.wizard import detect
    from catalog.wizard.views import api_recommend

    factory = RequestFactory()
    api_recommend(factory.post("/api/recommend", {"gpu": "H100"}))  # loads the catalogue

    def six_pastes(text: str) -> None:
        api_recommend(request_for[text])

    def read(text: str) -> None:
        try:
            read_recipe(text)
        except RecipeError:
            pass

    def load(text: str) -> None:
        try:
            load_json(text)
        except JsonBodyError:
            pass

    heads = " ".join(f"{size // KB + (size % KB > 0):>11} KB" for size in SIZES)
    print(f"{'kind':<34} {heads}   worst shape at 16 KB")
    rows = []
    for size in SIZES:
        pastes = paste_shapes(size)
        request_for = {
            text: factory.post("/api/recommend", dict.fromkeys(PASTE_FIELDS, text))
            for text in pastes.values()
        }
        rows.append(
            {
                "detect(), one paste": worst(pastes, detect.detect, runs),
                "POST /api/recommend, six pastes": worst(pastes, six_pastes, runs),
                "JSON body (load_json)": worst(json_shapes(size), load, runs),
                "recipe highlighter": worst(nix_shapes(size), highlight_nix, runs),
                "recipe import parser": worst(nix_shapes(size), read, runs),
            }
        )
    for kind in rows[0]:
        figures = " ".join(f"{row[kind][0]:>11.1f} ms" for row in rows)
        print(f"{kind:<34} {figures}   {rows[0][kind][1]}")


if __name__ == "__main__":
    main()
