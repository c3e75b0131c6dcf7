#!/usr/bin/env python
"""Django's command-line utility for the variant catalogue."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "catalogue_site.settings")
    try:
        from django.core.management import execute_from_command_line
    except ImportError as exc:  # pragma: no cover - a setup problem, not a code path
        raise ImportError(
            "Django is not importable: run `make setup` and use .venv/bin/python."
        ) from exc
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
