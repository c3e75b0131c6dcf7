import importlib

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Variant catalogue"

    def ready(self):
        # Connects the signals that bump the catalogue version on every write, in every process
        # (web workers and management commands alike), so cached pages never go stale.
        from catalog import cache  # noqa: F401

        # Keeps the audit's stored per-branch findings current (catalog/audit_store.py).
        importlib.import_module("catalog.audit_store")
        # Registers the snapshots writers store (the selector's index, the matrix's counts).
        importlib.import_module("catalog.browse.views.select")
        importlib.import_module("catalog.browse.filters")
