"""catalog.recipes.nix.syntax: the tree keeps every byte; bindings, strings, lists, chains,
errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.recipes.nix import syntax as S
from catalog.recipes.nix.syntax import Source


def value_of(src: Source, *path: str):
    return S.lookup(src, src.root.child_by_field_name("expression"), path)


def test_the_tree_covers_every_byte_including_comments_and_non_ascii():
    text = '# “quoted” — comment\n{ a = "é"; /* b */ b = [ 1 2 ]; }\n'
    src = Source(text)
    assert src.data == text.encode()
    assert (src.root.start_byte, src.root.end_byte) == (0, len(src.data))
    leaves = [n for n in src.nodes() if n.child_count == 0]
    # Concatenating the leaves and the gaps between them gives the file back.
    rebuilt, at = b"", 0
    for leaf in leaves:
        rebuilt += src.data[at : leaf.start_byte] + src.raw(leaf)
        at = leaf.end_byte
    assert rebuilt + src.data[at:] == src.data
    binding = value_of(src, "a")
    assert src.span(binding.value).line == 2
    assert src.text_of(binding.value) == '"é"'


def test_bindings_in_let_rec_and_attrsets_with_paths_and_inherit():
    src = Source('let x = 1; y.z = 2; inherit (p) q; in rec { a = x; "b c".d = 3; inherit a; }')
    let = src.root.child_by_field_name("expression")
    assert [b.names for b in S.bindings(src, let)] == [("x",), ("y", "z"), ("q",)]
    body = let.child_by_field_name("body")
    names = [b.names for b in S.bindings(src, body)]
    assert names == [("a",), ("b c", "d"), ("a",)]
    assert S.bindings(src, body)[2].value is None  # inherit


def test_lookup_follows_nested_sets_dotted_paths_and_the_right_side_of_update():
    src = Source('{ meta = old.meta // { platforms = [ "x" ]; }; passthru.gpuArch = "9.0"; }')
    found = value_of(src, "meta", "platforms")
    assert src.text_of(found.value) == '[ "x" ]'
    assert S.string_value(src, value_of(src, "passthru", "gpuArch").value) == "9.0"
    assert value_of(src, "meta", "description") is None
    update = value_of(src, "meta").value
    assert S.attrset_of(update).type == "attrset_expression"


@pytest.mark.parametrize(
    "literal, value",
    [
        (r'"plain"', "plain"),
        (r'"a\"b\\c\n\t"', 'a"b\\c\n\t'),
        (r'"cost: \${x} and $y"', "cost: ${x} and $y"),
        (r'"\q"', "q"),  # Nix keeps an unknown escape's character
        ("''\n    one\n      two\n  ''", "one\n  two\n"),
        ("''\n  a ''${b} ''' ''\\n c\n''", "a ${b} '' \n c\n"),
        ("''single''", "single"),
        ('""', ""),
    ],
)
def test_string_values_with_escapes_and_indented_strings(literal, value):
    src = Source(literal)
    assert S.string_value(src, src.root.child_by_field_name("expression")) == value


def test_interpolations_are_kept_as_nodes():
    src = Source('"pre-${name}-post"')
    node = src.root.child_by_field_name("expression")
    parts = S.string_parts(src, node)
    assert parts[0] == "pre-" and parts[2] == "-post"
    assert src.text_of(parts[1]) == "${name}"
    assert S.string_value(src, node) is None


def test_quote_and_indented_escape_round_trip_through_the_parser():
    for value in ['a"b', "back\\slash", "${inject}", "tab\tnew\nline", "$ {x}", "''"]:
        src = Source(S.quote(value))
        assert not src.root.has_error
        assert S.string_value(src, src.root.child_by_field_name("expression")) == value
        src = Source("''" + S.indented(value) + "''")
        parts = S.string_parts(src, src.root.child_by_field_name("expression"))
        assert all(isinstance(p, str) for p in parts), value  # no interpolation sneaked in


def test_list_elements_skip_comments():
    src = Source('[\n  "a"  # one\n  /* x */ "b"\n  c\n]')
    elements = S.list_elements(src.root.child_by_field_name("expression"))
    assert [src.text_of(e) for e in elements] == ['"a"', '"b"', "c"]


def test_override_chain_is_split_innermost_first():
    src = Source("(np.python3Packages.torch.override { a = 1; }).overrideAttrs (old: { b = 2; })")
    chain = S.apply_chain(src, src.root.child_by_field_name("expression"))
    assert [s.method for s in chain.steps] == ["override", "overrideAttrs"]
    assert src.text_of(chain.base.root) == "np"
    assert chain.base.names(src) == ("python3Packages", "torch")
    params, body = S.lambda_body(chain.steps[1].argument)
    assert params == ["old"] and body.type == "attrset_expression"


def test_a_plain_expression_is_a_chain_without_steps():
    src = Source("pkgs.hello")
    chain = S.apply_chain(src, src.root.child_by_field_name("expression"))
    assert chain.steps == () and chain.base.names(src) == ("hello",)


@pytest.mark.parametrize(
    "text, line, column, reason",
    [
        ("{ a = 1; b = 2 }", 1, 15, "expected `;`"),
        ("let\n  x = [ 1 2 ;\nin x", 2, 12, "expected `]`"),
        ('{\n  a = "open;\n  b = 2;\n}\n', 2, 7, "never closed"),
        ("{ a = 1; } }", 1, 12, "`}` closes nothing"),
        ("let\n  a = {\n    b = 1;\nin a\n", 2, 7, "`{` opened here is never closed"),
        ("# é\n{ é = 1; }", 2, 3, "unexpected"),
    ],
)
def test_first_syntax_problem_has_line_column_and_reason(text, line, column, reason):
    problem = Source(text).problem()
    assert (problem.line, problem.column) == (line, column)
    assert reason in problem.reason


def test_a_valid_file_has_no_problem():
    assert Source("{ a = 1; }").problem() is None
    assert Source("").problem() is None


def test_the_package_imports_without_django():
    code = (
        "import sys, catalog.recipes.nix.read, catalog.recipes.nix.edit, "
        "catalog.recipes.nix.syntax; "
        "sys.exit('django' in sys.modules)"
    )
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    assert subprocess.run([sys.executable, "-c", code], cwd=root, env=env).returncode == 0
