"""Browsing the catalogue: the matrix's filters, the one-screen selector's engine, the grid,
compare, and their views (`views/`)."""
