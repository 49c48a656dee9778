"""``python -m toolang_core`` runs the ``toolang`` CLI."""

from toolang_core.cli.main import script

script()
