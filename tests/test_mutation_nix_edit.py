"""Tests written to kill mutants that survived: each asserts behaviour the module promises."""
