"""Errors that are seen: the `catalog` logger is configured, and a refused import, a failed
export and an error caught by the engine's or the paste parser's catch-all each leave a line (the
caught ones with their traceback)."""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from catalog import queries
from catalog.wizard import detect, engine


def test_the_catalog_logger_is_configured_to_reach_a_handler():
    assert "catalog" in settings.LOGGING["loggers"]
    logger = logging.getLogger("catalog.wizard.engine")
    assert logger.isEnabledFor(logging.INFO)
    assert logger.hasHandlers()


def _boom(*args, **kwargs):
    raise ZeroDivisionError("a bug")


@pytest.mark.django_db
def test_an_engine_bug_is_an_answer_and_a_logged_traceback(monkeypatch, caplog):
    monkeypatch.setattr(engine, "_recommend", _boom)
    rec = engine.recommend({"os": "linux"}, queries.recommend_catalogue())
    assert not rec.ok and "ZeroDivisionError" in rec.errors[0].message
    (record,) = [r for r in caplog.records if r.name == "catalog.wizard.engine"]
    assert record.levelno == logging.ERROR and record.exc_info[0] is ZeroDivisionError


def test_a_parser_bug_is_a_refusal_and_a_logged_traceback(monkeypatch, caplog):
    monkeypatch.setattr(detect, "_detect", _boom)
    facts = detect.detect("Architecture: x86_64")
    assert facts.errors and "could not be read" in facts.errors[0]
    (record,) = [r for r in caplog.records if r.name == "catalog.wizard.detect"]
    assert record.levelno == logging.ERROR and record.exc_info[0] is ZeroDivisionError


@pytest.mark.django_db
def test_a_refused_import_is_logged(tmp_path, caplog):
    with pytest.raises(CommandError):
        call_command(
            "import-recipes",
            str(tmp_path),
            repository="build-pytorch",
            branch="main",
            stdout=StringIO(),
            stderr=StringIO(),
        )
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("catalog.")]
    assert any("Import refused" in line and ".flox/pkgs" in line for line in lines), lines


@pytest.mark.django_db
def test_a_failed_export_is_logged(tmp_path, caplog):
    with pytest.raises(CommandError):
        call_command(
            "export-recipes",
            output=str(tmp_path),
            branch=["no-such-branch"],
            stdout=StringIO(),
            stderr=StringIO(),
        )
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("catalog.")]
    assert any(line.startswith("Export failed") for line in lines), lines
