#!/usr/bin/env python3
"""The SecurityFilter plugin against the blind corpus ``bench/security_blind.json``.

The corpus was written without reading the plugin, its corpus or the held-out one.
This reuses the checks of ``bench/security_heldout.py`` on that file. Two adaptations:
dangerous items carry no ``category`` (all count as in scope, under ``blind``), and
the corpus names secrets ``api_key`` / ``password_url``, which the plugin masks as
``secret``.

    python3 bench/security_blind.py

The last line is a JSON object with the figures.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from security_eval import plugin, runtime_with
from security_heldout import calls, pii

CORPUS = Path(__file__).resolve().parent / "security_blind.json"
KIND_NAMES = {"api_key": "secret", "password_url": "secret"}


def load(path: Path = CORPUS) -> dict[str, Any]:
    """The corpus in the shape the held-out checks expect."""
    corpus = json.loads(path.read_text(encoding="utf-8"))
    for item in corpus["dangerous"]:
        item.setdefault("category", "blind")
    for item in corpus["pii"]:
        kinds = {KIND_NAMES.get(kind, kind) for kind in item["pii_kinds"]}
        item["pii_kinds"] = sorted(kinds)
    return corpus


def main() -> None:
    corpus = load()
    with tempfile.TemporaryDirectory() as tmp:
        runtime = runtime_with(Path(tmp), "hook-security-filter", plugin)
        figures = calls(runtime, corpus)
        figures.update(pii(runtime, corpus))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
