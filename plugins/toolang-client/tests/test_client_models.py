"""The client's types are the server's document's: generated, never edited by hand."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generate_models import MODULE, generated


def test_the_models_module_is_what_the_generator_makes_from_the_document():
    assert MODULE.read_text(encoding="utf-8") == generated(), (
        "toolang_client/models.py is stale: run `python plugins/toolang-client/generate_models.py`"
    )
