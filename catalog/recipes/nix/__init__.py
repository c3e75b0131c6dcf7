"""Nix recipes as syntax trees: parse (keeping every byte), read a recipe's facts, edit fields
in place, render new recipes per form, and evaluate recipes against a stand-in nixpkgs.

No Django import: `importers/` and `exporters/` are thin users of this package.
"""
