"""The prose rewriting of derived recipes (catalog/recipes/nix/derive.py, no Django): which lines
it touches and which substitutions apply where."""

from __future__ import annotations

import re

from catalog.recipes.nix.derive import (
    ArchNames,
    arch_substitutions,
    release_substitutions,
    rewrite_prose,
)

RECIPE = """\
# Built for SM75
{ pkgs }:
let
  gpuArchNum = "7.5";  # SM75
  cpuFlags = [
    "-mavx2"  # AVX2 flag
  ];
in {
  pname = "x-sm75";
  preConfigure = ''
    echo "GPU: SM75"
    export NOTE="SM75"
  '';
  meta = {
    description = "For SM75 (Python 3.12)";
    longDescription = ''
      SM75 and Python: 3.12
      Python 3.12.1 stays
    '';
    homepage = "https://example.org/SM75";
  };
}
"""


def test_only_comments_descriptions_and_echo_lines_are_rewritten():
    subs = [(re.compile(r"SM75"), "SM70")]
    lines = rewrite_prose(RECIPE, subs).splitlines()
    changed = [n for n, line in enumerate(RECIPE.splitlines()) if line != lines[n]]
    assert [lines[n] for n in changed] == [
        "# Built for SM70",
        '  gpuArchNum = "7.5";  # SM70',
        '    echo "GPU: SM70"',
        '    description = "For SM70 (Python 3.12)";',
        "      SM70 and Python: 3.12",
    ]


def test_own_line_substitutions_skip_a_comment_after_code_but_not_descriptions():
    own_line = [(re.compile(r"AVX2"), "AVX-512")]
    text = '  "-mavx2"  # AVX2 flag\n  # AVX2 build\n  description = "AVX2";\n'
    assert rewrite_prose(text, [], own_line).splitlines() == [
        '  "-mavx2"  # AVX2 flag',
        "  # AVX-512 build",
        '  description = "AVX-512";',
    ]


def test_release_substitutions_change_the_version_not_a_longer_one():
    subs = release_substitutions(("3.12", "3.13"), ("2.8", "2.11"), {})
    text = rewrite_prose(RECIPE, subs)
    assert "SM75 and Python: 3.13" in text and "Python 3.12.1 stays" in text
    assert 'description = "For SM75 (Python 3.13)";' in text


def test_model_lists_driver_and_family_follow_the_new_architecture():
    old = ArchNames(
        "sm75", "Turing", ("Quadro RTX 8000", "RTX 2080 Ti", "T4"), "T4/RTX 2080 Ti", 418
    )
    new = ArchNames("sm70", "Volta", ("Quadro GV100", "Titan V", "V100"), "V100", 384)
    line = '    description = "T4/RTX 2080 Ti; T4, RTX 2080 Ti (Turing, 7.5) NVIDIA 418+";\n'
    assert rewrite_prose(line, arch_substitutions(old, new, {})) == (
        '    description = "V100; Quadro GV100, Titan V, V100 (Volta, 7.0) NVIDIA 384+";\n'
    )
