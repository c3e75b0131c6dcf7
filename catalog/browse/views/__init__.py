"""The browsing pages: reference pages, the matrix and its data out, the selector, compare."""
