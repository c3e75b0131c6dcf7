"""Recipe edits at their edges: a change that repeats the recipe's value leaves the others to be
made."""

from __future__ import annotations

from catalog.recipes.nix.edit import edit_recipe
from catalog.recipes.nix.read import read_recipe

from .nix_data import fixture_text


def test_an_unchanged_field_first_does_not_stop_the_changes_after_it():
    text = fixture_text("pytorch-pinned-cuda.nix")
    facts = read_recipe(text)
    edited = edit_recipe(text, {"pname": facts.pname, "description": "Changed in place"})
    after = read_recipe(edited)
    assert (after.pname, after.description) == (facts.pname, "Changed in place")
